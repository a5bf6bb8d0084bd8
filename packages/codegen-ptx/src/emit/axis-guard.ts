import {
  dtypeBytes,
  isStaticShape,
  numel,
  type AccessIndex,
  type Buffer,
  type Span,
} from "@tirx-ts/core";
import type { EmitContext } from "./context.js";
import type { ValueEmitter } from "./value-emitter.js";
import { recordFirst } from "./bounds-check.js";
import type { BoundsSite } from "./bounds-site.js";

/**
 * The condition under which an access in an arm of `if_then_else` gives the value used: its
 * select's condition operand, true for the then-arm (`negate` false) or false for the else-arm.
 * Both arms are evaluated (selp), so an index past its axis in the arm not selected reads a
 * discarded value inside the buffer: no error.
 */
export interface ArmCondition {
  readonly cond: string;
  readonly negate: boolean;
}

/** What {@link emitAxisGuards} needs of the access besides its buffer and indices. */
export interface AxisGuardAccess {
  readonly verb: BoundsSite["verb"];
  readonly accessBytes: number;
  readonly space: BoundsSite["space"];
  readonly span?: Span;
  /** The arms of the selects the access is in, outermost first (empty outside any). */
  readonly arms?: readonly ArmCondition[];
}

/**
 * Under `checkBounds`, the guards of an access's author indices (`index`: those core's
 * `axis-checks` pass left to the run, which read data): each index is emitted again
 * (`ValueEmitter.again`) and compared, unsigned, with its axis's extent (`setp.lt.u32`: a
 * negative index is a huge one); where it is outside [0, extent) and the access's arms are
 * selected, the first such thread of the launch writes a site naming the axis and the index
 * into the out-of-range record (`recordFirst`). Returns the predicate, true where every index is
 * in its axis (or the access's value is discarded), on which the caller predicates the access,
 * so that an index past its axis skips it (a load reads 0); undefined when there is nothing to
 * guard. The runtime's report names the axis as the simulator's does (core's `axisOutOfRange`).
 */
export function emitAxisGuards(
  ctx: EmitContext,
  ex: ValueEmitter,
  buffer: Buffer,
  index: AccessIndex | undefined,
  access: AxisGuardAccess,
): string | undefined {
  if (!ctx.checkBounds || index === undefined || index.length === 0) return undefined;
  const bufferBytes = isStaticShape(buffer.shape)
    ? numel(buffer.shape as readonly number[]) * dtypeBytes(buffer.dtype)
    : 0;
  // Where the access's value is discarded, no index is an error: computed once for all axes.
  let discarded: string | undefined;
  const arms = access.arms ?? [];
  if (arms.length > 0) {
    let sel: string | undefined;
    for (const a of arms) {
      let c = ex.toReg(a.cond, "bool");
      if (a.negate) {
        const n = ctx.reg("bool");
        ctx.ins(`not.pred ${n}, ${c}`);
        c = n;
      }
      sel = andPred(ctx, sel, c);
    }
    discarded = ctx.reg("bool");
    ctx.ins(`not.pred ${discarded}, ${sel}`);
  }
  let all: string | undefined;
  for (const a of index) {
    const i = ex.toReg(ex.again(a.index), "int32");
    const extent =
      typeof a.extent === "number" ? String(a.extent) : ex.toReg(ex.again(a.extent), "int32");
    let ok = ctx.reg("bool");
    ctx.ins(`setp.lt.u32 ${ok}, ${i}, ${extent}`);
    if (discarded !== undefined) {
      const either = ctx.reg("bool");
      ctx.ins(`or.pred ${either}, ${ok}, ${discarded}`);
      ok = either;
    }
    const id = ctx.boundsSites.length;
    ctx.boundsSites.push({
      buffer: buffer.name,
      space: access.space,
      verb: access.verb,
      accessBytes: access.accessBytes,
      bufferBytes,
      ...(access.span ? { span: access.span } : {}),
      ...(buffer.span ? { declared: buffer.span } : {}),
      axis: {
        axis: a.axis,
        name: a.name,
        view: a.view,
        sub: a.sub,
        extent: typeof a.extent === "number" ? a.extent : a.extent.name,
      },
    });
    recordFirst(ctx, ok, id, () => {
      const wide = ctx.regs.fresh("rd");
      ctx.ins(`cvt.s64.s32 ${wide}, ${i}`);
      return wide;
    });
    all = andPred(ctx, all, ok);
  }
  return all;
}

/**
 * The predicate `a && b` in a fresh register (`and.pred`), or `b` itself where `a` is undefined
 * (nothing to combine yet).
 */
export function andPred(ctx: EmitContext, a: string | undefined, b: string): string {
  if (a === undefined) return b;
  const both = ctx.reg("bool");
  ctx.ins(`and.pred ${both}, ${a}, ${b}`);
  return both;
}
