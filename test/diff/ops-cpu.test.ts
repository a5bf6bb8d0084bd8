// The differential test's CPU half: every op × dtype case runs on the simulated device and must
// equal the independent reference (exact ops bit for bit, approximate ops within their bound),
// and every case's PTX assembles. test/gpu/ops-differential.test.ts runs the same cases on a GPU.
import { describe, expect, it } from "vitest";
import { sim } from "tirx-ts";
import { diffCases } from "./cases.js";
import { judge, runCase, showMismatches } from "./run.js";
import { assembleMerged } from "../util/ptx-merge.js";
import { ISSUE_CASES, runIssueCases } from "./float-rem-cases.js";

const cases = diffCases();
const dev = sim();

describe("differential test on the CPU: simulator against the reference", () => {
  it("the issue's three float32 division-family cases give the exact values", () => {
    const got = runIssueCases(dev);
    ISSUE_CASES.forEach((c, i) => expect(got[i]).toBe(Math.fround(c.want)));
  });

  it("covers every op family", () => {
    const counts = new Map<string, number>();
    for (const c of cases) counts.set(c.family, (counts.get(c.family) ?? 0) + 1);
    console.log(
      `ops differential (CPU): ${cases.length} op × dtype cases: ${[...counts].map(([f, n]) => `${f} ${n}`).join(", ")}`,
    );
    expect(counts.get("arith")).toBeGreaterThan(100);
    // Every ordered pair of the 15 dtypes but float64 → float8 (refused: it would round twice).
    expect(counts.get("cast")).toBe(15 * 14 - 2);
  });

  it("every case's PTX assembles for sm_90 (batched into a few ptxas runs)", async () => {
    const failures = await assembleMerged(
      cases.map((c) => ({ name: c.id, text: c.module.text })),
      "sm_90",
    );
    expect(failures).toEqual([]);
  });

  it.each(cases.map((c) => [c.id, c] as const))("%s", (_, c) => {
    const { checked, bad } = judge(c, runCase(c, dev));
    expect(checked).toBeGreaterThan(0);
    expect(bad.length, showMismatches(c, bad)).toBe(0);
  });
});
