/** Rounding of a float64 value to a narrower binary format, shared by numeric/float.ts and numeric/fp8.ts. */

const bitsView = new DataView(new ArrayBuffer(8));

/** floor(log2(a)) for a finite a > 0, exact (Math.log2 may be off by one near powers of two). */
export function exponentOf(a: number): number {
  // A normal float64 holds it in its exponent field.
  bitsView.setFloat64(0, a);
  const field = (bitsView.getUint32(0) >>> 20) & 0x7ff;
  if (field !== 0) return field - 1023;
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  else if (2 ** (e + 1) <= a) e++;
  return e;
}

/**
 * Round `x` to a binary format with `p` significand bits (implicit bit included), smallest normal
 * exponent `emin` and largest finite value `maxFinite`; overflow rounds to ±Infinity.
 */
export function roundToFormat(x: number, p: number, emin: number, maxFinite: number): number {
  if (x !== x || x === 0 || x === Infinity || x === -Infinity) return x;
  const a = Math.abs(x);
  const e = Math.max(exponentOf(a), emin);
  const q = 2 ** (e - (p - 1));
  const m = a / q;
  const f = Math.floor(m);
  const d = m - f;
  const r = d > 0.5 || (d === 0.5 && f % 2 === 1) ? f + 1 : f;
  let y = r * q;
  if (y > maxFinite) y = Infinity;
  return x < 0 ? -y : y;
}
