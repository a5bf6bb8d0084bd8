// The differential test's GPU half: every op × dtype case of test/diff/cases.ts runs on the GPU
// and on the simulated device. Exact ops must agree bit for bit; where they differ, the
// reference says which is right. Approximate ops must stay within their documented bound on
// both. Skipped, with the reason printed, where no CUDA driver loads.
import { describe, expect, it } from "vitest";
import { cuda, cudaAvailable, sim } from "tirx-ts";
import { diffCases } from "../diff/cases.js";
import { judge, runCase, showMismatches } from "../diff/run.js";
import { decode } from "../diff/values.js";

const probe = cudaAvailable();
if (!probe.ok) console.log(`test/gpu/ops-differential: skipped, no CUDA driver (${probe.reason})`);

describe.skipIf(!probe.ok)("ops differential: GPU against the simulator and the reference", () => {
  const cases = probe.ok ? diffCases() : [];
  const counts = new Map<string, { cases: number; elements: number }>();
  for (const c of cases) {
    const k = counts.get(c.family) ?? { cases: 0, elements: 0 };
    counts.set(c.family, { cases: k.cases + 1, elements: k.elements + c.n });
  }
  it("reports the op × dtype counts", () => {
    const gpu = cuda(0);
    console.log(
      `ops differential on ${gpu.name}: ${cases.length} op × dtype cases (${[...counts].map(([f, k]) => `${f} ${k.cases} cases/${k.elements} elements`).join("; ")})`,
    );
    expect(cases.length).toBeGreaterThan(300);
  });

  it.each(cases.map((c) => [c.id, c] as const))("%s", (_, c) => {
    const onGpu = runCase(c, cuda(0));
    const onSim = runCase(c, sim());
    const gpuJudged = judge(c, onGpu);
    const simJudged = judge(c, onSim);
    if (!c.approx) {
      const g = decode(onGpu, c.result);
      const s = decode(onSim, c.result);
      const bytes = onGpu.length / c.n;
      const differ: string[] = [];
      for (let i = 0; i < c.n && differ.length < 5; i++) {
        const a = onGpu.subarray(i * bytes, (i + 1) * bytes);
        const b = onSim.subarray(i * bytes, (i + 1) * bytes);
        if (a.some((v, k) => v !== b[k]) && c.reference(i) !== "unspecified") {
          differ.push(
            `${c.id}(${c.inputs.map((col) => String(col[i])).join(", ")}): GPU ${String(g[i])}, simulator ${String(s[i])}, reference ${String(c.reference(i))}`,
          );
        }
      }
      expect(differ, differ.join("\n")).toEqual([]);
    }
    expect(gpuJudged.bad.length, `GPU vs reference:\n${showMismatches(c, gpuJudged.bad)}`).toBe(0);
    expect(
      simJudged.bad.length,
      `simulator vs reference:\n${showMismatches(c, simJudged.bad)}`,
    ).toBe(0);
  });
});
