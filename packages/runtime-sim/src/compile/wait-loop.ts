import { findOp, someStmt, walkExpr, type Expr, type Stmt } from "@tirx-ts/core";
import { actionTraits } from "./units.js";

/**
 * mbarrier wait loops: `while (cond) body` whose condition tests an mbarrier
 * (T.ptx.mbarrier.try_wait). The scheduler of compile/blocking.ts yields after every iteration
 * whose lanes still wait, and reports a deadlock (TX6006) after a round in which no thread could
 * make progress.
 */

/** A call of an action that tests an mbarrier phase (ActionTraits `polls`: try_wait). */
function isTryWait(x: Expr): boolean {
  return x.kind === "CallExpr" && actionTraits(x.op)?.polls === true;
}

function hasTryWait(e: Expr): boolean {
  let hit = false;
  walkExpr(e, (x) => {
    if (isTryWait(x)) hit = true;
  });
  return hit;
}

/** A `while` whose condition tests an mbarrier (T.ptx.mbarrier.try_wait). */
export function isWaitLoop(s: Stmt): s is Extract<Stmt, { kind: "While" }> {
  return s.kind === "While" && hasTryWait(s.cond);
}

/** A loop body with no statement: the loop only polls. */
export function isEmpty(s: Stmt): boolean {
  const work: Stmt[] = [s];
  while (work.length > 0) {
    const x = work.pop()!;
    if (x.kind !== "Seq") return false;
    work.push(...x.stmts);
  }
  return true;
}

/**
 * True when `e` may read state a loop body can change other than mbarrier phases: memory (a
 * load, a value atomic), fragments, any op with machine effects but try_wait and the stateless
 * ones (ActionTraits `stateless`: the cluster's address and register ops). Variables cannot change inside a loop (the IR binds each once), and
 * thread and warp ops are functions of their operands.
 */
function readsState(e: Expr): boolean {
  let hit = false;
  walkExpr(e, (x) => {
    if (x.kind === "BufferLoad") hit = true;
    if (x.kind !== "CallExpr" || isTryWait(x)) return;
    const fx = findOp(x.op)?.sim;
    if (fx?.kind === "thread" || fx?.kind === "warp") return;
    if (actionTraits(x.op)?.stateless) return;
    hit = true;
  });
  return hit;
}

/**
 * True when some wait loop inside `s` has a condition that reads more than registers and
 * mbarrier phases (readsState). Otherwise a wait loop's condition changes only with an mbarrier
 * phase, i.e. with an arrival, a complete_tx or an init, which the scheduler counts as progress:
 * the stores and other effects of a wait loop's body then cannot release any wait, and a round
 * with no progress is a deadlock whatever the bodies do.
 */
export function waitReadsState(s: Stmt): boolean {
  return someStmt(s, (x) => isWaitLoop(x) && readsState(x.cond), readsStateCache);
}

/** Whether a statement or one nested in it is a wait loop whose condition reads state. */
const readsStateCache = new WeakMap<Stmt, boolean>();
