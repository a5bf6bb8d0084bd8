import { describe, expect, test } from "vitest";
import { decodeHost, encodeHost, float32ToBfloat16Bits, bfloat16BitsToNumber } from "@tirx-ts/core";

describe("host encoding", () => {
  test("float16 rounds to nearest even and round-trips exactly representable values", () => {
    const bytes = encodeHost([1, 2049, 65504, -0.5], "float16", 4);
    expect(Array.from(decodeHost(bytes, "float16") as Float32Array)).toEqual([
      1, 2048, 65504, -0.5,
    ]);
  });

  test("bfloat16 keeps 8 significant bits, ties to even", () => {
    expect(float32ToBfloat16Bits(1)).toBe(0x3f80);
    expect(bfloat16BitsToNumber(float32ToBfloat16Bits(1 + 2 ** -8))).toBe(1);
    expect(bfloat16BitsToNumber(float32ToBfloat16Bits(1 + 3 * 2 ** -8))).toBe(1 + 2 ** -6);
    expect(Number.isNaN(bfloat16BitsToNumber(float32ToBfloat16Bits(NaN)))).toBe(true);
  });

  test("integers wrap and 64-bit values keep every bit", () => {
    expect(
      Array.from(decodeHost(encodeHost([256, -1], "uint8", 2), "uint8") as Uint8Array),
    ).toEqual([0, 255]);
    const big = 0x1234_5678_9abc_def0n;
    expect(decodeHost(encodeHost([big], "uint64", 1), "uint64")[0]).toBe(big);
  });

  test("a wrong element count is a RangeError", () => {
    expect(() => encodeHost([1, 2, 3], "float32", 4)).toThrow(RangeError);
  });
});
