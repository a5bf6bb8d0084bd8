import { TirxError } from "../diagnostics.js";
import type { Expr } from "../ir/expr.js";
import type { PrimFunc } from "../ir/func.js";
import { isStmt, type Stmt } from "../ir/stmt.js";
import { MAX_EXPR_DEPTH, MAX_EXPR_NODES } from "../limits.js";
import { exprChildren, stmtChildren, stmtExprs } from "../visit.js";

type Node = Expr | Stmt;

function children(n: Node): readonly Node[] {
  if (!isStmt(n)) return exprChildren(n);
  const s = n as Stmt;
  // A runtime grid extent is an expression too (evaluated on the host at launch).
  const grid =
    s.kind === "DeviceEntry" ? s.launch.grid.filter((g): g is Expr => typeof g !== "number") : [];
  return [...grid, ...stmtExprs(s), ...stmtChildren(s)];
}

/**
 * Nesting depth of `node` (a PrimFunc body, statement or expression): statements and
 * expressions each count one level; a leaf is 1. Also checks the size of every expression as a
 * tree (each use of a shared sub-expression counted, as code generation computes each use).
 * Iterative and linear in the number of distinct nodes (shared sub-trees are measured once), so
 * it is safe on any input.
 * @throws TirxError TX2013 (wf/expr-depth) when the depth passes `limit` (default
 *   MAX_EXPR_DEPTH), at the span of the node where it does (for a chain `x.add(1).add(1)…`, the
 *   author's line of the add that crosses the limit).
 * @throws TirxError TX2018 (wf/expr-size) when an expression has more than MAX_EXPR_NODES
 *   operations as a tree (`e = e.add(e)` repeated), at the node that crosses it.
 */
export function checkDepth(node: PrimFunc | Node, limit: number = MAX_EXPR_DEPTH): number {
  const root: Node = node.kind === "PrimFunc" ? node.body : node;
  const height = new Map<Node, number>();
  const size = new Map<Expr, number>();
  // Post-order without recursion: a node is pushed, then its children; it is finished when it is
  // met again with every child measured.
  const stack: Node[] = [root];
  const expanded = new Set<Node>();
  while (stack.length > 0) {
    const n = stack[stack.length - 1]!;
    if (height.has(n)) {
      stack.pop();
      continue;
    }
    const cs = children(n);
    if (!expanded.has(n)) {
      expanded.add(n);
      for (const c of cs) if (!height.has(c)) stack.push(c);
      continue;
    }
    stack.pop();
    let h = 0;
    for (const c of cs) h = Math.max(h, height.get(c) ?? 0);
    h += 1;
    if (h > limit) {
      throw new TirxError(
        "TX2013",
        `this ${n.kind} nests ${limit + 1} levels of expressions and statements; at most ${limit} are allowed (split long chains with T.let_ into named steps)`,
        n.span,
      );
    }
    if (!isStmt(n)) {
      let k = 1;
      for (const c of cs) k += size.get(c as Expr) ?? 1;
      if (k > MAX_EXPR_NODES) {
        throw new TirxError(
          "TX2018",
          `this expression has more than ${MAX_EXPR_NODES} operations when each use of a shared value is counted (code computes each use again); bind a value that is used more than once with T.let_`,
          n.span,
        );
      }
      size.set(n as Expr, k);
    }
    height.set(n, h);
  }
  return height.get(root) ?? 1;
}
