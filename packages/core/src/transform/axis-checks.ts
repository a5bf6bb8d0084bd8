import type { RangeScope } from "../analysis/range-scope.js";
import { walkScoped } from "../analysis/scope-walk.js";
import type { AccessIndex, Expr } from "../ir/expr.js";
import type { PrimFunc } from "../ir/func.js";
import type { LaunchConfig, Stmt } from "../ir/stmt.js";
import { findOp } from "../ops/registry.js";
import { axisProven } from "../verify/axis-check.js";
import { kernelScope } from "../verify/scope-check.js";
import { stmtExprs, walkExpr, walkStmt } from "../visit.js";
import { mapStmt } from "./map.js";
import { entryPass, type Pass } from "./pass.js";

/*
 * The verifier proves each author index of an element access within its axis (TX2006,
 * `verify/axis-check.ts`) except one of a static tensor that is unbounded only because it reads
 * data (a gather's loaded index, `my_pe()`, a scalar parameter): that one is left to the run, as
 * the flat offset's unbounded ends are. This pass keeps on each access exactly those indices, so
 * that what runs the kernel checks them (the simulator's TX6005, `compile/axis-check.ts` there;
 * codegen-ptx's `checkBounds` guards, `emit/axis-guard.ts`) and nothing else.
 */

/**
 * True when evaluating `e` a second time has no effect and gives the same value in the same
 * thread: no call of an op with effects (an atomic, `mbarrier.try_wait`, an acquire load) and no
 * warp collective (whose lanes must meet). A load is allowed: a runtime check reads it again.
 */
export function reevaluable(e: Expr): boolean {
  let ok = true;
  walkExpr(e, (x) => {
    if (!ok || x.kind !== "CallExpr") return;
    const op = findOp(x.op);
    ok =
      op !== undefined &&
      op.form === "value" &&
      op.effects !== true &&
      (op.sim.kind === "thread" || op.sim.kind === "machine");
  });
  return ok;
}

/**
 * `body` with each element access's author indices (`BufferLoad.index`, `Store.index`) cut down
 * to those the verifier's range analysis cannot prove within their axes (`axisProven`, in the
 * scope of the access: loops, lets, `T.if_` guards, the launch, symbolic dims) and that can be
 * evaluated again (`reevaluable`); an access left with none carries no `index`. An access met
 * in several scopes (a shared node) keeps an index unproven in any of them. A load that occurs
 * only inside another access's index is a value the check reads, not an access: it keeps none.
 * Run it right after `verify` and lower-tile, in the verifier's scope (before unrolling renames
 * anything).
 */
export function keepRuntimeAxes(body: Stmt, fn: PrimFunc, launch: LaunchConfig): Stmt {
  if (!hasIndex(body)) return body;
  // The positions, in each access's `index`, of the indices left to the run (by original node).
  const keep = new Map<object, Set<number>>();
  const note = (node: object, index: AccessIndex, scope: RangeScope): void => {
    let set = keep.get(node);
    if (!set) keep.set(node, (set = new Set()));
    index.forEach((a, k) => {
      if (!set!.has(k) && !axisProven(a, scope) && reevaluable(a.index)) set!.add(k);
    });
  };
  walkScoped(body, kernelScope(fn, launch, (check) => check()).scope, {
    enter(s, scope) {
      if (s.kind === "Store" && s.index) note(s, s.index, scope);
      for (const e of stmtExprs(s)) {
        walkExpr(e, (x) => {
          if (x.kind === "BufferLoad" && x.index) note(x, x.index, scope);
        });
      }
    },
  });
  const cut = <T extends { readonly index?: AccessIndex }>(x: T, original: object): T => {
    if (x.index === undefined) return x;
    const set = keep.get(original);
    if (set !== undefined && set.size === x.index.length) return x;
    const { index, ...rest } = x;
    const kept = index.filter((_, k) => set?.has(k) === true);
    return (kept.length > 0 ? { ...rest, index: kept } : rest) as T;
  };
  return mapStmt(body, {
    expr: (e, original) => (e.kind === "BufferLoad" ? cut(e, original) : e),
    stmt: (s, original) => (s.kind === "Store" ? cut(s, original) : s),
  });
}

/** True when some Store or load of `body` carries author indices. */
function hasIndex(body: Stmt): boolean {
  let found = false;
  walkStmt(body, (s) => {
    if (found) return;
    if (s.kind === "Store" && s.index) found = true;
    for (const e of stmtExprs(s)) {
      walkExpr(e, (x) => {
        if (x.kind === "BufferLoad" && x.index) found = true;
      });
    }
  });
  return found;
}

/** The `axis-checks` pass: {@link keepRuntimeAxes} over the device entry. */
export const axisChecksPass: Pass = entryPass(
  "axis-checks",
  "author indices proven within their axes dropped from accesses; those left (data) are checked at run time",
  (body, vf) => keepRuntimeAxes(body, vf.fn, vf.launch),
);
