// Mutation test of the simulator's hazard analysis (issue 9): every correct kernel (the examples,
// the simulator's test kernels, the codegen bulk kernels that synchronize) runs clean; then each
// synchronization statement is removed in turn (cp.async wait_group / wait_all, cta_sync and
// named barriers, fences, mbarrier arrivals, try_wait loops, bulk wait_group) and the mutant must
// be reported — unless the removal is listed in BENIGN with the reason it cannot make the kernel
// racy. A listed removal must stay unreported, so the list cannot go stale.
//
// Also replaying a schedule (runSim's simSeed, TIRX_SIM_SEED), in this file because both tests
// compare against the first launch of every variant under every schedule (made once): a launch
// of a VerifiedFunc reports what the first launch of it reported. runSim compiles a VerifiedFunc
// once and reuses its Machine and closures, so no state of one launch (a schedule's warp order, a
// log of moves, a held report) may reach the next one — also not from a launch that threw mid-run
// in "throw" mode.
import { describe, expect, it } from "vitest";
import {
  isTirxError,
  verify,
  type KernelArg,
  type PrimFunc,
  type TirxError,
  type VerifiedFunc,
} from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { runSim, simZeros, type SimOptions } from "@tirx-ts/runtime-sim";
import { globalThenBulk } from "./kernels/proxy.js";
import { argsOf, CASES, mutants, syncStmts, without, type Case } from "./util/sync-mutants.js";
import { shown } from "./util/same-outcome.js";

/**
 * The TirxError the first launch of a fresh VerifiedFunc of variant `name` (`fn`: the kernel, or
 * the mutant of that key) of case `c` throws in "throw" mode (runSim's default) under schedule
 * `seed`, from verify or the launch; undefined when it runs clean. Computed once per variant and
 * schedule (a verify, a compile and a launch): the mutation test and the replay tests both
 * compare against it.
 * @throws Error other than a TirxError (a crash of the simulator).
 */
const firstLaunches = new Map<string, TirxError | undefined>();
function firstThrown(c: Case, name: string, fn: PrimFunc, seed: number): TirxError | undefined {
  const key = `${CASES.indexOf(c)} ${name} ${seed}`;
  if (firstLaunches.has(key)) return firstLaunches.get(key);
  let thrown: TirxError | undefined;
  try {
    runSim(verify(fn), argsOf(c), { hazards: "throw", simSeed: seed });
  } catch (e) {
    if (!isTirxError(e)) throw e;
    thrown = e;
  }
  firstLaunches.set(key, thrown);
  return thrown;
}

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
 * The reports of running variant `name` (`fn`) of case `c` under schedule `simSeed` in "throw"
 * mode (runSim's default), or none; a TirxError thrown by verify counts too.
 */
function reportsOf(c: Case, name: string, fn: PrimFunc, simSeed: number): string[] {
  const e = firstThrown(c, name, fn, simSeed);
  return e ? [e.message] : [];
}

/**
 * Schedules every case runs under: lockstep (0) and three that run warps ahead of each other up
 * to their next barrier, so a report never depends on the order the simulator picked.
 */
const SEEDS = [0, 1, 2, 3];

describe("mutation: removing a synchronization is reported", () => {
  for (const [c, seed] of CASES.flatMap((c) => SEEDS.map((s) => [c, s] as const))) {
    it(`${c.fn.name} (schedule ${seed}): clean as written, every sync removal reported or benign`, () => {
      expect(reportsOf(c, c.fn.name, c.fn, seed)).toEqual([]);
      const ms = mutants(c.fn);
      // vector_add and reduce_rows have no synchronization statement (only clean runs matter).
      const none = c.fn.name === "vector_add" || c.fn.name === "reduce_rows";
      expect(ms.length > 0).toBe(!none);
      const missed: string[] = [];
      const wrong: string[] = [];
      const stale: string[] = [];
      for (const { key, op, target, fn } of ms) {
        const reports = reportsOf(c, key, fn, seed);
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

/**
 * What a launch of `vf` on fresh arguments reports: in "collect" mode its reports, in "throw"
 * mode the hazard it threw (none: empty).
 * @throws Error other than a TirxError (a crash of the simulator).
 */
function launch(vf: VerifiedFunc, args: readonly KernelArg[], opts: SimOptions): string[] {
  try {
    return runSim(vf, args, opts).reports.map(shown);
  } catch (e) {
    if (isTirxError(e)) return [shown(e)];
    throw e;
  }
}

/** The kernel of `c` and its mutants, each with one synchronization statement removed. */
function variants(c: Case): { name: string; fn: PrimFunc }[] {
  return [
    { name: c.fn.name, fn: c.fn },
    ...mutants(c.fn).map(({ key, fn }) => ({ name: key, fn })),
  ];
}

/** `fn` verified, or undefined when the verifier refuses it (a mutant can be ill-formed). */
function verified(fn: PrimFunc): VerifiedFunc | undefined {
  try {
    return verify(fn);
  } catch (e) {
    if (isTirxError(e)) return undefined;
    throw e;
  }
}

/**
 * What the first launch of a fresh VerifiedFunc of variant `name` of `c` reports in "throw" mode
 * (runSim's default) under schedule `seed`: the reference both kinds of test below compare
 * against (the mutation test above made most of them).
 */
function firstThrow(c: Case, name: string, fn: PrimFunc, seed: number): string[] {
  const e = firstThrown(c, name, fn, seed);
  return e ? [shown(e)] : [];
}

/**
 * Kernels whose racy mutants take seconds per "collect" launch (every access reported): one
 * seeded schedule, their mutants in "throw" mode only (to the first report).
 */
const BIG = new Set(["gemm_simt", "row_copy"]);

describe("replay: a second launch of a VerifiedFunc reports what the first did", () => {
  it("global_then_bulk without its cta_sync, four launches under schedule 2", () => {
    const target = syncStmts(globalThenBulk.body).find(
      (s) => s.kind === "Call" && s.op === "bar.sync",
    )!;
    const mutant = without(globalThenBulk, target);
    const c: Case = { fn: mutant };
    const opts: SimOptions = { hazards: "collect", simSeed: 2 };
    const fresh = launch(verify(mutant), argsOf(c), opts);
    expect(fresh.length).toBeGreaterThan(0);
    const vf = verify(mutant);
    const runs = [0, 1, 2, 3].map(() => launch(vf, argsOf(c), opts));
    expect(runs).toEqual([fresh, fresh, fresh, fresh]);
  });

  const perSeed = CASES.flatMap((c) =>
    (BIG.has(c.fn.name) ? [2] : SEEDS).map((s) => [c, s] as const),
  );
  for (const [c, seed] of perSeed) {
    it(`${c.fn.name} and its mutants (schedule ${seed}): two launches alike, also after one that threw`, () => {
      const collect: SimOptions = { hazards: "collect", simSeed: seed };
      const thrown: SimOptions = { hazards: "throw", simSeed: seed };
      const want: Record<string, string[][]> = {};
      const got: Record<string, string[][]> = {};
      for (const { name, fn } of variants(c)) {
        const vf = verified(fn);
        if (!vf) continue;
        if (BIG.has(c.fn.name) && fn !== c.fn) {
          const first = firstThrow(c, name, fn, seed);
          want[name] = [first, first];
          got[name] = [thrown, thrown].map((o) => launch(vf, argsOf(c), o));
          continue;
        }
        // The first launch of a VerifiedFunc in each mode: what every later launch must give.
        const inCollect = launch(vf, argsOf(c), collect);
        const inThrow = firstThrow(c, name, fn, seed);
        want[name] = [inCollect, inThrow, inCollect, inThrow];
        // Two "collect" launches in a row, then a "throw" launch (which throws mid-run when the
        // kernel has a hazard) followed by one of each mode.
        got[name] = [collect, thrown, collect, thrown].map((o) => launch(vf, argsOf(c), o));
      }
      expect(got).toEqual(want);
    });
  }

  for (const c of CASES) {
    it(`${c.fn.name} and its mutants: launches under each schedule in turn`, () => {
      const order = [3, 0, 2, 1];
      const want: Record<string, string[][]> = {};
      const got: Record<string, string[][]> = {};
      for (const { name, fn } of variants(c)) {
        const vf = verified(fn);
        if (!vf) continue;
        const opts = (simSeed: number): SimOptions => ({ simSeed });
        if (BIG.has(c.fn.name) && fn !== c.fn) continue;
        // runSim's default mode is "throw": the first launches the per-schedule tests made.
        want[name] = order.map((s) => firstThrow(c, name, fn, s));
        got[name] = order.map((s) => launch(vf, argsOf(c), opts(s)));
      }
      expect(got).toEqual(want);
    });
  }

  it("a launch that threw inside ldmatrix while logging accesses leaves no log behind", () => {
    // Lane 3 gives a row address 2 bytes into its row (TX6018): "throw" mode stops inside the
    // instruction, after the rows of lanes 0..2 were logged.
    const k = T.function("ld_misaligned", { Y: T.Tensor([32], "float32") }, (p) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const t = T.cuda.thread_idx("x");
      const a = T.alloc_local([8], "float16", { name: "a" });
      const S = T.alloc_shared([32, 8], "float16", { name: "S" });
      for (let j = 0; j < 8; j++) S.set([t, j], T.float16(j));
      T.cuda.cta_sync();
      T.ptx.ldmatrix(false, 1, ".b16", a, 0, S.ptr([t, t.eq(3).cast("int32")]));
      p.Y.set([t], a.get([0]).cast("float32"));
    });
    const args = (): KernelArg[] => [simZeros([32], "float32")];
    const want = launch(verify(k), args(), { hazards: "collect" });
    expect(want.some((r) => r.startsWith("TX6018"))).toBe(true);
    const vf = verify(k);
    const threw = launch(vf, args(), { hazards: "throw", accesses: true });
    expect(threw[0]).toMatch(/^TX6018/);
    expect(launch(vf, args(), { hazards: "collect" })).toEqual(want);
    // A launch that logs starts from an empty log too.
    const log = runSim(vf, args(), { hazards: "collect", accesses: true }).accesses!;
    const fresh = runSim(verify(k), args(), { hazards: "collect", accesses: true }).accesses!;
    expect(log).toEqual(fresh);
  });
});
