import type { PrimExpr, ExprLike } from "./expr.js";
import { callValueOp } from "./op-call.js";
import { callerSpan } from "./span.js";

/**
 * The math family of `T` (records in core `ops/math`, `ops/arith/fma.ts`): exact IEEE results on
 * the simulator and the GPU alike. float16/bfloat16 operands compute in float32 and round once.
 * @throws TirxError TX2005 for an operand dtype the op does not take.
 */
export const math = {
  /** Correctly rounded square root (PTX `sqrt.rn`). Float dtypes. */
  sqrt: (x: ExprLike): PrimExpr => callValueOp("sqrt", [x], callerSpan()),
  /** |x| (PTX `abs`). Float dtypes, int16, int32 (abs of the minimum integer is itself). */
  abs: (x: ExprLike): PrimExpr => callValueOp("abs", [x], callerSpan()),
  /** Largest integral value ≤ x (PTX `cvt.rmi`). Float dtypes. */
  floor: (x: ExprLike): PrimExpr => callValueOp("floor", [x], callerSpan()),
  /** Smallest integral value ≥ x (PTX `cvt.rpi`). Float dtypes. */
  ceil: (x: ExprLike): PrimExpr => callValueOp("ceil", [x], callerSpan()),
  /** Nearest integral value, ties to even, as TIR `round` (PTX `cvt.rni`). Float dtypes. */
  round: (x: ExprLike): PrimExpr => callValueOp("round", [x], callerSpan()),
  /** True when x is NaN (PTX `testp.notanumber`); bool. */
  isnan: (x: ExprLike): PrimExpr => callValueOp("isnan", [x], callerSpan()),
  /** True when x is ±infinity (PTX `testp.infinite`); bool. */
  isinf: (x: ExprLike): PrimExpr => callValueOp("isinf", [x], callerSpan()),
  /** `a * b + c` rounded once (PTX `fma.rn`). float32 or float64, all three the same dtype. */
  fma: (a: ExprLike, b: ExprLike, c: ExprLike): PrimExpr =>
    callValueOp("fma", [a, b, c], callerSpan()),
};
