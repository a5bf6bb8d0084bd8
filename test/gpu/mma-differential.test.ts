// The tensor-core differential cases (test/diff/mma-cases.ts) on the GPU and on the simulated
// device, each against the independent reference: ldmatrix/stmatrix (from/to a 128B-swizzled
// tile filled by cp.async) and integer mma must be bit-exact on both and agree with each other;
// float mma must lie within MMA_F32_BOUND of the exact D = A·B + C on both, and the run prints
// how many elements equal the once-rounded exact value on each (the PTX ISA does not specify
// the accumulation order or internal precision). Skipped, with the reason printed, where no
// CUDA driver loads.
import { describe, expect, it } from "vitest";
import { cuda, cudaAvailable, sim } from "tirx-ts";
import { mmaCases, runMmaCase } from "../diff/mma-cases.js";

const probe = cudaAvailable();
if (!probe.ok) console.log(`test/gpu/mma-differential: skipped, no CUDA driver (${probe.reason})`);

describe.skipIf(!probe.ok)("tensor-core differential: GPU, simulator, reference", () => {
  const cases = probe.ok ? mmaCases() : [];
  it.each(cases.map((c) => [c.id, c] as const))("%s", (_, c) => {
    const gpuOut = runMmaCase(c, cuda(0));
    const simOut = runMmaCase(c, sim());
    const g = c.judge(gpuOut);
    const s = c.judge(simOut);
    let same = 0;
    gpuOut.forEach((v, i) => {
      const w = simOut[i]!;
      if (Object.is(v, w) || (v !== v && w !== w)) same++;
    });
    console.log(
      `${c.id} on ${cuda(0).name}: ${g.exact}/${g.checked} equal to the reference (simulator ${s.exact}), worst ${g.worst.toFixed(3)} of the bound (simulator ${s.worst.toFixed(3)}), inexact warps [${g.inexactWarps.join(", ")}], ${same}/${gpuOut.length} outputs bit-equal to the simulator's`,
    );
    expect(g.bad, g.bad.join("\n")).toEqual([]);
    expect(s.bad, s.bad.join("\n")).toEqual([]);
    if (c.exactness === "bit-exact") {
      expect(g.exact).toBe(g.checked);
      expect(same).toBe(gpuOut.length);
    }
  });
});
