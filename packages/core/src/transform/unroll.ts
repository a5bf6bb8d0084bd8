import { TirxError } from "../diagnostics.js";
import { constInt, intImm, mkVar, type Expr } from "../ir/expr.js";
import type { Stmt } from "../ir/stmt.js";
import { MAX_UNROLL } from "../limits.js";
import { walkStmt } from "../visit.js";
import { mapStmt } from "./map.js";
import { entryPass, type Pass } from "./pass.js";
import { substitute } from "./substitute.js";

/**
 * Fully unroll every `For` annotated "unroll" whose `min` and `extent` are constants: the loop
 * becomes `extent` copies of its body with the loop variable replaced by `min + k`. Variables
 * bound inside the body (`Let`, inner `For`) get fresh ids in each copy, so every variable is
 * still bound once. Inner loops are unrolled first; a loop of zero iterations disappears.
 * Loops with a runtime bound stay loops.
 * @throws TirxError TX2012 (wf/unroll) when the copies of nested unrolled loops multiply past
 *   MAX_UNROLL (4096), at the outer loop's span.
 */
export function unroll(body: Stmt): Stmt {
  // How many copies of an innermost unrolled body each emitted statement belongs to.
  const copies = new WeakMap<Stmt, number>();
  return mapStmt(body, {
    stmt: (s: Stmt): Stmt => {
      if (s.kind !== "For" || s.annotation !== "unroll") return s;
      const lo = constInt(s.min);
      const n = constInt(s.extent);
      if (lo === undefined || n === undefined) return s;
      if (n <= 0) return { kind: "Seq", stmts: [] };
      let inner = 1;
      walkStmt(s.body, (x) => {
        inner = Math.max(inner, copies.get(x) ?? 1);
      });
      if (n * inner > MAX_UNROLL) {
        throw new TirxError(
          "TX2012",
          `nested T.unroll loops would emit ${n * inner} copies of the innermost body; at most ${MAX_UNROLL} (use T.range for an outer loop)`,
          s.span,
        );
      }
      const binders: { id: number; name: string; dtype: Expr["dtype"]; span?: Expr["span"] }[] = [];
      walkStmt(s.body, (x) => {
        if (x.kind === "Let" || x.kind === "For") binders.push(x.var);
      });
      const out: Stmt[] = [];
      for (let k = 0; k < n; k++) {
        const map = new Map<number, Expr>([[s.var.id, intImm(lo + k, s.var.dtype)]]);
        for (const v of binders) map.set(v.id, mkVar(v.name, v.dtype, v.span));
        const copy = substitute(s.body, map);
        if (copy.kind === "Seq") out.push(...copy.stmts);
        else out.push(copy);
      }
      // The copies are flattened into the enclosing sequence: mark each with its multiplicity.
      for (const x of out) copies.set(x, Math.max(copies.get(x) ?? 1, n * inner));
      return { kind: "Seq", stmts: out };
    },
  });
}

/** The `unroll` pass: {@link unroll} over the device entry. */
export const unrollPass: Pass = entryPass(
  "unroll",
  "T.unroll loops with constant bounds → copies of the body with fresh variables",
  (body) => unroll(body),
);
