// The float8 conversions: T.ptx.cvt's packed forms and scalar casts, their PTX (snapshots, then
// ptxas for sm_90 and sm_89), the target contract (sm_89 + PTX 8.1; sm_80 refused), and a kernel
// on the simulator that packs float32 pairs, widens them back and checks every element against
// exact host math; T.tile.cta.cast into and out of float8 register tiles. The bit-for-bit
// differential cases are in test/diff/cases.ts.
import { describe, expect, it } from "vitest";
import { T } from "@tirx-ts/dsl";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { fp8Max, type Fp8Format } from "@tirx-ts/core";
import { compile, sim, tensor } from "tirx-ts";
import { assembleLater } from "./util/ptxas-deferred.js";
import { errorOf } from "./util/error-of.js";

/** Y[i] = f16 pair of the e4m3/e5m2 pair of (A[i], B[i]), and Z[i] = float8 cast of A[i]. */
function roundTrip(fmt: Fp8Format, n = 64) {
  const dt = fmt === "e4m3" ? "float8_e4m3" : "float8_e5m2";
  return T.function(
    `rt_${fmt}`,
    {
      A: T.Tensor([n], "float32"),
      B: T.Tensor([n], "float32"),
      Y: T.Tensor([n], "uint32"),
      Z: T.Tensor([n], dt),
    },
    (p) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: n }) });
      const i = T.let_("i", T.cuda.thread_idx("x"));
      const pair =
        fmt === "e4m3"
          ? T.ptx.cvt.e4m3x2_f32(p.A.get([i]), p.B.get([i]))
          : T.ptx.cvt.e5m2x2_f32(p.A.get([i]), p.B.get([i]));
      p.Y.set([i], fmt === "e4m3" ? T.ptx.cvt.f16x2_e4m3x2(pair) : T.ptx.cvt.f16x2_e5m2x2(pair));
      p.Z.set([i], p.A.get([i]).cast(dt));
    },
  );
}

const cvtLines = (text: string): string =>
  text
    .split("\n")
    .filter((l) => /^\s*(cvt\.|\.version|mov\.b32 \{)/.test(l))
    .map((l) => l.trim())
    .join("\n");

/** x rounded to nearest even among the finite values of `fmt`, saturating: the host reference. */
function satRound(x: number, fmt: Fp8Format): number {
  if (x !== x) return NaN;
  const [p, emin] = fmt === "e4m3" ? [4, -6] : [3, -14];
  const max = fp8Max(fmt);
  if (Math.abs(x) >= max) return Math.sign(x) * max;
  if (x === 0) return x;
  const e = Math.max(Math.floor(Math.log2(Math.abs(x))), emin);
  const q = 2 ** (e - (p - 1));
  const m = Math.abs(x) / q;
  const f = Math.floor(m);
  const r = m - f > 0.5 || (m - f === 0.5 && f % 2 === 1) ? f + 1 : f;
  const y = Math.min(r * q, max);
  return x < 0 ? -y : y;
}

describe("float8 conversions", () => {
  it("PTX: packed cvt forms and the scalar cast; version 8.1; assembles for sm_90 and sm_89", () => {
    const m90 = compileToPtx(roundTrip("e4m3"), { arch: "sm_90" });
    expect(cvtLines(m90.text)).toMatchInlineSnapshot(`
      ".version 8.1
      cvt.rn.satfinite.e4m3x2.f32 %rs1, %f1, %f2;
      cvt.rn.f16x2.e4m3x2 %r2, %rs1;
      cvt.rn.satfinite.e4m3x2.f32 %rs2, %f3, %f3;"
    `);
    assembleLater(m90.text, "sm_90", "fp8_rt_e4m3");
    const m89 = compileToPtx(roundTrip("e5m2"), { arch: "sm_89" });
    assembleLater(m89.text, "sm_89", "fp8_rt_e5m2");
  });

  it("refuses sm_80 (TX5006 naming sm_89), a bfloat16 pair form (TX2005) and float64 → float8 (TX1007)", () => {
    const low = errorOf(() => compileToPtx(roundTrip("e4m3"), { arch: "sm_80" }));
    expect(low.code).toBe("TX5006");
    expect(low.message).toMatch(/sm_89/);
    const bf = errorOf(() => (T.ptx.cvt as unknown as Record<string, unknown>)["e4m3x2_bf16x2"]);
    expect([bf.code, /float32/.test(bf.message)]).toEqual(["TX2005", true]);
    const f64 = errorOf(() =>
      T.function("f64", { X: T.Tensor([1], "float64"), Y: T.Tensor([1], "float8_e4m3") }, (p) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
        p.Y.set([0], p.X.get([0]).cast("float8_e4m3"));
      }),
    );
    expect(f64.code).toBe("TX1007");
  });

  it.each(["e4m3", "e5m2"] as const)(
    "%s on the simulator: pairs round to nearest even and saturate; the cast matches",
    (fmt) => {
      const n = 64;
      const max = fp8Max(fmt);
      // Ties between neighbours, saturation edges, infinities, NaN, zeros, subnormals.
      const a = Float32Array.from({ length: n }, (_, i) =>
        i === 0 ? NaN : i === 1 ? Infinity : i === 2 ? -max * 1.1 : ((i - 32) * max) / 24,
      );
      const b = Float32Array.from({ length: n }, (_, i) =>
        i % 3 === 0 ? -0 : ((i % 7) + 0.5) * 2 ** (fmt === "e4m3" ? -9 : -16),
      );
      const dt = fmt === "e4m3" ? "float8_e4m3" : "float8_e5m2";
      const run = compile(roundTrip(fmt, n), { target: "cuda", arch: "sm_90" });
      using A = tensor(a, { shape: [n], dtype: "float32", device: sim() });
      using B = tensor(b, { shape: [n], dtype: "float32", device: sim() });
      using Y = tensor.zeros([n], "uint32", sim());
      using Z = tensor.zeros([n], dt, sim());
      run(A, B, Y, Z);
      using H = tensor(Y.toBytes(), { shape: [2 * n], dtype: "float16", device: sim() });
      const halves = H.toArray() as Float32Array;
      const z = Z.toArray() as Float32Array;
      for (let i = 0; i < n; i++) {
        const [wa, wb] = [satRound(a[i]!, fmt), satRound(b[i]!, fmt)];
        expect([i, halves[2 * i + 1], halves[2 * i], z[i]]).toEqual([i, wa, wb, wa]);
      }
    },
  );

  it("T.tile.cta.cast into and out of float8 register tiles, with vector copies of float8", () => {
    const L = () => T.TileLayout(T.S([2, 64, 4], ["4@m", "1@tid", "1@m"]));
    const fn = T.function(
      "tile_cast_fp8",
      {
        X: T.Tensor([512], "float32"),
        Y: T.Tensor([512], "float8_e5m2"),
        Z: T.Tensor([512], "float32"),
      },
      ({ X, Y, Z }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const r = T.alloc_local([512], "float32", { layout: L() });
        const q = T.alloc_local([512], "float8_e5m2", { layout: L() });
        const w = T.alloc_local([512], "float32", { layout: L() });
        T.tile.cta.copy(r, X);
        T.tile.cta.cast(q, r);
        T.tile.cta.copy(Y, q);
        T.tile.cta.cast(w, q);
        T.tile.cta.copy(Z, w);
      },
    );
    const x = Float32Array.from({ length: 512 }, (_, i) =>
      i === 7 ? NaN : i === 9 ? -Infinity : (i - 256) * 311.5 * (i % 3 === 0 ? 2 ** -20 : 1),
    );
    const run = compile(fn, { target: "cuda", arch: "sm_90" });
    using X = tensor(x, { shape: [512], dtype: "float32", device: sim() });
    using Y = tensor.zeros([512], "float8_e5m2", sim());
    using Z = tensor.zeros([512], "float32", sim());
    run(X, Y, Z);
    const want = Array.from(x, (v) => satRound(v, "e5m2"));
    expect(Array.from(Y.toArray() as Float32Array)).toEqual(want);
    expect(Array.from(Z.toArray() as Float32Array)).toEqual(want);
    const text = compileToPtx(fn, { arch: "sm_90" }).text;
    // Four float8 elements of a thread travel as one 32-bit store.
    expect(text).toMatch(/st\.global\.u32 /);
    assembleLater(text, "sm_90", "tile_cast_fp8");
  });

  it("float8 literals: raw bits in a .b16 move, stored as one byte; beyond max finite is TX1015", () => {
    const fn = T.function("fp8_literal", { Y: T.Tensor([2], "float8_e4m3") }, ({ Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      Y.set([0], T.float8_e4m3(1.5));
      Y.set([1], T.float8_e4m3(-448));
    });
    const text = compileToPtx(fn, { arch: "sm_90" }).text;
    expect(text).toMatch(/mov\.b16 %rs\d+, 0x3C;/);
    const run = compile(fn, { target: "cuda", arch: "sm_90" });
    using Y = tensor.zeros([2], "float8_e4m3", sim());
    run(Y);
    expect(Array.from(Y.toBytes())).toEqual([0x3c, 0xfe]);
    expect(errorOf(() => T.float8_e4m3(465)).code).toBe("TX1015");
    expect(errorOf(() => T.float8_e5m2(-61440)).code).toBe("TX1015");
  });
});
