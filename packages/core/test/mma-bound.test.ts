// The documented float mma bound (MMA_F32_BOUND, mmaF32Bound) against the accumulation model it
// is derived from: addends aligned to the largest one's exponent and truncated to 24 bits. The
// case an H200 produced (wgmma m64n256k16, edge inputs): the largest addend −2^-24, the others
// products of float16 subnormals, which the tensor cores drop whole.
import { describe, expect, it } from "vitest";
import { MMA_F32_BOUND, mmaF32Bound } from "../src/index.js";
import { uniformFrom } from "../../../test/util/lcg.js";

/** The alignment model: truncate every addend to 24 bits below the largest one's leading bit. */
function alignedSum(addends: readonly number[]): number {
  const max = Math.max(...addends.map(Math.abs));
  const e = Math.floor(Math.log2(max));
  const unit = 2 ** (e - 23);
  return Math.fround(addends.reduce((s, x) => s + Math.trunc(x / unit) * unit, 0));
}

describe("mmaF32Bound", () => {
  const tiny = 2 ** -24; // the smallest float16 subnormal
  const products = [-tiny, ...Array.from({ length: 15 }, () => tiny * tiny)];
  const exact = products.reduce((s, x) => s + x, 0);

  it("covers addends dropped whole by the alignment, which 2^-21·(|c| + Σ|a·b|) does not", () => {
    const got = alignedSum([0, ...products]);
    expect(got).toBe(-tiny); // what the H200 returned
    const err = Math.abs(got - exact);
    const relOnly = MMA_F32_BOUND.rel! * products.reduce((s, x) => s + Math.abs(x), 0);
    expect(err).toBeGreaterThan(1.5 * relOnly);
    expect(err).toBeLessThanOrEqual(mmaF32Bound(0, products));
  });

  it("covers the alignment model on random addends spread over 40 binades", () => {
    const rnd = uniformFrom(7, 0, 1);
    for (let t = 0; t < 2000; t++) {
      const ps = Array.from({ length: 16 }, () => (rnd() - 0.5) * 2 ** Math.floor(rnd() * 40 - 20));
      const c = (rnd() - 0.5) * 2 ** Math.floor(rnd() * 40 - 20);
      const exactSum = ps.reduce((s, x) => s + x, c);
      expect(Math.abs(alignedSum([c, ...ps]) - exactSum)).toBeLessThanOrEqual(mmaF32Bound(c, ps));
    }
  });
});
