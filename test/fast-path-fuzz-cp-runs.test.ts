// Random kernels over cp.async tiles issued as runs (test/util/gen-cp-runs.ts): every fast way
// must match the reference (test/util/first-diff.ts).
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { check, shape, stats } from "./util/gen-cp-runs.js";

describe("random multi-repeat cp.async kernels", () => {
  it("fast ways match the reference", { timeout: 120_000 }, () => {
    fc.assert(fc.property(shape, check), { numRuns: 18, seed: 3, endOnFailure: true });
    expect(stats.verified).toBeGreaterThan(10);
    // Tiles of several repeats were issued as runs all at once.
    expect(stats.issueRunsTrue).toBeGreaterThan(15);
  });
});
