import { dtypeBytes, type Buffer, type DType } from "@tirx-ts/core";
import { codecOf } from "../numeric/codec.js";
import { AccessKind, type AccessQueue } from "../exec/access-batch.js";
import type { Machine } from "../exec/machine.js";
import { Affine, type AffineFn } from "./affine.js";
import { placementOf } from "./access.js";
import type { Layout } from "./layout.js";

/**
 * Vector execution of a batched statement (compile/batched.ts) in its generated function
 * (compile/jit.ts), when no access's offset reads memory. One loop runs the lanes with each
 * access's offset, bounds and address written out and a raw element load or store, and, tracked,
 * gathers each site's accesses into runs of consecutive threads at addresses a fixed step apart
 * (consecutive elements, or a column) as it goes, queued with one `pushRun` per run instead of a
 * closure call and a queue push per element.
 * The queued order is the lane-by-lane order (lane i's k-th access of S is `seq0 + i·S + k`), so
 * the batch's flush decides and reports exactly as for the element closures (exec/access-batch.ts).
 *
 * A lane with an access out of bounds stops the loop before that lane does anything; the runs of
 * the lanes before it are queued, and the element loop (the closures' code, with their own
 * queues) goes on from that lane, reporting where a lane-by-lane run reports. The flush merges
 * the queues by order, so the outcome is the same.
 */

/** One element access site of a vector statement: a load or its store. */
export interface VecAccess {
  /** Per thread: the element offset (the scratch array the closures use too). */
  readonly offs: Float64Array;
  /** Element bytes. */
  readonly eb: number;
  /** Shared: the buffer's byte base in the CTA and its bytes; global: -1 and 0. */
  readonly base: number;
  readonly size: number;
  /** Global: the tensor parameter index; shared: -1. */
  readonly param: number;
  /** The codec's element load (loads) or store (stores) on a DataView. */
  readonly load: (dv: DataView, a: number) => number;
  readonly store: (dv: DataView, a: number, v: number) => void;
  readonly queue: AccessQueue;
}

/**
 * The vector access of a load (`store` false) or store of one `dtype` element of `buffer` at the
 * element offsets `offs[t]` (shared or global; a local buffer is never batched).
 */
export function vecAccess(
  m: Machine,
  layout: Layout,
  buffer: Buffer,
  dtype: DType,
  offs: Float64Array,
  site: number,
  store: boolean,
): VecAccess {
  const w = placementOf(layout, buffer, m.sites[site]);
  const eb = dtypeBytes(dtype);
  const codec = codecOf(dtype);
  const shared = w.space === "shared";
  const kind = shared
    ? store
      ? AccessKind.SharedWrite
      : AccessKind.SharedRead
    : store
      ? AccessKind.GlobalWrite
      : AccessKind.GlobalRead;
  return {
    offs,
    eb,
    base: shared ? w.placed.base : -1,
    size: shared ? w.placed.size : 0,
    param: shared ? -1 : w.param,
    load: codec.load as (dv: DataView, a: number) => number,
    store: codec.store as (dv: DataView, a: number, v: number) => void,
    queue: m.batch.queue(kind, site, eb, shared ? w.placed : undefined, shared ? -1 : w.param),
  };
}

/**
 * The source of a vector loop over `lanes[0..n)` that leaves `i` at the first lane it did not run
 * (n when it ran them all, 0 when vectors do not apply now: tracked while the batch is not
 * deferring, or in a speculative arm). `list` holds the statement's accesses in the order a lane
 * makes them (loads, then the store), `offsets[k]` the source of access k's element offset for
 * thread `t` (after the declarations `lets`, subexpressions the offsets share), and `effect`
 * the lane's work, reading load k as `load(dk, ak)` and storing through `dk`, `ak` of the store
 * (the DataView and byte address of access k).
 */
export function vectorSource(
  cap: (v: unknown) => string,
  m: Machine,
  list: readonly VecAccess[],
  lets: readonly string[],
  offsets: readonly string[],
  effect: string,
  copy?: AffineCopy,
): string {
  const M = cap(m);
  const B = cap(m.batch);
  const W = cap(m.win);
  const S = list.length;
  const decl: string[] = [];
  const lane: string[] = [];
  const runs: string[] = [];
  /** Per access: `const ak = <its byte address>;`. */
  const addrs: string[] = [];
  const push = (k: number, q: string): string =>
    `${q}.pushRun(t${k}, s${k}, i - i${k}, q0 + i${k} * ${S} + ${k}, ${S}, i - i${k} > 1 ? g${k} : ${list[k]!.eb});`;
  const open: string[] = [];
  list.forEach((x, k) => {
    const eb = x.eb;
    if (x.param < 0) {
      decl.push(`const d${k} = ${cap(m.sdv)}; const z${k} = ${x.size};`);
    } else {
      decl.push(`const d${k} = ${cap(m.globals)}[${x.param}].dv; const z${k} = d${k}.byteLength;`);
    }
    lane.push(
      `const r${k} = (${offsets[k]}) * ${eb}; if (!(r${k} >= 0 && r${k} + ${eb} <= z${k})) break;`,
    );
    const q = cap(x.queue);
    addrs.push(`const a${k} = ${x.param < 0 ? `${x.base} + r${k} + ${W}[t]` : `r${k}`};`);
    runs.push(
      `${addrs[k]} if (nb || (i - i${k} === 1 ? a${k} - b${k} < ${eb} : a${k} !== b${k} + g${k})) { if (i > 0) ${push(k, q)} t${k} = t; s${k} = a${k}; i${k} = i; } else if (i - i${k} === 1) g${k} = a${k} - b${k}; b${k} = a${k};`,
    );
    open.push(`let t${k} = 0, s${k} = 0, i${k} = 0, b${k} = 0, g${k} = 0;`);
  });
  const closeRuns = list.map((x, k) => push(k, cap(x.queue))).join(" ");
  const first = copy ? `if (${cap(copy)}.run(lanes, n)) return;` : "";
  return `if (!${M}.opts.track || (${B}.deferring && ${M}.speculative === 0)) {
    ${first}
    ${decl.join(" ")}
    if (${M}.opts.track) {
      const q0 = ${B}.seq;
      let pt = -2;
      ${open.join(" ")}
      for (; i < n; i++) {
        const t = lanes[i];
        ${lets.join(" ")}
        ${lane.join(" ")}
        const nb = t !== pt + 1;
        pt = t;
        ${runs.join(" ")}
        ${effect}
      }
      if (i > 0) { ${closeRuns} }
      ${B}.seq = q0 + i * ${S};
    } else {
      for (; i < n; i++) {
        const t = lanes[i];
        ${lets.join(" ")}
        ${lane.join(" ")}
        ${addrs.join(" ")}
        ${effect}
      }
    }
  }`;
}

/**
 * A copy statement (a Store of a bare load of its own dtype, which moves bits) over a block of
 * consecutive threads whose load and store offsets are both the thread index plus a constant
 * (compile/affine.ts): bounds of the two ranges, each queued as one run, and the bytes moved in
 * one step, where the vector loop does all of that lane by lane with the same outcome.
 */
export class AffineCopy {
  readonly #af: Affine;

  constructor(
    readonly m: Machine,
    readonly load: VecAccess,
    readonly loadOff: AffineFn,
    readonly store: VecAccess,
    readonly storeOff: AffineFn,
    af: Affine,
  ) {
    this.#af = af;
  }

  /**
   * Run lanes `lanes[0..n)` as one block; false, with nothing done, when they are not threads
   * t0, t0 + 1, ... of one CTA, an offset is not t + constant over them, a range is out of
   * bounds, or the two ranges share memory (one tensor passed twice).
   */
  run(lanes: Int32Array, n: number): boolean {
    const m = this.m;
    const af = this.#af;
    if (!af.atLanes(lanes, n)) return false;
    const t0 = af.t0;
    if (!this.loadOff() || af.b !== 1) return false;
    const lo = af.a + t0;
    if (!this.storeOff() || af.b !== 1) return false;
    const so = af.a + t0;
    const ld = this.load;
    const st = this.store;
    const eb = ld.eb;
    const bytes = n * eb;
    const src = ld.param < 0 ? m.shared : m.globals[ld.param]!.bytes;
    const dst = st.param < 0 ? m.shared : m.globals[st.param]!.bytes;
    const lr = lo * eb;
    const sr = so * eb;
    if (!(lr >= 0 && lr + bytes <= (ld.param < 0 ? ld.size : src.byteLength))) return false;
    if (!(sr >= 0 && sr + bytes <= (st.param < 0 ? st.size : dst.byteLength))) return false;
    const win = m.win[t0]!;
    const la = ld.param < 0 ? ld.base + lr + win : lr;
    const sa = st.param < 0 ? st.base + sr + win : sr;
    if (src.buffer === dst.buffer) {
      const s0 = src.byteOffset + la;
      const d0 = dst.byteOffset + sa;
      if (s0 < d0 + bytes && d0 < s0 + bytes) return false;
    }
    if (m.opts.track) {
      const batch = m.batch;
      const q0 = batch.seq;
      ld.queue.pushRun(t0, la, n, q0, 2, eb);
      st.queue.pushRun(t0, sa, n, q0 + 1, 2, eb);
      batch.seq = q0 + 2 * n;
    }
    dst.set(src.subarray(la, la + bytes), sa);
    return true;
  }
}
