import { dtypeBits, isFloat, isFloat8, isSigned, isVector, type DType } from "../dtype.js";
import { fp8Format, fp8Max, roundFp8Unsaturated } from "../numeric/fp8.js";
import { TirxError } from "../diagnostics.js";
import type { Span } from "../span.js";
import { withArticle } from "../article.js";

/** Largest finite float16 and bfloat16, and the magnitude from which rounding gives infinity. */
const HALF_LIMITS: Partial<Record<DType, { max: number; inf: number }>> = {
  // IEEE binary16: max 65504 = (2 - 2^-10)·2^15; values ≥ (2 - 2^-11)·2^15 round to inf.
  float16: { max: 65504, inf: (2 - 2 ** -11) * 2 ** 15 },
  // bfloat16: max (2 - 2^-7)·2^127; values ≥ (2 - 2^-8)·2^127 round to inf.
  bfloat16: { max: (2 - 2 ** -7) * 2 ** 127, inf: (2 - 2 ** -8) * 2 ** 127 },
};

/**
 * Refuse a literal that `dtype` cannot hold, as TVM's IntImm range check does: an integer outside
 * the dtype's range (bool takes 0 and 1), a finite float16/bfloat16 literal that would round
 * to infinity, or a finite float8 literal that would round beyond its largest finite value
 * (where `cvt.rn.satfinite` would clamp it). Explicit ±Infinity and NaN are kept. A vector dtype
 * has no literal: PTX has no vector immediate (a pair's literal is its 32 bits).
 * @throws TirxError TX1015 (dsl/literal-range) at `span`, the author's line; TX1007 for a literal
 *   of a vector dtype.
 */
export function checkLiteral(value: number | bigint, dtype: DType, span?: Span): void {
  if (isVector(dtype)) {
    throw new TirxError(
      "TX1007",
      `${withArticle(dtype)} has no literal (${value}): PTX has no vector immediate; build one with T.ptx.vec.broadcast(x, n) or T.ptx.vec.make(...)`,
      span,
    );
  }
  if (isFloat8(dtype)) {
    const fmt = fp8Format(dtype);
    if (typeof value === "number" && Number.isFinite(value)) {
      const r = roundFp8Unsaturated(value, fmt);
      if (Math.abs(r) > fp8Max(fmt)) {
        throw new TirxError(
          "TX1015",
          `${value} does not fit ${dtype}: its largest finite value is ${fp8Max(fmt)} (the literal would saturate to ${r < 0 ? "-" : ""}${fp8Max(fmt)})`,
          span,
        );
      }
    }
    return;
  }
  if (isFloat(dtype)) {
    const lim = HALF_LIMITS[dtype];
    if (lim && typeof value === "number" && Number.isFinite(value) && Math.abs(value) >= lim.inf) {
      throw new TirxError(
        "TX1015",
        `${value} does not fit ${dtype}: its largest finite value is ${lim.max} (the literal would round to ${value < 0 ? "-" : ""}Infinity)`,
        span,
      );
    }
    return;
  }
  if (typeof value === "number" && !Number.isInteger(value)) return;
  const v = BigInt(value);
  const bits = BigInt(dtype === "bool" ? 1 : dtypeBits(dtype));
  const [lo, hi] =
    dtype === "bool"
      ? [0n, 1n]
      : isSigned(dtype)
        ? [-(1n << (bits - 1n)), (1n << (bits - 1n)) - 1n]
        : [0n, (1n << bits) - 1n];
  if (v < lo || v > hi) {
    throw new TirxError(
      "TX1015",
      `${value} does not fit ${dtype} (range ${lo}..${hi}); it would be silently wrapped — write a value in range, or cast explicitly`,
      span,
    );
  }
}
