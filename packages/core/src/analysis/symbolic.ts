import type { Buffer } from "../ir/buffer.js";
import type { Expr, Var } from "../ir/expr.js";
import { exprRange, type RangeEnv } from "./bounds.js";

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
}

/** What the symbolic analysis knows: numeric ranges, dim variables (≥ 0) and learnt facts. */
export interface SymEnv extends RangeEnv {
  readonly dims: ReadonlySet<number>;
  readonly facts: readonly Fact[];
}

/** Same expression, variables and buffers compared by identity (`id`), spans ignored. */
function sameExpr(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  if (x.kind !== y.kind) return false;
  if (x.kind === "Var" || x.kind === "Buffer") return x.id === y.id;
  const keys = Object.keys(x).filter((k) => k !== "span" && x[k] !== undefined);
  if (keys.length !== Object.keys(y).filter((k) => k !== "span" && y[k] !== undefined).length)
    return false;
  return keys.every((k) =>
    Array.isArray(x[k])
      ? Array.isArray(y[k]) &&
        (x[k] as unknown[]).length === (y[k] as unknown[]).length &&
        (x[k] as unknown[]).every((v, i) => sameExpr(v, (y[k] as unknown[])[i]))
      : sameExpr(x[k], y[k]),
  );
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

/**
 * An upper bound of `e` as a polynomial in dim variables, or undefined when none is known.
 * Sums add, products of non-negative factors multiply, facts bound the expressions they name,
 * and anything else falls back to the numeric range.
 */
export function symMax(e: Expr, env: SymEnv): Poly | undefined {
  const fact = env.facts.find((f) => sameExpr(f.expr, e));
  if (fact) return fact.max;
  if (e.kind === "Var" && env.dims.has(e.id)) return poly([[String(e.id), 1]]);
  const numeric = (): Poly | undefined => {
    const r = exprRange(e, env);
    return Number.isFinite(r.max) ? constPoly(r.max) : undefined;
  };
  if (e.kind === "Cast" && e.value.dtype === "int32") return symMax(e.value, env);
  if (e.kind !== "Binary") return numeric();
  if (e.op === "add") {
    const a = symMax(e.a, env);
    const b = symMax(e.b, env);
    return a && b ? addPoly(a, b) : numeric();
  }
  if (e.op === "sub") {
    const a = symMax(e.a, env);
    const lo = exprRange(e.b, env).min;
    return a && Number.isFinite(lo) ? addPoly(a, constPoly(lo), -1) : numeric();
  }
  if (e.op === "mul" && exprRange(e.a, env).min >= 0 && exprRange(e.b, env).min >= 0) {
    const a = symMax(e.a, env);
    const b = symMax(e.b, env);
    return a && b ? mulPoly(a, b) : numeric();
  }
  return numeric();
}

/**
 * Facts that hold where `cond` is true: `x < n` gives `x ≤ n - 1`, `x <= n` gives `x ≤ n`
 * (either side order, and each side of `&&`), for any expression `x` and any `n` with a
 * symbolic upper bound. `v + c < n` also bounds the variable `v` itself.
 */
export function refineFacts(cond: Expr, env: SymEnv): Fact[] {
  const out: Fact[] = [];
  const flip = { lt: "gt", le: "ge", gt: "lt", ge: "le", eq: "eq", ne: "ne" } as const;
  const apply = (c: Expr): void => {
    if (c.kind === "Logical" && c.op === "and") {
      apply(c.a);
      apply(c.b);
      return;
    }
    if (c.kind !== "Compare") return;
    for (const [lhs, rhs, op] of [
      [c.a, c.b, c.op],
      [c.b, c.a, flip[c.op]],
    ] as const) {
      if (op !== "lt" && op !== "le" && op !== "eq") continue;
      // A load may read another value by the time the guarded code runs: no fact about it.
      if (readsMemory(lhs)) continue;
      const m = symMax(rhs, { ...env, facts: [...env.facts, ...out] });
      if (!m) continue;
      const max = op === "lt" ? addPoly(m, constPoly(1), -1) : m;
      out.push({ expr: lhs, max });
      const v = asVarPlusConst(lhs);
      if (v) out.push({ expr: v.v, max: addPoly(max, constPoly(v.c), -1) });
    }
  };
  apply(cond);
  return out;
}

function readsMemory(e: Expr): boolean {
  switch (e.kind) {
    case "BufferLoad":
    case "CallExpr":
      return true;
    case "Binary":
    case "Compare":
    case "Logical":
      return readsMemory(e.a) || readsMemory(e.b);
    case "Not":
      return readsMemory(e.a);
    case "Cast":
      return readsMemory(e.value);
    case "IfThenElse":
      return readsMemory(e.cond) || readsMemory(e.t) || readsMemory(e.f);
    default:
      return false;
  }
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
 * value of the dim variables.
 */
export function provablyBelowNumel(
  buffer: Buffer,
  offset: Expr,
  scale: number,
  env: SymEnv,
): boolean {
  const m = symMax(offset, env);
  if (!m || !Number.isInteger(scale)) return false;
  const limit = mulPoly(numelPoly(buffer), constPoly(scale));
  return provablyNonNegative(addPoly(addPoly(limit, constPoly(1), -1), m, -1));
}
