// The documented bounds of the float mma.sync forms (mmaFormBound) against the accumulation
// models they are derived from: f64, a chain of fma.rn.f64 in any order (exact products and
// sums by bigint, rounded once per step); float16 D, the f32-D model (addends aligned to the
// largest one's exponent and truncated to 24 bits) rounded once to float16; float8 → f32, a sum
// kept to 14 bits relative to |c| + Σ|a·b|.
import { describe, expect, it } from "vitest";
import {
  dyadic,
  MMA_FORMS,
  mmaF32Bound,
  mmaFormBound,
  mmaFormName,
  roundDyadic,
  roundF16,
} from "../src/index.js";
import { uniformFrom } from "../../../test/util/lcg.js";

const form = (name: string) => MMA_FORMS.find((f) => mmaFormName(f) === name)!;

/** fma.rn.f64(a, b, c): the exact a·b + c rounded once. */
function fma64(a: number, b: number, c: number): number {
  const x = dyadic(a);
  const y = dyadic(b);
  const z = dyadic(c);
  const p = { m: x.m * y.m, e: x.e + y.e };
  const e = Math.min(p.e, z.e);
  return roundDyadic((p.m << BigInt(p.e - e)) + (z.m << BigInt(z.e - e)), e, "float64");
}

/** The exact c + Σ a·b as a float64 (rounded once). */
function exact(as: readonly number[], bs: readonly number[], c: number): number {
  const parts = [
    dyadic(c),
    ...as.map((a, k) => ({ m: dyadic(a).m * dyadic(bs[k]!).m, e: dyadic(a).e + dyadic(bs[k]!).e })),
  ];
  const e = Math.min(...parts.map((p) => p.e));
  return roundDyadic(
    parts.reduce((s, p) => s + (p.m << BigInt(p.e - e)), 0n),
    e,
    "float64",
  );
}

/** The f32-D alignment model: every addend truncated 24 bits below the largest one's leading bit. */
function alignedSum(addends: readonly number[]): number {
  const max = Math.max(...addends.map(Math.abs));
  if (max === 0) return 0;
  const unit = 2 ** (Math.floor(Math.log2(max)) - 23);
  return Math.fround(addends.reduce((s, x) => s + Math.trunc(x / unit) * unit, 0));
}

const rnd = uniformFrom(11, 0, 1);

describe("mmaFormBound", () => {
  it("f64: covers fma.rn.f64 chains in any order, over 100 binades", () => {
    const f = form("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64");
    for (let t = 0; t < 100; t++) {
      const as = Array.from(
        { length: 16 },
        () => (rnd() - 0.5) * 2 ** Math.floor(rnd() * 100 - 50),
      );
      const bs = Array.from({ length: 16 }, () => rnd() - 0.5);
      const c = (rnd() - 0.5) * 2 ** Math.floor(rnd() * 100 - 50);
      const order = as.map((_, k) => k).sort(() => rnd() - 0.5);
      const chain = order.reduce((s, k) => fma64(as[k]!, bs[k]!, s), c);
      const want = exact(as, bs, c);
      const bound = mmaFormBound(
        f,
        c,
        as.map((a, k) => a * bs[k]!),
        want,
      );
      expect(Math.abs(chain - want)).toBeLessThanOrEqual(bound);
    }
  });

  it("float16 D: covers the f32-D model rounded once to float16, and holds mmaF32Bound", () => {
    const f = form("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16");
    for (let t = 0; t < 500; t++) {
      const ps = Array.from({ length: 16 }, () =>
        roundF16((rnd() - 0.5) * 2 ** Math.floor(rnd() * 20 - 14)),
      );
      const c = roundF16((rnd() - 0.5) * 2 ** Math.floor(rnd() * 20 - 14));
      const want = ps.reduce((s, x) => s + x, c);
      const bound = mmaFormBound(f, c, ps, want);
      expect(Math.abs(roundF16(alignedSum([c, ...ps])) - want)).toBeLessThanOrEqual(bound);
      expect(bound).toBeGreaterThanOrEqual(mmaF32Bound(c, ps));
    }
  });

  it("float8 → f32: covers a sum kept to 14 bits of |c| + Σ|a·b|, and holds mmaF32Bound", () => {
    const f = form("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32");
    for (let t = 0; t < 500; t++) {
      const ps = Array.from({ length: 32 }, () => (rnd() - 0.5) * 2 ** Math.floor(rnd() * 20 - 10));
      const c = (rnd() - 0.5) * 2 ** Math.floor(rnd() * 20 - 10);
      const want = ps.reduce((s, x) => s + x, c);
      const mag = ps.reduce((s, x) => s + Math.abs(x), Math.abs(c));
      const unit = 2 ** (Math.floor(Math.log2(mag)) - 13);
      const bound = mmaFormBound(f, c, ps, want);
      expect(Math.abs(Math.trunc(want / unit) * unit - want)).toBeLessThanOrEqual(bound);
      expect(bound).toBeGreaterThanOrEqual(mmaF32Bound(c, ps));
    }
  });

  it("integer forms are exact: bound 0", () => {
    expect(mmaFormBound(form("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"), 1, [2], 3)).toBe(
      0,
    );
  });
});
