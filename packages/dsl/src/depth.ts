import { exprChildren, MAX_EXPR_DEPTH, TirxError, type Expr, type Span } from "@tirx-ts/core";

/** Depth of expressions the builder made (leaves and foreign nodes count as 1). */
const depths = new WeakMap<Expr, number>();

/**
 * Record the depth of `e`, a node just built from operands whose depths are known, and refuse
 * it past MAX_EXPR_DEPTH, so a runaway chain (`x.add(1)` in a loop) stops at the author's line
 * after 2049 steps instead of growing until a walker overflows the stack.
 * @throws TirxError TX2013 (wf/expr-depth) at `span`.
 */
export function tracked(e: Expr, span?: Span): Expr {
  if (depths.has(e)) return e;
  let d = 0;
  for (const c of exprChildren(e)) d = Math.max(d, depths.get(c) ?? 1);
  d += 1;
  if (d > MAX_EXPR_DEPTH) {
    throw new TirxError(
      "TX2013",
      `this expression nests ${d} operations deep; at most ${MAX_EXPR_DEPTH} are allowed (bind intermediate results with T.let_)`,
      span,
    );
  }
  depths.set(e, d);
  return e;
}
