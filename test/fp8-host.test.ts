// float8_e4m3 / float8_e5m2 on the host: the 256 codes decode to the OCP formats' values, every
// value encodes back to its code, and the encoder (round to nearest even, satfinite) matches a
// brute-force reference that picks the nearest finite code (ties to the even code) over all 256.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  decodeHost,
  encodeHost,
  fp8Bits,
  fp8Max,
  fp8Value,
  isTirxError,
  type DType,
  type Fp8Format,
} from "@tirx-ts/core";
import { sim, tensor } from "tirx-ts";

const FORMATS: readonly [Fp8Format, DType][] = [
  ["e4m3", "float8_e4m3"],
  ["e5m2", "float8_e5m2"],
];

/** The value of `code` read from the OCP definition (sign, biased exponent, mantissa). */
function ocpValue(code: number, fmt: Fp8Format): number {
  const [eb, mb, bias] = fmt === "e4m3" ? [4, 3, 7] : [5, 2, 15];
  const s = code & 0x80 ? -1 : 1;
  const e = (code >> mb) & ((1 << eb) - 1);
  const m = code & ((1 << mb) - 1);
  const top = (1 << eb) - 1;
  if (fmt === "e4m3" && e === top && m === 7) return NaN;
  if (fmt === "e5m2" && e === top) return m === 0 ? s * Infinity : NaN;
  return e === 0 ? s * m * 2 ** (1 - bias - mb) : s * (1 + m / (1 << mb)) * 2 ** (e - bias);
}

/** Nearest finite code to `x` (ties to the even code, the sign of zero from x); NaN → NaN. */
function nearestCode(x: number, fmt: Fp8Format): number | "nan" {
  if (x !== x) return "nan";
  let best = -1;
  let bestD = Infinity;
  for (let c = 0; c < 256; c++) {
    const v = ocpValue(c, fmt);
    if (!Number.isFinite(v)) continue;
    // Only codes of x's sign (rounding keeps the sign; far beyond the range float64 distances tie).
    if (c >= 0x80 !== (x < 0 || Object.is(x, -0))) continue;
    // satfinite: beyond the largest finite value (inf included) the largest finite value.
    const d = Math.abs(x) >= fp8Max(fmt) ? fp8Max(fmt) - Math.abs(v) : Math.abs(v - x);
    if (d < bestD || (d === bestD && (c & 1) === 0)) {
      best = c;
      bestD = d;
    }
  }
  return best;
}

describe("float8 host encode and decode", () => {
  it.each(FORMATS)("%s: the 256 codes decode to the OCP values and encode back", (fmt, dt) => {
    const codes = Uint8Array.from({ length: 256 }, (_, i) => i);
    const values = decodeHost(codes, dt) as Float32Array;
    let nans = 0;
    for (let c = 0; c < 256; c++) {
      const want = ocpValue(c, fmt);
      expect(
        Object.is(values[c], Math.fround(want)) || (want !== want && values[c] !== values[c]),
      ).toBe(true);
      expect(
        Object.is(fp8Value(c, fmt), want) ||
          (want !== want && fp8Value(c, fmt) !== fp8Value(c, fmt)),
      ).toBe(true);
      if (want !== want) nans++;
      else if (Number.isFinite(want)) expect(fp8Bits(want, fmt)).toBe(c);
    }
    expect(nans).toBe(fmt === "e4m3" ? 2 : 6);
    expect(fp8Max(fmt)).toBe(fmt === "e4m3" ? 448 : 57344);
  });

  it.each(FORMATS)(
    "%s: edge values: NaN, ±inf and overflow saturate, ties go to even",
    (fmt, dt) => {
      const max = fp8Max(fmt);
      const ulpAtMax = fmt === "e4m3" ? 32 : 8192;
      const tiny = fmt === "e4m3" ? 2 ** -9 : 2 ** -16;
      const xs = [NaN, Infinity, -Infinity, 0, -0, max, -max, max + ulpAtMax / 2, 1e30, -1e30];
      xs.push(
        tiny,
        tiny / 2,
        (tiny * 3) / 2,
        -tiny / 2,
        tiny / 4,
        1 + 2 ** -(fmt === "e4m3" ? 4 : 3),
      );
      const bytes = encodeHost(Float32Array.from(xs), dt, xs.length);
      xs.forEach((x, i) => {
        const want = nearestCode(Math.fround(x), fmt);
        if (want === "nan") expect(fp8Value(bytes[i]!, fmt)).toBeNaN();
        else expect([x, bytes[i]]).toEqual([x, want]);
      });
    },
  );

  it.each(FORMATS)(
    "%s: random float32 values encode to the nearest code (fast-check)",
    (fmt, dt) => {
      fc.assert(
        fc.property(
          fc.float({ noDefaultInfinity: false, noNaN: false }),
          fc.float({ min: -600, max: 600, noNaN: true }),
          (wide, near) => {
            for (const x of [wide, near, near * 2 ** -10]) {
              const f = Math.fround(x);
              const got = encodeHost([f], dt, 1)[0]!;
              const want = nearestCode(f, fmt);
              if (want === "nan") expect(fp8Value(got, fmt)).toBeNaN();
              else expect(got).toBe(want);
            }
          },
        ),
        { numRuns: 300, seed: fmt === "e4m3" ? 8 : 9 },
      );
    },
  );

  it.each(FORMATS)(
    "%s: at every midpoint of adjacent codes, and one float64 and one float32 ulp either side, fp8Bits and encodeHost give the nearest code",
    (fmt, dt) => {
      const up = (x: number, by: "f64" | "f32", dir: 1 | -1): number => {
        // The next float64 (or float32) from x > 0 towards dir · ∞ (the midpoints, of at most 5
        // significant bits, are float32 values).
        if (by === "f32") {
          const f = new Float32Array([x]);
          const u = new Uint32Array(f.buffer);
          u[0] = u[0]! + dir;
          return f[0]!;
        }
        const f = new Float64Array([x]);
        const u = new BigUint64Array(f.buffer);
        u[0] = u[0]! + BigInt(dir);
        return f[0]!;
      };
      const finite = Array.from({ length: 0x80 }, (_, c) => fp8Value(c, fmt)).filter((v) =>
        Number.isFinite(v),
      );
      const xs: number[] = [];
      for (let i = 0; i + 1 < finite.length; i++) {
        const mid = (finite[i]! + finite[i + 1]!) / 2;
        xs.push(mid);
        for (const by of ["f64", "f32"] as const) {
          if (mid > 0) xs.push(up(mid, by, 1), up(mid, by, -1));
        }
      }
      // Half the smallest subnormal, and past the largest finite value by half an ulp.
      const max = fp8Max(fmt);
      xs.push(finite[1]! / 2, max + (max - finite.at(-2)!) / 2, max * 2, 2 ** 300, 2 ** -1074);
      const all = xs.flatMap((x) => [x, -x]);
      const bytes = encodeHost(Float64Array.from(all), dt, all.length);
      all.forEach((x, i) => {
        const want = nearestCode(x, fmt);
        expect([x, fp8Bits(x, fmt), bytes[i]]).toEqual([x, want, want]);
      });
    },
  );

  it.each(FORMATS)(
    "%s: random float64 values (any exponent, and near the format's range) encode to the nearest code (fast-check)",
    (fmt) => {
      fc.assert(
        fc.property(
          fc.double({ noDefaultInfinity: false, noNaN: false }),
          fc.double({ min: -70000, max: 70000, noNaN: true }),
          (wide, near) => {
            for (const x of [wide, near, near * 2 ** -12, near * 2 ** -20]) {
              const want = nearestCode(x, fmt);
              const got = fp8Bits(x, fmt);
              if (want === "nan") expect(got).toBe(0x7f);
              else expect([x, got]).toEqual([x, want]);
            }
          },
        ),
        { numRuns: 400, seed: fmt === "e4m3" ? 18 : 19 },
      );
    },
  );

  it("tensor(Float32Array, { dtype: float8 }) round-trips through the simulator", () => {
    const xs = Float32Array.from([0.5, -3, 448, 1000, NaN, -0]);
    using t = tensor(xs, { shape: [6], dtype: "float8_e4m3", device: sim() });
    const back = t.toArray() as Float32Array;
    expect(Array.from(back.slice(0, 4))).toEqual([0.5, -3, 448, 448]);
    expect(back[4]).toBeNaN();
    expect(Object.is(back[5], -0)).toBe(true);
    // A Uint8Array of one byte per element is the raw codes.
    using raw = tensor(Uint8Array.from([0x7f, 0xff, 0x38]), {
      shape: [3],
      dtype: "float8_e5m2",
      device: sim(),
    });
    expect(Array.from(raw.toBytes())).toEqual([0x7f, 0xff, 0x38]);
  });

  it("refuses arithmetic on float8 and float64 → float8 (TX1007)", async () => {
    const { T } = await import("@tirx-ts/dsl");
    const codes: string[] = [];
    for (const body of [
      (x: ReturnType<typeof T.float8_e4m3>) => x.add(x),
      (x: ReturnType<typeof T.float8_e4m3>) => x.lt(x),
      (x: ReturnType<typeof T.float8_e4m3>) => x.cast("float64").cast("float8_e5m2"),
    ]) {
      try {
        T.function("f", { X: T.Tensor([4], "float8_e4m3") }, (p) => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 4 }) });
          body(p.X.get([0]) as never);
        });
      } catch (e) {
        if (isTirxError(e)) codes.push(e.code);
      }
    }
    expect(codes).toEqual(["TX1007", "TX1007", "TX1007"]);
  });
});
