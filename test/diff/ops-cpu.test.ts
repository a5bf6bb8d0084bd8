// The differential test's CPU half: every op × dtype case runs on the simulated device and must
// equal the independent reference (exact ops bit for bit, approximate ops within their bound),
// and every case's PTX assembles. test/gpu/ops-differential.test.ts runs the same cases on a GPU.
//
// The same cases also check generated statement functions against closures
// (packages/runtime-sim/src/compile/jit.ts): a plain Store or Let moves from its closures to one
// generated JavaScript function after its first 4096 lanes, and both must compute the same bytes.
// Every case (random and edge values: NaN, ±0, ±Inf, subnormals, wraparound) runs once generated
// from its first lane (jitAfter 0) and once on closures only (the differential test's launch,
// whose lanes stay under 4096); the outputs must be equal bit for bit, and no case may report a
// hazard either way. (One file for both, so that the cases are built once: building them is about
// a third of each half.)
import { describe, expect, it } from "vitest";
import { compile, sim } from "tirx-ts";
import { dtypeBytes, isFloat8, type KernelArg, type VerifiedFunc } from "@tirx-ts/core";
import { runSim, simTensor, type SimTensor } from "@tirx-ts/runtime-sim";
import { diffCases, type DiffCase } from "./cases.js";
import { judge, runCase, showMismatches } from "./run.js";
import { assembleMerged } from "../util/ptx-merge.js";
import { ISSUE_CASES, runIssueCases } from "./float-rem-cases.js";

const cases = diffCases();
const dev = sim();
/**
 * Each case's output in the differential test below (runCase: its n lanes stay under the
 * simulator's JIT_AFTER_LANES, 4096, so closures only), by case id: the closures' half of the
 * generated-code comparison, not launched again there.
 */
const closureOutputs = new Map<string, Uint8Array>();
const JIT_AFTER_LANES = 4096;

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
    const out = runCase(c, dev);
    if (c.n < JIT_AFTER_LANES) closureOutputs.set(c.id, out);
    const { checked, bad } = judge(c, out);
    expect(checked).toBeGreaterThan(0);
    expect(bad.length, showMismatches(c, bad)).toBe(0);
  });
});

/**
 * The output bytes of `c` launched from `vf` under `jitAfter` (the output first poisoned, as
 * runCase does).
 */
function outputOf(c: DiffCase, vf: VerifiedFunc, jitAfter: number): Uint8Array {
  const one = (b: Uint8Array, dt: DiffCase["result"]): SimTensor =>
    // One-byte integers and bool take values; every other dtype (float8 too) takes raw bytes.
    simTensor(dtypeBytes(dt) === 1 && !isFloat8(dt) ? Array.from(b) : b, {
      shape: [b.length / dtypeBytes(dt)],
      dtype: dt,
    });
  const xs = c.bytes.map((b, j) => one(b, c.operands[j]!));
  const eb = dtypeBytes(c.result);
  const poison = c.initial ?? new Uint8Array(c.n * eb).fill(c.result === "bool" ? 1 : 0xa5);
  const y = one(poison, c.result);
  const { reports } = runSim(vf, [...xs, y] as KernelArg[], {
    hazards: "collect",
    jitAfter,
  });
  expect(reports.map((r) => r.message)).toEqual([]);
  return y.toBytes();
}

describe("generated statement functions compute what closures compute", () => {
  it(`all ${cases.length} op × dtype cases of the differential test, bit for bit`, () => {
    const differ: string[] = [];
    for (const c of cases) {
      // The differential test's VerifiedFunc (compile's cache; one simulator compilation) for
      // both: closures only first (that test's launch, or one here when it did not run), then
      // generated from the first lane (a statement that moved to generated code stays moved).
      const vf = compile(c.fn, { target: "cuda", arch: "sm_90" }).verified;
      const clo = closureOutputs.get(c.id) ?? outputOf(c, vf, Infinity);
      const gen = outputOf(c, vf, 0);
      if (!Buffer.from(gen).equals(Buffer.from(clo))) differ.push(c.id);
    }
    expect(differ).toEqual([]);
  });
});
