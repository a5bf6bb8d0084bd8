import { TirxError, constInt, type Call, type CallExpr, type Expr, type Span } from "@tirx-ts/core";
import { INTRINSIC_PTX, VALUE_INTRINSIC_PTX, type OperandForm } from "../intrinsics.js";
import { elemBytes } from "../types.js";
import { elementRef, memRef } from "./address.js";
import type { ExprEmitter } from "./expr.js";

/**
 * The memory operand of an mbarrier object: a `BufferPtr` into a shared uint64 buffer (offset in
 * elements of the buffer's dtype) becomes `[base]`, `[base+disp]` or `[%r+disp]` with a 32-bit
 * shared address; any other uint32 expression is used as the address itself.
 */
export function mbarOperand(ex: ExprEmitter, e: Expr): string {
  if (e.kind === "BufferPtr") {
    return elementRef(ex.ctx, ex, e.buffer, e.offset, elemBytes(e.buffer.dtype)).ref;
  }
  return memRef(ex.register(e), 0);
}

/** The PTX operands of an intrinsic's arguments, per the forms of its table entry. */
function operands(
  ex: ExprEmitter,
  op: string,
  forms: readonly OperandForm[],
  args: readonly Expr[],
  span?: Span,
): string[] {
  if (args.length !== forms.length) {
    throw new TirxError("TX2010", `${op} takes ${forms.length} operands, got ${args.length}`, span);
  }
  return forms.map((form, i) => {
    const a = args[i]!;
    if (form === "mbar") return mbarOperand(ex, a);
    if (form === "b32") return ex.value(a);
    const c = constInt(a);
    if (c === undefined)
      throw new TirxError("TX2010", `operand ${i + 1} of ${op} must be a static integer`, span);
    return String(c);
  });
}

/**
 * Emit a statement intrinsic as its one instruction.
 * @throws TirxError TX2010 for an intrinsic without a lowering or with wrong operands.
 */
export function emitIntrinsic(ex: ExprEmitter, s: Call): void {
  const low = INTRINSIC_PTX[s.op];
  if (!low) throw new TirxError("TX2010", `intrinsic "${s.op}" has no PTX lowering`, s.span);
  ex.ctx.ins(low.ptx(operands(ex, s.op, low.operands, s.args, s.span)));
}

/**
 * A value intrinsic split in two: `prepare` computes the operands (so that a spin loop can do it
 * once, before its label), `issue` emits the instruction and returns its result register.
 * @throws TirxError TX2010 for an intrinsic without a lowering or with wrong operands.
 */
export function prepareValueIntrinsic(ex: ExprEmitter, e: CallExpr): { issue(): string } {
  const low = VALUE_INTRINSIC_PTX[e.op];
  if (!low) {
    throw new TirxError("TX2010", `value intrinsic "${e.op}" has no PTX lowering`, e.span);
  }
  const ops = operands(ex, e.op, low.operands, e.args, e.span);
  return {
    issue(): string {
      const d = ex.ctx.reg(e.dtype);
      ex.ctx.ins(low.ptx(d, ops));
      return d;
    },
  };
}
