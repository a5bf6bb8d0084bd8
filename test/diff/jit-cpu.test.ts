// Generated statement functions against closures (packages/runtime-sim/src/compile/jit.ts): a plain
// Store or Let moves from its closures to one generated JavaScript function after its first 4096
// lanes, and both must compute the same bytes. Every op × dtype case of the differential test
// (random and edge values: NaN, ±0, ±Inf, subnormals, wraparound) runs once generated from its
// first lane (jitAfter 0) and once on closures only (jitAfter Infinity); the outputs must be
// equal bit for bit, and no case may report a hazard either way.
import { describe, expect, it } from "vitest";
import { dtypeBytes, isFloat8, verify, type KernelArg } from "@tirx-ts/core";
import { runSim, simTensor, type SimTensor } from "@tirx-ts/runtime-sim";
import { diffCases, type DiffCase } from "./cases.js";

const cases = diffCases();

/** The output bytes of `c` under `jitAfter` (the output first poisoned, as runCase does). */
function outputOf(c: DiffCase, jitAfter: number): Uint8Array {
  const one = (b: Uint8Array, dt: DiffCase["result"]): SimTensor =>
    // One-byte integers and bool take values; every other dtype (float8 too) takes raw bytes.
    simTensor(dtypeBytes(dt) === 1 && !isFloat8(dt) ? Array.from(b) : b, {
      shape: [c.n],
      dtype: dt,
    });
  const xs = c.bytes.map((b, j) => one(b, c.operands[j]!));
  const eb = dtypeBytes(c.result);
  const poison = c.initial ?? new Uint8Array(c.n * eb).fill(c.result === "bool" ? 1 : 0xa5);
  const y = one(poison, c.result);
  const { reports } = runSim(verify(c.fn), [...xs, y] as KernelArg[], {
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
      const gen = outputOf(c, 0);
      const clo = outputOf(c, Infinity);
      if (!Buffer.from(gen).equals(Buffer.from(clo))) differ.push(c.id);
    }
    expect(differ).toEqual([]);
  });
});
