import type { View } from "./ir/buffer.js";
import type { Expr } from "./ir/expr.js";
import type { Stmt, TileParam } from "./ir/stmt.js";
import { planExprFields, type TilePlan } from "./ir/tile-plan.js";
import { isTensorMap } from "./ir/tensor-map.js";

/** The direct sub-expressions of `e`, in evaluation order. */
export function exprChildren(e: Expr): readonly Expr[] {
  switch (e.kind) {
    case "Binary":
    case "Compare":
    case "Logical":
      return [e.a, e.b];
    case "Not":
      return [e.a];
    case "Cast":
      return [e.value];
    case "IfThenElse":
      return [e.cond, e.t, e.f];
    case "BufferLoad":
    case "BufferPtr":
      return [e.offset];
    case "CallExpr":
      return e.args;
    default:
      return [];
  }
}

/**
 * Calls `fn` on `e` and every sub-expression, parents first (a shared sub-expression is visited
 * once per use). Iterative: any depth is safe.
 */
export function walkExpr(e: Expr, fn: (e: Expr) => void): void {
  const stack: Expr[] = [e];
  while (stack.length > 0) {
    const x = stack.pop()!;
    fn(x);
    const cs = exprChildren(x);
    for (let i = cs.length - 1; i >= 0; i--) stack.push(cs[i]!);
  }
}

/**
 * True when evaluating `e` reads memory or calls an op (a BufferLoad or CallExpr inside), so two
 * evaluations may give two values, and one may check or report something.
 */
export function impure(e: Expr): boolean {
  const stack = [e];
  while (stack.length) {
    const x = stack.pop()!;
    if (x.kind === "BufferLoad" || x.kind === "CallExpr") return true;
    stack.push(...exprChildren(x));
  }
  return false;
}

/** True when `p` is a View (as opposed to an expression or static value). */
export function isView(p: TileParam): p is View {
  return typeof p === "object" && p !== null && (p as { kind: string }).kind === "View";
}

/** True when `p` is an expression. */
export function isExpr(p: TileParam): p is Expr {
  return typeof p === "object" && p !== null && !isView(p) && !isTensorMap(p) && !Array.isArray(p);
}

/** True when `p` is a list of expressions (TMA coordinates). */
export function isExprList(p: TileParam): p is readonly Expr[] {
  return Array.isArray(p);
}

/** The expressions a statement uses directly (not those of nested statements). */
export function stmtExprs(s: Stmt): readonly Expr[] {
  switch (s.kind) {
    case "For":
      return [s.min, s.extent];
    case "While":
      return [s.cond];
    case "If":
      return [s.cond];
    case "Let":
      return [s.value];
    case "Store":
      return [s.offset, s.value];
    case "Call":
      return s.args;
    case "TileOp":
      return planExprs(s.plan);
    case "TileApply": {
      const out: Expr[] = [s.dst.offset, s.src.offset];
      for (const p of Object.values(s.params)) {
        if (isView(p)) out.push(p.offset);
        else if (isExpr(p)) out.push(p);
        else if (isExprList(p)) out.push(...p);
      }
      return out;
    }
    default:
      return [];
  }
}

/** The direct sub-statements of `s`. */
export function stmtChildren(s: Stmt): readonly Stmt[] {
  switch (s.kind) {
    case "Seq":
      return s.stmts;
    case "For":
    case "While":
    case "DeviceEntry":
      return [s.body];
    case "If":
      return s.else ? [s.then, s.else] : [s.then];
    default:
      return [];
  }
}

/** Calls `fn` on `s` and every nested statement, parents first. Iterative: any depth is safe. */
export function walkStmt(s: Stmt, fn: (s: Stmt) => void): void {
  const stack: Stmt[] = [s];
  while (stack.length > 0) {
    const x = stack.pop()!;
    fn(x);
    const cs = stmtChildren(x);
    for (let i = cs.length - 1; i >= 0; i--) stack.push(cs[i]!);
  }
}

/**
 * The runtime expressions of a verified tile plan, in a fixed order: each side's view offset and
 * byte base, then the plan's own expression fields in its record's order (`TILE_PLANS`: e.g.
 * src_size, ignore_src, cache_policy, pred of cp.async; coordinates first for TMA), lists
 * flattened.
 */
export function planExprs(p: TilePlan): readonly Expr[] {
  const out: Expr[] = [p.dst.view.offset, p.dst.baseBytes, p.src.view.offset, p.src.baseBytes];
  for (const [, v] of planExprFields(p)) {
    if (Array.isArray(v)) out.push(...(v as readonly Expr[]));
    else out.push(v as Expr);
  }
  return out;
}
