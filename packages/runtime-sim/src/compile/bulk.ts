import { TirxError, type BulkCopyPlan, type TileApply } from "@tirx-ts/core";
import { checkBounds } from "../exec/hazards.js";
import { accessRecord } from "../exec/context.js";
import { placementOf } from "./access.js";
import { misaligned, repeatOffsets } from "./cp-async.js";
import type { ExprCompiler } from "./expr.js";
import type { Exec } from "./compiled.js";
import { Tracer } from "../exec/trace.js";
import { bulkReducer } from "../exec/bulk-reduce.js";
import { SCOPE_GPU } from "../exec/strong-sites.js";

/**
 * A cp.async.bulk `tile.apply` (PTX ISA, "cp.async.bulk"): every active thread whose `pred`
 * holds issues one bulk copy of `chunkBytes` per repeat index, at `base + Σ r_k * stride_k` bytes
 * on each side. Global → shared copies complete on the mbarrier `mbar` (complete_tx of the chunk
 * when they land); shared → global copies join the thread's bulk async-group. A bulk reduction
 * (cp.reduce.async.bulk) is a shared → global copy whose completion combines each element with
 * the destination's (bulkReducer), its site a strong one, relaxed at gpu scope (atomics of gpu
 * or sys scope do not race with it: exec/strong-sites.ts). Timing
 * and hazards: see BulkUnit and Mbarriers.
 */
export function compileBulkCopy(ec: ExprCompiler, s: TileApply, plan: BulkCopyPlan): Exec {
  const m = ec.m;
  const site = m.site(s.span);
  const g2s = plan.opcode.direction === "g2s";
  const dst = placementOf(ec.layout, plan.dst.buffer, s.span);
  const src = placementOf(ec.layout, plan.src.buffer, s.span);
  const [sh, gl] = g2s ? [dst, src] : [src, dst];
  if (sh.space !== "shared" || gl.space !== "global") {
    throw new TirxError(
      "TX4005",
      `"${s.opcode}" copies ${g2s ? "global → shared" : "shared → global"} between a global tensor parameter and shared memory`,
      s.span,
    );
  }
  m.hasBulk = true;
  const chunk = plan.chunkBytes;
  const dBase = ec.num(plan.dst.baseBytes, s.span);
  const sBase = ec.num(plan.src.baseBytes, s.span);
  const dRep = repeatOffsets(plan.repeatShape, plan.dst.repeatStridesBytes);
  const sRep = repeatOffsets(plan.repeatShape, plan.src.repeatStridesBytes);
  const pred = plan.pred ? ec.num(plan.pred, s.span) : undefined;
  const bar = g2s ? ec.bar(plan.mbar!, s.span) : undefined;
  const dPlaced = dst.placed;
  const dSpace = g2s ? "shared" : "global";
  const sSpace = g2s ? "global" : "shared";
  const sPlaced = src.placed;
  const k = gl.param;
  const bu = m.bulk;
  const shBase = sh.placed.base;
  const red = plan.opcode.reduce ? bulkReducer(plan.opcode.reduce) : undefined;
  // Each element's reduction is relaxed at gpu scope (PTX ISA, cp.reduce.async.bulk): strong,
  // through the async proxy.
  if (red)
    m.strong.add(
      site,
      SCOPE_GPU,
      0,
      `cp.reduce.async.bulk.${plan.opcode.reduce!.op} (relaxed.gpu)`,
      true,
    );
  const what = g2s
    ? "cp.async.bulk global → shared"
    : red
      ? `cp.reduce.async.bulk.${plan.opcode.reduce!.op} shared → global`
      : "cp.async.bulk shared → global";
  const dAcc = accessRecord(m, dPlaced, chunk, site, "cp.async.bulk writes");
  const sAcc = accessRecord(m, sPlaced, chunk, site, "cp.async.bulk reads");
  return (lanes, n) => {
    m.opts.tracer?.bulkIssue(Tracer.warpsOf(lanes, n), what);
    for (let i = 0; i < n; i++) {
      const t = lanes[i]!;
      if (pred && !pred(t)) continue;
      const d0 = dBase(t);
      const s0 = sBase(t);
      const mb = bar ? bar.addr(t) : 0;
      for (let r = 0; r < dRep.length; r++) {
        const d = d0 + dRep[r]!;
        const sb = s0 + sRep[r]!;
        dAcc.addr = d;
        dAcc.thread = t;
        if (!checkBounds(dAcc, dSpace)) continue;
        sAcc.addr = sb;
        sAcc.thread = t;
        if (!checkBounds(sAcc, sSpace)) continue;
        const [shb, glb] = g2s ? [shBase + d, sb] : [shBase + sb, d];
        if ((shb | glb) & 15) {
          misaligned(m, t, site, "bulk copy", shb, glb, 16);
          continue;
        }
        const w = m.win[t]!;
        if (g2s) bu.issueG2s(m, t, w + shBase + d, dPlaced, k, sb, chunk, mb, bar!.bb, site);
        else bu.issueS2g(m, t, w + shBase + sb, sPlaced, k, d, chunk, site, false, red);
      }
    }
  };
}
