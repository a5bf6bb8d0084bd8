// Every built-in fragment layout against the GPU's tensor cores, element by element (issue 22's
// acceptance: "every built-in fragment layout matches the PTX ISA on the simulator and on the
// H200"): the kernels of test/diff/fragment-cases.ts (mma.sync m16n8k16 f16/bf16, m16n8k8 tf32,
// m16n8k32 s8; wgmma m64nNk16 f16 for N = 16 and 64, A from shared or registers) take every
// operand register from an array filled through the A/B/C layouts and store every accumulator
// register; each register (thread, slot) must hold the element the D layout assigns to it, on
// inputs whose D elements are all distinct (a wrong register names the [row, col] the hardware
// put there) and on distinct operands with the exact product (every partial sum an exact
// integer). The simulator runs the same kernels (test/fragment-layouts-sim.test.ts does so
// without a GPU); here both must match the layouts, and each other bit for bit. Skipped, with the
// reason printed, where no CUDA driver loads.
import { describe, expect, it } from "vitest";
import { cuda, cudaAvailable, sim } from "tirx-ts";
import { fragmentCases, fragmentMismatches, runFragmentCase } from "../diff/fragment-cases.js";

const probe = cudaAvailable();
if (!probe.ok) console.log(`test/gpu/fragment-layouts: skipped, no CUDA driver (${probe.reason})`);

describe.skipIf(!probe.ok)("built-in fragment layouts: GPU, simulator, layouts", () => {
  const cases = probe.ok ? fragmentCases() : [];
  it.each(cases.map((c) => [c.id, c] as const))("%s", (_, c) => {
    const gpuOut = runFragmentCase(c, cuda(0));
    const simOut = runFragmentCase(c, sim());
    const g = fragmentMismatches(c, gpuOut);
    const s = fragmentMismatches(c, simOut);
    const same = gpuOut.filter((v, i) => v === simOut[i]).length; // ±0 alike, as the layouts check
    console.log(
      `${c.id} on ${cuda(0).name}: ${gpuOut.length - g.length}/${gpuOut.length} registers as the layout says (simulator ${simOut.length - s.length}), ${same}/${gpuOut.length} bit-equal to the simulator's`,
    );
    expect(g.slice(0, 8), g.slice(0, 8).join("\n")).toEqual([]);
    expect(s.slice(0, 8), s.slice(0, 8).join("\n")).toEqual([]);
    expect(same).toBe(gpuOut.length);
  });
});
