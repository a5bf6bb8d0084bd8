// examples/gemm_hopper.ts with a 2-CTA cluster (B's K-tile halves multicast to both CTAs,
// stages freed in both CTAs by remote mbarrier arrives, cluster barriers around the kernel) on
// the simulator, whose CTAs of a cluster run together: no reports on several schedules, and the
// result within the example's bound of a float64 product. Without its final cluster barrier, a
// CTA may exit while its peer still arrives on its "empty" mbarriers: TX6025.
import { describe, expect, it } from "vitest";
import { isTirxError, mapStmt, verify, type PrimFunc, type Stmt } from "@tirx-ts/core";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { sim } from "tirx-ts";
import { checkGemmHopper, makeGemmHopper } from "../../examples/gemm_hopper.js";
import { uniformFrom } from "../util/lcg.js";

const SIZES = { m: 256, n: 256, k: 128 } as const;

/** `fn` with a final `barrier.cluster.arrive(); barrier.cluster.wait();` of a block removed. */
function withoutFinalClusterBarrier(fn: PrimFunc): PrimFunc {
  let removed = 0;
  const isCall = (s: Stmt | undefined, op: string): boolean => s?.kind === "Call" && s.op === op;
  const body = mapStmt(fn.body, {
    stmt: (s) => {
      if (s.kind !== "Seq") return s;
      const n = s.stmts.length;
      if (!isCall(s.stmts[n - 2], "barrier.cluster.arrive")) return s;
      if (!isCall(s.stmts[n - 1], "barrier.cluster.wait")) return s;
      removed++;
      return { ...s, stmts: s.stmts.slice(0, n - 2) };
    },
  });
  expect(removed).toBe(1);
  return { ...fn, body };
}

function inputs() {
  const rnd = uniformFrom(11);
  return [
    simTensor(Float32Array.from({ length: SIZES.m * SIZES.k }, rnd), {
      shape: [SIZES.m, SIZES.k],
      dtype: "float16",
    }),
    simTensor(Float32Array.from({ length: SIZES.n * SIZES.k }, rnd), {
      shape: [SIZES.n, SIZES.k],
      dtype: "float16",
    }),
    simZeros([SIZES.m, SIZES.n], "float16"),
  ];
}

describe("gemm_hopper with a 2-CTA cluster on the simulator", () => {
  const fn = makeGemmHopper({ ...SIZES, ctas: 2, cluster: 2 });

  it("has no reports on several schedules", () => {
    for (const simSeed of [0, 1, 9]) {
      const r = runSim(verify(fn), inputs(), { hazards: "collect", simSeed });
      expect(r.reports.map(String)).toEqual([]);
    }
  }, 30_000);

  it("reports TX6025 without the final cluster barrier (a peer's remote arrive after exit)", () => {
    const r = runSim(verify(withoutFinalClusterBarrier(fn)), inputs(), { hazards: "collect" });
    expect(r.reports.map((e) => (isTirxError(e) ? e.code : String(e)))).toEqual(["TX6025"]);
    expect(String(r.reports[0])).toMatch(
      /CTA \(\d, 0, 0\) exits while thread \(\d+, 0, 0\) of CTA \(\d, 0, 0\) may still access its shared memory: the thread arrives on mbarrier "empty"/,
    );
  }, 30_000);

  it("matches a float64 product within the example's bound", () => {
    const r = checkGemmHopper(sim(), fn, SIZES);
    expect(r.summary).toMatch(/worst error/);
    expect(r.ok).toBe(true);
  }, 30_000);
});
