// The differential test's GPU half: every op × dtype case of test/diff/cases.ts runs on the GPU
// and on the simulated device. Exact ops must agree bit for bit; where they differ, the
// reference says which is right. Approximate ops must stay within their documented bound on
// both. NaN payload bits are not modelled by the simulator (its values are JS numbers): a NaN
// result must be a NaN on both, with any payload; every other result is compared bit for bit,
// -0 and +0 distinct. Skipped, with the reason printed, where no CUDA driver loads.
import { describe, expect, it } from "vitest";
import { cuda, cudaAvailable, sim } from "tirx-ts";
import { diffCases } from "../diff/cases.js";
import { judge, runCase, showMismatches } from "../diff/run.js";
import { decode, type Value } from "../diff/values.js";
import { ISSUE_CASES, runIssueCases } from "../diff/float-rem-cases.js";

const show = (v: Value | "unspecified" | "none"): string => (Object.is(v, -0) ? "-0" : String(v));
const hex = (b: Uint8Array): string =>
  Array.from(b)
    .reverse()
    .map((x) => x.toString(16).padStart(2, "0"))
    .join("");

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

  it("the issue's three float32 division-family cases give the exact values on the GPU", () => {
    const got = runIssueCases(cuda(0));
    ISSUE_CASES.forEach((c, i) => {
      console.log(`${c.op}(${c.a}, ${c.b}) on ${cuda(0).name}: ${got[i]} (exact: ${c.want})`);
      expect(got[i]).toBe(Math.fround(c.want));
    });
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
        // NaN payloads are not modelled: a NaN result matches any NaN (see the header); a packed
        // pair's NaN lane likewise (`DiffCase.same`).
        const bothNaN =
          (Number.isNaN(g[i]) && Number.isNaN(s[i])) || (c.same?.(g[i]!, s[i]!) ?? false);
        if (a.some((v, k) => v !== b[k]) && !bothNaN && c.reference(i) !== "unspecified") {
          differ.push(
            `${c.id}(${c.inputs.map((col) => show(col[i]!)).join(", ")}): GPU ${show(g[i]!)} [${hex(a)}], simulator ${show(s[i]!)} [${hex(b)}], reference ${show(c.reference(i) ?? "none")}`,
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
