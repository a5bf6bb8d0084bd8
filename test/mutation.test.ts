// Mutation test of the simulator's hazard analysis (issue 9): every correct kernel (the examples,
// the simulator's test kernels, the codegen bulk kernels that synchronize) runs clean; then each
// synchronization statement is removed in turn (cp.async wait_group / wait_all, cta_sync and
// named barriers, fences, mbarrier arrivals, try_wait loops, bulk wait_group) and the mutant must
// be reported — unless the removal is listed in BENIGN with the reason it cannot make the kernel
// racy. A listed removal must stay unreported, so the list cannot go stale.
import { describe, expect, it } from "vitest";
import { isTirxError, verify, type KernelArg, type PrimFunc } from "@tirx-ts/core";
import { runSim } from "@tirx-ts/runtime-sim";
import { argsOf, CASES, mutants } from "./util/sync-mutants.js";

/**
 * Removals that cannot make the kernel racy, keyed `kernel/op#k` (k-th sync statement of that op
 * in the kernel, in program order), with the reason.
 */
const BENIGN: Record<string, string> = {
  "copy_async/bar.sync#0":
    "each thread copies row tid and reads back only row tid: no bytes cross threads",
  "init_arrive/mbarrier.arrive#0": "nothing waits on the mbarrier: the arrival orders no access",
};

/**
 * The reports a removal must produce, by op, decided from what the removed statement guarantees
 * (not from the simulator): a barrier or mbarrier ordering removed leaves a race (TX6003 RAW,
 * TX6013 WAR, TX6014 WAW), a touch of bytes still in flight (TX6001, TX6007), a use of an
 * mbarrier before its init is ordered (TX6003) or a wait that never completes (TX6006); a wait for
 * copies removed leaves them in flight (TX6001, TX6002, TX6007) or pending at exit (TX6017); a
 * fence removed breaks its proxy rule (TX6015, TX6016). Where a schedule runs the reading warp
 * before the writing one, the simulator holds the read of never-written bytes (or the wait on a
 * not yet initialised mbarrier) until the write comes, and reports the pair (TX6013): no schedule
 * turns a race into a one-line TX6004.
 */
const EXPECTED: Record<string, readonly string[]> = {
  "bar.sync": ["TX6003", "TX6013", "TX6014", "TX6001", "TX6007"],
  "bar.sync.named": ["TX6003", "TX6013", "TX6014", "TX6001", "TX6007", "TX6012"],
  "bar.arrive": ["TX6012", "TX6003", "TX6013", "TX6014"],
  "mbarrier.arrive": ["TX6006"],
  "mbarrier.arrive.expect_tx": ["TX6006", "TX6017"],
  "mbarrier.try_wait.parity": ["TX6003", "TX6007", "TX6013", "TX6014", "TX6006"],
  "cp.async.wait_group": ["TX6001", "TX6017"],
  "cp.async.wait_all": ["TX6001", "TX6017"],
  "cp.async.bulk.wait_group": ["TX6007", "TX6017"],
  "cp.async.bulk.wait_group.read": ["TX6007", "TX6017"],
  "fence.proxy.async.shared::cta": ["TX6015"],
  "fence.proxy.async.global": ["TX6015"],
  "fence.proxy.async": ["TX6015"],
  "fence.mbarrier_init.release.cluster": ["TX6016"],
};

/**
 * The reports of running `fn` under schedule `simSeed`, or none; a TirxError thrown by verify
 * counts too.
 */
function reportsOf(fn: PrimFunc, args: readonly KernelArg[], simSeed: number): string[] {
  try {
    return runSim(verify(fn), args, { simSeed }).reports.map((r) => r.message);
  } catch (e) {
    if (isTirxError(e)) return [e.message];
    throw e;
  }
}

/**
 * Schedules every case runs under: lockstep (0) and three that run warps ahead of each other up
 * to their next barrier, so a report never depends on the order the simulator picked.
 */
const SEEDS = [0, 1, 2, 3];

describe("mutation: removing a synchronization is reported", () => {
  for (const [c, seed] of CASES.flatMap((c) => SEEDS.map((s) => [c, s] as const))) {
    it(`${c.fn.name} (schedule ${seed}): clean as written, every sync removal reported or benign`, () => {
      expect(reportsOf(c.fn, argsOf(c), seed)).toEqual([]);
      const ms = mutants(c.fn);
      // vector_add and reduce_rows have no synchronization statement (only clean runs matter).
      const none = c.fn.name === "vector_add" || c.fn.name === "reduce_rows";
      expect(ms.length > 0).toBe(!none);
      const missed: string[] = [];
      const wrong: string[] = [];
      const stale: string[] = [];
      for (const { key, op, target, fn } of ms) {
        const reports = reportsOf(fn, argsOf(c), seed);
        if (key in BENIGN) {
          if (reports.length > 0) stale.push(`${key}: ${reports[0]}`);
        } else if (reports.length === 0) {
          missed.push(`${key} (line ${target.span?.line})`);
        } else {
          const code = reports[0]!.slice(0, 6);
          if (!(EXPECTED[op] ?? []).includes(code)) wrong.push(`${key}: ${reports[0]}`);
        }
      }
      expect(missed, "removals neither reported nor listed as benign").toEqual([]);
      expect(stale, "listed as benign but reported").toEqual([]);
      expect(wrong, "reported, but not as what the removal breaks").toEqual([]);
    });
  }
});
