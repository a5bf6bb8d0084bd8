import { isFloat } from "../dtype.js";
import { constInt, type CompareOp, type Expr, type SpecialName } from "../ir/expr.js";
import type { LaunchConfig } from "../ir/stmt.js";
import { bottomUp } from "./deep.js";

/** A closed integer interval; infinite ends are ±Infinity. */
export interface Interval {
  readonly min: number;
  readonly max: number;
}

const ANY: Interval = { min: -Infinity, max: Infinity };

/**
 * What is known about variables while analysing an expression: closed ranges of loop and let
 * variables by `Var.id`, and the launch (which bounds `%tid`, `%ctaid`, ...).
 */
export interface RangeEnv {
  readonly vars: ReadonlyMap<number, Interval>;
  readonly launch?: LaunchConfig;
}

function specialRange(name: SpecialName, launch?: LaunchConfig): Interval {
  if (!launch) return { min: 0, max: Infinity };
  const axis = "xyz".indexOf(name[name.length - 1]!);
  const block = launch.block[axis]!;
  const g = launch.grid[axis]!;
  // A runtime grid extent is checked at launch to be at least 1; its maximum is unknown here.
  const grid = typeof g === "number" ? g : Infinity;
  if (name.startsWith("tid")) return { min: 0, max: block - 1 };
  if (name.startsWith("ctaid")) return { min: 0, max: grid - 1 };
  if (name.startsWith("ntid")) return { min: block, max: block };
  return { min: typeof g === "number" ? g : 1, max: grid };
}

const mulI = (a: Interval, b: Interval): Interval => {
  const c = [a.min * b.min, a.min * b.max, a.max * b.min, a.max * b.max].map((v) =>
    Number.isNaN(v) ? 0 : v,
  );
  return { min: Math.min(...c), max: Math.max(...c) };
};

/**
 * The nodes whose range, divisor or residue depends on their children: integer arithmetic,
 * casts and selects. A load, a call or a thread index is a value of its own (its range comes
 * from its dtype or the launch), so the analyses here never look below it.
 */
const arithmetic = (x: Expr): boolean =>
  x.kind === "Binary" || x.kind === "Cast" || x.kind === "IfThenElse";

/**
 * Conservative integer range of `e` (int32 arithmetic assumed not to overflow). Returns
 * (-∞, ∞) for anything it cannot bound, so callers treat an infinite end as "unknown".
 */
export function exprRange(e: Expr, env: RangeEnv): Interval {
  return bottomUp(e, (x, rec) => rangeOf(x, env, rec), arithmetic);
}

function rangeOf(e: Expr, env: RangeEnv, range: (x: Expr) => Interval): Interval {
  switch (e.kind) {
    case "IntImm": {
      const v = Number(e.value);
      return { min: v, max: v };
    }
    case "Var":
      return env.vars.get(e.id) ?? ANY;
    case "Special":
      return specialRange(e.name, env.launch);
    case "Cast":
      return range(e.value);
    case "Compare":
    case "Logical":
    case "Not":
      return { min: 0, max: 1 };
    case "IfThenElse": {
      const t = range(e.t);
      const f = range(e.f);
      return { min: Math.min(t.min, f.min), max: Math.max(t.max, f.max) };
    }
    case "Binary": {
      const a = range(e.a);
      const b = range(e.b);
      switch (e.op) {
        case "add":
          return { min: a.min + b.min, max: a.max + b.max };
        case "sub":
          return { min: a.min - b.max, max: a.max - b.min };
        case "mul":
          return mulI(a, b);
        case "min":
          return { min: Math.min(a.min, b.min), max: Math.min(a.max, b.max) };
        case "max":
          return { min: Math.max(a.min, b.min), max: Math.max(a.max, b.max) };
        case "div":
        case "floordiv":
          if (b.min > 0 && a.min >= 0)
            return { min: Math.floor(a.min / b.max), max: Math.floor(a.max / b.min) };
          return ANY;
        case "mod":
        case "floormod":
          if (b.min > 0 && a.min >= 0) return { min: 0, max: Math.min(a.max, b.max - 1) };
          if (b.min > 0 && e.op === "floormod") return { min: 0, max: b.max - 1 };
          return ANY;
        case "bitand":
          if (a.min >= 0 && b.min >= 0) return { min: 0, max: Math.min(a.max, b.max) };
          return ANY;
        default:
          return ANY;
      }
    }
    default:
      return ANY;
  }
}

/** Greatest common divisor of |a| and |b| (0 when both are 0). */
export function gcd(a: number, b: number): number {
  a = Math.abs(a);
  b = Math.abs(b);
  while (b) [a, b] = [b, a % b];
  return a;
}

/**
 * The byte alignment an address provably has when its offset from a buffer is a multiple of
 * `divisor` bytes (0: always 0) and the buffer starts `bufferAlign`-aligned: gcd of the two,
 * capped by the buffer's own alignment.
 */
export function provableAlignment(divisor: number, bufferAlign: number): number {
  return divisor === 0 ? bufferAlign : gcd(divisor, bufferAlign);
}

/**
 * The largest d known to divide `e` for every value of its variables (0 means `e` is always 0).
 * Used to prove alignment of view offsets: an offset divisible by 8 float16 elements is 16-byte
 * aligned relative to its buffer.
 */
export function knownDivisor(e: Expr): number {
  return bottomUp(e, divisorOf, arithmetic);
}

/** The largest power of two dividing d (d > 0; 2³⁰ for larger powers, 0 stays 0). */
function pow2Of(d: number): number {
  if (d === 0) return 0;
  let p = 1;
  while (p < 2 ** 30 && d % (p * 2) === 0) p *= 2;
  return p;
}

function divisorOf(e: Expr, knownDivisor: (x: Expr) => number): number {
  switch (e.kind) {
    case "IntImm":
      return Math.abs(Number(e.value));
    case "Binary": {
      const a = knownDivisor(e.a);
      const b = knownDivisor(e.b);
      switch (e.op) {
        case "add":
        case "sub":
          return gcd(a, b);
        case "mul":
          return a === 0 || b === 0 ? 0 : a * b;
        case "shl": {
          const s = e.b.kind === "IntImm" ? Number(e.b.value) : undefined;
          return s !== undefined && s < 31 ? a * 2 ** s : 1;
        }
        case "floordiv":
        case "div": {
          // An exact division by a constant keeps the quotient of the divisors:
          // floordiv(x * 2, 4) (float16 offsets seen as uint32) divides by d / 4 when 4 | d.
          const c = e.b.kind === "IntImm" ? Math.abs(Number(e.b.value)) : 0;
          if (c > 0 && a === 0) return 0;
          return c > 0 && a % c === 0 ? a / c : 1;
        }
        case "floormod":
        case "mod":
          return e.b.kind === "IntImm" ? gcd(a, b) : 1;
        case "min":
        case "max":
          return gcd(a, b);
        // Bitwise operators keep powers of two only: a bit below both operands' lowest possible
        // set bit is clear in a ^ b and a | b; a & b clears every bit one of them clears (a
        // constant mask's trailing zeros too); x >> s drops s of x's known zero bits.
        case "bitxor":
        case "bitor":
          return a === 0 ? pow2Of(b) : b === 0 ? pow2Of(a) : Math.min(pow2Of(a), pow2Of(b));
        case "bitand":
          return a === 0 || b === 0 ? 0 : Math.max(pow2Of(a), pow2Of(b));
        case "shr": {
          const s = e.b.kind === "IntImm" ? Number(e.b.value) : undefined;
          if (a === 0) return 0;
          return s !== undefined && s >= 0 ? Math.max(1, pow2Of(a) / 2 ** s) : 1;
        }
        default:
          return 1;
      }
    }
    case "IfThenElse":
      return gcd(knownDivisor(e.t), knownDivisor(e.f));
    case "Cast":
      return knownDivisor(e.value);
    default:
      return 1;
  }
}

/**
 * The value of `e` modulo `m` (in 0..m-1) where it is evident for every value of its variables:
 * from constants, from terms whose known divisor (`knownDivisor`: constant factors, shifts,
 * exact divisions) is a multiple of `m`, and from sums, differences and products of such terms;
 * else undefined. `residueMod(e, k) === 0` proves `e` divisible by `k`
 * (e.g. `64·wg`, `16·kk + 32`, `(lane % 8)·64 + (lane / 16)·8` modulo 2).
 */
export function residueMod(e: Expr, m: number): number | undefined {
  return bottomUp(e, (x, rec) => residueOf(x, m, rec));
}

function residueOf(e: Expr, m: number, rec: (x: Expr) => number | undefined): number | undefined {
  // A modulus that changes (x·c below) starts its own walk: it shrinks each time, so these
  // nest at most log2(m) deep.
  const at = (x: Expr, k: number): number | undefined => (k === m ? rec(x) : residueMod(x, k));
  const mod = (x: number): number => ((x % m) + m) % m;
  if (m === 1 || knownDivisor(e) % m === 0) return 0;
  if (e.kind === "IntImm") return mod(Number(e.value));
  if (e.kind === "Cast") return at(e.value, m);
  if (e.kind !== "Binary") return undefined;
  if (e.op === "shl") {
    const s = e.b.kind === "IntImm" ? Number(e.b.value) : undefined;
    const a = at(e.a, m);
    return s !== undefined && s >= 0 && s < 31 && a !== undefined ? mod(a * 2 ** s) : undefined;
  }
  const a = at(e.a, m);
  const b = at(e.b, m);
  if (e.op === "add") return a !== undefined && b !== undefined ? mod(a + b) : undefined;
  if (e.op === "sub") return a !== undefined && b !== undefined ? mod(a - b) : undefined;
  if (e.op === "mul") {
    if (a === 0 || b === 0) return 0;
    if (a !== undefined && b !== undefined) return mod(a * b);
    // x·c mod m follows from x mod m/gcd(c, m): (8·kk + 1)·64 ≡ 64 (mod 512).
    const [x, c] = e.b.kind === "IntImm" ? [e.a, Number(e.b.value)] : [e.b, constInt(e.a)];
    if (c === undefined || c === 0) return undefined;
    const r = at(x, m / gcd(c, m));
    return r !== undefined ? mod(r * c) : undefined;
  }
  return undefined;
}

/** `e` as `var + c` (or `c + var`, `var - c`), when it has that form. */
function asVarPlusConst(e: Expr): { id: number; c: number } | undefined {
  if (e.kind === "Var") return { id: e.id, c: 0 };
  if (e.kind === "Binary" && (e.op === "add" || e.op === "sub")) {
    const k = e.b.kind === "IntImm" ? Number(e.b.value) : undefined;
    if (e.a.kind === "Var" && k !== undefined) return { id: e.a.id, c: e.op === "add" ? k : -k };
    const k2 = e.a.kind === "IntImm" ? Number(e.a.value) : undefined;
    if (e.op === "add" && e.b.kind === "Var" && k2 !== undefined) return { id: e.b.id, c: k2 };
  }
  return undefined;
}

/** `e` as `c + Σ k·v` with constant k > 0 (a strided loop index `tid + 128·j`), else undefined. */
function asLinear(e: Expr): { c: number; terms: { id: number; k: number }[] } | undefined {
  const out = { c: 0, terms: [] as { id: number; k: number }[] };
  const work: [Expr, number][] = [[e, 1]];
  while (work.length > 0) {
    const [x, k] = work.pop()!;
    if (x.kind === "IntImm") out.c += k * Number(x.value);
    else if (x.kind === "Var") out.terms.push({ id: x.id, k });
    else if (x.kind === "Binary" && x.op === "add") work.push([x.a, k], [x.b, k]);
    else if (x.kind === "Binary" && x.op === "mul" && x.b.kind === "IntImm")
      work.push([x.a, k * Number(x.b.value)]);
    else if (x.kind === "Binary" && x.op === "mul" && x.a.kind === "IntImm")
      work.push([x.b, k * Number(x.a.value)]);
    else return undefined;
  }
  return out.terms.length > 1 && out.terms.every((t) => t.k > 0) ? out : undefined;
}

/**
 * `c + Σ k·v < rhs` (or `<=`) with every k > 0 and every v bounded below: each v is at most
 * (max(rhs) − c − Σ of the other terms' minima) / k, so a guard `i < n` on a strided loop index
 * `i = tid + 128·j` bounds both `tid` and `j` in `out`.
 */
function narrowLinear(
  lhs: Expr,
  rhs: Expr,
  op: "lt" | "le",
  out: Map<number, Interval>,
  env: RangeEnv,
): void {
  const lin = asLinear(lhs);
  if (!lin) return;
  const r = exprRange(rhs, { ...env, vars: out });
  const top = op === "lt" ? r.max - 1 : r.max;
  if (!Number.isFinite(top)) return;
  const ranges = lin.terms.map((t) => out.get(t.id) ?? ANY);
  if (ranges.some((x) => !Number.isFinite(x.min))) return;
  const lows = lin.terms.reduce((a, t, i) => a + t.k * ranges[i]!.min, lin.c);
  lin.terms.forEach((t, i) => {
    const cur = ranges[i]!;
    const max = Math.floor((top - (lows - t.k * cur.min)) / t.k);
    if (max < cur.max) out.set(t.id, { min: cur.min, max });
  });
}

/**
 * Ranges of variables where `cond` holds: narrows `v + c < n`, `<=`, `>`, `>=`, `==` against
 * a bounded other side, `v + c != k` where `k - c` is an end of v's range, and both sides of
 * `&&`. Used so that a guarded access such as `if (k + 1 < n) A[k + 1]` is checked against the
 * range the guard allows (and, with `negateCond`, an access in the else-branch).
 */
export function refineRanges(cond: Expr, env: RangeEnv): Map<number, Interval> {
  const out = new Map(env.vars);
  // The comparisons under `&&`, left to right, without recursion.
  const work: Expr[] = [cond];
  while (work.length > 0) {
    const c = work.pop()!;
    if (c.kind === "Logical" && c.op === "and") {
      work.push(c.b, c.a);
      continue;
    }
    if (c.kind !== "Compare") continue;
    const sides: [Expr, Expr, string][] = [
      [c.a, c.b, c.op],
      [c.b, c.a, { lt: "gt", le: "ge", gt: "lt", ge: "le", eq: "eq", ne: "ne" }[c.op]],
    ];
    for (const [lhs, rhs, op] of sides) {
      const v = asVarPlusConst(lhs);
      if (!v) {
        if (op === "lt" || op === "le") narrowLinear(lhs, rhs, op, out, env);
        continue;
      }
      const r = exprRange(rhs, { ...env, vars: out });
      const cur = out.get(v.id) ?? ANY;
      let { min, max } = cur;
      if (op === "lt") max = Math.min(max, r.max - 1 - v.c);
      else if (op === "le") max = Math.min(max, r.max - v.c);
      else if (op === "gt") min = Math.max(min, r.min + 1 - v.c);
      else if (op === "ge") min = Math.max(min, r.min - v.c);
      else if (op === "eq") {
        min = Math.max(min, r.min - v.c);
        max = Math.min(max, r.max - v.c);
      } else if (op === "ne" && r.min === r.max) {
        // v + c != k excludes one value: an end of the range moves past it.
        if (min === r.min - v.c) min += 1;
        if (max === r.max - v.c) max -= 1;
      }
      out.set(v.id, { min, max });
    }
  }
  return out;
}

const NEGATED: Record<CompareOp, CompareOp> = {
  lt: "ge",
  le: "gt",
  gt: "le",
  ge: "lt",
  eq: "ne",
  ne: "eq",
};

/**
 * Whether `cond` is true (or false) for every value the ranges of `env` allow: a constant, or a
 * comparison of integers whose ranges do not overlap in the way it asks; else undefined.
 */
export function decideCond(cond: Expr, env: RangeEnv): boolean | undefined {
  return bottomUp(cond, (x, rec) => decideOf(x, env, rec));
}

function decideOf(
  cond: Expr,
  env: RangeEnv,
  decideCond: (x: Expr) => boolean | undefined,
): boolean | undefined {
  switch (cond.kind) {
    case "IntImm":
      return Number(cond.value) !== 0;
    case "Not": {
      const a = decideCond(cond.a);
      return a === undefined ? undefined : !a;
    }
    case "Logical": {
      const a = decideCond(cond.a);
      const b = decideCond(cond.b);
      if (cond.op === "and") return a === false || b === false ? false : a && b ? true : undefined;
      return a === true || b === true ? true : a === false && b === false ? false : undefined;
    }
    case "Compare": {
      if (isFloat(cond.a.dtype)) return undefined;
      const a = exprRange(cond.a, env);
      const b = exprRange(cond.b, env);
      const lt = (x: Interval, y: Interval): boolean | undefined =>
        x.max < y.min ? true : x.min >= y.max ? false : undefined;
      const le = (x: Interval, y: Interval): boolean | undefined =>
        x.max <= y.min ? true : x.min > y.max ? false : undefined;
      switch (cond.op) {
        case "lt":
          return lt(a, b);
        case "le":
          return le(a, b);
        case "gt":
          return lt(b, a);
        case "ge":
          return le(b, a);
        case "eq":
        case "ne": {
          const eq =
            a.max < b.min || b.max < a.min
              ? false
              : a.min === a.max && b.min === b.max && a.min === b.min
                ? true
                : undefined;
          return eq === undefined ? undefined : cond.op === "eq" ? eq : !eq;
        }
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

/**
 * A condition that holds wherever `cond` is false, built from what `refineRanges` and
 * `refineFacts` read (comparisons and `&&`), for the else-branch of a `T.if_`; undefined when
 * nothing that simple follows. `!(a < b)` is `a >= b` (and so on) for integer operands, not for
 * floats, where a NaN fails both; `!!a` is `a`; `!(a || b)` is `!a && !b`, each side that can be
 * negated. `!(a && b)` is only `!a || !b`, which bounds neither side, except where one side holds
 * for every value in `env` (a constant, or a comparison its ranges decide): then it is the
 * negation of the other side.
 */
export function negateCond(cond: Expr, env: RangeEnv): Expr | undefined {
  return bottomUp(cond, (x, rec) => negationOf(x, env, rec));
}

function negationOf(
  cond: Expr,
  env: RangeEnv,
  negateCond: (x: Expr) => Expr | undefined,
): Expr | undefined {
  switch (cond.kind) {
    case "Compare":
      if (isFloat(cond.a.dtype)) return undefined;
      return { ...cond, op: NEGATED[cond.op] };
    case "Not":
      return cond.a;
    case "Logical": {
      if (cond.op === "or") {
        const a = negateCond(cond.a);
        const b = negateCond(cond.b);
        if (a && b) return { kind: "Logical", op: "and", a, b, dtype: "bool" };
        return a ?? b;
      }
      if (decideCond(cond.a, env) === true) return negateCond(cond.b);
      if (decideCond(cond.b, env) === true) return negateCond(cond.a);
      return undefined;
    }
    default:
      return undefined;
  }
}
