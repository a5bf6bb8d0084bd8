import { TirxError } from "../diagnostics.js";
import { constInt, type Expr } from "../ir/expr.js";
import type { Stmt, TileApply } from "../ir/stmt.js";
import { exactEqual } from "../equal.js";
import { tilePlanRecord, type TilePlan } from "../ir/tile-plan.js";
import { walkStmt } from "../visit.js";

/**
 * Within each block of statements, the bytes announced with `mbarrier.arrive.expect_tx` on a
 * barrier must equal the bytes that the block's unpredicated global → shared bulk copies
 * complete on the same barrier, where both are static (PTX ISA, "mbarrier": a phase completes
 * when pending arrivals and the tx-count both reach zero; too few bytes never complete it, too
 * many complete it early).
 * @throws TirxError TX4008 at the expect_tx, with a note at the first copy.
 */
export function checkExpectTx(root: Stmt, plans: ReadonlyMap<TileApply, TilePlan>): void {
  walkStmt(root, (s) => {
    if (s.kind === "Seq") checkBlock(s.stmts, plans);
  });
}

function checkBlock(stmts: readonly Stmt[], plans: ReadonlyMap<TileApply, TilePlan>): void {
  const expects: { mbar: Expr; bytes: number | undefined; stmt: Stmt }[] = [];
  const copies: { mbar: Expr; bytes: number | undefined; stmt: TileApply }[] = [];
  for (const s of stmts) {
    if (s.kind === "Call" && s.op === "mbarrier.arrive.expect_tx") {
      expects.push({ mbar: s.args[0]!, bytes: constInt(s.args[1]!), stmt: s });
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
      throw new TirxError(
        "TX4008",
        `expect_tx announces ${e.bytes} bytes, but the bulk copies on this mbarrier complete ${total} bytes; the phase would ${total < e.bytes ? "never complete" : "complete before all bytes land"}`,
        e.stmt.span,
        mine.map((c) => ({
          message: `bulk copy of ${c.bytes} bytes on this mbarrier`,
          ...(c.stmt.span ? { span: c.stmt.span } : {}),
        })),
      );
    }
  }
}
