import type { DType } from "../dtype.js";
import { invariant } from "../invariant.js";

/**
 * Integers as the GPU holds them: two's complement of the dtype's width, wrapping on overflow.
 * Values up to 32 bits are JS numbers; int64/uint64 are bigints. bool is 0 or 1.
 */

/** Wrap an integer-valued number (any magnitude) into the range of `dt` (≤ 32 bits or bool). */
export function intWrapper(dt: DType): (x: number) => number {
  switch (dt) {
    case "bool":
      return (x) => x & 1;
    case "int8":
      return (x) => (x << 24) >> 24;
    case "uint8":
      return (x) => x & 0xff;
    case "int16":
      return (x) => (x << 16) >> 16;
    case "uint16":
      return (x) => x & 0xffff;
    case "int32":
      return (x) => x | 0;
    case "uint32":
      return (x) => x >>> 0;
    default:
      invariant(false, `intWrapper: ${dt} is not a narrow integer dtype`);
  }
}

/** Wrap a bigint into int64 or uint64. */
export function bigWrapper(dt: DType): (x: bigint) => bigint {
  return dt === "int64" ? (x) => BigInt.asIntN(64, x) : (x) => BigInt.asUintN(64, x);
}

/** [min, max] of an integer dtype of at most 32 bits (bool: [0, 1]). */
export function intRange(dt: DType): readonly [number, number] {
  switch (dt) {
    case "bool":
      return [0, 1];
    case "int8":
      return [-128, 127];
    case "uint8":
      return [0, 255];
    case "int16":
      return [-32768, 32767];
    case "uint16":
      return [0, 65535];
    case "int32":
      return [-(2 ** 31), 2 ** 31 - 1];
    case "uint32":
      return [0, 2 ** 32 - 1];
    default:
      invariant(false, `intRange: ${dt} is not a narrow integer dtype`);
  }
}

/**
 * Float to integer as `cvt.rzi`: truncate toward zero, saturate to the dtype's range, NaN → 0.
 * Narrow dtypes only; see `floatToBig` for 64-bit.
 */
export function floatToInt(dt: DType): (x: number) => number {
  const [lo, hi] = intRange(dt);
  return (x) => (x !== x ? 0 : x <= lo ? lo : x >= hi ? hi : Math.trunc(x) || 0);
}

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;
const U64_MAX = 2n ** 64n - 1n;

/** Float to int64/uint64 as `cvt.rzi.{s64,u64}`: truncate, saturate, NaN → 0. */
export function floatToBig(dt: DType): (x: number) => bigint {
  const lo = dt === "int64" ? I64_MIN : 0n;
  const hi = dt === "int64" ? I64_MAX : U64_MAX;
  return (x) => {
    if (x !== x) return 0n;
    if (x === Infinity) return hi;
    if (x === -Infinity) return lo;
    const b = BigInt(Math.trunc(x));
    return b < lo ? lo : b > hi ? hi : b;
  };
}
