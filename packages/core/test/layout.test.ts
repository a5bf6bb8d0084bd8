import { describe, expect, test } from "vitest";
import {
  binary,
  constInt,
  intImm,
  knownDivisor,
  mkBuffer,
  mkVar,
  rearrange,
  reinterpret,
  subView,
  TirxError,
  viewOf,
  type View,
} from "@tirx-ts/core";

const A = () => viewOf(mkBuffer("A", [128, 32], "float16", "global"));

function code(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof TirxError) return e.code;
    throw e;
  }
  return "no error";
}

describe("rearrange (einops patterns on views, no data movement)", () => {
  test("the seed's split gives shape (4,32,4,8) with strides from the row-major layout", () => {
    const v = rearrange(A(), "(w t) (r v) -> w t r v", { w: 4, t: 32, v: 8 });
    expect(v.shape).toEqual([4, 32, 4, 8]);
    expect(v.strides).toEqual([1024, 32, 8, 1]);
    expect(v.axes).toEqual(["w", "t", "r", "v"]);
    expect(constInt(v.offset)).toBe(0);
  });

  test("permutation swaps strides", () => {
    const v = rearrange(A(), "i j -> j i");
    expect(v.shape).toEqual([32, 128]);
    expect(v.strides).toEqual([1, 32]);
  });

  test("grouping merges compatible axes and infers one unknown factor", () => {
    const v = rearrange(A(), "(w t) c -> w (t c)", { w: 4 });
    expect(v.shape).toEqual([4, 1024]);
    expect(v.strides).toEqual([1024, 1]);
  });

  test("a length a size does not divide: TX1011 says which (not the fractional size it left)", () => {
    expect(() => rearrange(A(), "(w t) c -> w t c", { w: 3 })).toThrow(
      /TX1011 .*input axis 0 "\(w t\)" has length 128, which is not divisible by w = 3$/,
    );
    expect(() => rearrange(A(), "(w t) c -> w t c", { w: 5, t: 32 })).toThrow(
      /but the sizes w = 5 · t = 32 multiply to 160$/,
    );
  });

  test("a merge that needs a copy is refused (TX1012)", () => {
    expect(code(() => rearrange(A(), "i j -> (j i)"))).toBe("TX1012");
  });

  test.each([
    ["(w t) (r v) -> w t r v", { w: 5, t: 32, v: 8 }, "TX1011"],
    ["(w t) (r v) -> w t r v", { v: 8 }, "TX1011"],
    ["(w t) r -> w t", { w: 4 }, "TX1010"],
    ["i j k -> i j k", {}, "TX1010"],
    ["i j -> i", {}, "TX1010"],
    ["i j -> i j q", {}, "TX1010"],
    ["i j", {}, "TX1010"],
    ["((i) j -> i j", {}, "TX1010"],
    ["i j -> i j", { q: 2 }, "TX1010"],
  ] as const)("%s with %j is refused with %s", (pattern, sizes, expected) => {
    expect(code(() => rearrange(A(), pattern, sizes))).toBe(expected);
  });
});

describe("sub views", () => {
  test("a runtime row index drops the axis and adds to the offset", () => {
    const tid = mkVar("tid", "int32");
    const v = subView(A(), [tid, ":"]);
    expect(v.shape).toEqual([32]);
    expect(v.strides).toEqual([1]);
    expect(v.offset).toMatchObject({ kind: "Binary", op: "mul", b: { value: 32 } });
  });

  test("static slices keep the axis, scale the stride by the step", () => {
    const v: View = subView(A(), [
      { kind: "Slice", start: 2, stop: 10, step: 2 },
      { kind: "Slice", start: 8 },
    ]);
    expect(v.shape).toEqual([4, 24]);
    expect(v.strides).toEqual([64, 1]);
    expect(constInt(v.offset)).toBe(2 * 32 + 8);
  });

  test("out-of-range constant indices and slices are refused", () => {
    expect(code(() => subView(A(), [128]))).toBe("TX1005");
    expect(code(() => subView(A(), [0, 0, 0]))).toBe("TX1004");
    expect(code(() => subView(A(), [{ kind: "Slice", start: 0, stop: 200 }]))).toBe("TX1013");
  });
});

describe("reinterpreting views", () => {
  test("float16 rows seen as uint32 have half the elements", () => {
    const v = reinterpret(A(), "uint32");
    expect(v.shape).toEqual([128, 16]);
    expect(v.strides).toEqual([16, 1]);
  });

  test("a runtime origin must provably start on a whole wider element", () => {
    const tid = mkVar("tid", "int32");
    const rowOf = (pitch: number) =>
      subView(rearrange(A(), "r (c k) -> (r c) k", { k: pitch }), [tid, ":"]);
    expect(reinterpret(rowOf(8), "uint32").shape).toEqual([4]);
    expect(knownDivisor(reinterpret(rowOf(8), "uint32").offset)).toBe(4);
    expect(code(() => reinterpret(rowOf(1), "uint32"))).toBe("TX1014");
  });

  test("known divisors through bitwise operators keep powers of two only", () => {
    const tid = mkVar("tid", "int32");
    const k = (x: number) => intImm(x, "int32");
    const x24 = binary("mul", tid, k(24)); // a multiple of 8 (24 = 8 · 3)
    const x16 = binary("mul", tid, k(16));
    expect(knownDivisor(binary("bitxor", x24, x16))).toBe(8);
    expect(knownDivisor(binary("bitor", x16, k(0)))).toBe(16);
    // & a constant mask: its trailing zeros (0x70 = 16 · 7) or the other side's power of two.
    expect(knownDivisor(binary("bitand", tid, k(0x70)))).toBe(16);
    expect(knownDivisor(binary("bitand", x24, k(7)))).toBe(8);
    // >> 3 of a multiple of 16 is even; of an odd number nothing is known.
    expect(knownDivisor(binary("shr", x16, k(3)))).toBe(2);
    expect(knownDivisor(binary("shr", tid, k(3)))).toBe(1);
  });

  test("an odd final axis cannot be seen as wider words", () => {
    const odd = subView(A(), [":", { kind: "Slice", start: 0, stop: 3 }]);
    expect(code(() => reinterpret(odd, "uint32"))).toBe("TX1014");
  });
});
