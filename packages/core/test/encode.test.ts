import { describe, expect, test } from "vitest";
import {
  bfloat16BitsToNumber,
  decodeHost,
  encodeHost,
  float32ToBfloat16Bits,
  readElement,
  writeElement,
} from "@tirx-ts/core";

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

  test("a wrong element count is TX5007", () => {
    expect(() => encodeHost([1, 2, 3], "float32", 4)).toThrow(
      expect.objectContaining({ code: "TX5007" }),
    );
  });
});

describe("bulk float16 / bfloat16 / float8 encoding and decoding agree with the per-element path", () => {
  // Edge values: signed zeros, float16 subnormals and their rounding ties, the largest finite
  // values and the first that overflow, infinities, NaN; then random values of every magnitude.
  const edge = [
    0,
    -0,
    1,
    -1,
    2 ** -24,
    2 ** -25,
    3 * 2 ** -26,
    2 ** -14,
    2 ** -14 - 2 ** -25,
    65504,
    65519.99,
    65520,
    -65520,
    1 + 2 ** -11,
    1 + 3 * 2 ** -11,
    2 ** 127 * 1.5,
    3.4e38,
    1e-45,
    Infinity,
    -Infinity,
    NaN,
    1 / 3,
    -2 / 3,
    Math.PI,
    // bfloat16 ties (to even: down, up), float8 ties and saturation.
    1 + 2 ** -8,
    1 + 3 * 2 ** -8,
    1 + 2 ** -4,
    1 + 3 * 2 ** -4,
    464,
    480,
    -61440,
    2 ** -10,
    3 * 2 ** -10,
    2 ** -17,
  ];
  // float32 NaNs with payloads (quiet, signalling, negative), read as bits by the bulk path.
  const nans = new Float32Array(
    Uint32Array.of(0x7f800001, 0x7fa00000, 0xffc00123, 0xff800400).buffer,
  );
  const random = Array.from({ length: 4000 }, (_, i) => {
    const m = Math.sin(i * 12.9898) * 43758.5453;
    return (m - Math.floor(m) - 0.5) * 2 ** ((i % 80) - 40);
  });
  const values = [...edge, ...nans, ...random];
  type Bulk = "float16" | "bfloat16" | "float8_e4m3" | "float8_e5m2";
  const bytesOf = (dtype: Bulk): number => (dtype.startsWith("float8") ? 1 : 2);
  const perElement = (data: ArrayLike<number>, dtype: Bulk): Uint8Array => {
    const eb = bytesOf(dtype);
    const out = new Uint8Array(data.length * eb);
    const dv = new DataView(out.buffer);
    for (let i = 0; i < data.length; i++) writeElement(dv, i * eb, dtype, data[i]!);
    return out;
  };
  for (const dtype of ["float16", "bfloat16", "float8_e4m3", "float8_e5m2"] as const) {
    test(`${dtype}: plain arrays, Float32Array and Float64Array inputs`, () => {
      const eb = bytesOf(dtype);
      const f32 = Float32Array.from(values);
      f32.set(nans, edge.length);
      for (const data of [values, f32, Float64Array.from(values)]) {
        const want = perElement(data, dtype);
        const got = encodeHost(data, dtype, data.length);
        expect(Buffer.from(got).equals(Buffer.from(want))).toBe(true);
        const back = decodeHost(got, dtype);
        const dv = new DataView(want.buffer);
        for (let i = 0; i < data.length; i++) {
          const one = readElement(dv, i * eb, dtype) as number;
          expect(Object.is(back[i], one)).toBe(true);
        }
      }
    });
  }
});
