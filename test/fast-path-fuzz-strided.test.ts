// Random kernels over strided runs (test/util/gen-strided.ts): every fast way must match the
// reference (test/util/first-diff.ts).
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { check, shape, stats } from "./util/gen-strided.js";

describe("random strided kernels", () => {
  it("fast ways match the reference", { timeout: 120_000 }, () => {
    fc.assert(fc.property(shape, check), { numRuns: 15, seed: 1, endOnFailure: true });
    expect(stats.verified).toBeGreaterThan(10);
    // Strided runs were formed and most were taken (decided and recorded in one loop).
    expect(stats.stridedTaken).toBeGreaterThan(5000);
  });
});
