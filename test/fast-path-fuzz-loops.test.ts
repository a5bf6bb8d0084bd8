// Random kernels with loops under coroutine scheduling (named barriers, mbarrier waits) and block
// copies / cp.async tiles indexed by the loop variables (test/util/gen-loops.ts): every fast way
// must match the reference (test/util/first-diff.ts). Loop starts are uniform, per warp, per
// thread, or per thread in one warp and uniform in another (fast-path-loopvar.test.ts).
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { check, shape, stats } from "./util/gen-loops.js";

describe("random loops under coroutine scheduling", () => {
  it("fast ways match the reference", { timeout: 120_000 }, () => {
    fc.assert(fc.property(shape, check), { numRuns: 20, seed: 1, endOnFailure: true });
    expect(stats.verified).toBeGreaterThan(14);
    expect(stats.copyTrue).toBeGreaterThan(150);
  });
});
