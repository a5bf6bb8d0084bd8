import type { View } from "./ir/buffer.js";
import type { Expr } from "./ir/expr.js";
import type { Stmt, TileParam } from "./ir/stmt.js";

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

/** Calls `fn` on `e` and every sub-expression, parents first. */
export function walkExpr(e: Expr, fn: (e: Expr) => void): void {
  fn(e);
  for (const c of exprChildren(e)) walkExpr(c, fn);
}

/** True when `p` is a View (as opposed to an expression or static value). */
export function isView(p: TileParam): p is View {
  return typeof p === "object" && p !== null && (p as { kind: string }).kind === "View";
}

/** True when `p` is an expression. */
export function isExpr(p: TileParam): p is Expr {
  return typeof p === "object" && p !== null && !isView(p);
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
    case "TileApply": {
      const out: Expr[] = [s.dst.offset, s.src.offset];
      for (const p of Object.values(s.params)) {
        if (isView(p)) out.push(p.offset);
        else if (isExpr(p)) out.push(p);
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

/** Calls `fn` on `s` and every nested statement, parents first. */
export function walkStmt(s: Stmt, fn: (s: Stmt) => void): void {
  fn(s);
  for (const c of stmtChildren(s)) walkStmt(c, fn);
}
