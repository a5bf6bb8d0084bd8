import { bufferName, constInt, invariant, TirxError } from "@tirx-ts/core";
import { accessRecord } from "../exec/context.js";
import { checkBounds } from "../exec/hazards.js";
import type { Placed } from "../exec/memory.js";
import { Tracer } from "../exec/trace.js";
import { placementOf } from "./access.js";
import type { Exec, UnitAction, UnitCall } from "./compiled.js";
import type { Layout } from "./layout.js";
import { CLUSTER_ADDRESS_UNIT } from "./units/cluster.js";

/** The shared buffer of `layout` holding bytes [local, local + n) of a CTA's window, or undefined. */
function bufferAt(layout: Layout, local: number, n: number): Placed | undefined {
  for (const p of layout.shared.values()) {
    if (local >= p.base && local + n <= p.base + p.size) return p;
  }
  return undefined;
}

/**
 * `cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dst], [src], size,
 * [mbar]` (PTX ISA, cp.async.bulk; core ops/bulk-dsmem.ts): each executing thread issues one copy.
 * `dst` and `mbar` are the simulator's shared::cluster addresses (compile/units/cluster.ts: rank
 * + 1 above 2^24, or a CTA-local address for the thread's own CTA). Refused per thread, nothing
 * issued: a rank outside the cluster, or an mbarrier in no shared buffer (TX6005); dst and mbar
 * in different CTAs, or dst's bytes outside one shared buffer of the destination (TX6030); an
 * address not 16-byte aligned (TX6021); src outside its buffer (TX6005). The copy itself is
 * BulkUnit.issueDsmem's (exec/bulk.ts); a copy into another CTA must be observed there before
 * that CTA exits, and its landing known to the issuing CTA before that one exits
 * (ClusterUnit.recordRemoteCopy, recordSourceCopy: TX6025).
 */
export function compileDsmemCopy(c: UnitCall<UnitAction<"bulk">>): Exec {
  const { ec, args, span } = c;
  const m = ec.m;
  const site = m.site(span);
  const src = args[1]!;
  invariant(src.kind === "BufferPtr", "the source of a DSMEM copy is buf.ptr([i]) (verified)");
  const sp = placementOf(ec.layout, src.buffer, span);
  if (sp.space !== "shared") {
    throw new TirxError("TX4005", `the source of ${c.op.name} must be shared memory`, span);
  }
  m.hasBulk = true;
  const dst = ec.num(args[0]!, span);
  const from = ec.num(src, span);
  const size = constInt(args[2]!)!;
  const mbar = ec.num(args[3]!, span);
  const layout = ec.layout;
  const bu = m.bulk;
  const stride = m.sharedStride;
  const srcAcc = accessRecord(m, sp.placed, size, site, "cp.async.bulk reads");
  /** The CTA rank and CTA-local byte of a shared::cluster address of thread `t`. */
  const split = (a: number, t: number): [number, number] =>
    a >= CLUSTER_ADDRESS_UNIT
      ? [Math.floor(a / CLUSTER_ADDRESS_UNIT) - 1, a % CLUSTER_ADDRESS_UNIT]
      : [m.rank[t]!, a];
  const who = (t: number): string => `thread ${m.thread(t)} of CTA ${m.cta()}`;
  return (lanes, n) => {
    m.opts.tracer?.bulkIssue(
      Tracer.warpsOf(lanes, n),
      "cp.async.bulk shared::cta → shared::cluster",
    );
    for (let i = 0; i < n; i++) {
      const t = lanes[i]!;
      const [rd, ld] = split(dst(t) >>> 0, t);
      const [rb, lb] = split(mbar(t) >>> 0, t);
      const bad = rd >= m.ctas ? rd : rb >= m.ctas ? rb : -1;
      if (bad >= 0) {
        m.hazard(
          "TX6005",
          `${who(t)} issues a shared::cta → shared::cluster bulk copy ${bad === rd ? "into" : "completing on an mbarrier of"} the CTA of rank ${bad}, but its cluster has ${m.ctas} CTA${m.ctas > 1 ? "s" : ""} (PTX ISA, mapa: the rank must name a CTA of the cluster)`,
          site,
        );
        continue;
      }
      if (rd !== rb) {
        m.hazard(
          "TX6030",
          `${who(t)} issues a shared::cta → shared::cluster bulk copy into the CTA of rank ${rd} completing on an mbarrier of the CTA of rank ${rb}; the mbarrier must be in the destination CTA (PTX ISA, cp.async.bulk)`,
          site,
        );
        continue;
      }
      const s = from(t);
      if ((ld | s) % 16 !== 0) {
        m.hazard(
          "TX6021",
          `${who(t)} issues a shared::cta → shared::cluster bulk copy from shared byte ${s} to shared byte ${ld} of the CTA of rank ${rd}; both addresses must be 16-byte aligned`,
          site,
        );
        continue;
      }
      srcAcc.addr = s - sp.placed.base;
      srcAcc.thread = t;
      if (!checkBounds(srcAcc, "shared")) continue;
      const dp = bufferAt(layout, ld, size);
      if (!dp) {
        m.hazard(
          "TX6030",
          `${who(t)} issues a ${size}-byte shared::cta → shared::cluster bulk copy to shared byte ${ld} of the CTA of rank ${rd}, and bytes ${ld}..${ld + size - 1} do not lie in one shared buffer`,
          site,
        );
        continue;
      }
      const bp = bufferAt(layout, lb, 8);
      if (!bp) {
        m.hazard(
          "TX6005",
          `${who(t)} issues a shared::cta → shared::cluster bulk copy completing on the shared::cluster address of byte ${lb} of the CTA of rank ${rd}, which lies in no shared buffer`,
          site,
        );
        continue;
      }
      const w = rd * stride;
      const id = bu.issueDsmem(
        m,
        t,
        m.win[t]! + s,
        sp.placed,
        w + ld,
        dp,
        size,
        w + lb,
        { name: bp.name, placed: bp },
        site,
      );
      if (rd !== m.rank[t]) {
        const what = `copies into shared ${bufferName(dp)}`;
        m.clusterUnit.recordRemoteCopy(t, rd, id, site, what);
        const from = `copies shared ${bufferName(sp.placed)} into the CTA of rank ${rd}`;
        m.clusterUnit.recordSourceCopy(t, id, site, from);
      }
    }
  };
}
