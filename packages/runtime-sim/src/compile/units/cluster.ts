import type { ClusterRegisterKind } from "@tirx-ts/core";
import type { Machine } from "../../exec/machine.js";
import { Tracer } from "../../exec/trace.js";
import type { NumFn } from "../access.js";
import { nothing, type Exec, type UnitAction, type UnitCompiler } from "../compiled.js";

/**
 * The simulator's `.shared::cluster` addresses (PTX ISA, mapa): `(rank + 1) · 2^24` plus the
 * CTA-local shared address, so a remote operation finds the target CTA's window; a CTA-local
 * address (below 2^24) names the executing CTA's own shared memory, as on the GPU, where the
 * shared::cta window lies inside the shared::cluster window.
 */
export const CLUSTER_ADDRESS_UNIT = 2 ** 24;

/**
 * A cluster special register of thread `t`'s CTA (PTX ISA, "Special Registers"), from the
 * launch's cluster dims: clusters tile the grid (the first CTA of the running cluster is at
 * %ctaid (m.cx, m.cy, m.cz), a multiple of the cluster dims), ranks are x-fastest. Which
 * register and axis come from the op record's effect (core ops/cluster.ts).
 */
function clusterRegister(
  m: Machine,
  fx: { readonly register: ClusterRegisterKind; readonly axis: 0 | 1 | 2 },
): (t: number) => number {
  const axis = fx.axis;
  switch (fx.register) {
    case "ctarank":
      return (t) => m.rank[t]!;
    case "nctarank":
      return () => m.ctas;
    case "ctaid": {
      const pos = [m.rx, m.ry, m.rz][axis]!;
      return (t) => pos[t]!;
    }
    case "nctaid":
      return () => m.cluster[axis]!;
    case "clusterid": {
      const first = (): readonly [number, number, number] => [m.cx, m.cy, m.cz];
      return () => Math.floor(first()[axis]! / m.cluster[axis]!);
    }
    case "nclusterid":
      return () => m.opts.grid[axis]! / m.cluster[axis]!;
  }
}

/**
 * `barrier.cluster.wait` for lanes that can all pass (after the arrivals of every thread of the
 * cluster): in a one-CTA cluster the CTA's barrier (every thread must reach it, TX6009); in a
 * cluster of several CTAs, the lanes acquire the phase's releases, and a lane whose phase has
 * not completed is TX6006 (nothing can arrive while it waits here).
 */
function clusterWaitOnce(m: Machine, site: number): Exec {
  const T = m.threads;
  const cu = m.clusterUnit;
  return (lanes, n) => {
    if (m.ctas > 1) {
      for (let i = 0; i < n; i++) {
        if (cu.tryPass(lanes[i]!)) continue;
        cu.blockedSite = site;
        cu.blockedThread = lanes[i]!;
        cu.reportDeadlock(m);
        return;
      }
      return;
    }
    if (n !== T) {
      m.hazard(
        "TX6009",
        `barrier.cluster.wait reached by ${n} of the ${T} threads of CTA ${m.cta()}; the barrier never releases`,
        site,
      );
    }
    m.epoch++;
    m.clocks.onBarrier();
    m.shadow.onBarrier();
    m.bars.barSync();
    m.opts.tracer?.barrier(Tracer.warpsOf(lanes, n), "barrier.cluster");
  };
}

/**
 * The cluster unit (PTX ISA, barrier.cluster, mapa, the cluster special registers,
 * mbarrier.arrive.release.cluster; its state is exec/cluster.ts's). `register` and `mapa` are
 * value ops, the others statement ops.
 */
export const CLUSTER_UNIT = {
  register: { stateless: true, value: ({ ec, fx }) => clusterRegister(ec.m, fx) },
  /** `mapa.shared::cluster(addr, rank)`: CTA `rank`'s copy of the shared variable at `addr`. */
  mapa: {
    stateless: true,
    value({ ec, args, at }): NumFn {
      const addr = ec.num(args[0]!, at);
      const rank = ec.num(args[1]!, at);
      return (t) =>
        ((rank(t) >>> 0) + 1) * CLUSTER_ADDRESS_UNIT + ((addr(t) >>> 0) % CLUSTER_ADDRESS_UNIT);
    },
  },
  remote_arrive: {
    stmt({ ec, args, span }) {
      const m = ec.m;
      const site = m.site(span);
      const cu = m.clusterUnit;
      // A uint32 shared::cluster address from mapa (or a CTA-local one: the own CTA).
      const addr = ec.num(args[0]!, span);
      const layout = ec.layout;
      return (lanes, n) => {
        for (let i = 0; i < n; i++) {
          const t = lanes[i]!;
          const a = addr(t) >>> 0;
          const rank = a >= CLUSTER_ADDRESS_UNIT ? Math.floor(a / CLUSTER_ADDRESS_UNIT) - 1 : -1;
          cu.remoteArrive(layout, t, rank, a % CLUSTER_ADDRESS_UNIT, undefined, site);
        }
      };
    },
  },
  arrive: {
    stmt({ ec, fx, span }) {
      const m = ec.m;
      const site = m.site(span);
      if (m.ctas === 1) return nothing; // a one-CTA cluster: the wait is the CTA's barrier
      const cu = m.clusterUnit;
      const relaxed = fx.relaxed;
      return (lanes, n) => {
        for (let i = 0; i < n; i++) cu.arrive(lanes[i]!, relaxed, site);
      };
    },
  },
  // barrier.cluster.wait is a blocking statement (compile/blocking.ts); this is its form where
  // nothing can wait: a one-CTA cluster, where arrive + wait is the CTA's barrier.
  wait: { waitsForCluster: true, stmt: ({ ec, span }) => clusterWaitOnce(ec.m, ec.m.site(span)) },
} as const satisfies UnitCompiler<UnitAction<"cluster">>;
