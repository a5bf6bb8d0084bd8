import { describe, expect, it } from "vitest";
import { f16round, getFloat16, setFloat16 } from "@petamoriken/float16";
import { bfloat16BitsToNumber, float32ToBfloat16Bits } from "@tirx-ts/core";
import { bf16Bits, f16Bits, f16Value, roundBf16, roundF16 } from "../src/numeric/float.js";

/** Deterministic doubles spread over every binade float16 and bfloat16 care about, ties included. */
function samples(): number[] {
  let s = 12345;
  const rnd = (): number => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const out: number[] = [
    0,
    -0,
    Infinity,
    -Infinity,
    65504,
    65519.999,
    65520,
    2 ** -24,
    2 ** -25,
    3 * 2 ** -26,
    2 ** -14,
    // float64 subnormals and the smallest normal (the exponent field is 0 or 1)
    5e-324,
    2 ** -1022,
    -(2 ** -1060),
  ];
  // Powers of two and their float64 neighbours (the binade of each is decided exactly).
  for (let k = -30; k <= 17; k++)
    out.push(2 ** k, 2 ** k * (1 - 2 ** -53), 2 ** k * (1 + 2 ** -52));
  for (let i = 0; i < 20000; i++) {
    const e = Math.floor(rnd() * 60) - 30;
    const m = 1 + rnd();
    const v = (rnd() < 0.5 ? -1 : 1) * m * 2 ** e;
    out.push(v, Math.fround(v));
    // an exact float16 tie: 11 significant bits plus a half
    out.push((Math.floor(rnd() * 2048) + 0.5 + 2048) * 2 ** (e - 11));
  }
  return out;
}

describe("float16 / bfloat16 rounding (round to nearest even)", () => {
  const xs = samples();

  it("roundF16 agrees with @petamoriken/float16 (Math.f16round) on doubles", () => {
    expect(xs.filter((x) => !Object.is(roundF16(x), f16round(x)))).toEqual([]);
  });

  it("f16Bits rounds every sample as @petamoriken/float16 encodes it", () => {
    const dv = new DataView(new ArrayBuffer(2));
    const bad = xs.filter((x) => {
      setFloat16(dv, 0, x, true);
      return f16Bits(x) !== dv.getUint16(0, true);
    });
    expect(bad).toEqual([]);
  });

  it("f16Bits / f16Value round-trip every float16 bit pattern but NaNs", () => {
    const dv = new DataView(new ArrayBuffer(2));
    const bad: number[] = [];
    for (let b = 0; b < 65536; b++) {
      dv.setUint16(0, b, true);
      const v = getFloat16(dv, 0, true);
      const ok = Number.isNaN(v)
        ? f16Bits(v) === 0x7fff
        : Object.is(f16Value(b), v) && f16Bits(v) === b;
      if (!ok) bad.push(b);
    }
    expect(bad).toEqual([]);
  });

  it("roundBf16 of a float32 agrees with core's host encoding", () => {
    const bad = xs.map(Math.fround).filter((f) => {
      const bits = float32ToBfloat16Bits(f);
      return bf16Bits(f) !== bits || !Object.is(roundBf16(f), bfloat16BitsToNumber(bits));
    });
    expect(bad).toEqual([]);
  });
});
