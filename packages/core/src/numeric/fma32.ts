/**
 * fma of float32 values rounded once to float32 (IEEE 754 fusedMultiplyAdd, PTX `fma.rn.f32`),
 * without bigints. The product of two float32 values is exact in float64 (48 ≤ 53 bits); the sum
 * s = RN64(a·b + c) then differs from the exact sum by a TwoSum error e. Rounding s to float32
 * gives the correctly rounded result unless s is exactly halfway between two float32 values (a
 * float32 midpoint is a float64 value, so it cannot lie strictly between the exact sum and its
 * nearest float64 s); then the sign of e breaks the tie.
 * @param a float32 value
 * @param b float32 value
 * @param c float32 value
 */
export function fma32(a: number, b: number, c: number): number {
  const p = a * b;
  const s = p + c;
  if (!Number.isFinite(s) || !Number.isFinite(p) || !Number.isFinite(c)) return Math.fround(s);
  if (s === 0) return Math.fround(s); // exact: zero sum, IEEE sign rules of float64 apply
  const bb = s - p;
  const e = p - (s - bb) + (c - bb);
  const r = Math.fround(s);
  if (e === 0 || r === s) return r;
  // Is s a float32 midpoint? Then the neighbour of r on the side of s is r ± 2·|s - r|.
  const other = r + 2 * (s - r);
  if (Math.fround(other) !== other || other === r) return r;
  // s is halfway between r and other: the exact sum lies on the side of e.
  const sideOfOther = s - r > 0 === e > 0;
  return sideOfOther ? other : r;
}
