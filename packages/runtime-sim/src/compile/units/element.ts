import {
  dtypeBytes,
  invariant,
  TirxError,
  type DType,
  type Expr,
  type OpDef,
  type SimValue,
  type Span,
} from "@tirx-ts/core";
import { accessRecord, type GlobalAccess, type SharedAccess } from "../../exec/context.js";
import type { Machine } from "../../exec/machine.js";
import type { GlobalMem } from "../../exec/memory.js";
import { reportOob } from "../../exec/reports.js";
import { placementOf, type NumFn } from "../access.js";
import type { ExprCompiler } from "../compiled.js";

/** The element a single-element memory op (a strong load or store, an atomic) addresses. */
export interface Element {
  /** Where its buffer lives (global or shared; the verifier refuses local ones). */
  readonly w: ReturnType<typeof placementOf>;
  /** The buffer's dtype. */
  readonly dt: DType;
  /** The element's size in bytes. */
  readonly eb: number;
  /** Per thread, the element offset into the buffer. */
  readonly off: NumFn;
}

/**
 * The element that `ptr`, the address operand of `op`, points at.
 * @throws TirxError TX2009 when `ptr` is not `buf.ptr([i])`; placementOf's errors.
 */
export function elementOf(ec: ExprCompiler, op: OpDef, ptr: Expr, span?: Span): Element {
  if (ptr.kind !== "BufferPtr") {
    throw new TirxError(
      "TX2009",
      `the address of ${op.surface} must be buf.ptr([i]) of a global or shared buffer`,
      span,
    );
  }
  const dt = ptr.buffer.dtype;
  return {
    w: placementOf(ec.layout, ptr.buffer, span),
    dt,
    eb: dtypeBytes(dt),
    off: ec.index(ptr.offset, span),
  };
}

/**
 * What one kind of single-element memory op (a strong load or store, an atomic) checks and does
 * at the element a thread addresses; compileElement supplies the addressing, the bounds check and
 * the access records.
 */
export interface ElementOp {
  /** What the verifier refuses on local buffers, for the invariant ("atomics"). */
  readonly what: string;
  /** The verb of the out-of-bounds report (TX6005): "reads", "writes", "atomically updates". */
  readonly boundsVerb: string;
  /** The verb of the race records ("reads", "writes"). */
  readonly verb: string;
  /** The race records' `atomic` flag: the access is morally strong (exec/hazards.ts). */
  readonly strong: boolean;
  /** The race checks of a shared access, `acc` pointed at the thread's bytes (exec/hazards.ts). */
  readonly checkShared: (acc: SharedAccess) => void;
  /**
   * The race checks of a global access of tensor `gm`, `g` pointed at the thread's bytes (with
   * beforeGlobalWrite for a write: exec/pending-reads.ts).
   */
  readonly checkGlobal: (g: GlobalAccess, gm: GlobalMem) => void;
  /**
   * The access by thread `t` at byte `at` of `dv`; `key` is the global tensor's shadow, undefined
   * in shared memory (the location's key in exec/memory-order.ts).
   * @returns the op's value (a load's or an atomic's old value, a store's stored value).
   */
  readonly access: (dv: DataView, at: number, t: number, key: object | undefined) => SimValue;
}

/**
 * Per thread t, `op` on element `el` (`eb` bytes at element offset `off(t)` of the global or
 * shared buffer placed at `w`): out of bounds, TX6005 (reportOob) and `zero`; else the element's
 * byte address (shared: in t's CTA window), `op.checkShared` or `op.checkGlobal`, then
 * `op.access`. `site` is the op's site (m.site).
 */
export function compileElement(
  m: Machine,
  el: Element,
  site: number,
  zero: SimValue,
  op: ElementOp,
): (t: number) => SimValue {
  const { w, eb, off } = el;
  const { base, size } = w.placed;
  const bounds = accessRecord(m, w.placed, eb, site, op.boundsVerb);
  const oob = (t: number, rel: number, space: string): void => {
    bounds.addr = rel;
    bounds.thread = t;
    reportOob(bounds, space, size);
  };
  const access = op.access;
  if (w.space === "shared") {
    const acc = accessRecord(m, w.placed, eb, site, op.verb, op.strong);
    const check = op.checkShared;
    return (t) => {
      const rel = off(t) * eb;
      if (!(rel >= 0 && rel + eb <= size)) {
        oob(t, rel, "shared");
        return zero;
      }
      const at = base + rel + m.win[t]!;
      acc.addr = at;
      acc.thread = t;
      check(acc);
      return access(m.sdv, at, t, undefined);
    };
  }
  invariant(w.space === "global", `the verifier refuses ${op.what} on local buffers`);
  const k = w.param;
  const g = accessRecord<GlobalMem>(m, undefined, eb, site, op.verb, op.strong);
  const check = op.checkGlobal;
  return (t) => {
    const rel = off(t) * eb;
    if (!(rel >= 0 && rel + eb <= size)) {
      oob(t, rel, "global");
      return zero;
    }
    const gm = m.globals[k]!;
    g.buf = gm;
    g.addr = rel;
    g.thread = t;
    check(g, gm);
    return access(gm.dv, rel, t, gm.shadow);
  };
}
