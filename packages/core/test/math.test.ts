// Simulator semantics of the exact math ops and T.fma against hand-checked IEEE results.
import { describe, expect, it } from "vitest";
import { findOp, type DType, type ThreadFn } from "@tirx-ts/core";

const fn = (name: string, dts: DType[]): ThreadFn => {
  const sim = findOp(name)!.sim;
  if (sim.kind !== "thread") throw new Error("thread semantics expected");
  return sim.make(dts, findOp(name)!.result(dts)!);
};

describe("math semantics", () => {
  it("round is half to even and keeps the sign of zero", () => {
    const r = fn("round", ["float32"]);
    expect([0.5, 1.5, 2.5, -0.5, -1.5, 2.4999998].map((x) => r(x))).toEqual([0, 2, 2, -0, -2, 2]);
    expect(Object.is(r(-0.3), -0)).toBe(true);
    expect(Object.is(fn("ceil", ["float32"])(-0.5), -0)).toBe(true);
  });
  it("sqrt rounds once to the format", () => {
    expect(fn("sqrt", ["float32"])(2)).toBe(Math.fround(Math.SQRT2));
    expect(fn("sqrt", ["float16"])(2)).toBe(1.4140625);
    expect(fn("sqrt", ["float32"])(-1)).toBeNaN();
  });
  it("abs wraps the minimum integer; isnan/isinf are bools", () => {
    expect(fn("abs", ["int32"])(-(2 ** 31))).toBe(-(2 ** 31));
    expect(fn("abs", ["int16"])(-5)).toBe(5);
    expect(fn("isnan", ["float32"])(NaN)).toBe(1);
    expect(fn("isinf", ["bfloat16"])(-Infinity)).toBe(1);
    expect(fn("isinf", ["float64"])(1e308)).toBe(0);
  });
  it("fma rounds once: (1+2^-23)(1-2^-23) - 1 = -2^-46", () => {
    const f = fn("fma", ["float32", "float32", "float32"]);
    const a = 1 + 2 ** -23;
    const b = 1 - 2 ** -23;
    expect(f(a, b, -1)).toBe(-(2 ** -46));
    expect(Math.fround(Math.fround(a * b) - 1)).toBe(0); // two roundings lose it
    const g = fn("fma", ["float64", "float64", "float64"]);
    expect(g(1 + 2 ** -52, 1 - 2 ** -52, -1)).toBe(-(2 ** -104));
    expect(g(1e308, 10, -Infinity)).toBe(-Infinity);
    expect(g(1e308, 10, -1e308)).toBe(9e308 > 1.7976931348623157e308 ? Infinity : 9e308);
  });
  it("refuses 16-bit fma and float bit ops", () => {
    expect(() => findOp("fma")!.result(["float16", "float16", "float16"])).toThrow(
      /TX2005|not defined/,
    );
  });
});
