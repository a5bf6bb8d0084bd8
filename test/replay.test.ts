// Replaying a schedule (runSim's simSeed, TIRX_SIM_SEED): a launch of a VerifiedFunc reports what
// the first launch of it reported. runSim compiles a VerifiedFunc once and reuses its Machine and
// closures, so no state of one launch (a schedule's warp order, a log of moves, a held report)
// may reach the next one — also not from a launch that threw mid-run in "throw" mode.
import { describe, expect, it } from "vitest";
import {
  isTirxError,
  verify,
  type KernelArg,
  type PrimFunc,
  type VerifiedFunc,
} from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { runSim, simZeros, type SimOptions } from "@tirx-ts/runtime-sim";
import { globalThenBulk } from "./kernels/proxy.js";
import { argsOf, CASES, mutants, syncStmts, without, type Case } from "./util/sync-mutants.js";
import { shown } from "./util/same-outcome.js";

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
 * against, computed once per variant and schedule (each is a verify, a compile and a launch).
 */
const freshThrow = new Map<string, string[]>();
function firstThrow(c: Case, name: string, fn: PrimFunc, seed: number): string[] {
  const key = `${CASES.indexOf(c)} ${name} ${seed}`;
  let r = freshThrow.get(key);
  if (r === undefined) {
    r = launch(verify(fn), argsOf(c), { hazards: "throw", simSeed: seed });
    freshThrow.set(key, r);
  }
  return r;
}

/** The schedules of the mutation test: lockstep and three seeded ones. */
const SEEDS = [0, 1, 2, 3];

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
