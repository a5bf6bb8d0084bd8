/**
 * Exact values m * 2^e (m a bigint) and their one-time rounding to a float format, for ops whose
 * exact result a float64 cannot hold (fma, huge quotients). Formats as IEEE 754 binary16/32/64 and
 * bfloat16: `p` significand bits (implicit bit included), smallest normal exponent `emin`,
 * largest exponent `emax`.
 */

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

const view = new DataView(new ArrayBuffer(8));

/** A finite float64 as exactly m * 2^e (m signed; m = 0 for ±0). */
export function dyadic(x: number): { m: bigint; e: number } {
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const exp = (hi >>> 20) & 0x7ff;
  const frac = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  const m = exp === 0 ? frac : frac | (1n << 52n);
  return { m: hi >>> 31 ? -m : m, e: exp === 0 ? -1074 : exp - 1075 };
}

/**
 * m * 2^e rounded once to nearest, ties to even, in the format of dtype `dt` (float16, bfloat16,
 * float32, float64); beyond the largest finite value it is ±Infinity; m = 0 gives +0.
 */
export function roundDyadic(m: bigint, e: number, dt: string): number {
  const f = FORMATS[dt] ?? FORMATS.float64!;
  const neg = m < 0n;
  let a = neg ? -m : m;
  if (a === 0n) return 0;
  const top = e + a.toString(2).length - 1;
  const q = Math.max(top, f.emin) - (f.p - 1);
  const shift = q - e;
  if (shift > 0) {
    const s = BigInt(shift);
    const r = a >> s;
    const rem = a - (r << s);
    const half = 1n << (s - 1n);
    a = rem > half || (rem === half && (r & 1n) === 1n) ? r + 1n : r;
  } else {
    a <<= BigInt(-shift);
  }
  const v = Number(a) * 2 ** q;
  const r = v >= 2 ** (f.emax + 1) ? Infinity : v;
  return neg ? -r : r;
}
