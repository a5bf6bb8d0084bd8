import { TirxError } from "../diagnostics.js";
import { constInt, type Expr } from "../ir/expr.js";
import type { Stmt, TileApply } from "../ir/stmt.js";
import { exactEqual } from "../equal.js";
import { tilePlanRecord, type TilePlan } from "../ir/tile-plan.js";
import { walkStmt } from "../visit.js";
import { findOp } from "../ops/index.js";

/**
 * Whether op `name` announces transaction bytes (its record's effect says `expectTx`: PTX ISA,
 * mbarrier.arrive.expect_tx).
 */
function announcesTx(name: string): boolean {
  const sim = findOp(name)?.sim;
  return sim?.kind === "machine" && "expectTx" in sim.effect && sim.effect.expectTx === true;
}

/** Whether op `name` completes transaction bytes itself (PTX ISA, mbarrier.complete_tx). */
function completesTx(name: string): boolean {
  const sim = findOp(name)?.sim;
  return (
    sim?.kind === "machine" && sim.effect.unit === "mbarrier" && sim.effect.action === "complete_tx"
  );
}

/**
 * Within each block of statements, the bytes announced with `mbarrier.arrive.expect_tx` (or
 * `mbarrier.expect_tx`) on a barrier must equal the bytes that the block's unpredicated global →
 * shared bulk copies and `mbarrier.complete_tx` ops complete on the same barrier, where all are
 * static (PTX ISA, "mbarrier": a phase completes
 * when pending arrivals and the tx-count both reach zero; too few bytes never complete it, too
 * many complete it early).
 Every expect_tx that disagrees is its own error: each is `report`ed, in program order, and the
 * check goes on.
 * @throws TirxError only what `report` throws (a `DiagnosticLog` at its limit); each error is
 *   TX4008 at the expect_tx, with a note at each copy on its mbarrier.
 */
export function checkExpectTx(
  root: Stmt,
  plans: ReadonlyMap<TileApply, TilePlan>,
  report: (e: TirxError) => void,
): void {
  walkStmt(root, (s) => {
    if (s.kind === "Seq") checkBlock(s.stmts, plans, report);
  });
}

function checkBlock(
  stmts: readonly Stmt[],
  plans: ReadonlyMap<TileApply, TilePlan>,
  report: (e: TirxError) => void,
): void {
  const expects: { mbar: Expr; bytes: number | undefined; stmt: Stmt }[] = [];
  const copies: { mbar: Expr; bytes: number | undefined; stmt: Stmt }[] = [];
  for (const s of stmts) {
    if (s.kind === "Call" && announcesTx(s.op) && s.args[1]) {
      expects.push({ mbar: s.args[0]!, bytes: constInt(s.args[1]!), stmt: s });
    } else if (s.kind === "Call" && completesTx(s.op) && s.args[1]) {
      copies.push({ mbar: s.args[0]!, bytes: constInt(s.args[1]!), stmt: s });
    } else if (s.kind === "TileApply") {
      const p = plans.get(s);
      const tx = p && tilePlanRecord(p).completeTx(p);
      if (tx) copies.push({ mbar: tx.mbar, bytes: tx.bytes, stmt: s });
    }
  }
  for (const e of expects) {
    const mine = copies.filter((c) => exactEqual(c.mbar, e.mbar));
    if (mine.length === 0 || e.bytes === undefined || mine.some((c) => c.bytes === undefined))
      continue;
    const total = mine.reduce((a, c) => a + c.bytes!, 0);
    if (total !== e.bytes) {
      report(
        new TirxError(
          "TX4008",
          `expect_tx announces ${e.bytes} bytes, but the bulk copies on this mbarrier complete ${total} bytes; the phase would ${total < e.bytes ? "never complete" : "complete before all bytes land"}`,
          e.stmt.span,
          mine.map((c) => ({
            message: `${c.stmt.kind === "Call" ? "complete_tx" : "bulk copy"} of ${c.bytes} bytes on this mbarrier`,
            ...(c.stmt.span ? { span: c.stmt.span } : {}),
          })),
        ),
      );
    }
  }
}
