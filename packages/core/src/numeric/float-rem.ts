import { bigToFloat } from "./float.js";
import { dyadic } from "./dyadic.js";

/**
 * The float division family, exact: each result is the exact value rounded once to the format.
 * Values are numbers already in their format (float16/bfloat16/float32/float64); `round` rounds a
 * float64 to the format (`floatRounder`), `dt` names it for rounding integers beyond 2^53.
 *
 * - `fmod(a, b)`: C `fmod` (ISO C 7.12.10.1): `a - trunc(a/b)*b`, exact, sign of `a` (so -0 stays
 *   -0); NaN when `b` is 0, `a` is infinite or either is NaN; `a` when `b` is infinite.
 * - `floorMod(a, b)`: Python's float `%` (CPython `float_divmod`): `r = fmod(a, b)`; when r is
 *   nonzero and its sign differs from b's, `r + b` rounded once; a zero result takes b's sign.
 *   NaN where fmod is NaN (Python raises for b = 0; we give NaN).
 * - `floorDiv(a, b)`: `floor(a / b)` of the exact quotient, rounded once; a zero result has the
 *   sign of `a / b`. Equal to Python's float `//` wherever CPython's float64 steps are exact
 *   (quotients below 2^53). `b` = 0 or a NaN operand: the IEEE `a / b` (±inf or NaN; Python
 *   raises for b = 0); `a` infinite: NaN (as Python).
 * Every JS operation below is exact or rounds once: `%` is exact fmod on numbers (ECMAScript,
 * Number::remainder), and the sum `r + b` of two values of a format of p ≤ 24 bits rounds
 * innocuously through float64 (Figueroa: 53 ≥ 2p + 2).
 */

/** C fmod, exact (ECMAScript `%` on numbers is fmod, -0 included). */
export function fmod(a: number, b: number): number {
  return a % b;
}

const negative = (x: number): boolean => x < 0 || Object.is(x, -0);

/** Python's float `%`: `fmod`, shifted by `b` when the signs differ, rounded once by `round`. */
export function floorMod(a: number, b: number, round: (x: number) => number): number {
  const r = a % b;
  if (r !== r) return r;
  if (r === 0) return negative(b) ? -0 : 0;
  return negative(r) !== negative(b) ? round(r + b) : r;
}

/** trunc(|a| / |b|) exactly, for finite nonzero a and b. */
function truncQuotient(a: number, b: number): bigint {
  const x = dyadic(a);
  const y = dyadic(b);
  if (x.m < 0n) x.m = -x.m;
  if (y.m < 0n) y.m = -y.m;
  const k = x.e - y.e;
  return k >= 0 ? (x.m << BigInt(k)) / y.m : x.m / (y.m << BigInt(-k));
}

/**
 * Python's float `//` as the exact floor of the quotient rounded once to the format of `dt`
 * (`round` rounds a float64 to it).
 */
export function floorDiv(a: number, b: number, round: (x: number) => number, dt: string): number {
  if (b === 0 || a !== a || b !== b) return round(a / b);
  if (a === Infinity || a === -Infinity) return NaN;
  const neg = negative(a) !== negative(b);
  const r = a % b;
  const c = r !== 0 && neg ? 1 : 0;
  if (a === 0 || b === Infinity || b === -Infinity) {
    const v = c;
    return neg ? -v : v;
  }
  // |(a - r) / b| is the integer trunc(|a/b|) up to two roundings of 2^-53 each: below 2^50 the
  // nearest integer is exact.
  const d = Math.abs((a - r) / b);
  let v: number;
  if (d < 2 ** 50) {
    v = round(Math.round(d) + c);
  } else {
    v = bigToFloat(truncQuotient(a, b) + BigInt(c), dt);
  }
  return neg ? -v : v;
}
