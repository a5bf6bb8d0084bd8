import {
  bufferName,
  constInt,
  dtypeBytes,
  invariant,
  TirxError,
  type Expr,
  type FragmentCall,
  type OpDef,
  type SimValue,
  type Span,
} from "@tirx-ts/core";
import { codecOf } from "../numeric/codec.js";
import type { LaneMove, MovePiece } from "../exec/access-log.js";
import { checkSharedRead, checkSharedWrite } from "../exec/hazards.js";
import { reportOob, reportUnwrittenLocal } from "../exec/reports.js";
import { accessRecord, setAccess } from "../exec/context.js";
import type { Placed } from "../exec/memory.js";
import { placementOf, type NumFn } from "./access.js";
import type { ExprCompiler } from "./expr.js";

type Exec = (lanes: Int32Array, n: number) => void;

interface FragOperand {
  readonly kind: "fragment";
  readonly placed: Placed;
  readonly off: NumFn;
  readonly eb: number;
  readonly count: number;
  readonly dtype: Expr["dtype"];
}

interface SharedOperand {
  readonly kind: "shared";
  readonly placed: Placed;
  readonly addr: NumFn;
}

/**
 * A warp-level matrix instruction (ldmatrix, stmatrix, mma.sync; op semantics of kind
 * `fragment`). `.sync.aligned`: every one of a warp's 32 lanes must execute it; a warp where
 * some lanes do and others do not is a TX6011 hazard and the instruction is skipped for it.
 * Fragments are read and written in each thread's local memory (where the simulator keeps
 * register arrays); shared rows are bounds-, alignment- (TX6018) and hazard-checked, the lane
 * that supplies a row's address counting as the thread that accesses it.
 */
export function compileFragmentCall(
  ec: ExprCompiler,
  op: OpDef,
  exprs: readonly Expr[],
  span?: Span,
): Exec {
  const m = ec.m;
  const sem = op.sim;
  invariant(sem.kind === "fragment", `${op.name} is not a fragment op`);
  const site = m.site(span);
  const operands = op.operands.map((spec, i): FragOperand | SharedOperand | undefined => {
    const e = exprs[i]!;
    if (spec.kind !== "fragment" && spec.kind !== "address") return undefined;
    if (e.kind !== "BufferPtr") {
      throw new TirxError("TX7001", `${spec.name} of ${op.surface} must be buf.ptr([i])`, span);
    }
    const w = placementOf(ec.layout, e.buffer, span);
    if (spec.kind === "fragment") {
      return {
        kind: "fragment",
        placed: w.placed,
        off: ec.index(e.offset, span),
        eb: dtypeBytes(e.buffer.dtype),
        count: spec.count,
        dtype: e.buffer.dtype,
      };
    }
    return { kind: "shared", placed: w.placed, addr: ec.num(e, span) };
  });
  const run = sem.make(exprs.map((e) => (e.kind === "BufferPtr" ? e.buffer.dtype : e.dtype)));
  const ldv = m.ldv;
  const stride = m.localStride;
  const shared = m.shared;
  let base = 0;
  let warp = 0;
  const frag = (i: number): FragOperand => operands[i] as FragOperand;
  /** The record of the site's checks (buffer, bytes, thread and verb set per check). */
  const acc = accessRecord<Placed>(m, undefined, 0, site, "reads");
  const written = m.localWritten;
  /**
   * Absolute local byte of fragment `i` of thread `t`, or -1 after reporting TX6005. A fragment
   * is read whole (TX6028 for a register its thread never wrote) or written whole.
   */
  const fragAt = (i: number, t: number, verb: string): number => {
    const f = frag(i);
    const rel = f.off(t) * f.eb;
    const n = f.count * f.eb;
    if (!(rel >= 0 && rel + n <= f.placed.size)) {
      reportOob(setAccess(acc, f.placed, rel, n, t, site, verb), "local", f.placed.size);
      return -1;
    }
    // Fragment registers are registers like any other to an in-flight wgmma (TX6023) and to
    // its wgmma.fence (TX6027): ldmatrix may not fill an A fragment a wgmma still reads.
    if (m.wgmma.live > 0)
      m.wgmma.checkLocal(setAccess(acc, f.placed, f.placed.base + rel, n, t, site, verb));
    const a = t * stride + f.placed.base + rel;
    if (verb === "writes") {
      if (m.wgmma.dirty) m.wgmma.noteLocalWrite(a, n, site);
      written.mark(a, n);
    } else if (m.opts.track) {
      const b = written.firstUnwritten(a, n);
      if (b >= 0) {
        reportUnwrittenLocal(
          setAccess(acc, f.placed, f.placed.base + rel, n, t, site, verb),
          b - t * stride,
        );
      }
    }
    return a;
  };
  const rowAt = (i: number, t: number, n: number): number => {
    const s = operands[i] as SharedOperand;
    const a = s.addr(t);
    const { base: b0, size } = s.placed;
    if (a % 16 !== 0 || a < b0 || a + n > b0 + size) {
      m.hazard(
        "TX6018",
        `${op.surface} in warp ${warp} of CTA ${m.cta()}: lane ${t - base} gives row address ${a - b0} of ${bufferName(s.placed)} (${size} bytes), which ${a % 16 !== 0 ? "is not 16-byte aligned" : "leaves the buffer"}`,
        site,
      );
      return -1;
    }
    return a + m.win[t]!; // the thread's CTA's shared window
  };
  // The access log (SimOptions.accesses): lane `row` supplies the address of row `row`, which
  // matrix row / 8 of every lane's fragment holds.
  let moves: LaneMove[] | undefined;
  const fragName = (): string => {
    const f = operands.find((o) => o?.kind === "fragment");
    return f ? f.placed.name : "fragment";
  };
  const logRow = (i: number, row: number, a: number, n: number, load: boolean): void => {
    const sp = (operands[i] as SharedOperand).placed;
    const at = m.ctaLocal(a);
    const sh: MovePiece = {
      space: "shared",
      name: sp.name,
      byte: at - sp.base,
      bytes: n,
      addr: at,
    };
    const reg: MovePiece = {
      space: "register",
      name: `${fragName()} r${row >> 3}`,
      byte: 0,
      bytes: n,
    };
    moves!.push({ warp, lane: row, dst: load ? reg : sh, src: load ? sh : reg });
  };
  // Static operands (mma.sp's sparsity selector): the verifier checked they are constants.
  const statics = op.operands.map((spec, i) =>
    spec.kind === "static" ? constInt(exprs[i]!) : undefined,
  );
  const call: FragmentCall = {
    get warp() {
      return warp;
    },
    staticArg(i) {
      const v = statics[i];
      invariant(v !== undefined, () => `operand ${i} of ${op.name} is not a static integer`);
      return v;
    },
    hazard: (code, message) =>
      m.hazard(code, `${op.surface} in warp ${warp} of CTA ${m.cta()}: ${message}`, site),
    bytes(i, lane) {
      const f = frag(i);
      const a = fragAt(i, base + lane, "reads");
      if (a < 0) return new Uint8Array(f.count * f.eb);
      return new Uint8Array(ldv.buffer, ldv.byteOffset + a, f.count * f.eb).slice();
    },
    setBytes(i, lane, b) {
      const a = fragAt(i, base + lane, "writes");
      if (a >= 0) new Uint8Array(ldv.buffer, ldv.byteOffset + a, b.length).set(b);
    },
    values(i, lane) {
      const f = frag(i);
      const a = fragAt(i, base + lane, "reads");
      const codec = codecOf(f.dtype);
      const out: SimValue[] = [];
      for (let k = 0; k < f.count; k++) {
        out.push(
          a < 0 ? 0 : (codec.load as (dv: DataView, x: number) => SimValue)(ldv, a + k * f.eb),
        );
      }
      return out;
    },
    setValues(i, lane, v) {
      const f = frag(i);
      const a = fragAt(i, base + lane, "writes");
      if (a < 0) return;
      const store = codecOf(f.dtype).store as (dv: DataView, x: number, v: SimValue) => void;
      for (let k = 0; k < f.count; k++) store(ldv, a + k * f.eb, v[k]!);
    },
    loadShared(i, lane, n) {
      const t = base + lane;
      const a = rowAt(i, t, n);
      if (a < 0) return undefined;
      if (moves) logRow(i, lane, a, n, true);
      checkSharedRead(
        setAccess(acc, (operands[i] as SharedOperand).placed, a, n, t, site, "reads"),
      );
      return shared.slice(a, a + n);
    },
    storeShared(i, lane, b) {
      const t = base + lane;
      const a = rowAt(i, t, b.length);
      if (a < 0) return;
      if (moves) logRow(i, lane, a, b.length, false);
      const placed = (operands[i] as SharedOperand).placed;
      checkSharedWrite(setAccess(acc, placed, a, b.length, t, site, "writes"));
      shared.set(b, a);
    },
  };
  const count = new Int32Array(Math.ceil(m.threads / 32));
  return (lanes, n) => {
    m.opts.accesses?.enter(site);
    count.fill(0);
    for (let i = 0; i < n; i++) count[lanes[i]! >> 5]!++;
    for (let w = 0; w < count.length; w++) {
      const c = count[w]!;
      if (c === 0) continue;
      warp = w;
      base = w << 5;
      if (c !== 32) {
        const on: number[] = [];
        for (let i = 0; i < n; i++) if (lanes[i]! >> 5 === w) on.push(lanes[i]! & 31);
        call.hazard(
          "TX6011",
          `${c} of the warp's lanes execute it (lanes ${on.join(", ")}); .sync.aligned needs all 32 lanes of the warp to execute the same instruction`,
        );
        continue;
      }
      // Set for every warp: a launch that threw inside `run` must not leave its moves to the next.
      moves = m.opts.accesses ? [] : undefined;
      run(call);
      if (moves && moves.length > 0) {
        const load = moves[0]!.src.space === "shared";
        m.opts.accesses!.record(site, span, op.name, moves, load ? "src" : "dst", 8, m.firstCta());
      }
      moves = undefined;
    }
  };
}
