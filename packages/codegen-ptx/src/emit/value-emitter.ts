import type { DType, Expr } from "@tirx-ts/core";
import type { EmitContext } from "./context.js";

/**
 * What address and intrinsic-operand emission (`address.ts`, `intrinsic.ts`) asks of the
 * expression emitter, which implements it (`ExprEmitter`): operands come back as PTX text, a
 * register (`%r3`) or an immediate (`7`, `0f3F800000`).
 */
export interface ValueEmitter {
  readonly ctx: EmitContext;
  /** Emit `e`; the operand holds its value. */
  emit(e: Expr): string;
  /** Emit `e` as a value operand (see `ExprEmitter.value`). */
  value(e: Expr): string;
  /** The value of `e` in a register (immediates are moved into one). */
  register(e: Expr): string;
  /** `op` in a register of `dt`'s class. */
  toReg(op: string, dt: DType): string;
  /**
   * Emit `e` once more for a second use of its value (an axis guard's index): operands emitted
   * ahead for the expression being emitted stay for their parents.
   */
  again(e: Expr): string;
}
