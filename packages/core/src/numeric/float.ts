/**
 * Floating-point formats narrower than float64, as the GPU rounds them: every result is rounded
 * once, to nearest with ties to even (PTX `.rn`), from the exact float64 value. float64 holds
 * the exact result of +, -, *, / of two float16/bfloat16/float32 operands closely enough that a
 * single rounding from it is correct (53 ≥ 2p + 2 bits for p ≤ 24).
 * NaN results are written as the canonical NaN of PTX (all exponent and mantissa bits set).
 */

import { roundToFormat } from "./round.js";
import { roundFp8 } from "./fp8.js";

export { roundToFormat } from "./round.js";

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

const bitsView = new DataView(new ArrayBuffer(8));

const F16_MAX = 65504;
const BF16_MAX = (2 - 2 ** -7) * 2 ** 127;

/** Round to the nearest float16 value (RNE), as `cvt.rn.f16.f32` and `add.rn.f16` do. */
export function roundF16(x: number): number {
  return roundToFormat(x, 11, -14, F16_MAX);
}

/** Round to the nearest bfloat16 value (RNE), as `cvt.rn.bf16.f32` does. */
export function roundBf16(x: number): number {
  return roundToFormat(x, 8, -126, BF16_MAX);
}

/**
 * float16 bits of `x`, rounded to nearest even (IEEE 754 binary16); NaN → 0x7fff. One pass over
 * the float64 bits: the top 10 fraction bits, rounded by the 11th and the sticky rest (a carry
 * into the exponent field is the next binade, or infinity); below the normal range the value in
 * units of 2^-24, rounded to an integer.
 */
export function f16Bits(x: number): number {
  if (x !== x) return 0x7fff;
  bitsView.setFloat64(0, x);
  const hi = bitsView.getUint32(0);
  const lo = bitsView.getUint32(4);
  const sign = (hi >>> 16) & 0x8000;
  const e = ((hi >>> 20) & 0x7ff) - 1023;
  if (e > 15) return sign | 0x7c00; // beyond 65504 + half an ulp, or infinite
  if (e >= -14) {
    const frac = hi & 0xfffff;
    const h = ((e + 15) << 10) | (frac >>> 10);
    const half = (frac >>> 9) & 1;
    const sticky = (frac & 0x1ff) !== 0 || lo !== 0;
    return sign | (half && (sticky || h & 1) ? h + 1 : h);
  }
  // Subnormal or zero: |x| · 2^24 is exact (a power-of-two scaling) and below 1024.
  const m = Math.abs(x) * 2 ** 24;
  const f = Math.floor(m);
  const d = m - f;
  return sign | (d > 0.5 || (d === 0.5 && (f & 1) === 1) ? f + 1 : f);
}

let f16Table: Float64Array | undefined;

/** Value of float16 bits (exact). */
export function f16Value(bits: number): number {
  if (!f16Table) {
    f16Table = new Float64Array(65536);
    for (let b = 0; b < 65536; b++) {
      const s = b & 0x8000 ? -1 : 1;
      const e = (b >> 10) & 0x1f;
      const m = b & 0x3ff;
      f16Table[b] =
        e === 0
          ? s * m * 2 ** -24
          : e === 31
            ? m
              ? NaN
              : s * Infinity
            : s * (1 + m / 1024) * 2 ** (e - 15);
    }
  }
  return f16Table[bits & 0xffff]!;
}

/** bfloat16 bits of `x`, rounding to nearest even first; NaN → 0x7fff. */
export function bf16Bits(x: number): number {
  if (x !== x) return 0x7fff;
  f32[0] = roundBf16(x);
  return u32[0]! >>> 16;
}

/** Value of bfloat16 bits (exact). */
export function bf16Value(bits: number): number {
  u32[0] = (bits & 0xffff) << 16;
  return f32[0]!;
}

/**
 * The rounding function that makes a float64 value a value of float dtype `dt`: RNE, overflow to
 * ±inf; for float8_e4m3/float8_e5m2 RNE with saturation (`cvt.rn.satfinite`, numeric/fp8.ts).
 */
export function floatRounder(dt: string): (x: number) => number {
  switch (dt) {
    case "float16":
      return roundF16;
    case "bfloat16":
      return roundBf16;
    case "float32":
      return Math.fround;
    case "float8_e4m3":
      return (x) => roundFp8(x, "e4m3");
    case "float8_e5m2":
      return (x) => roundFp8(x, "e5m2");
    default:
      return (x) => x;
  }
}

/**
 * A 64-bit integer as a value of float dtype `dt`, rounded once (RNE) as `cvt.rn.f*.s64` does.
 * Number(bigint) is already correctly rounded to float64; for narrower formats the low bits are
 * folded into a sticky bit first so the double rounding through float64 cannot go wrong.
 */
export function bigToFloat(v: bigint, dt: string): number {
  if (dt === "float64") return Number(v);
  const neg = v < 0n;
  let a = neg ? -v : v;
  const bits = a.toString(2).length;
  let scale = 1;
  if (bits > 53) {
    const k = bits - 53;
    const sticky = (a & ((1n << BigInt(k)) - 1n)) !== 0n;
    a = (a >> BigInt(k)) | (sticky ? 1n : 0n);
    scale = 2 ** k;
  }
  const x = Number(a) * scale;
  return floatRounder(dt)(neg ? -x : x);
}
