import { dtypeBytes, type Buffer, type DType } from "@tirx-ts/core";
import { codecOf } from "../numeric/codec.js";
import { AccessKind, type AccessQueue } from "../exec/access-batch.js";
import type { Machine } from "../exec/machine.js";
import { placementOf } from "./access.js";
import type { Layout } from "./layout.js";

/**
 * Vector execution of a batched statement (compile/batched.ts) in its generated function
 * (compile/jit.ts), when no access's offset reads memory. One loop runs the lanes with each
 * access's offset, bounds and address written out and a raw element load or store, and, tracked,
 * gathers each site's accesses into runs of consecutive threads at consecutive elements as it
 * goes, queued with one `pushRun` per run instead of a closure call and a queue push per element.
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
  readonly kind: AccessKind;
  /** Per thread: the element offset (the scratch array the closures use too). */
  readonly offs: Float64Array;
  /** Element bytes and their log2. */
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
    kind,
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
 * thread `t` (after the declarations `lets`, subexpressions the offsets share), and `effect` the lane's work, reading load k as `load(dk, ak)` and storing through
 * `dk`, `ak` of the store (the DataView and byte address of access k).
 */
export function vectorSource(
  cap: (v: unknown) => string,
  m: Machine,
  list: readonly VecAccess[],
  lets: readonly string[],
  offsets: readonly string[],
  effect: string,
): string {
  const M = cap(m);
  const B = cap(m.batch);
  const W = cap(m.win);
  const S = list.length;
  const decl: string[] = [];
  const lane: string[] = [];
  const runs: string[] = [];
  const push = (k: number, q: string): string =>
    `${q}.pushRun(t${k}, s${k}, i - i${k}, q0 + i${k} * ${S} + ${k}, ${S});`;
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
    const addr = x.param < 0 ? `${x.base} + r${k} + ${W}[t]` : `r${k}`;
    runs.push(
      `const a${k} = ${addr}; if (nb || a${k} !== b${k} + ${eb}) { if (i > 0) ${push(k, q)} t${k} = t; s${k} = a${k}; i${k} = i; } b${k} = a${k};`,
    );
    open.push(`let t${k} = 0, s${k} = 0, i${k} = 0, b${k} = 0;`);
  });
  const addrs = list.map(
    (x, k) => `const a${k} = ${x.param < 0 ? `${x.base} + r${k} + ${W}[t]` : `r${k}`};`,
  );
  const closeRuns = list.map((x, k) => push(k, cap(x.queue))).join(" ");
  return `if (!${M}.track || (${B}.deferring && ${M}.speculative === 0)) {
    ${decl.join(" ")}
    if (${M}.track) {
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
