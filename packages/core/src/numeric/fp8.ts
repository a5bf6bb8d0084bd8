import { roundToFormat } from "./round.js";

/**
 * The two 8-bit float formats of the OCP "8-bit Floating Point Specification (OFP8)" v1.0, as PTX
 * names them `.e4m3` and `.e5m2` (PTX ISA, "Alternate Floating-Point Data Formats"):
 * - e4m3: 1 sign, 4 exponent bits (bias 7), 3 mantissa bits; no infinities; NaN is S.1111.111
 *   (0x7f / 0xff); largest finite 448 = 1.75·2^8; smallest subnormal 2^-9.
 * - e5m2: 1 sign, 5 exponent bits (bias 15), 2 mantissa bits, IEEE 754-like: ±inf S.11111.00,
 *   NaN S.11111.{01,10,11}; largest finite 57344 = 1.75·2^15; smallest subnormal 2^-16.
 *
 * Every conversion into them that PTX offers rounds to nearest even and saturates
 * (`cvt.rn.satfinite.{e4m3x2,e5m2x2}`, where `.satfinite` is mandatory): NaN stays NaN, ±inf and
 * every finite value beyond the largest finite one become ±(largest finite), the sign of zero is
 * kept. Every value of both formats is exact in float16, bfloat16 and float32, so the
 * conversions out of them (`cvt.rn.f16x2.{e4m3x2,e5m2x2}`) are exact.
 */
export type Fp8Format = "e4m3" | "e5m2";

/** The float8 dtype names, one per format. */
export type Fp8DType = "float8_e4m3" | "float8_e5m2";

interface Fp8Spec {
  /** Significand bits, the implicit bit included. */
  readonly p: number;
  /** Exponent of the smallest normal value. */
  readonly emin: number;
  /** Exponent bias. */
  readonly bias: number;
  /** Largest finite value. */
  readonly max: number;
  /** The bits of the exponent-all-ones field hold infinities (e5m2), or only NaN at .111 (e4m3). */
  readonly ieee: boolean;
}

const SPECS: Readonly<Record<Fp8Format, Fp8Spec>> = {
  e4m3: { p: 4, emin: -6, bias: 7, max: 448, ieee: false },
  e5m2: { p: 3, emin: -14, bias: 15, max: 57344, ieee: true },
};

/** The format of a float8 dtype. */
export function fp8Format(dt: Fp8DType): Fp8Format {
  return dt === "float8_e4m3" ? "e4m3" : "e5m2";
}

/** Largest finite value of `fmt`: 448 (e4m3), 57344 (e5m2). */
export function fp8Max(fmt: Fp8Format): number {
  return SPECS[fmt].max;
}

/** The canonical NaN bits this project writes for both formats (S = 0, all other bits set). */
export const FP8_NAN_BITS = 0x7f;

/**
 * `x` rounded to nearest (ties to even) in `fmt` without saturation: may exceed the largest
 * finite value (used to tell a literal that would saturate). NaN and ±inf are returned as they are.
 */
export function roundFp8Unsaturated(x: number, fmt: Fp8Format): number {
  const s = SPECS[fmt];
  return roundToFormat(x, s.p, s.emin, Infinity);
}

/**
 * `x` (any number: it is rounded once, from its exact value) as `cvt.rn.satfinite` converts it
 * to `fmt`: round to nearest, ties to even; NaN → NaN; ±inf and magnitudes beyond the largest
 * finite value → ±max finite; -0 and negative values that round to zero → -0.
 * Source: PTX ISA, cvt (".satfinite": "if the input is NaN the result is NaN; if the absolute value
 * of the input is larger than MAX_NORM, the result is sign-preserved MAX_NORM").
 */
export function roundFp8(x: number, fmt: Fp8Format): number {
  if (x !== x) return NaN;
  const s = SPECS[fmt];
  const y = roundToFormat(x, s.p, s.emin, Infinity);
  if (y > s.max) return s.max;
  if (y < -s.max) return -s.max;
  return y;
}

const valueTables: Partial<Record<Fp8Format, Float64Array>> = {};

/** The value of every one of the 256 codes of `fmt` (NaN codes → NaN; exact). */
function valueTable(fmt: Fp8Format): Float64Array {
  const cached = valueTables[fmt];
  if (cached) return cached;
  const s = SPECS[fmt];
  const mBits = s.p - 1;
  const eMax = (1 << (7 - mBits)) - 1;
  const t = new Float64Array(256);
  for (let b = 0; b < 256; b++) {
    const sign = b & 0x80 ? -1 : 1;
    const e = (b >> mBits) & eMax;
    const m = b & ((1 << mBits) - 1);
    let v: number;
    if (e === eMax && (s.ieee || m === (1 << mBits) - 1)) {
      v = s.ieee && m === 0 ? sign * Infinity : NaN;
    } else if (e === 0) {
      v = sign * m * 2 ** (s.emin - mBits);
    } else {
      v = sign * (1 + m / (1 << mBits)) * 2 ** (e - s.bias);
    }
    t[b] = v;
  }
  return (valueTables[fmt] = t);
}

/** The value of fp8 bits `bits` (low 8 bits) of `fmt`, exact; NaN codes give NaN. */
export function fp8Value(bits: number, fmt: Fp8Format): number {
  return valueTable(fmt)[bits & 0xff]!;
}

/** A float64's two 32-bit halves (little-endian hosts: word 1 holds sign, exponent and 20 bits). */
const f64 = new Float64Array(1);
const words = new Uint32Array(f64.buffer);
const HI = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1 ? 1 : 0;

/** `fmt`'s mantissa bits, emin, bias and largest finite code (0x7e, 0x7b), from its spec. */
function codeSpec(fmt: Fp8Format): Int32Array {
  const s = SPECS[fmt];
  return Int32Array.of(s.p - 1, s.emin, s.bias, valueTable(fmt).indexOf(s.max));
}
const E4M3 = codeSpec("e4m3");
const E5M2 = codeSpec("e5m2");

/**
 * The bits of `x` in `fmt` after {@link roundFp8} (round to nearest even, satfinite): NaN →
 * {@link FP8_NAN_BITS}, ±inf → ±max finite. A number already a value of `fmt` keeps its exact code
 * (-0 is 0x80). Computed from x's float64 bits, rounded once: the kept significand bits, the
 * first dropped bit and whether any bit below it is set (IEEE 754 roundTiesToEven); a carry out
 * of the significand moves into the exponent field, and a code past the largest finite one
 * saturates (e4m3's 0x7f is NaN, e5m2's 0x7c is inf).
 */
export function fp8Bits(x: number, fmt: Fp8Format): number {
  const c = fmt === "e4m3" ? E4M3 : E5M2;
  const mBits = c[0]!;
  const emin = c[1]!;
  const bias = c[2]!;
  const maxCode = c[3]!;
  f64[0] = x;
  const hi = words[HI]!;
  const lo = words[1 - HI]!;
  const sign = (hi >>> 24) & 0x80;
  const field = (hi >>> 20) & 0x7ff;
  if (field === 0x7ff) return (hi & 0xfffff) !== 0 || lo !== 0 ? FP8_NAN_BITS : sign | maxCode;
  // ±0 and float64 subnormals (below 2^-1022: far under half the smallest float8 subnormal).
  if (field === 0) return sign;
  const e = field - 1023;
  // |x| = (H + lo · 2^-32) · 2^(e − 20), H the implicit one and the top 20 fraction bits (21
  // bits); the float8 quantum is 2^(max(e, emin) − mBits): keep H's top d + 1 bits.
  const d = e < emin ? e - emin + mBits : mBits;
  // Below half the smallest subnormal's quantum (d < −1): zero of x's sign.
  if (d < -1) return sign;
  const H = 0x100000 | (hi & 0xfffff);
  const drop = 20 - d; // 20 − mBits … 21
  let n = drop === 21 ? 0 : H >>> drop;
  const rest = drop === 21 ? H : H & ((1 << drop) - 1);
  const half = 1 << (drop - 1);
  if (rest > half || (rest === half && (lo !== 0 || (n & 1) === 1))) n++;
  // Normal: ((e + bias) << mBits) + n − 2^mBits (a carry to 2^(mBits+1) is the next binade's
  // first code); subnormal: n itself (2^mBits is the smallest normal's code; emin + bias = 1).
  const code = ((e < emin ? 0 : e + bias - 1) << mBits) + n;
  return sign | (code > maxCode ? maxCode : code);
}
