import { dtypeBits, isFloat, isPacked, isVector, isWideInt, type DType } from "@tirx-ts/core";
import { bigToFloat, floatRounder } from "./float.js";
import { bigWrapper, floatToBig, floatToInt, intWrapper } from "./int.js";

/**
 * Value conversions as PTX `cvt` performs them: float → int truncates toward zero and saturates
 * (`.rzi`, NaN → 0); int → float and float → narrower float round to nearest even (`.rn`);
 * int → int keeps the low bits after sign- or zero-extending by the source's signedness;
 * anything → bool is `!= 0`.
 */
export type Conversion =
  | { readonly kind: "nn"; readonly f: (x: number) => number }
  | { readonly kind: "nb"; readonly f: (x: number) => bigint }
  | { readonly kind: "bn"; readonly f: (x: bigint) => number }
  | { readonly kind: "bb"; readonly f: (x: bigint) => bigint };

/** The conversion from values of `from` to values of `to`. */
export function conversion(from: DType, to: DType): Conversion {
  const wideFrom = isWideInt(from);
  const wideTo = isWideInt(to);
  if (wideFrom && wideTo) return { kind: "bb", f: bigWrapper(to) };
  if (wideFrom) {
    if (to === "bool") return { kind: "bn", f: (x) => (x !== 0n ? 1 : 0) };
    if (isFloat(to)) return { kind: "bn", f: (x) => bigToFloat(x, to) };
    const bits = to === "int8" || to === "uint8" ? 8 : to === "int16" || to === "uint16" ? 16 : 32;
    const w = intWrapper(to);
    return { kind: "bn", f: (x) => w(Number(BigInt.asIntN(bits, x))) };
  }
  if (wideTo) {
    if (isFloat(from)) return { kind: "nb", f: floatToBig(to) };
    const w = bigWrapper(to);
    return { kind: "nb", f: (x) => w(BigInt(x)) };
  }
  if (to === "bool") return { kind: "nn", f: (x) => (x !== 0 ? 1 : 0) };
  if (isFloat(to)) return { kind: "nn", f: floatRounder(to) };
  if (isFloat(from)) return { kind: "nn", f: floatToInt(to) };
  return { kind: "nn", f: intWrapper(to) };
}

/**
 * A host scalar (kernel argument or constant) as a value of `dt`: numbers are converted like a
 * cast from float64 for float dtypes and wrapped for integer dtypes; booleans are 0/1. A packed
 * pair (float16x2, bfloat16x2) is its 32 register bits, wrapped as a uint32; a vector its bits as a
 * bigint, lane 0 low.
 */
export function hostScalar(v: number | bigint | boolean, dt: DType): number | bigint {
  if (isPacked(dt)) dt = "uint32";
  if (isVector(dt)) return BigInt.asUintN(dtypeBits(dt), BigInt(v));
  if (typeof v === "boolean") v = v ? 1 : 0;
  if (isWideInt(dt)) {
    if (typeof v === "bigint") return bigWrapper(dt)(v);
    return Number.isInteger(v) ? bigWrapper(dt)(BigInt(v)) : floatToBig(dt)(v);
  }
  if (typeof v === "bigint")
    return (conversion("int64", dt) as Extract<Conversion, { kind: "bn" }>).f(v);
  if (dt === "bool") return v !== 0 ? 1 : 0;
  if (isFloat(dt)) return floatRounder(dt)(v);
  return Number.isInteger(v) ? intWrapper(dt)(v) : floatToInt(dt)(v);
}
