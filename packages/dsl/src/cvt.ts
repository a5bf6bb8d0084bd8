import { PROBE_KEYS, readByAuthor } from "./author-read.js";
import { TirxError } from "@tirx-ts/core";
import { callValueOp } from "./op-call.js";
import type { ExprLike, PrimExpr } from "./expr.js";
import { callerSpan } from "./span.js";

/**
 * `T.ptx.cvt`: the packed float8 conversions of PTX (PTX ISA, cvt; sm_89 with PTX 8.1, sm_90 with
 * PTX 7.8; op records in core `ops/arith/cvt-fp8.ts`). A float8 pair is a uint16 (first element
 * in the low byte), a float16 pair a uint32 (first element in the low half). Into float8 every
 * value is rounded to nearest even and saturated (`.satfinite`, mandatory: NaN stays NaN, ±inf and
 * overflow give ±max finite: 448 for e4m3, 57344 for e5m2); out of float8 the conversion is exact.
 * A scalar `x.cast("float8_e4m3")` uses the same instructions. PTX has no bfloat16 form: convert
 * bfloat16 to float32 (exact) and use `e4m3x2_f32` / `e5m2x2_f32`.
 * @example const pair = T.ptx.cvt.e4m3x2_f32(hi, lo) // uint16: hi → high byte, lo → low byte
 */
const cvtOps = {
  /** `cvt.rn.satfinite.e4m3x2.f32 d, a, b`: float32 `a` → high byte, `b` → low byte (uint16). */
  e4m3x2_f32: (a: ExprLike, b: ExprLike): PrimExpr =>
    callValueOp("cvt.rn.satfinite.e4m3x2.f32", [a, b], callerSpan()),
  /** `cvt.rn.satfinite.e5m2x2.f32 d, a, b`: float32 `a` → high byte, `b` → low byte (uint16). */
  e5m2x2_f32: (a: ExprLike, b: ExprLike): PrimExpr =>
    callValueOp("cvt.rn.satfinite.e5m2x2.f32", [a, b], callerSpan()),
  /** `cvt.rn.satfinite.e4m3x2.f16x2 d, a`: a float16 pair (uint32) → an e4m3 pair (uint16). */
  e4m3x2_f16x2: (a: ExprLike): PrimExpr =>
    callValueOp("cvt.rn.satfinite.e4m3x2.f16x2", [a], callerSpan()),
  /** `cvt.rn.satfinite.e5m2x2.f16x2 d, a`: a float16 pair (uint32) → an e5m2 pair (uint16). */
  e5m2x2_f16x2: (a: ExprLike): PrimExpr =>
    callValueOp("cvt.rn.satfinite.e5m2x2.f16x2", [a], callerSpan()),
  /** `cvt.rn.f16x2.e4m3x2 d, a`: an e4m3 pair (uint16) → a float16 pair (uint32), exact. */
  f16x2_e4m3x2: (a: ExprLike): PrimExpr => callValueOp("cvt.rn.f16x2.e4m3x2", [a], callerSpan()),
  /** `cvt.rn.f16x2.e5m2x2 d, a`: an e5m2 pair (uint16) → a float16 pair (uint32), exact. */
  f16x2_e5m2x2: (a: ExprLike): PrimExpr => callValueOp("cvt.rn.f16x2.e5m2x2", [a], callerSpan()),
};

/**
 * The `T.ptx.cvt` namespace; a member it lacks is TX1002 naming its members, and a bfloat16 pair
 * form (which PTX lacks through PTX ISA 9.0) is TX2005 naming the float32 route.
 */
export const cvt: typeof cvtOps = new Proxy(cvtOps, {
  get(t, key, receiver) {
    if (typeof key !== "string" || key in t || PROBE_KEYS.has(key)) {
      return Reflect.get(t, key, receiver) as unknown;
    }
    if (!readByAuthor()) return undefined;
    const members = Object.keys(t).join(", ");
    if (key.includes("bf16")) {
      throw new TirxError(
        "TX2005",
        `T.ptx.cvt.${key}: PTX has no bfloat16 pair form of the float8 conversions (PTX ISA, cvt, through 9.0); convert bfloat16 to float32 (exact) and use e4m3x2_f32 / e5m2x2_f32, or x.cast("float8_e4m3") (members: ${members})`,
        callerSpan(),
      );
    }
    throw new TirxError(
      "TX1002",
      `T.ptx.cvt has no member "${key}" (members: ${members})`,
      callerSpan(),
    );
  },
});
