import type { Buffer, Dim } from "../ir/buffer.js";
import type { Expr, Var } from "../ir/expr.js";
import { impure } from "../visit.js";
import { exprRange, type RangeEnv } from "./bounds.js";
import { bottomUp, postOrder } from "./deep.js";

/**
 * Symbolic upper bounds for accesses to tensors with symbolic dims (`T.Tensor(["n"], ...)`).
 * A bound is a polynomial over the kernel's dim variables (each ≥ 0, since it equals a tensor
 * extent checked at launch); an access is proved in bounds when `numel - 1 - max(offset)` has
 * only non-negative coefficients, which makes it ≥ 0 for every value of the dims.
 */

/** A polynomial with integer coefficients: monomial key (sorted var ids, "*"-joined; "" for 1) → coefficient. */
export type Poly = ReadonlyMap<string, number>;

/** `expr ≤ max` holds where the fact was learnt (from a guard such as `i < n`, or a loop bound). */
export interface Fact {
  readonly expr: Expr;
  readonly max: Poly;
  /** True for a fact learnt from a guard (`refineFacts`), not from a loop or let binding. */
  readonly guard?: boolean;
}

/** What the symbolic analysis knows: numeric ranges, dim variables (≥ 0) and learnt facts. */
export interface SymEnv extends RangeEnv {
  readonly dims: ReadonlySet<number>;
  readonly facts: readonly Fact[];
}

/**
 * Same expression, variables and buffers compared by identity (`id`), spans ignored. Iterative
 * (a worklist of pairs), so any depth is safe.
 */
function sameExpr(a0: unknown, b0: unknown): boolean {
  const work: [unknown, unknown][] = [[a0, b0]];
  while (work.length > 0) {
    const [a, b] = work.pop()!;
    if (a === b) continue;
    if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
    const x = a as Record<string, unknown>;
    const y = b as Record<string, unknown>;
    if (x.kind !== y.kind) return false;
    if (x.kind === "Var" || x.kind === "Buffer") {
      if (x.id !== y.id) return false;
      continue;
    }
    const keys = Object.keys(x).filter((k) => k !== "span" && x[k] !== undefined);
    if (keys.length !== Object.keys(y).filter((k) => k !== "span" && y[k] !== undefined).length)
      return false;
    for (const k of keys) {
      if (Array.isArray(x[k])) {
        const xs = x[k] as unknown[];
        const ys = y[k];
        if (!Array.isArray(ys) || xs.length !== ys.length) return false;
        xs.forEach((v, i) => work.push([v, ys[i]]));
      } else work.push([x[k], y[k]]);
    }
  }
  return true;
}

const poly = (entries: [string, number][]): Poly => new Map(entries.filter(([, c]) => c !== 0));
const constPoly = (c: number): Poly => poly([["", c]]);

function addPoly(a: Poly, b: Poly, sign = 1): Poly {
  const out = new Map(a);
  for (const [k, c] of b) out.set(k, (out.get(k) ?? 0) + sign * c);
  return poly([...out]);
}

function mulPoly(a: Poly, b: Poly): Poly {
  const out = new Map<string, number>();
  for (const [ka, ca] of a) {
    for (const [kb, cb] of b) {
      const ids = [...ka.split("*"), ...kb.split("*")].filter((s) => s !== "");
      const k = ids.sort((x, y) => Number(x) - Number(y)).join("*");
      out.set(k, (out.get(k) ?? 0) + ca * cb);
    }
  }
  return poly([...out]);
}

/** True when `p ≥ 0` for every non-negative value of its variables (all coefficients ≥ 0). */
function provablyNonNegative(p: Poly): boolean {
  return [...p.values()].every((c) => c >= 0);
}

/** The element count of `buffer` as a polynomial in its dim variables. */
export function numelPoly(buffer: Buffer): Poly {
  return buffer.shape.reduce<Poly>(
    (p, d) => mulPoly(p, typeof d === "number" ? constPoly(d) : poly([[String(d.id), 1]])),
    constPoly(1),
  );
}

/** Most upper bounds kept per expression by {@link symMaxes} (each is sound; fewer only lose proofs). */
const MAX_BOUNDS = 4;

const polyKey = (p: Poly): string =>
  [...p]
    .map(([k, c]) => `${k}:${c}`)
    .sort()
    .join(" ");

/** `ps` without repeats, at most MAX_BOUNDS of them, in order. */
function distinctBounds(ps: Iterable<Poly>): Poly[] {
  const out: Poly[] = [];
  const seen = new Set<string>();
  for (const p of ps) {
    const k = polyKey(p);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(p);
    if (out.length === MAX_BOUNDS) break;
  }
  return out;
}

/** `f(x, y)` for each pair, the pairs of low index sums first. */
function* pairs(a: readonly Poly[], b: readonly Poly[], f: (x: Poly, y: Poly) => Poly) {
  for (let s = 0; s < a.length + b.length - 1; s++)
    for (let i = 0; i <= s; i++) if (i < a.length && s - i < b.length) yield f(a[i]!, b[s - i]!);
}

/**
 * Upper bounds of `e` as polynomials in dim variables, each valid on its own (empty when none
 * is known): every fact about `e` (innermost first: a guard `t < n` inside a `let t = tid`
 * bounds `t` by both `n - 1` and the launch), and the bound built from `e`'s parts: sums add,
 * products of non-negative factors multiply, `floordiv(x, c)` of x ≥ 0 divides x's constant
 * bounds, `floordiv(x, c)·c + floormod(x, c)` is bounded as x (the flat index of a 2-D split),
 * anything else falls back to the numeric range. At
 * most MAX_BOUNDS are kept.
 */
export function symMaxes(e: Expr, env: SymEnv): readonly Poly[] {
  return bottomUp(e, (x, rec) => symMaxOf(x, env, rec));
}

function symMaxOf(e: Expr, env: SymEnv, symMaxes: (x: Expr) => readonly Poly[]): Poly[] {
  const facts: Poly[] = [];
  for (let i = env.facts.length - 1; i >= 0; i--) {
    const f = env.facts[i]!;
    if (sameExpr(f.expr, e)) facts.push(f.max);
  }
  return distinctBounds([...facts, ...structural(e, env, symMaxes)]);
}

/** The bounds of `e` from its parts (see {@link symMaxes}). */
function structural(e: Expr, env: SymEnv, symMaxes: (x: Expr) => readonly Poly[]): Poly[] {
  if (e.kind === "Var" && env.dims.has(e.id)) return [poly([[String(e.id), 1]])];
  const numeric = (): Poly[] => {
    const r = exprRange(e, env);
    return Number.isFinite(r.max) ? [constPoly(r.max)] : [];
  };
  if (e.kind === "Cast" && e.value.dtype === "int32") return [...symMaxes(e.value)];
  if (e.kind !== "Binary") return numeric();
  if (e.op === "add") {
    // floordiv(x, c)·c + floormod(x, c) is x (floor division): the flat index of a 2-D split.
    // x's bounds, and the sum's (a guard on the quotient bounds the sum below x's: the lane's
    // digits 3:10 and 10:1 of lanes 0..29, `(lane / 10)·10 + lane % 10` under `lane / 10 < 3`).
    const whole = splitIndexOf(e);
    const w = whole ? symMaxes(whole) : [];
    const a = symMaxes(e.a);
    const b = symMaxes(e.b);
    const sums = a.length && b.length ? [...pairs(a, b, (x, y) => addPoly(x, y))] : [];
    return w.length || sums.length ? distinctBounds([...w, ...sums]) : numeric();
  }
  if (e.op === "sub") {
    const a = symMaxes(e.a);
    const lo = exprRange(e.b, env).min;
    return a.length && Number.isFinite(lo)
      ? a.map((x) => addPoly(x, constPoly(lo), -1))
      : numeric();
  }
  if (e.op === "mul" && exprRange(e.a, env).min >= 0 && exprRange(e.b, env).min >= 0) {
    const a = symMaxes(e.a);
    const b = symMaxes(e.b);
    return a.length && b.length ? distinctBounds(pairs(a, b, mulPoly)) : numeric();
  }
  const c = e.b.kind === "IntImm" ? Number(e.b.value) : 0;
  if (e.op === "floordiv" && c > 0 && exprRange(e.a, env).min >= 0) {
    // floor(x / c) ≤ floor(max / c) for a constant bound of x ≥ 0 (a guard on x, say).
    const ks = symMaxes(e.a).flatMap((p) => constantOf(p));
    if (ks.length)
      return distinctBounds([...ks.map((k) => constPoly(Math.floor(k / c))), ...numeric()]);
  }
  return numeric();
}

/** The value of a polynomial without variables, as a one-element list (else empty). */
function constantOf(p: Poly): number[] {
  if ([...p.keys()].some((k) => k !== "")) return [];
  return [p.get("") ?? 0];
}

/** `x` when `e` is `floordiv(x, c)·c + floormod(x, c)` (factors and terms in either order). */
function splitIndexOf(e: Expr): Expr | undefined {
  if (e.kind !== "Binary" || e.op !== "add") return undefined;
  for (const [m, r] of [
    [e.a, e.b],
    [e.b, e.a],
  ] as const) {
    if (r.kind !== "Binary" || r.op !== "floormod" || r.b.kind !== "IntImm") continue;
    if (m.kind !== "Binary" || m.op !== "mul") continue;
    for (const [q, k] of [
      [m.a, m.b],
      [m.b, m.a],
    ] as const) {
      if (k.kind !== "IntImm" || Number(k.value) !== Number(r.b.value)) continue;
      if (q.kind !== "Binary" || q.op !== "floordiv" || !sameExpr(q.b, r.b)) continue;
      if (sameExpr(q.a, r.a)) return r.a;
    }
  }
  return undefined;
}

/**
 * The guard facts in `env` about sub-expressions of `e` (a guard such as `T.if_(i.lt(120), ...)` on an
 * index `i` that `e` is built from), innermost guard first: what a bounds error reports as
 * already present, so that it never asks for a guard the code has.
 */
export function factsWithin(e: Expr, env: SymEnv): Fact[] {
  const subs = postOrder(e);
  const out: Fact[] = [];
  for (let i = env.facts.length - 1; i >= 0; i--) {
    const f = env.facts[i]!;
    if (f.guard && subs.some((x) => sameExpr(f.expr, x))) out.push(f);
  }
  return out;
}

/** A bound polynomial as text: `4`, `n - 1`, `2·n·m + 3` (variables as `v<id>` unless named). */
export function showPoly(p: Poly, names: ReadonlyMap<number, string> = new Map()): string {
  const parts = [...p]
    .filter(([k]) => k !== "")
    .map(([k, c]) => {
      const vars = k.split("*").map((id) => names.get(Number(id)) ?? `v${id}`);
      return `${c === 1 ? "" : `${c}·`}${vars.join("·")}`;
    });
  const c = p.get("") ?? 0;
  if (parts.length === 0) return String(c);
  return c === 0 ? parts.join(" + ") : `${parts.join(" + ")} ${c < 0 ? "-" : "+"} ${Math.abs(c)}`;
}

/**
 * Facts that hold where `cond` is true: `x < n` gives `x ≤ n - 1`, `x <= n` gives `x ≤ n`
 * (either side order, and each side of `&&`), for any expression `x` and any `n` with a
 * symbolic upper bound. `v + c < n` also bounds the variable `v` itself.
 */
export function refineFacts(cond: Expr, env: SymEnv): Fact[] {
  const out: Fact[] = [];
  const flip = { lt: "gt", le: "ge", gt: "lt", ge: "le", eq: "eq", ne: "ne" } as const;
  // The comparisons under `&&`, left to right, without recursion.
  const work: Expr[] = [cond];
  while (work.length > 0) {
    const c = work.pop()!;
    if (c.kind === "Logical" && c.op === "and") {
      work.push(c.b, c.a);
      continue;
    }
    if (c.kind !== "Compare") continue;
    for (const [lhs, rhs, op] of [
      [c.a, c.b, c.op],
      [c.b, c.a, flip[c.op]],
    ] as const) {
      if (op !== "lt" && op !== "le" && op !== "eq") continue;
      // A load may read another value by the time the guarded code runs: no fact about it.
      if (impure(lhs)) continue;
      for (const m of symMaxes(rhs, { ...env, facts: [...env.facts, ...out] })) {
        const max = op === "lt" ? addPoly(m, constPoly(1), -1) : m;
        out.push({ expr: lhs, max, guard: true });
        const v = asVarPlusConst(lhs);
        if (v) out.push({ expr: v.v, max: addPoly(max, constPoly(v.c), -1), guard: true });
      }
    }
  }
  return out;
}

function asVarPlusConst(e: Expr): { v: Var; c: number } | undefined {
  if (e.kind !== "Binary" || (e.op !== "add" && e.op !== "sub")) return undefined;
  if (e.a.kind === "Var" && e.b.kind === "IntImm") {
    const k = Number(e.b.value);
    return { v: e.a, c: e.op === "add" ? k : -k };
  }
  if (e.op === "add" && e.b.kind === "Var" && e.a.kind === "IntImm") {
    return { v: e.b, c: Number(e.a.value) };
  }
  return undefined;
}

/**
 * True when every element `offset` can take lies below the element count of `buffer` (in
 * elements of the access; `scale` = buffer element bytes / access element bytes), for every
 * value of the dim variables. An access in wider elements than the buffer's (a uint8 scratch
 * read as float32) counts the whole access elements of a static buffer.
 */
export function provablyBelowNumel(
  buffer: Buffer,
  offset: Expr,
  scale: number,
  env: SymEnv,
): boolean {
  if (!Number.isInteger(scale)) {
    const n = buffer.shape.every((d) => typeof d === "number")
      ? Math.floor((buffer.shape as number[]).reduce((a, b) => a * b, 1) * scale)
      : undefined;
    return n !== undefined && provablyBelow(offset, constPoly(n), env);
  }
  return provablyBelow(offset, mulPoly(numelPoly(buffer), constPoly(scale)), env);
}

/**
 * True when every value `index` can take lies below `extent` (a static extent, or a dim
 * variable: an axis of a tensor with symbolic dims), for every value of the dim variables: one
 * of `index`'s symbolic upper bounds ({@link symMaxes}: guards, loop bounds, its parts) is at
 * most `extent - 1`.
 */
export function provablyBelowExtent(index: Expr, extent: Dim, env: SymEnv): boolean {
  const limit = typeof extent === "number" ? constPoly(extent) : poly([[String(extent.id), 1]]);
  return provablyBelow(index, limit, env);
}

/** True when some symbolic upper bound of `e` is at most `limit - 1`. */
function provablyBelow(e: Expr, limit: Poly, env: SymEnv): boolean {
  return symMaxes(e, env).some((m) =>
    provablyNonNegative(addPoly(addPoly(limit, constPoly(1), -1), m, -1)),
  );
}
