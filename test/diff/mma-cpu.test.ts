// The tensor-core differential cases (mma-cases.ts) on the simulated device against their
// independent references; every case's PTX assembles for sm_90. test/gpu/mma-differential.test.ts
// runs the same cases on a GPU.
import { describe, expect, it } from "vitest";
import { compile, sim } from "tirx-ts";
import { mmaCases, runMmaCase } from "./mma-cases.js";
import { assembleMerged } from "../util/ptx-merge.js";

const cases = mmaCases();

describe("tensor-core differential cases on the simulator", () => {
  it("every case's PTX assembles for sm_90", async () => {
    const mods = cases.map((c) => ({
      name: c.id,
      // compile's PTX (compileToPtx's): runMmaCase's compile then finds it in the compile cache.
      text: compile(c.fn, { target: "cuda", arch: "sm_90" }).ptx,
    }));
    expect(await assembleMerged(mods, "sm_90")).toEqual([]);
  });

  it.each(cases.map((c) => [c.id, c] as const))("%s", (_, c) => {
    const v = c.judge(runMmaCase(c, sim()));
    expect(v.bad, v.bad.join("\n")).toEqual([]);
    expect(v.checked).toBeGreaterThan(500);
    // Moves and integer mma are bit-exact. Float mma: the simulator sums the exact products in
    // float64 and rounds once to float32, which is the once-rounded exact value unless the
    // addends' exponents span more than float64 holds beyond float32's 24 bits: here only in
    // warp 4 (exponents over the whole format) and warp 6 (zeros, subnormals and the largest
    // values together); there the error is a small part of the bound (relative to |c| + Σ|a·b|,
    // not to the result, which may be tiny after cancellation).
    console.log(
      `${c.id} on the simulator: ${v.exact}/${v.checked} equal to the reference, worst ${v.worst.toFixed(3)} of the bound`,
    );
    if (c.exactness === "bit-exact") expect(v.exact).toBe(v.checked);
    expect(v.inexactWarps.filter((w) => w !== 4 && w !== 6)).toEqual([]);
    expect(v.worst).toBeLessThan(0.25);
  });
});
