import type { Expr } from "../ir/expr.js";
import type { Stmt } from "../ir/stmt.js";
import { exprChildren, stmtChildren } from "../visit.js";

const NONE: readonly Expr[] = [];
const always = (): boolean => true;
const never = (): boolean => false;

/**
 * Every occurrence of a sub-expression of `e` in post-order: each node after its children,
 * children left to right, `e` last (the order in which evaluating `e` finishes them). A
 * sub-expression used by several parents is listed once per use, so the list is as long as the
 * expression's tree (at most MAX_EXPR_NODES for IR that passed `checkDepth`). Where `descend(x)`
 * is false, `x` is listed without its children. Iterative: any depth is safe.
 */
export function postOrder(e: Expr, descend: (x: Expr) => boolean = always): Expr[] {
  const out: Expr[] = [];
  const nodes: Expr[] = [e];
  const kids: (readonly Expr[])[] = [descend(e) ? exprChildren(e) : NONE];
  const next: number[] = [0];
  while (nodes.length > 0) {
    const top = nodes.length - 1;
    const cs = kids[top]!;
    const i = next[top]!;
    if (i < cs.length) {
      next[top] = i + 1;
      const c = cs[i]!;
      nodes.push(c);
      kids.push(descend(c) ? exprChildren(c) : NONE);
      next.push(0);
      continue;
    }
    out.push(nodes.pop()!);
    kids.pop();
    next.pop();
  }
  return out;
}

const heights = new WeakMap<Expr, number>();

/**
 * Height of `e`: 1 for a leaf, else 1 + the largest height of its children. Memoized per node
 * (IR is immutable; leaves need no memo), in time linear in the distinct nodes not measured
 * before; a plain recursion to RECURSE_HEIGHT levels, an iterative walk below that, so any depth
 * is safe.
 */
export function exprHeight(e: Expr): number {
  return heightNear(e, 0);
}

/**
 * How deep {@link heightNear} recurses before it hands a sub-expression to the iterative walk:
 * far below the stack's limit, far above the heights realistic IR has.
 */
const RECURSE_HEIGHT = 256;

/**
 * exprHeight of `e`, reached `depth` levels down a plain recursion (a leaf is 1 without the memo:
 * most nodes are leaves, and each has its own object). The common case, one call per node and
 * no explicit stack; past RECURSE_HEIGHT levels the iterative walk takes over.
 */
function heightNear(e: Expr, depth: number): number {
  const cs = exprChildren(e);
  if (cs.length === 0) return 1;
  const hit = heights.get(e);
  if (hit !== undefined) return hit;
  if (depth >= RECURSE_HEIGHT) return heightFar(e);
  let h = 0;
  for (const c of cs) {
    const ch = heightNear(c, depth + 1);
    if (ch > h) h = ch;
  }
  heights.set(e, h + 1);
  return h + 1;
}

/** exprHeight of `e` without recursion: any depth is safe. */
function heightFar(e: Expr): number {
  const hit = heights.get(e);
  if (hit !== undefined) return hit;
  const stack: Expr[] = [e];
  while (stack.length > 0) {
    const x = stack[stack.length - 1]!;
    if (heights.has(x)) {
      stack.pop();
      continue;
    }
    let h = 0;
    let ready = true;
    for (const c of exprChildren(x)) {
      const ch = heights.get(c);
      if (ch === undefined) {
        ready = false;
        stack.push(c);
      } else if (ch > h) h = ch;
    }
    if (!ready) continue;
    stack.pop();
    heights.set(x, h + 1);
  }
  return heights.get(e)!;
}

/**
 * Height above which {@link bottomUp} evaluates a recursive function bottom-up instead of by
 * plain recursion. Shallower expressions (every realistic one) take the plain path.
 */
export const SHALLOW_HEIGHT = 64;

/**
 * `f(e)` for a pure function `f` defined by recursion on sub-expressions, where `f` recurses
 * only through `rec` (never calling itself directly) and its value at a node does not depend on
 * the path that reached it. An expression higher than {@link SHALLOW_HEIGHT} is evaluated
 * bottom-up: `f` runs once on each of its distinct nodes, children first, with results
 * memoized, so no call recurses more than one level, whatever the depth (up to MAX_EXPR_DEPTH
 * and beyond). Shallower ones recurse plainly, with no memo. `f` may run on nodes the plain
 * recursion would skip (a short-circuit); being pure, that changes nothing but time, which stays
 * linear in the distinct nodes.
 *
 * `descend(x)` false says that `f` never reaches below `x` (a load's value does not depend on
 * how its index is computed): the walk skips what is under it, so asking at every load of a
 * chain of gathers costs linear time in all, not quadratic. Where `f` does reach below such a
 * node, it still gets the right answer, by plain recursion from there.
 */
export function bottomUp<R>(
  e: Expr,
  f: (x: Expr, rec: (y: Expr) => R) => R,
  descend: (x: Expr) => boolean = always,
): R {
  if (exprHeight(e) <= SHALLOW_HEIGHT) {
    const plain = (y: Expr): R => f(y, plain);
    return plain(e);
  }
  const memo = new Map<Expr, R>();
  const rec = (y: Expr): R => {
    if (memo.has(y)) return memo.get(y)!;
    const r = f(y, rec);
    memo.set(y, r);
    return r;
  };
  for (const x of distinctPostOrder(e, never, descend)) rec(x);
  return memo.get(e)!;
}

/**
 * The distinct nodes of `e`, each after its children (iterative). Nodes for which `known` is
 * true are left out with everything under them (a memo's hits); `descend(x)` false lists `x`
 * without its children.
 */
export function distinctPostOrder(
  e: Expr,
  known: (x: Expr) => boolean = never,
  descend: (x: Expr) => boolean = always,
): Expr[] {
  const out: Expr[] = [];
  if (known(e)) return out;
  const done = new Set<Expr>();
  const skip = (x: Expr): boolean => done.has(x) || known(x);
  const nodes: Expr[] = [e];
  const kids: (readonly Expr[])[] = [descend(e) ? exprChildren(e) : NONE];
  const next: number[] = [0];
  while (nodes.length > 0) {
    const top = nodes.length - 1;
    const cs = kids[top]!;
    let i = next[top]!;
    while (i < cs.length && skip(cs[i]!)) i++;
    if (i < cs.length) {
      next[top] = i + 1;
      const c = cs[i]!;
      nodes.push(c);
      kids.push(descend(c) ? exprChildren(c) : NONE);
      next.push(0);
      continue;
    }
    const x = nodes.pop()!;
    kids.pop();
    next.pop();
    if (!done.has(x)) {
      done.add(x);
      out.push(x);
    }
  }
  return out;
}

/**
 * `f`, a function of one expression node that reaches the node's children through the function
 * returned here (its results stable while one top-level call runs: a printer, say), made safe for
 * deep expressions: a call on an expression higher than SHALLOW_HEIGHT first runs `f` on each
 * distinct node below it, children first, and those results answer the parents' calls until the
 * top-level call returns. Side effects of `f` happen in the order plain recursion would give
 * (children left to right before their parent), each distinct node once.
 */
export function deepSafe<R>(f: (x: Expr) => R): (x: Expr) => R {
  let memo: Map<Expr, R> | undefined;
  return (x: Expr): R => {
    if (memo !== undefined && memo.has(x)) return memo.get(x)!;
    if (memo === undefined && exprHeight(x) > SHALLOW_HEIGHT) {
      memo = new Map();
      try {
        for (const y of distinctPostOrder(x)) if (y !== x) memo.set(y, f(y));
        return f(x);
      } finally {
        memo = undefined;
      }
    }
    return f(x);
  };
}

/**
 * Whether `own` holds for `s` or for a statement nested in it, memoized per statement in `memo`
 * (statements are immutable, so a memo may serve many calls). Computed without recursion, in
 * time linear in the statements not in `memo`: any nesting is safe.
 */
export function someStmt(
  s: Stmt,
  own: (x: Stmt) => boolean,
  memo: WeakMap<Stmt, boolean>,
): boolean {
  const hit = memo.get(s);
  if (hit !== undefined) return hit;
  const stack: Stmt[] = [s];
  while (stack.length > 0) {
    const x = stack[stack.length - 1]!;
    if (memo.has(x)) {
      stack.pop();
      continue;
    }
    const cs = stmtChildren(x);
    const pending = cs.filter((c) => !memo.has(c));
    if (pending.length > 0) {
      stack.push(...pending);
      continue;
    }
    stack.pop();
    memo.set(x, own(x) || cs.some((c) => memo.get(c)!));
  }
  return memo.get(s)!;
}
