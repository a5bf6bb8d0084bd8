// The wgmma.mma_async differential cases (test/diff/wgmma-cases.ts: m64nNk16 for N 8..256, f16
// and bf16, A from shared or registers, K-major and MN-major tiles with every swizzle, scale-d
// 0/1, negated operands, chained k16 steps; random and edge inputs) compiled for sm_90a and run
// on the GPU and on the simulated device, each against the exact reference. The PTX ISA does not
// specify wgmma's accumulation order or internal precision, so both must lie within
// MMA_F32_BOUND of the exact value (mmaF32Bound summed over the chained instructions); the run prints how many outputs equal the once-rounded
// exact value on each side, the worst error as a fraction of the bound, and how many outputs the
// GPU and the simulator agree on bit for bit. CTA 1 of every case (multiples of 1/8: every
// partial sum exact) must be bit-exact on both, so a misread tile layout cannot pass. Skipped,
// with the reason printed, where no CUDA driver loads.
import { describe, expect, it } from "vitest";
import { cuda, cudaAvailable, sim } from "tirx-ts";
import { EXACT_CTA, runWgmmaCase, wgmmaCases } from "../diff/wgmma-cases.js";

const probe = cudaAvailable();
if (!probe.ok)
  console.log(`test/gpu/wgmma-differential: skipped, no CUDA driver (${probe.reason})`);

describe.skipIf(!probe.ok)("wgmma differential: GPU (sm_90a), simulator, reference", () => {
  const cases = probe.ok ? wgmmaCases() : [];
  it.each(cases.map((c) => [c.id, c] as const))("%s", (_, c) => {
    const gpuOut = runWgmmaCase(c, cuda(0));
    const simOut = runWgmmaCase(c, sim());
    const g = c.judge(gpuOut);
    const s = c.judge(simOut);
    let same = 0;
    gpuOut.forEach((v, i) => {
      const w = simOut[i]!;
      if (Object.is(v, w) || (v !== v && w !== w)) same++;
    });
    console.log(
      `${c.id} on ${cuda(0).name}: ${g.exact}/${g.checked} equal to the once-rounded exact value (simulator ${s.exact}), worst ${g.worst.toFixed(3)} of the bound (simulator ${s.worst.toFixed(3)}), inexact CTAs [${g.inexactCtas.join(", ")}] (simulator [${s.inexactCtas.join(", ")}]), ${same}/${gpuOut.length} outputs bit-equal to the simulator's`,
    );
    expect(g.bad, g.bad.join("\n")).toEqual([]);
    expect(s.bad, s.bad.join("\n")).toEqual([]);
    expect(g.inexactCtas).not.toContain(EXACT_CTA);
    expect(s.inexactCtas).not.toContain(EXACT_CTA);
  });
});
