import type { Expr } from "../ir/expr.js";
import { exprChildren } from "../visit.js";
import { distinctPostOrder } from "./deep.js";

const NONE: readonly number[] = [];
const free = new WeakMap<Expr, readonly number[]>();

/**
 * The ids of the variables `e` reads, each once, in first-use order (expressions bind no
 * variables, so every `Var` under `e` is free). Memoized per node (IR is immutable) and computed
 * without recursion: asking at every level of a deep expression (a chain of gathers, where each
 * load's index is checked) costs time linear in its nodes times its few variables.
 */
export function freeVars(e: Expr): readonly number[] {
  const hit = free.get(e);
  if (hit !== undefined) return hit;
  for (const x of distinctPostOrder(e, (y) => free.has(y))) {
    if (x.kind === "Var") {
      free.set(x, [x.id]);
      continue;
    }
    let out = NONE;
    for (const c of exprChildren(x)) {
      const vs = free.get(c)!;
      if (vs.length === 0 || vs === out) continue;
      if (out.length === 0) {
        out = vs;
        continue;
      }
      const missing = vs.filter((v) => !out.includes(v));
      if (missing.length > 0) out = [...out, ...missing];
    }
    free.set(x, out);
  }
  return free.get(e)!;
}
