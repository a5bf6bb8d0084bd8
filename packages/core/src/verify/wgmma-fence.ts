import { TirxError } from "../diagnostics.js";
import type { Stmt } from "../ir/stmt.js";
import { findOp } from "../ops/index.js";
import type { MachineAction } from "../ops/op.js";
import { stmtChildren } from "../visit.js";

/**
 * A `wgmma.mma_async` needs a `wgmma.fence` of its warpgroup before it (PTX ISA, wgmma.fence:
 * "before the first wgmma.mma_async operation in a warpgroup"). The structurally evident case is
 * checked here: a mma_async that comes before every wgmma.fence in program order (a fence later
 * in a loop body does not order the first iteration). A mma_async under an `if` is left to the
 * simulator: `for k { if (k > 0) mma_async; fence }` is fenced on every iteration that issues
 * it. Fences missing after other instructions write the registers are the simulator's (TX6027).
 * Which ops fence and which need a fence are facts of their records (`fence` and `needsFence` on
 * the wgmma unit's actions, ops/wgmma/sync.ts). Every unfenced mma_async is its own error:
 * each is `report`ed, in program order, and the check goes on.
 * @throws TirxError only what `report` throws (a `DiagnosticLog` at its limit); each error is
 *   TX7011 at the mma_async.
 */
export function checkWgmmaFence(root: Stmt, report: (e: TirxError) => void): void {
  let fenced = false;
  let guarded = 0;
  // Program order from an explicit stack (a statement, or leaving an If): any nesting is safe.
  const work: (Stmt | "leave-if")[] = [root];
  while (work.length > 0) {
    const s = work.pop()!;
    if (s === "leave-if") {
      guarded--;
      continue;
    }
    if (s.kind === "Call") {
      const fx = effectOf(s.op);
      if (fx && "fence" in fx) fenced = true;
      else if (fx && "needsFence" in fx && !fenced && guarded === 0) {
        report(
          new TirxError(
            "TX7011",
            "T.ptx.wgmma.mma_async with no T.ptx.wgmma.fence() before it; the warpgroup's first wgmma.mma_async (and any after its accumulator registers were written) needs a wgmma.fence, or the tensor cores may read stale registers",
            s.span,
          ),
        );
      }
    }
    if (s.kind === "If") {
      guarded++;
      work.push("leave-if");
    }
    const cs = stmtChildren(s);
    for (let i = cs.length - 1; i >= 0; i--) work.push(cs[i]!);
  }
}

/** The machine action of op `name`'s record, if it has one. */
function effectOf(name: string): MachineAction | undefined {
  const sim = findOp(name)?.sim;
  return sim?.kind === "machine" ? sim.effect : undefined;
}
