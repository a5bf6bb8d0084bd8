import { TirxError, type Span } from "@tirx-ts/core";
import type { PrimExpr, ExprLike } from "./expr.js";
import { callValueOp } from "./op-call.js";
import { callerSpan } from "./span.js";
import { checkOptions } from "./check.js";

/** The choice between the accurate and the fast approximate form of a transcendental op. */
export interface MathOptions {
  /**
   * `true`: the PTX `.approx` instruction (fast; error bound documented on the op record's
   * `approx`, e.g. `exp.approx`: 2 + floor(1.173·|x|) ulp, subnormals flushed). Default `false`:
   * the accurate sequence (≤ 2 ulp on all float32 inputs, bit for bit the same on simulator and GPU).
   */
  readonly approx?: boolean;
}

/** `opts` checked: undefined or `{ approx }` (TX1002 otherwise, with a "did you mean"). */
function mathOptions(name: string, opts: unknown, span?: Span): MathOptions {
  const o = checkOptions(opts, ["approx"], `T.${name}`, span) as MathOptions;
  if (o.approx !== undefined && typeof o.approx !== "boolean") {
    throw new TirxError("TX1002", `approx of T.${name} must be true or false`, span);
  }
  return o;
}

/**
 * A transcendental op: `name` or `name.approx` by `opts.approx`.
 * @throws TirxError TX1002 for options other than `{ approx: boolean }`.
 */
function trans(name: string, x: ExprLike, opts: MathOptions | undefined, span?: Span): PrimExpr {
  const o = mathOptions(name, opts, span);
  return callValueOp(o.approx ? `${name}.approx` : name, [x], span);
}

/** An op that exists only in its approximate form so far: `{ approx: true }` is required. */
function approxOnly(
  name: string,
  x: ExprLike,
  opts: MathOptions | undefined,
  span?: Span,
): PrimExpr {
  if (!mathOptions(name, opts, span).approx) {
    throw new TirxError(
      "TX2010",
      `T.${name} has only an approximate form so far: write T.${name}(x, { approx: true })`,
      span,
    );
  }
  return callValueOp(`${name}.approx`, [x], span);
}

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
  /**
   * e^x, float32 (16-bit floats through float32, rounded once). Accurate (≤ 2 ulp) or, with
   * `{ approx: true }`, `ex2.approx.ftz.f32(x·log2e)` as CUDA's `__expf` (2 + floor(1.173·|x|) ulp
   * for x ≥ -87.33; below, subnormal results flush to +0).
   * @throws TirxError TX2005 for float64 and non-float operands.
   */
  exp: (x: ExprLike, opts?: MathOptions): PrimExpr => trans("exp", x, opts, callerSpan()),
  /** 2^x; accurate (≤ 2 ulp) or `ex2.approx.ftz.f32` (2 ulp, x ≥ -126). float32/16-bit. @throws TirxError TX2005. */
  exp2: (x: ExprLike, opts?: MathOptions): PrimExpr => trans("exp2", x, opts, callerSpan()),
  /** Natural log; accurate (≤ 2 ulp) or `lg2.approx.ftz.f32(x)·ln2` (CUDA `__logf`). float32/16-bit. @throws TirxError TX2005. */
  log: (x: ExprLike, opts?: MathOptions): PrimExpr => trans("log", x, opts, callerSpan()),
  /** log2; accurate (≤ 2 ulp) or `lg2.approx.ftz.f32`. float32/16-bit. @throws TirxError TX2005. */
  log2: (x: ExprLike, opts?: MathOptions): PrimExpr => trans("log2", x, opts, callerSpan()),
  /**
   * 1/sqrt(x); accurate (`sqrt.rn` then `div.rn`, < 1.5 ulp; float64 too) or
   * `rsqrt.approx.ftz.f32` (float32/16-bit only). @throws TirxError TX2005.
   */
  rsqrt: (x: ExprLike, opts?: MathOptions): PrimExpr => trans("rsqrt", x, opts, callerSpan()),
  /** sin(x) by `sin.approx.ftz.f32` (abs. error 2^-21.41 on [-π, π]); `{ approx: true }` required. @throws TirxError TX2010 without it, TX2005. */
  sin: (x: ExprLike, opts?: MathOptions): PrimExpr => approxOnly("sin", x, opts, callerSpan()),
  /** cos(x) by `cos.approx.ftz.f32` (abs. error 2^-21.19 on [-π, π]); `{ approx: true }` required. @throws TirxError TX2010 without it, TX2005. */
  cos: (x: ExprLike, opts?: MathOptions): PrimExpr => approxOnly("cos", x, opts, callerSpan()),
  /** tanh(x) by `tanh.approx.f32` (rel. error 2^-10.987; sm_75+); `{ approx: true }` required. @throws TirxError TX2010 without it, TX2005, TX5006 below sm_75. */
  tanh: (x: ExprLike, opts?: MathOptions): PrimExpr => approxOnly("tanh", x, opts, callerSpan()),
  /** `a * b + c` rounded once (PTX `fma.rn`). float32 or float64, all three the same dtype. */
  fma: (a: ExprLike, b: ExprLike, c: ExprLike): PrimExpr =>
    callValueOp("fma", [a, b, c], callerSpan()),
};
