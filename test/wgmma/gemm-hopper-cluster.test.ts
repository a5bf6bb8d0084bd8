// examples/gemm_hopper.ts with a 2-CTA cluster (B's K-tile halves multicast to both CTAs,
// stages freed in both CTAs by remote mbarrier arrives, cluster barriers around the kernel) on
// the simulator, whose CTAs of a cluster run together: no reports on several schedules, and the
// result within the example's bound of a float64 product.
import { describe, expect, it } from "vitest";
import { verify } from "@tirx-ts/core";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { sim } from "tirx-ts";
import { checkGemmHopper, makeGemmHopper } from "../../examples/gemm_hopper.js";

const SIZES = { m: 256, n: 256, k: 128 } as const;

describe("gemm_hopper with a 2-CTA cluster on the simulator", () => {
  const fn = makeGemmHopper({ ...SIZES, ctas: 2, cluster: 2 });

  it("has no reports on several schedules", () => {
    let seed = 11;
    const rnd = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) * 2 - 1;
    const a = Float32Array.from({ length: SIZES.m * SIZES.k }, rnd);
    const b = Float32Array.from({ length: SIZES.n * SIZES.k }, rnd);
    for (const simSeed of [0, 1, 9]) {
      const r = runSim(
        verify(fn),
        [
          simTensor(a, { shape: [SIZES.m, SIZES.k], dtype: "float16" }),
          simTensor(b, { shape: [SIZES.n, SIZES.k], dtype: "float16" }),
          simZeros([SIZES.m, SIZES.n], "float16"),
        ],
        { hazards: "collect", simSeed },
      );
      expect(r.reports.map(String)).toEqual([]);
    }
  }, 30_000);

  it("matches a float64 product within the example's bound", () => {
    const r = checkGemmHopper(sim(), fn, SIZES);
    expect(r.summary).toMatch(/worst error/);
    expect(r.ok).toBe(true);
  }, 30_000);
});
