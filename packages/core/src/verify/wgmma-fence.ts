import { TirxError } from "../diagnostics.js";
import type { Stmt } from "../ir/stmt.js";
import { stmtChildren } from "../visit.js";

/**
 * A `wgmma.mma_async` needs a `wgmma.fence` of its warpgroup before it (PTX ISA, wgmma.fence:
 * "before the first wgmma.mma_async operation in a warpgroup"). The structurally evident case is
 * checked here: a mma_async that comes before every wgmma.fence in program order (a fence later
 * in a loop body does not order the first iteration). A mma_async under an `if` is left to the
 * simulator: `for k { if (k > 0) mma_async; fence }` is fenced on every iteration that issues
 * it. Fences missing after other instructions write the registers are the simulator's (TX6027).
 * @throws TirxError TX7011 at the mma_async.
 */
export function checkWgmmaFence(root: Stmt): void {
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
      if (s.op === "wgmma.fence.sync.aligned") fenced = true;
      else if (s.op.startsWith("wgmma.mma_async") && !fenced && guarded === 0) {
        throw new TirxError(
          "TX7011",
          "T.ptx.wgmma.mma_async with no T.ptx.wgmma.fence() before it; the warpgroup's first wgmma.mma_async (and any after its accumulator registers were written) needs a wgmma.fence, or the tensor cores may read stale registers",
          s.span,
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
