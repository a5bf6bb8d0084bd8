import type { Expr } from "../ir/expr.js";
import { isStmt, type Stmt } from "../ir/stmt.js";
import { mapExpr, mapStmt } from "./map.js";

/**
 * Replace variables by `Var.id` (TVM's `Substitute`). In a statement, binders are replaced too
 * when the replacement is itself a variable (a `Let` or `For` var renamed to a fresh one), so
 * `substitute` also renames. Copy-on-write: untouched sub-trees are returned as they are.
 * @example substitute(body, new Map([[i.id, intImm(3)]])) // body with i := 3
 */
export function substitute<T extends Expr | Stmt>(node: T, map: ReadonlyMap<number, Expr>): T {
  if (map.size === 0) return node;
  const expr = (e: Expr): Expr => (e.kind === "Var" ? (map.get(e.id) ?? e) : e);
  if (isStmt(node)) {
    const stmt = (s: Stmt): Stmt => {
      if (s.kind === "Let" || s.kind === "For") {
        const to = map.get(s.var.id);
        if (to && to.kind === "Var" && to !== s.var) return { ...s, var: to };
      }
      return s;
    };
    return mapStmt(node, { expr, stmt }) as T;
  }
  return mapExpr(node as Expr, expr) as T;
}
