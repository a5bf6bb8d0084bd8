// The sparse mma cases (test/diff/mma-sp-cases.ts: every form of core's MMA_SP_FORMS and every
// sparsity selector, two warps each, random 2:4 metadata) on the GPU and on the simulated device,
// each against the exact C + Σ (kept a)·b: both must lie within the form's documented bound
// (core's mmaSpFormBound), and the run prints how many elements equal the once-rounded exact value
// on each and how many outputs are bit-equal between them (the PTX ISA does not specify the
// accumulation order or internal precision). A wrong fragment or metadata layout picks other rows
// of B and fails the bound. Skipped, with the reason printed, where no CUDA driver loads.
import { describe, expect, it } from "vitest";
import { cuda, cudaAvailable, sim } from "tirx-ts";
import { runMmaCase } from "../diff/mma-cases.js";
import { mmaSpCases } from "../diff/mma-sp-cases.js";

const probe = cudaAvailable();
if (!probe.ok)
  console.log(`test/gpu/mma-sp-differential: skipped, no CUDA driver (${probe.reason})`);

describe.skipIf(!probe.ok)("sparse mma differential: GPU, simulator, reference", () => {
  const cases = probe.ok ? mmaSpCases() : [];
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
      `${c.id} on ${cuda(0).name}: ${g.exact}/${g.checked} equal to the reference (simulator ${s.exact}), worst ${g.worst.toFixed(3)} of the bound (simulator ${s.worst.toFixed(3)}), ${same}/${gpuOut.length} outputs bit-equal to the simulator's`,
    );
    expect(g.bad, g.bad.join("\n")).toEqual([]);
    expect(s.bad, s.bad.join("\n")).toEqual([]);
  });
});
