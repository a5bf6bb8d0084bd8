// An independent reference of the rounding-mode ops (core ops/arith/rounding.ts): exact rational
// values p/q (BigInt) of the operands, the result's quantum found by comparing with powers of two,
// and the rounding decided by comparing the remainder with the quantum: no shared code with the
// simulator's numeric/directed.ts. Also the extra inputs that reach every rounding edge: ties and
// near-ties of the destination format, the overflow threshold (±∞ vs ±max-finite), integer bounds.
import { dtypeBytes, dtypeKind, type DType } from "@tirx-ts/core";
import { toDyadic } from "./reference.js";
import type { Value } from "./values.js";

/** A rounding direction of PTX (the float form; `rni` … map to these). */
export type Dir = "rn" | "rz" | "rm" | "rp";

const FMT: Partial<Record<DType, { p: number; emin: number; emax: number }>> = {
  float16: { p: 11, emin: -14, emax: 15 },
  bfloat16: { p: 8, emin: -126, emax: 127 },
  float32: { p: 24, emin: -126, emax: 127 },
  float64: { p: 53, emin: -1022, emax: 1023 },
};

/** An exact rational num / 2^k (k ≥ 0) or num · 2^-k: kept as num and a binary exponent. */
interface Exact {
  readonly num: bigint;
  readonly exp: number; // value = num · 2^exp
}

const exact = (x: number): Exact => {
  const d = toDyadic(x);
  return { num: d.m, exp: d.e };
};

const pow2 = (k: number): number => (k < -1022 ? 2 ** (k + 200) * 2 ** -200 : 2 ** k);

/** |v| · 2^-exp floored, with the sign of a nonzero remainder reported. */
function divPow2(a: bigint, s: number): { q: bigint; rest: bigint; unit: bigint } {
  const unit = 1n << BigInt(s);
  return { q: a / unit, rest: a % unit, unit };
}

/**
 * The exact value v rounded in direction `dir` to `dt`, with IEEE 754 §7.4 overflow: beyond the
 * largest finite value, `rn` and the directions pointing away from zero give ±∞, the others
 * ±max-finite. `zero` is the result of an exact zero.
 */
export function roundExact(v: Exact, dt: DType, dir: Dir, zero = 0): number {
  const f = FMT[dt]!;
  if (v.num === 0n) return zero;
  const neg = v.num < 0n;
  const a = neg ? -v.num : v.num;
  // The exponent of the leading bit: the largest t with 2^t ≤ a·2^exp.
  const t = v.exp + a.toString(2).length - 1;
  const quantumExp = Math.max(t, f.emin) - f.p + 1;
  let m: bigint;
  let inexact = false;
  let above = 0; // remainder vs half a quantum: -1 below, 0 equal, 1 above
  if (quantumExp <= v.exp) m = a << BigInt(v.exp - quantumExp);
  else {
    const { q, rest, unit } = divPow2(a, quantumExp - v.exp);
    m = q;
    inexact = rest !== 0n;
    const twice = rest * 2n;
    above = twice > unit ? 1 : twice === unit ? 0 : -1;
  }
  if (inexact) {
    const up =
      dir === "rn"
        ? above > 0 || (above === 0 && m % 2n === 1n)
        : dir === "rp"
          ? !neg
          : dir === "rm"
            ? neg
            : false;
    if (up) m += 1n;
  }
  const maxM = (1n << BigInt(f.p)) - 1n;
  const maxFinite = Number(maxM) * pow2(f.emax - f.p + 1);
  let r: number;
  if (quantumExp > f.emax - f.p + 1 || (quantumExp === f.emax - f.p + 1 && m > maxM)) {
    const away = dir === "rn" || (dir === "rp" && !neg) || (dir === "rm" && neg);
    r = away ? Infinity : maxFinite;
  } else r = Number(m) * pow2(quantumExp);
  // m may have carried into the next binade: still exact (a power of two times an integer).
  if (r > maxFinite) {
    const away = dir === "rn" || (dir === "rp" && !neg) || (dir === "rm" && neg);
    r = away ? Infinity : maxFinite;
  }
  return neg ? -r : r;
}

const isNeg = (x: number): boolean => x < 0 || Object.is(x, -0);

/** IEEE 754 §6.3: the sign of an exact zero sum. */
function zeroOf(terms: readonly number[], dir: Dir): number {
  const zeros = terms.filter((t) => t === 0);
  if (zeros.length === terms.length && zeros.every(isNeg)) return -0;
  if (zeros.length === terms.length && !zeros.some(isNeg)) return 0;
  return dir === "rm" ? -0 : 0;
}

/** Exact sum of exact values. */
function sum(xs: readonly Exact[]): Exact {
  const e = Math.min(...xs.map((x) => x.exp));
  return { num: xs.reduce((s, x) => s + (x.num << BigInt(x.exp - e)), 0n), exp: e };
}

/** The reference of `add/sub/mul/fma.<dir>` on `dt`. */
export function refRoundedArith(
  kind: "add" | "sub" | "mul" | "fma",
  dir: Dir,
  dt: DType,
  args: readonly number[],
): number {
  const [a, b0, c = 0] = args as [number, number, number?];
  const b = kind === "sub" ? -b0 : b0;
  if (kind === "mul") {
    if ([a, b].some((x) => !Number.isFinite(x)) || a === 0 || b === 0) return a * b;
    const x = exact(a);
    const y = exact(b);
    return roundExact({ num: x.num * y.num, exp: x.exp + y.exp }, dt, dir);
  }
  if (kind === "add" || kind === "sub") {
    if (!Number.isFinite(a) || !Number.isFinite(b)) return a + b;
    const s = sum([exact(a), exact(b)]);
    return roundExact(s, dt, dir, zeroOf([a, b], dir));
  }
  if (!Number.isFinite(a) || !Number.isFinite(b) || !Number.isFinite(c)) {
    return Number.isFinite(a) && Number.isFinite(b) ? c : a * b + c;
  }
  if (a === 0 || b === 0) {
    // An exact signed zero product: the sum is c, or a zero of the §6.3 sign.
    return c === 0 ? zeroOf([a * b, c], dir) : roundExact(exact(c), dt, dir);
  }
  const x = exact(a);
  const y = exact(b);
  const s = sum([{ num: x.num * y.num, exp: x.exp + y.exp }, exact(c)]);
  return roundExact(s, dt, dir, dir === "rm" ? -0 : 0);
}

/** The reference of `cvt.<dir>.<float to>` from a float or integer value. */
export function refRoundedCvtFloat(v: Value, to: DType, dir: Dir): number {
  if (typeof v === "bigint") return roundExact({ num: v, exp: 0 }, to, dir);
  if (v !== v || !Number.isFinite(v) || v === 0) return v;
  if (Number.isInteger(v) && Math.abs(v) < 2 ** 53) {
    return roundExact({ num: BigInt(v), exp: 0 }, to, dir);
  }
  return roundExact(exact(v), to, dir);
}

/** The reference of `cvt.<dir>i.<int to>` from a float: rounded, clamped, NaN → 0. */
export function refRoundedCvtInt(v: number, to: DType, dir: Dir): Value {
  const bits = dtypeBytes(to) * 8;
  const signed = dtypeKind(to) === "int";
  const lo = signed ? -(2n ** BigInt(bits - 1)) : 0n;
  const hi = signed ? 2n ** BigInt(bits - 1) - 1n : 2n ** BigInt(bits) - 1n;
  let i: bigint;
  if (v !== v) i = 0n;
  else if (v === Infinity) i = hi;
  else if (v === -Infinity) i = lo;
  else if (v === 0) i = 0n;
  else {
    // |v| = a · 2^exp: the integer part and the remainder against half a unit, exactly.
    const x = exact(v);
    const neg = x.num < 0n;
    const a = neg ? -x.num : x.num;
    let mag: bigint;
    if (x.exp >= 0) mag = a << BigInt(x.exp);
    else {
      const { q, rest, unit } = divPow2(a, -x.exp);
      const away = dir === "rp" ? !neg : dir === "rm" ? neg : false;
      mag =
        rest === 0n
          ? q
          : dir === "rn"
            ? rest * 2n > unit || (rest * 2n === unit && q % 2n === 1n)
              ? q + 1n
              : q
            : away
              ? q + 1n
              : q;
    }
    i = neg ? -mag : mag;
  }
  if (i < lo) i = lo;
  if (i > hi) i = hi;
  return bits === 64 ? i : Number(i);
}

/**
 * Extra float inputs for `cvt.<dir>.<to>` from `from`: midpoints between neighbouring values of
 * `to` and one source ulp either side (ties and near-ties), the overflow threshold region.
 */
export function cvtFloatExtras(to: DType): number[] {
  const f = FMT[to]!;
  const out: number[] = [];
  for (const e of [0, 3, f.emin, f.emin - 3, f.emax]) {
    const q = pow2(e - f.p + 1);
    for (const k of [1, 2, 5]) {
      const base = (2 ** (f.p - 1) + k) * q;
      const mid = base + q / 2;
      for (const x of [mid, mid * (1 + 2 ** -40), mid * (1 - 2 ** -40), base + q / 4]) {
        out.push(x, -x);
      }
    }
  }
  const max = (2 - 2 ** (1 - f.p)) * pow2(f.emax);
  const halfUlp = pow2(f.emax - f.p);
  out.push(max + halfUlp, -(max + halfUlp), max + halfUlp / 2, -(max + halfUlp / 2), max * 1.5);
  return out;
}

/** Extra float inputs for `cvt.<dir>i.<to>`: halves, near-halves and the range bounds of `to`. */
export function cvtIntExtras(to: DType): number[] {
  const bits = dtypeBytes(to) * 8;
  const signed = dtypeKind(to) === "int";
  const lo = signed ? -(2 ** (bits - 1)) : 0;
  const hi = signed ? 2 ** (bits - 1) - 1 : 2 ** bits - 1;
  const out = [
    0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, -0.49999997, 2.75, -2.25, 1e-30, -1e-30,
  ];
  for (const b of [lo, hi]) out.push(b, b + 0.5, b - 0.5, b + 1, b - 1, b * 2);
  return out;
}

/**
 * Extra (a, b) pairs for add/sub/mul on `dt`: a tie and near-ties around 1, the overflow threshold
 * (max + max, max · 2), a cancellation to exact zero.
 */
export function arithExtras(dt: DType): [number[], number[]] {
  const f = FMT[dt]!;
  const u = 2 ** (1 - f.p); // ulp of 1
  const max = (2 - u) * pow2(f.emax);
  const a = [1, 1, 1, -1, -1, max, -max, max, 3, 1 + u, -(1 + u), 0.5];
  const b = [u / 2, u / 4, (3 * u) / 4, u / 2, (-3 * u) / 4, max, -max, 2, -3, 1 + u, 1 - u, -0.5];
  return [a, b];
}
