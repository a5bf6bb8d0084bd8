// The wgmma.mma_async differential cases (wgmma-cases.ts) on the simulated device against their
// independent exact reference, K-major and MN-major (transposed) tiles with every swizzle; every
// case's PTX assembles for sm_90a. test/gpu/wgmma-differential.test.ts runs the same cases on a
// GPU.
import { describe, expect, it } from "vitest";
import { compile, sim } from "tirx-ts";
import { EXACT_CTA, runWgmmaCase, wgmmaCases } from "./wgmma-cases.js";
import { assembleMerged } from "../util/ptx-merge.js";

const cases = wgmmaCases();

describe("wgmma differential cases on the simulator", () => {
  it("every case's PTX assembles for sm_90a", async () => {
    const mods = cases.map((c) => ({
      name: c.id,
      // compile's PTX (compileToPtx's): runWgmmaCase's compile then finds it in the compile cache.
      text: compile(c.fn, { target: "cuda", arch: "sm_90a" }).ptx,
    }));
    expect(await assembleMerged(mods, "sm_90a")).toEqual([]);
  }, 60_000);

  it.each(cases.map((c) => [c.id, c] as const))("%s", (_, c) => {
    const v = c.judge(runWgmmaCase(c, sim()));
    expect(v.bad, v.bad.join("\n")).toEqual([]);
    expect(v.checked).toBe(6 * 64 * c.spec.n);
    console.log(
      `${c.id} on the simulator: ${v.exact}/${v.checked} equal to the once-rounded exact value, inexact CTAs [${v.inexactCtas.join(", ")}], worst ${v.worst.toFixed(3)} of the bound`,
    );
    // Multiples of 1/8: every partial sum is exact, so a misplaced element cannot hide.
    expect(v.inexactCtas).not.toContain(EXACT_CTA);
    // One k16 step: the simulator sums the exact products in float64 and rounds once, which is
    // the once-rounded exact value unless the addends span more exponents than float64 holds
    // beyond float32's 24 bits (CTA 2: wide exponents; CTA 4: zeros, tiny and largest values).
    // Chained steps round to float32 after each step, as the accumulator register does. Each
    // rounding is off the exact step by at most one float32 ulp of the step's result,
    // 2^-23·|D| ≤ 2^-23·(|c| + Σ|a·b|): a quarter of the per-step bound.
    if (c.spec.steps === 1) expect(v.inexactCtas.filter((x) => x !== 2 && x !== 4)).toEqual([]);
    expect(v.worst).toBeLessThanOrEqual(0.25);
  });
});
