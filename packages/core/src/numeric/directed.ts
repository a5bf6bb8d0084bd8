/**
 * IEEE 754 rounding in the four directions of PTX (`.rn` nearest-even, `.rz` toward zero, `.rm`
 * toward −∞, `.rp` toward +∞; PTX ISA, "Floating-Point Instructions: add/sub/mul/fma" and "cvt")
 * of exact values, and the exact add, sub, mul, fma and conversions built on it.
 *
 * Method: every finite float is m·2^e exactly (m a bigint); sums, differences, products and
 * a·b + c are formed exactly as bigints at the smallest exponent involved, then rounded once in
 * the requested direction (the remainder below the result's quantum decides: `.rz` drops it, `.rm`
 * / `.rp` step away from zero when it is nonzero and the sign points that way, `.rn` compares it
 * with half a quantum, ties to even). No float64 arithmetic touches a finite result, so f64 fma
 * and f32 sums whose exact value float64 cannot hold are exact too.
 * Overflow follows IEEE 754 §7.4: `.rn` gives ±∞; `.rz` ±max-finite; `.rp` +∞ or −max; `.rm`
 * +max or −∞. An exact zero sum of nonzero-or-mixed-sign terms is +0, −0 under `.rm` (§6.3).
 */

import { dyadic } from "./dyadic.js";

/** A PTX floating-point rounding modifier. */
export type RoundMode = "rn" | "rz" | "rm" | "rp";

/** A PTX float-to-integer rounding modifier (round to an integral value). */
export type IntRoundMode = "rni" | "rzi" | "rmi" | "rpi";

interface Format {
  readonly p: number;
  readonly emin: number;
  readonly emax: number;
}

const FORMATS: Readonly<Record<string, Format>> = {
  float64: { p: 53, emin: -1022, emax: 1023 },
  float32: { p: 24, emin: -126, emax: 127 },
  float16: { p: 11, emin: -14, emax: 15 },
  bfloat16: { p: 8, emin: -126, emax: 127 },
};

const bitLength = (v: bigint): number => v.toString(2).length;

/** `q` bits of quantum scaled exactly: Number(a)·2^q for a < 2^54 (two steps below 2^-1022). */
const scale = (a: bigint, q: number): number =>
  q < -1022 ? Number(a) * 2 ** (q + 600) * 2 ** -600 : Number(a) * 2 ** q;

/** Round an integer quotient `r` with remainder `rem` (0 ≤ rem < 2^s) in direction `mode`. */
function step(r: bigint, rem: bigint, s: bigint, neg: boolean, mode: RoundMode): bigint {
  if (rem === 0n) return r;
  switch (mode) {
    case "rz":
      return r;
    case "rp":
      return neg ? r : r + 1n;
    case "rm":
      return neg ? r + 1n : r;
    case "rn": {
      const half = 1n << (s - 1n);
      return rem > half || (rem === half && (r & 1n) === 1n) ? r + 1n : r;
    }
  }
}

/**
 * m·2^e rounded once in direction `mode` to the format of `dt` (float16, bfloat16, float32,
 * float64), overflow per IEEE 754 §7.4 (see the file comment). m = 0 gives `zero` (default +0).
 */
export function roundDyadicMode(
  m: bigint,
  e: number,
  dt: string,
  mode: RoundMode,
  zero = 0,
): number {
  const f = FORMATS[dt] ?? FORMATS.float64!;
  if (m === 0n) return zero;
  const neg = m < 0n;
  let a = neg ? -m : m;
  const lead = e + bitLength(a) - 1;
  const q = Math.max(lead, f.emin) - (f.p - 1);
  if (q > e) {
    const s = BigInt(q - e);
    const r = a >> s;
    a = step(r, a - (r << s), s, neg, mode);
  } else {
    a <<= BigInt(e - q);
  }
  const max = (2 - 2 ** (1 - f.p)) * 2 ** f.emax;
  let v = scale(a, q);
  if (v > max) {
    const away = mode === "rn" || (mode === "rp" && !neg) || (mode === "rm" && neg);
    v = away ? Infinity : max;
  }
  return neg ? -v : v;
}

/** The exact zero of `x + y` for zero-valued terms of these signs (IEEE 754 §6.3). */
function zeroSum(xNeg: boolean, yNeg: boolean, mode: RoundMode): number {
  if (xNeg && yNeg) return -0;
  if (!xNeg && !yNeg) return 0;
  return mode === "rm" ? -0 : 0;
}

const negative = (x: number): boolean => x < 0 || Object.is(x, -0);

/**
 * `a + b` (or `a − b` when `sub`) of finite or special floats, rounded once in direction `mode`
 * to `dt` (PTX ISA, add / sub `.rnd`). NaN or ∞ operands follow IEEE 754 (∞ − ∞ is NaN).
 */
export function addRounded(a: number, b: number, dt: string, mode: RoundMode, sub = false): number {
  const y = sub ? -b : b;
  if (!Number.isFinite(a) || !Number.isFinite(y)) return a + y;
  if (a === 0 && y === 0) return zeroSum(negative(a), negative(y), mode);
  const x = dyadic(a);
  const z = dyadic(y);
  const e = Math.min(x.e, z.e);
  const sum = (x.m << BigInt(x.e - e)) + (z.m << BigInt(z.e - e));
  return roundDyadicMode(sum, e, dt, mode, mode === "rm" ? -0 : 0);
}

/** `a · b` rounded once in direction `mode` to `dt` (PTX ISA, mul `.rnd`); IEEE specials. */
export function mulRounded(a: number, b: number, dt: string, mode: RoundMode): number {
  if (!Number.isFinite(a) || !Number.isFinite(b) || a === 0 || b === 0) return a * b;
  const x = dyadic(a);
  const y = dyadic(b);
  return roundDyadicMode(x.m * y.m, x.e + y.e, dt, mode);
}

/**
 * `a · b + c` with one rounding in direction `mode` to `dt` (IEEE 754 fusedMultiplyAdd; PTX ISA,
 * fma `.rnd`): the product and the sum formed exactly as bigints. A zero product keeps its IEEE
 * sign, so (+0·x) + (−0) follows the zero-sum rule of `mode`.
 */
export function fmaRounded(a: number, b: number, c: number, dt: string, mode: RoundMode): number {
  if (!Number.isFinite(a) || !Number.isFinite(b) || !Number.isFinite(c)) {
    // Finite a·b plus an infinite c is c, even where a·b overflows a float64.
    if (Number.isFinite(a) && Number.isFinite(b)) return c;
    return a * b + c;
  }
  if (a === 0 || b === 0) {
    const p = a * b; // an exact signed zero
    if (c === 0) return zeroSum(negative(p), negative(c), mode);
    return roundDyadicMode(dyadic(c).m, dyadic(c).e, dt, mode);
  }
  const x = dyadic(a);
  const y = dyadic(b);
  const z = dyadic(c);
  const pe = x.e + y.e;
  const e = Math.min(pe, z.e);
  const sum = ((x.m * y.m) << BigInt(pe - e)) + (z.m << BigInt(z.e - e));
  return roundDyadicMode(sum, e, dt, mode, mode === "rm" ? -0 : 0);
}

/**
 * A float converted to the float format `dt` in direction `mode` (PTX ISA, cvt `.frnd`): NaN
 * stays NaN, ±∞ stays ±∞, zeros keep their sign, finite values round once (overflow per mode).
 */
export function cvtFloatRounded(x: number, dt: string, mode: RoundMode): number {
  if (x !== x || !Number.isFinite(x) || x === 0) return x;
  const d = dyadic(x);
  return roundDyadicMode(d.m, d.e, dt, mode);
}

/** An integer (number or bigint) converted to the float format `dt` in direction `mode`. */
export function cvtIntToFloat(v: number | bigint, dt: string, mode: RoundMode): number {
  const m = typeof v === "bigint" ? v : BigInt(v);
  return roundDyadicMode(m, 0, dt, mode);
}

/**
 * A float rounded to an integral value in direction `mode` (`rni` nearest-even, `rzi` toward 0,
 * `rmi` toward −∞, `rpi` toward +∞) and clamped to `[lo, hi]`, as PTX cvt float → integer does
 * (PTX ISA, cvt: "the result is clamped to the range of the destination"; NaN gives 0; ±∞ the
 * bounds). Exact: the float as m·2^e, the integer part by a bigint shift.
 */
export function cvtFloatToInt(x: number, mode: IntRoundMode, lo: bigint, hi: bigint): bigint {
  if (x !== x) return 0n;
  if (x === Infinity) return hi;
  if (x === -Infinity) return lo;
  if (x === 0) return 0n;
  const { m, e } = dyadic(x);
  let i: bigint;
  if (e >= 0) i = m << BigInt(e);
  else {
    const neg = m < 0n;
    const a = neg ? -m : m;
    const s = BigInt(-e);
    const r = a >> s;
    const fmode: RoundMode =
      mode === "rni" ? "rn" : mode === "rzi" ? "rz" : mode === "rmi" ? "rm" : "rp";
    const k = step(r, a - (r << s), s, neg, fmode);
    i = neg ? -k : k;
  }
  return i < lo ? lo : i > hi ? hi : i;
}
