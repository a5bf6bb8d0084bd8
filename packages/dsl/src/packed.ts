import { TirxError, type Span } from "@tirx-ts/core";
import { callValueOp } from "./op-call.js";
import type { ExprLike, PrimExpr } from "./expr.js";
import { callerSpan } from "./span.js";

/** A packed 16-bit float pair dtype (PTX ISA, "Packed Data Types"). */
export type PairDType = "float16x2" | "bfloat16x2";

function pairSuffix(surface: string, dtype: unknown, span?: Span): string {
  if (dtype === "float16x2") return "f16x2";
  if (dtype === "bfloat16x2") return "bf16x2";
  throw new TirxError(
    "TX2005",
    `${surface}: the pair dtype must be "float16x2" or "bfloat16x2", got ${JSON.stringify(dtype)}`,
    span,
  );
}

/**
 * `T.ptx.pack(lo, hi)`: two float16 (bfloat16) values as one float16x2 (bfloat16x2) register,
 * `lo` in lane 0, the low 16 bits: `mov.b32 d, {lo, hi}` (PTX ISA, mov; op records in core
 * `ops/arith/packed.ts`).
 * @throws TirxError TX2005 unless both are float16 or both bfloat16.
 * @example const p = T.ptx.pack(a, b) // float16x2: a low, b high
 */
export function pack(lo: ExprLike, hi: ExprLike): PrimExpr {
  return callValueOp("x2.pack", [lo, hi], callerSpan());
}

/**
 * `T.ptx.unpack(x, lane)`: lane 0 (low half) or 1 (high half) of a pair, as float16 / bfloat16:
 * `mov.b32 {a, b}, x` and take one.
 * @throws TirxError TX2010 for a lane other than 0 or 1, TX2005 for an operand that is no pair.
 */
export function unpack(x: ExprLike, lane: 0 | 1): PrimExpr {
  const span = callerSpan();
  if (lane !== 0 && lane !== 1) {
    throw new TirxError(
      "TX2010",
      `T.ptx.unpack: lane must be 0 (low half) or 1 (high half), got ${JSON.stringify(lane)}`,
      span,
    );
  }
  return callValueOp(`x2.unpack.${lane}`, [x], span);
}

/**
 * `T.ptx.x2`: arithmetic on float16x2 / bfloat16x2 pairs, lane by lane, each lane rounded once to
 * nearest even in its format (PTX ISA, "Half Precision Floating-Point Instructions"; op records in
 * core `ops/arith/packed.ts`). Every operand is one pair dtype (TX2005 otherwise). bfloat16x2
 * add/sub/mul need sm_90 (TX5006); the rest sm_80.
 * @example T.ptx.x2.fma(a, b, c) // fma.rn.f16x2 for float16x2 a, b, c
 */
export const x2 = {
  /** `add.rn.{f16x2,bf16x2} d, a, b`. @throws TirxError TX2005, TX5006 (bfloat16x2 below sm_90). */
  add: (a: ExprLike, b: ExprLike): PrimExpr => callValueOp("x2.add", [a, b], callerSpan()),
  /** `sub.rn.{f16x2,bf16x2} d, a, b`. @throws TirxError TX2005, TX5006 (bfloat16x2 below sm_90). */
  sub: (a: ExprLike, b: ExprLike): PrimExpr => callValueOp("x2.sub", [a, b], callerSpan()),
  /** `mul.rn.{f16x2,bf16x2} d, a, b`. @throws TirxError TX2005, TX5006 (bfloat16x2 below sm_90). */
  mul: (a: ExprLike, b: ExprLike): PrimExpr => callValueOp("x2.mul", [a, b], callerSpan()),
  /** `fma.rn.{f16x2,bf16x2} d, a, b, c`: a·b + c, one rounding per lane. @throws TirxError TX2005. */
  fma: (a: ExprLike, b: ExprLike, c: ExprLike): PrimExpr =>
    callValueOp("x2.fma", [a, b, c], callerSpan()),
  /** `max.{f16x2,bf16x2}`: per lane; a NaN lane gives the other operand's. @throws TirxError TX2005. */
  max: (a: ExprLike, b: ExprLike): PrimExpr => callValueOp("x2.max", [a, b], callerSpan()),
  /** `min.{f16x2,bf16x2}`: per lane; a NaN lane gives the other operand's. @throws TirxError TX2005. */
  min: (a: ExprLike, b: ExprLike): PrimExpr => callValueOp("x2.min", [a, b], callerSpan()),
  /** `neg.{f16x2,bf16x2}`: each lane's sign flipped. @throws TirxError TX2005. */
  neg: (x: ExprLike): PrimExpr => callValueOp("x2.neg", [x], callerSpan()),
  /** `abs.{f16x2,bf16x2}`: each lane's sign cleared. @throws TirxError TX2005. */
  abs: (x: ExprLike): PrimExpr => callValueOp("x2.abs", [x], callerSpan()),
  /**
   * `cvt.rn.{f16x2,bf16x2}.f32 d, hi, lo`: two float32 values rounded to nearest even into a pair,
   * `hi` into the upper half (lane 1), as PTX orders the sources (PTX ISA, cvt; sm_80).
   * @throws TirxError TX2005 for a pair dtype other than float16x2/bfloat16x2 or non-float32 sources.
   */
  cvt: (hi: ExprLike, lo: ExprLike, dtype: PairDType): PrimExpr => {
    const span = callerSpan();
    const s = pairSuffix("T.ptx.x2.cvt", dtype, span);
    return callValueOp(`cvt.rn.${s}.f32`, [hi, lo], span);
  },
  /** The pair's 32 bits as uint32 (`mov.b32`), lane 0 low (pairs also load and store through `view_as`). */
  bits: (x: ExprLike): PrimExpr => callValueOp("x2.bits", [x], callerSpan()),
  /**
   * A uint32's bits as a pair of `dtype` (`mov.b32`), lane 0 low.
   * @throws TirxError TX2005 for another dtype.
   */
  from_bits: (u: ExprLike, dtype: PairDType): PrimExpr => {
    const span = callerSpan();
    const s = pairSuffix("T.ptx.x2.from_bits", dtype, span);
    return callValueOp(`x2.from_bits.${s}`, [u], span);
  },
};
