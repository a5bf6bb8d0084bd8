import type { DType, OpDef, SimValue, WarpCall } from "@tirx-ts/core";
import { invariant } from "@tirx-ts/core";
import type { Machine } from "../exec/machine.js";

/** Runs a warp collective for the executing lanes of one statement (all warps at once). */
export type CollectiveRun = (lanes: Int32Array, n: number) => void;

/**
 * A warp collective (`shfl.sync`, `vote`, `warp_reduce`, ...) inside an expression. Threads run
 * a statement in lockstep, so before the statement's own closure runs, each collective of the
 * statement runs once per warp over the lanes that execute it (inner collectives first), and
 * leaves each lane's result in `results`; the expression then reads its thread's result.
 * Only a collective that orders memory (`__syncwarp`) adds happens-before between its lanes.
 */
export class Collective {
  readonly results: SimValue[];
  readonly run: CollectiveRun;

  constructor(
    m: Machine,
    op: OpDef,
    dts: readonly DType[],
    rt: DType | undefined,
    args: readonly ((t: number) => SimValue)[],
    site: number,
  ) {
    invariant(op.sim.kind === "warp", `${op.name} is not a warp collective`);
    const runWarp = op.sim.make(dts, rt);
    // Lanes that execute the collective together are ordered by it only when it orders memory
    // (`__syncwarp`; see the op record's `ordersMemory`).
    const orders = op.sim.ordersMemory === true;
    const results: SimValue[] = new Array<SimValue>(m.threads).fill(0);
    this.results = results;
    const lanesOf: number[][] = [];
    let base = 0;
    let warp = 0;
    const call: WarpCall = {
      get lanes() {
        return lanesOf[warp]!;
      },
      arg: (i, lane) => args[i]!(base + lane),
      set: (lane, v) => void (results[base + lane] = v),
      hazard: (message) =>
        m.hazard("TX6011", `${op.surface} in warp ${warp} of CTA ${m.cta()}: ${message}`, site),
      get warp() {
        return warp;
      },
      get present() {
        const n = Math.min(32, m.threads - (warp << 5));
        return n >= 32 ? 0xffffffff : 2 ** n - 1;
      },
    };
    this.run = (lanes, n) => {
      lanesOf.length = 0;
      for (let i = 0; i < n; i++) {
        const t = lanes[i]!;
        (lanesOf[t >> 5] ??= []).push(t & 31);
      }
      for (let w = 0; w < lanesOf.length; w++) {
        if (!lanesOf[w]) continue;
        warp = w;
        base = w << 5;
        runWarp(call);
        if (orders) m.clocks.onWarpSync(w, lanesOf[w]!, Math.min(32, m.threads - base));
      }
    };
  }
}

/** Wrap `exec` so that the statement's collectives run first, over the same lanes. */
export function withCollectives<F extends (lanes: Int32Array, n: number) => void>(
  runs: readonly CollectiveRun[],
  exec: F,
): F {
  if (runs.length === 0) return exec;
  return ((lanes: Int32Array, n: number) => {
    for (let i = 0; i < runs.length; i++) runs[i]!(lanes, n);
    exec(lanes, n);
  }) as F;
}
