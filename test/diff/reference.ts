// An independent reference for the differential test: exact arithmetic on dyadic rationals
// (every finite float is m·2^e) and BigInt integers, rounded once to the result format. It
// shares no code with the simulator.
import { dtypeBytes, dtypeKind, type DType } from "@tirx-ts/core";
import type { Value } from "./values.js";

interface Format {
  readonly p: number; // significand bits, implicit bit included
  readonly emin: number;
  readonly emax: number;
  /** Saturating formats (float8: `cvt.rn.satfinite`): the largest finite value, where overflow and ±inf land. */
  readonly satMax?: number;
}
const FORMATS: Partial<Record<DType, Format>> = {
  // OCP float8: e4m3's top binade stops at 1.75·2^8 (1.875·2^8 is NaN), e5m2 is IEEE-like.
  float8_e4m3: { p: 4, emin: -6, emax: 8, satMax: 448 },
  float8_e5m2: { p: 3, emin: -14, emax: 15, satMax: 57344 },
  float16: { p: 11, emin: -14, emax: 15 },
  bfloat16: { p: 8, emin: -126, emax: 127 },
  float32: { p: 24, emin: -126, emax: 127 },
  float64: { p: 53, emin: -1022, emax: 1023 },
};

/** One scratch float64 for toDyadic's bit reads (the cases convert ~10^6 values). */
const bits64 = new DataView(new ArrayBuffer(8));

/** A finite float as m·2^e exactly (m a BigInt, possibly negative; -0 becomes 0). */
export function toDyadic(x: number): { m: bigint; e: number } {
  if (x === 0) return { m: 0n, e: 0 };
  bits64.setFloat64(0, x);
  const hi = bits64.getUint32(0);
  const lo = bits64.getUint32(4);
  const exp = (hi >>> 20) & 0x7ff;
  // The significand's 52 stored bits (and the implicit bit of a normal number) as a float64
  // integer below 2^53, exact, made a BigInt once.
  const frac = (hi & 0xfffff) * 2 ** 32 + lo;
  const mant = BigInt(exp === 0 ? frac : frac + 2 ** 52);
  const e = exp === 0 ? -1074 : exp - 1075;
  return { m: x < 0 ? -mant : mant, e };
}

/** Bits of `v` > 0: its hexadecimal digits, 4 bits each but the leading one's own. */
const bitLength = (v: bigint): number => {
  const hex = v.toString(16);
  return (hex.length - 1) * 4 + 32 - Math.clz32(parseInt(hex[0]!, 16));
};

/**
 * m·2^e rounded once, to nearest with ties to even, into `dt`'s format (overflow → ±inf; for the
 * saturating float8 formats → ±max finite).
 */
export function roundDyadic(m: bigint, e: number, dt: DType, negZero = false): number {
  const f = FORMATS[dt]!;
  if (m === 0n) return negZero ? -0 : 0;
  const neg = m < 0n;
  let a = neg ? -m : m;
  // Exponent of the leading bit, and the quantum of the result there.
  const lead = e + bitLength(a) - 1;
  const q = Math.max(lead, f.emin) - (f.p - 1);
  let r: bigint;
  if (q <= e) r = a << BigInt(e - q);
  else {
    const sh = BigInt(q - e);
    r = a >> sh;
    const rem = a - (r << sh);
    const half = 1n << (sh - 1n);
    if (rem > half || (rem === half && (r & 1n) === 1n)) r += 1n;
  }
  a = r;
  let y = Number(a) * 2 ** q;
  if (f.satMax !== undefined) {
    if (!Number.isFinite(y) || y > f.satMax) y = f.satMax;
  } else if (!Number.isFinite(y) || y > (2 - 2 ** (1 - f.p)) * 2 ** f.emax) y = Infinity;
  // Number(a) is exact (a < 2^54) and the power of two scales exactly unless it underflows f64,
  // which happens only for float64 subnormal quanta: use two steps there.
  if (q < -1022) y = Number(a) * 2 ** (q + 600) * 2 ** -600;
  return neg ? -y : y;
}

/** `x` rounded to `dt` (a value of a wider float). */
export function roundTo(x: number, dt: DType): number {
  const sat = FORMATS[dt]?.satMax;
  if (sat !== undefined && (x === Infinity || x === -Infinity)) return x < 0 ? -sat : sat;
  if (x !== x || !Number.isFinite(x)) return x;
  const { m, e } = toDyadic(x);
  return roundDyadic(m, e, dt, Object.is(x, -0));
}

const isNeg = (x: number): boolean => x < 0 || Object.is(x, -0);
const copysign0 = (neg: boolean): number => (neg ? -0 : 0);

/** Align two dyadics to one exponent. */
function align(a: number, b: number): { A: bigint; B: bigint; e: number } {
  const da = toDyadic(a);
  const db = toDyadic(b);
  const e = Math.min(da.e, db.e);
  return { A: da.m << BigInt(da.e - e), B: db.m << BigInt(db.e - e), e };
}

/** C fmod: the exact remainder of a / b truncated, with the sign of a. */
export function fmod(a: number, b: number, dt: DType): number {
  if (a !== a || b !== b || b === 0 || !Number.isFinite(a)) return NaN;
  if (!Number.isFinite(b) || a === 0) return a;
  const { A, B, e } = align(a, b);
  const r = A % B; // BigInt %: sign of the dividend
  return r === 0n ? copysign0(isNeg(a)) : roundDyadic(r, e, dt);
}

/** Python's float `%`: a - b·floor(a/b), exact, rounded once; a zero takes the sign of b. */
export function floormod(a: number, b: number, dt: DType): number {
  if (a !== a || b !== b || b === 0 || !Number.isFinite(a)) return NaN;
  const r = fmod(a, b, dt);
  if (r === 0) return copysign0(isNeg(b));
  if (isNeg(r) === isNeg(b)) return r;
  if (!Number.isFinite(b)) return b;
  const { A, B, e } = align(r, b);
  return roundDyadic(A + B, e, dt);
}

/**
 * Python's float `//`: floor of the exact quotient, rounded once; an infinite dividend gives NaN
 * (as in CPython); b == 0 gives a / b (IEEE: ±inf, or NaN for 0 / 0), where Python raises.
 */
export function floordiv(a: number, b: number, dt: DType): number {
  if (a !== a || b !== b) return NaN;
  if (b === 0) return roundTo(a / b, dt);
  if (!Number.isFinite(a)) return NaN;
  const zeroSign = isNeg(a) !== isNeg(b);
  if (!Number.isFinite(b)) return a === 0 || isNeg(a) === isNeg(b) ? copysign0(zeroSign) : -1;
  if (a === 0) return copysign0(zeroSign);
  const { A, B } = align(a, b);
  let q = A / B; // truncates
  if (A % B !== 0n && A < 0n !== B < 0n) q -= 1n;
  return q === 0n ? copysign0(zeroSign) : roundDyadic(q, 0, dt);
}

/** fma(a, b, c) exact, rounded once. */
export function fma(a: number, b: number, c: number, dt: DType): number {
  if (a !== a || b !== b || c !== c) return NaN;
  const p = a * b; // for the special cases only
  if (!Number.isFinite(a) || !Number.isFinite(b) || !Number.isFinite(c)) return roundTo(p + c, dt);
  const da = toDyadic(a);
  const db = toDyadic(b);
  const dc = toDyadic(c);
  const pm = da.m * db.m;
  const pe = da.e + db.e;
  const e = Math.min(pe, dc.e);
  const s = (pm << BigInt(pe - e)) + (dc.m << BigInt(dc.e - e));
  // An exact zero sum is +0 unless both addends are -0 or (product -0 and c -0).
  if (s === 0n) return copysign0(isNeg(a) !== isNeg(b) && isNeg(c) && pm === 0n && dc.m === 0n);
  return roundDyadic(s, e, dt);
}

/** Integer helpers: wrap a BigInt to `dt`'s width. */
export function wrap(v: bigint, dt: DType): bigint {
  const bits = dt === "bool" ? 1 : dtypeBytes(dt) * 8;
  return dtypeKind(dt) === "int" ? BigInt.asIntN(bits, v) : BigInt.asUintN(bits, v);
}

/** The value of a test-case value as the reference computes on it (BigInt for integers). */
const big = (v: Value): bigint => BigInt(v);
const out = (v: bigint, dt: DType): Value => (dtypeBytes(dt) === 8 ? v : Number(v));

/** Signed minimum of a width (for the unspecified MIN / -1). */
export function intMin(dt: DType): bigint | undefined {
  if (dtypeKind(dt) !== "int") return undefined;
  return -(2n ** BigInt(dtypeBytes(dt) * 8 - 1));
}

/**
 * The reference of binary operator `op` on `dt`, or "unspecified" where PTX leaves the result
 * machine-specific (integer division by zero; MIN / -1 at 16 bits and wider).
 */
export function refBinary(op: string, dt: DType, a: Value, b: Value): Value | "unspecified" {
  if (FORMATS[dt]) {
    const x = Number(a);
    const y = Number(b);
    switch (op) {
      case "add":
        return dt === "float64" ? x + y : roundTo(x + y, dt);
      case "sub":
        return dt === "float64" ? x - y : roundTo(x - y, dt);
      case "mul":
        return dt === "float64" ? x * y : roundTo(x * y, dt);
      case "div":
        return dt === "float64" ? x / y : roundTo(x / y, dt);
      case "mod":
        return fmod(x, y, dt);
      case "floordiv":
        return floordiv(x, y, dt);
      case "floormod":
        return floormod(x, y, dt);
      case "min":
      case "max": {
        if (x !== x) return y;
        if (y !== y) return x;
        if (x === y && x === 0)
          return op === "min" ? copysign0(isNeg(x) || isNeg(y)) : copysign0(isNeg(x) && isNeg(y));
        return op === "min" ? (x < y ? x : y) : x > y ? x : y;
      }
    }
    throw new Error(`no float reference for ${op}`);
  }
  const x = big(a);
  const y = big(b);
  const width = dt === "bool" ? 1 : dtypeBytes(dt) * 8;
  const divides = ["div", "mod", "floordiv", "floormod"].includes(op);
  if (divides && y === 0n) return "unspecified";
  if (divides && width >= 16 && x === intMin(dt) && y === -1n) return "unspecified";
  switch (op) {
    case "add":
      return out(wrap(x + y, dt), dt);
    case "sub":
      return out(wrap(x - y, dt), dt);
    case "mul":
      return out(wrap(x * y, dt), dt);
    case "div":
      return out(wrap(x / y, dt), dt);
    case "mod":
      return out(wrap(x % y, dt), dt);
    case "floordiv": {
      let q = x / y;
      if (x % y !== 0n && x < 0n !== y < 0n) q -= 1n;
      return out(wrap(q, dt), dt);
    }
    case "floormod": {
      let r = x % y;
      if (r !== 0n && r < 0n !== y < 0n) r += y;
      return out(wrap(r, dt), dt);
    }
    case "min":
      return out(x < y ? x : y, dt);
    case "max":
      return out(x > y ? x : y, dt);
    case "bitand":
      return out(wrap(x & y, dt), dt);
    case "bitor":
      return out(wrap(x | y, dt), dt);
    case "bitxor":
      return out(wrap(x ^ y, dt), dt);
    case "shl":
    case "shr": {
      // PTX shift amounts are unsigned 32-bit; amounts past the width clamp to it.
      const amt = BigInt.asUintN(32, y);
      const n = amt > BigInt(width) ? BigInt(width) : amt;
      if (op === "shl") return out(wrap(n >= BigInt(width) ? 0n : x << n, dt), dt);
      if (n >= BigInt(width)) return out(x < 0n ? -1n : 0n, dt);
      return out(wrap(x >> n, dt), dt);
    }
  }
  throw new Error(`no integer reference for ${op}`);
}

/** Comparison as 0/1; any comparison with NaN is false except `ne` (C semantics). */
export function refCompare(op: string, a: Value, b: Value): number {
  const nan = (v: Value): boolean => typeof v === "number" && v !== v;
  if (nan(a) || nan(b)) return op === "ne" ? 1 : 0;
  const r =
    op === "eq"
      ? a == b
      : op === "ne"
        ? a != b
        : op === "lt"
          ? a < b
          : op === "le"
            ? a <= b
            : op === "gt"
              ? a > b
              : a >= b;
  return r ? 1 : 0;
}

/** Value conversion `from` → `to` as PTX cvt does it (rounding .rn; float → int .rzi, saturating, NaN → 0). */
export function refCast(v: Value, from: DType, to: DType): Value {
  if (to === "bool") return typeof v === "number" ? (v !== 0 ? 1 : 0) : v !== 0n ? 1 : 0;
  const toFloat = FORMATS[to] !== undefined;
  if (from === "bool") return toFloat ? Number(v) : out(big(v), to);
  if (FORMATS[from]) {
    const x = Number(v);
    if (toFloat) return roundTo(x, to);
    if (x !== x) return out(0n, to);
    const bits = dtypeBytes(to) * 8;
    const signed = dtypeKind(to) === "int";
    const lo = signed ? -(2n ** BigInt(bits - 1)) : 0n;
    const hi = signed ? 2n ** BigInt(bits - 1) - 1n : 2n ** BigInt(bits) - 1n;
    if (x === Infinity) return out(hi, to);
    if (x === -Infinity) return out(lo, to);
    const t = Math.trunc(x);
    const { m, e } = toDyadic(t);
    let i = e >= 0 ? m << BigInt(e) : m >> BigInt(-e);
    if (i < lo) i = lo;
    if (i > hi) i = hi;
    return out(i, to);
  }
  if (toFloat) return roundDyadic(big(v), 0, to);
  return out(wrap(big(v), to), to);
}

/** True when `got` is `want` exactly: the same value, -0 distinct from +0, any NaN equal to NaN. */
export function sameValue(got: Value, want: Value): boolean {
  if (typeof got === "number" && typeof want === "number") {
    return (got !== got && want !== want) || Object.is(got, want);
  }
  return BigInt(got) === BigInt(want);
}

/** One unit in the last place of `dt` at the magnitude of finite `v` (the subnormal ulp below the normal range). */
export function ulpOf(v: number, dt: DType): number {
  const f = FORMATS[dt]!;
  const a = Math.abs(v);
  const e = a === 0 ? f.emin : Math.max(Math.floor(Math.log2(a)), f.emin);
  return 2 ** (e - (f.p - 1));
}

/** Units in the last place of `dt` between two finite floats (∞ when only one is finite or NaN). */
export function ulpDistance(got: number, want: number, dt: DType): number {
  if (got !== got || want !== want) return got !== got && want !== want ? 0 : Infinity;
  if (got === want) return 0;
  if (!Number.isFinite(got) || !Number.isFinite(want)) return Infinity;
  const f = FORMATS[dt]!;
  const a = Math.abs(want);
  const e = a === 0 ? f.emin : Math.max(Math.floor(Math.log2(a)), f.emin);
  const ulp = 2 ** (e - (f.p - 1));
  return Math.abs(got - want) / ulp;
}
