import type { PackedDType } from "../dtype.js";
import { addRounded, fmaRounded, mulRounded } from "./directed.js";
import { bf16Bits, bf16Value, f16Bits, f16Value } from "./float.js";

/**
 * Lane arithmetic of the packed pairs float16x2 and bfloat16x2 (PTX ISA, "Packed Data Types";
 * "Half Precision Floating-Point Instructions"). A packed value is its 32 register bits as an
 * unsigned number, lane 0 in the low 16 bits, lane 1 in the high 16 bits. Each lane is computed
 * exactly and rounded once to nearest even in the lane's format (numeric/directed.ts); a NaN
 * result is the canonical NaN 0x7fff of either format.
 */

/** The 16-bit code of `x` in the lane format of `dt` (RNE; NaN → 0x7fff). */
export function laneBits(x: number, dt: PackedDType): number {
  return dt === "float16x2" ? f16Bits(x) : bf16Bits(x);
}

/** The exact value of the 16-bit lane code `bits` of `dt`. */
export function laneValue(bits: number, dt: PackedDType): number {
  return dt === "float16x2" ? f16Value(bits & 0xffff) : bf16Value(bits & 0xffff);
}

/** Bits of the pair (lo in lane 0, hi in lane 1) from two 16-bit codes. */
export const joinLanes = (lo: number, hi: number): number => ((hi << 16) | (lo & 0xffff)) >>> 0;

/** The value of lane `lane` (0 low, 1 high) of the packed bits `x`. */
export function laneOf(x: number, lane: 0 | 1, dt: PackedDType): number {
  return laneValue(lane === 0 ? x & 0xffff : x >>> 16, dt);
}

/** Apply `f` to the lane values of each operand, lane by lane, and pack the lane results. */
export function laneWise(
  dt: PackedDType,
  xs: readonly number[],
  f: (...lanes: number[]) => number,
): number {
  const lane = (k: 0 | 1): number => laneBits(f(...xs.map((x) => laneOf(x, k, dt))), dt);
  return joinLanes(lane(0), lane(1));
}

/** `add.rn` of one lane in the lane's format. */
export const laneAdd = (dt: PackedDType, a: number, b: number, sub = false): number =>
  addRounded(a, b, dt === "float16x2" ? "float16" : "bfloat16", "rn", sub);

/** `mul.rn` of one lane in the lane's format. */
export const laneMul = (dt: PackedDType, a: number, b: number): number =>
  mulRounded(a, b, dt === "float16x2" ? "float16" : "bfloat16", "rn");

/** `fma.rn` of one lane in the lane's format (one rounding). */
export const laneFma = (dt: PackedDType, a: number, b: number, c: number): number =>
  fmaRounded(a, b, c, dt === "float16x2" ? "float16" : "bfloat16", "rn");

/**
 * `max` / `min` of one lane (PTX ISA, max / min, half precision): a NaN operand gives the other
 * operand, both NaN the canonical NaN; −0 orders below +0 (IEEE 754-2019 maximumNumber /
 * minimumNumber).
 */
export function laneMinMax(a: number, b: number, max: boolean): number {
  if (a !== a) return b;
  if (b !== b) return a;
  if (a === 0 && b === 0) {
    const aNeg = Object.is(a, -0);
    const bNeg = Object.is(b, -0);
    return max ? (aNeg && bNeg ? -0 : 0) : aNeg || bNeg ? -0 : 0;
  }
  return max ? Math.max(a, b) : Math.min(a, b);
}
