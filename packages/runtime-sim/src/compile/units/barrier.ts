import { invariant } from "@tirx-ts/core";
import type { Machine } from "../../exec/machine.js";
import { Tracer } from "../../exec/trace.js";
import type { Exec, UnitAction, UnitCompiler } from "../compiled.js";

/**
 * Lanes of a cluster of several CTAs grouped by CTA rank: `count[r]` lanes of rank r in
 * `byRank[r]` (scratch arrays owned by the caller's closure).
 */
function groupByCta(
  m: Machine,
): (lanes: Int32Array, n: number) => { byRank: Int32Array[]; count: Int32Array } {
  const byRank = Array.from({ length: m.ctas }, () => new Int32Array(m.ctaThreads));
  const count = new Int32Array(m.ctas);
  const rank = m.rank;
  return (lanes, n) => {
    count.fill(0);
    for (let i = 0; i < n; i++) {
      const t = lanes[i]!;
      const r = rank[t]!;
      byRank[r]![count[r]!++] = t;
    }
    return { byRank, count };
  };
}

/**
 * cta_sync in a cluster of several CTAs: a barrier of each CTA whose threads reach it (all of
 * them, else TX6009), ordering memory among that CTA's threads only.
 */
function clusterCtaSync(m: Machine, site: number): Exec {
  const group = groupByCta(m);
  const per = m.ctaThreads;
  const seen = new Uint8Array(per);
  return (lanes, n) => {
    const { byRank, count } = group(lanes, n);
    for (let r = 0; r < m.ctas; r++) {
      const c = count[r]!;
      if (c === 0) continue;
      const list = byRank[r]!;
      if (c !== per) {
        seen.fill(0);
        for (let i = 0; i < c; i++) seen[list[i]! - r * per] = 1;
        const missing = r * per + seen.indexOf(0);
        m.hazard(
          "TX6009",
          `cta_sync reached by ${c} of the ${per} threads of CTA ${m.ctaOfRank(r)}; thread ${m.thread(missing)} does not reach it, so the barrier never releases`,
          site,
        );
      }
      m.clocks.onGroupSync(list, c);
      m.bars.barSync(r * per, (r + 1) * per);
    }
    m.epoch++;
    m.opts.tracer?.barrier(Tracer.warpsOf(lanes, n), "cta_sync");
  };
}

/**
 * Named barriers in lockstep: never compiled here. Kernels with named barriers run warps as
 * coroutines, and compile/blocking.ts compiles every barrier of theirs (exec/named-barriers.ts).
 * @throws InternalError always.
 */
function namedBarrier(): Exec {
  invariant(false, "named barriers block");
}

/**
 * The CTA barrier unit (PTX ISA, bar/barrier): `cta` is bar.sync 0 / cta_sync, every thread of
 * the CTA must reach it (TX6009); it orders memory (exec/clocks.ts, exec/shared-shadow.ts) and
 * retires what a barrier retires (exec/wgmma.ts). `named` and `arrive` (bar.sync / bar.arrive
 * with a barrier id) are compiled by compile/blocking.ts. `warp` has no statement op of its own
 * (bar.warp.sync is a warp collective), so it is TX2010 if one ever names it. Statement ops only.
 */
export const BARRIER_UNIT = {
  cta: {
    syncs: true,
    ctaBarrier: { whole: true, waits: true },
    stmt({ ec, span }) {
      const m = ec.m;
      const site = m.site(span);
      if (m.ctas > 1) return clusterCtaSync(m, site);
      const T = m.threads;
      const bars = m.bars;
      const seen = new Uint8Array(T);
      return (lanes, n) => {
        if (n !== T) {
          seen.fill(0);
          for (let i = 0; i < n; i++) seen[lanes[i]!] = 1;
          const missing = seen.indexOf(0);
          m.hazard(
            "TX6009",
            `cta_sync reached by ${n} of the ${T} threads of CTA ${m.cta()}; thread ${m.thread(missing)} does not reach it, so the barrier never releases`,
            site,
          );
        }
        m.epoch++;
        m.clocks.onBarrier();
        m.shadow.onBarrier();
        bars.barSync();
        if (n === T) {
          m.wgmma.aligned.settle(m, "before a cta_sync that every thread reaches");
          m.wgmma.reads.onBarrier();
        }
        m.opts.tracer?.barrier(Tracer.warpsOf(lanes, n), "cta_sync");
      };
    },
  },
  named: { syncs: true, ctaBarrier: { whole: false, waits: true }, stmt: namedBarrier },
  arrive: { syncs: true, ctaBarrier: { whole: false, waits: false }, stmt: namedBarrier },
  warp: { syncs: true, warpWide: true },
} as const satisfies UnitCompiler<UnitAction<"barrier">>;
