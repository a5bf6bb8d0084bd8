import {
  exprChildren,
  MAX_EXPR_DEPTH,
  MAX_EXPR_NODES,
  TirxError,
  type Expr,
  type Span,
} from "@tirx-ts/core";

/** Depth and tree size of expressions the builder made (leaves and foreign nodes count as 1). */
const depths = new WeakMap<Expr, number>();
const sizes = new WeakMap<Expr, number>();

/**
 * Record the depth and tree size of `e`, a node just built from operands whose depths are known,
 * and refuse it past MAX_EXPR_DEPTH or MAX_EXPR_NODES, so a runaway chain (`x.add(1)` in a loop)
 * stops at the author's line after 2049 steps instead of growing until a walker overflows the
 * stack, and a value that doubles itself (`x = x.add(x)` in a loop) stops before walkers take
 * exponential time.
 * @throws TirxError TX2013 (wf/expr-depth) or TX2018 (wf/expr-size) at `span`.
 */
export function tracked(e: Expr, span?: Span): Expr {
  if (depths.has(e)) return e;
  let d = 0;
  let n = 1;
  for (const c of exprChildren(e)) {
    d = Math.max(d, depths.get(c) ?? 1);
    n += sizes.get(c) ?? 1;
  }
  d += 1;
  if (d > MAX_EXPR_DEPTH) {
    throw new TirxError(
      "TX2013",
      `this expression nests ${d} operations deep; at most ${MAX_EXPR_DEPTH} are allowed (bind intermediate results with T.let_)`,
      span,
    );
  }
  if (n > MAX_EXPR_NODES) {
    throw new TirxError(
      "TX2018",
      `this expression has more than ${MAX_EXPR_NODES} operations when each use of a shared value is counted (code computes each use again); bind a value used more than once with T.let_`,
      span,
    );
  }
  depths.set(e, d);
  sizes.set(e, n);
  return e;
}
