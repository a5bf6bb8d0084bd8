import { TirxError } from "../diagnostics.js";
import type { Stmt } from "../ir/stmt.js";
import { stmtChildren } from "../visit.js";

/**
 * A `wgmma.mma_async` needs a `wgmma.fence` of its warpgroup before it (PTX ISA, wgmma.fence:
 * "before the first wgmma.mma_async operation in a warpgroup"). The structurally evident case is
 * checked here: a mma_async that comes before every wgmma.fence in program order (a fence later
 * in a loop body does not order the first iteration). Fences missing after other instructions
 * write the accumulators are the simulator's (TX6027).
 * @throws TirxError TX7011 at the mma_async.
 */
export function checkWgmmaFence(root: Stmt): void {
  let fenced = false;
  const visit = (s: Stmt): void => {
    if (s.kind === "Call") {
      if (s.op === "wgmma.fence.sync.aligned") fenced = true;
      else if (s.op.startsWith("wgmma.mma_async") && !fenced) {
        throw new TirxError(
          "TX7011",
          "T.ptx.wgmma.mma_async with no T.ptx.wgmma.fence() before it; the warpgroup's first wgmma.mma_async (and any after its accumulator registers were written) needs a wgmma.fence, or the tensor cores may read stale registers",
          s.span,
        );
      }
    }
    for (const c of stmtChildren(s)) visit(c);
  };
  visit(root);
}
