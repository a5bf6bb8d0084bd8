import { stmtExprs, walkExpr, walkStmt, type Buffer, type Stmt } from "@tirx-ts/core";
import type { Layout } from "./layout.js";

/**
 * The tensor parameters a kernel may write, by index: conservatively, every parameter used other
 * than as the buffer of a load or the source of a tile copy (stores, addresses taken for atomics
 * and other ops, tile-copy destinations, any other tile operand). Reads of other tensors cannot
 * race with a write of the launch, so the simulator records global reads only for these
 * (write-after-read, exec/global-shadow.ts).
 */
export function writtenParams(body: Stmt, layout: Layout): Set<number> {
  const out = new Set<number>();
  const mark = (b: Buffer): void => {
    const p = layout.params.get(b.id);
    if (p !== undefined) out.add(p);
  };
  walkStmt(body, (s) => {
    if (s.kind === "Store") mark(s.buffer);
    if (s.kind === "TileOp") {
      const plan = s.plan as { dst?: { buffer?: Buffer }; src?: { buffer?: Buffer } };
      if (plan.dst?.buffer) mark(plan.dst.buffer);
      // A plan of another shape: every buffer it names may be written.
      if (!plan.dst?.buffer || !plan.src?.buffer) {
        mark(s.source.dst.buffer);
        mark(s.source.src.buffer);
      }
    }
    if (s.kind === "TileApply") {
      mark(s.dst.buffer);
      mark(s.src.buffer);
    }
    for (const e of stmtExprs(s)) {
      walkExpr(e, (x) => {
        if (x.kind === "BufferPtr") mark(x.buffer);
      });
    }
  });
  return out;
}
