// T.tile.<scope>.cast from float32 to float16 / bfloat16 two slots at a time (core
// tile/cast-pair.ts): a register tile in dst's layout whose stride-1 m iter has an even extent
// lowers to cvt.rn.{f16x2,bf16x2}.f32 per pair of adjacent slots (PTX ISA, cvt: the first source
// into the upper half) and the pair's halves, and its results on the simulated device are the
// element-wise cast's bit for bit (each element rounded once to nearest even) on random float32
// bit patterns and edge values (NaN, ±inf, ±0, float32 and 16-bit subnormals, rounding ties,
// values past float16's and bfloat16's largest finite). Every other cast (a broadcast or scalar
// src, an odd extent, other dtypes) keeps one scalar cvt per slot. Every kernel's PTX goes
// through ptxas at sm_80, the oldest target (the pair cvt's sm).
import { describe, expect, it } from "vitest";
import { T, compile, explainTile, sim, tensor, type PrimFunc } from "tirx-ts";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";
import {
  accCast,
  castInputs,
  dLayout,
  halfCode,
  runAccCast,
  type Half,
} from "./util/cast-pair-kernels.js";

const HALVES: readonly Half[] = ["float16", "bfloat16"];
const SUFFIX = { float16: "f16", bfloat16: "bf16" } as const;
const dev = sim();

/** The PTX at sm_80, queued for ptxas at the end of the file. */
function ptx(fn: PrimFunc): string {
  const text = compileToPtx(fn, { arch: "sm_80" }).text;
  assembleLater(text, "sm_80", fn.name);
  return text;
}

/** Number of matches of `re` (global) in `text`. */
const count = (text: string, re: RegExp): number => text.match(re)?.length ?? 0;

/** The 16-bit codes of a 16-bit tensor's bytes. */
const codes = (bytes: Uint8Array): number[] => Array.from(new Uint16Array(bytes.buffer.slice(0)));

describe("T.tile.wg.cast float32 → 16-bit of a wgmma accumulator tile: pairs", () => {
  it.each(HALVES)("%s: cvt.rn.*x2.f32 per pair, no scalar cvt; explainTile says so", (dt) => {
    const N = 32;
    const fn = accCast(dt, N);
    const text = ptx(fn);
    const s = SUFFIX[dt];
    // 16 slots a thread: 8 pairs from the tile cast, 16 scalar cvts from the reference loop.
    expect(count(text, new RegExp(`cvt\\.rn\\.${s}x2\\.f32 `, "g"))).toBe(8);
    expect(count(text, new RegExp(`cvt\\.rn\\.${s}\\.f32 `, "g"))).toBe(16);
    // hi (slot 2k + 1) is the first source, lo (slot 2k) the second.
    expect(text).toMatch(new RegExp(`cvt\\.rn\\.${s}x2\\.f32 %r\\d+, %f2, %f1;`));
    const cast = explainTile(fn).find((l) => l.includes("T.tile.wg.cast"))!;
    expect(cast).toMatch(
      new RegExp(`per-thread loop, 16 slots as 8 pairs of adjacent slots \\(cvt\\.rn\\.${s}x2`),
    );
  });

  it.each(HALVES)(
    "%s: on the simulator the pairs are the scalar cast's bits on edge and random inputs",
    (dt) => {
      const N = 64;
      const x = castInputs(64 * N, dt === "float16" ? 11 : 12);
      const o = runAccCast(dev, dt, N, x);
      const bad: string[] = [];
      for (let i = 0; i < 64 * N; i++) {
        const [pair, scalar, want] = [o[i]!, o[64 * N + i]!, halfCode(x[i]!, dt)];
        if (pair !== scalar || pair !== want) {
          bad.push(`[${i}] x=${x[i]}: pair ${pair.toString(16)}, scalar ${scalar.toString(16)}`);
        }
      }
      expect(bad.slice(0, 10)).toEqual([]);
      // -0 keeps its sign through the pair (x[1] = -0, and a random pattern or two).
      expect(o[1]).toBe(0x8000);
    },
  );

  it("a thread-scope tile (default row-major layout) pairs along its contiguous slots", () => {
    const fn = T.function(
      "thread_cast_pairs",
      { X: T.Tensor([128, 6], "float32"), Y: T.Tensor([128, 6], "bfloat16") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const t = T.cuda.thread_idx("x");
        const s = T.alloc_local([6], "float32", { name: "s" });
        const p = T.alloc_local([6], "bfloat16", { name: "p" });
        for (const i of T.unroll(6)) s.set([i], X.get([t, i]));
        T.tile.cast(p, s);
        for (const i of T.unroll(6)) Y.set([t, i], p.get([i]));
      },
    );
    const text = ptx(fn);
    expect(count(text, /cvt\.rn\.bf16x2\.f32 /g)).toBe(3);
    expect(text).not.toMatch(/cvt\.rn\.bf16\.f32 /);
    const x = castInputs(128 * 6, 13);
    using X = tensor(x, { shape: [128, 6], dtype: "float32", device: dev });
    using Y = tensor.zeros([128, 6], "bfloat16", dev);
    compile(fn, { target: "cuda" })(X, Y);
    expect(codes(Y.toBytes())).toEqual(Array.from(x, (v) => halfCode(v, "bfloat16")));
  });
});

describe("the casts that keep one scalar cvt per slot", () => {
  it("an odd extent on the stride-1 m iter (3 slots a lane): scalar, the same bits", () => {
    const L = () => T.TileLayout(T.S([3, 32], [1, "1@laneid"]));
    const fn = T.function(
      "odd_cast",
      { X: T.Tensor([3, 32], "float32"), Y: T.Tensor([3, 32], "float16") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const s = T.alloc_local([3, 32], "float32", { layout: L() });
        const p = T.alloc_local([3, 32], "float16", { layout: L() });
        T.tile.warp.copy(s, X);
        T.tile.warp.cast(p, s);
        T.tile.warp.copy(Y, p);
      },
    );
    const text = ptx(fn);
    expect(text).not.toMatch(/x2\.f32/);
    expect(count(text, /cvt\.rn\.f16\.f32 /g)).toBe(3);
    expect(explainTile(fn).find((l) => l.includes(".cast →"))).toMatch(
      /per-thread loop, 3 slots \(/,
    );
    const x = castInputs(96, 14);
    using X = tensor(x, { shape: [3, 32], dtype: "float32", device: dev });
    using Y = tensor.zeros([3, 32], "float16", dev);
    compile(fn, { target: "cuda" })(X, Y);
    expect(codes(Y.toBytes())).toEqual(Array.from(x, (v) => halfCode(v, "float16")));
  });

  /** A wg kernel casting `src()` (built in the kernel) into a bfloat16 accumulator tile. */
  const castInto = (name: string, src: () => Parameters<typeof T.tile.wg.cast>[1]) =>
    T.function(name, { O: T.Tensor([64, 16], "bfloat16") }, ({ O }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
      const P = T.alloc_local([64, 16], "bfloat16", { layout: dLayout(16) });
      T.tile.wg.cast(P, src());
      T.tile.wg.copy(O, P);
    });

  it("a broadcast src (a per-row [64, 1] float32 tile) and a scalar src: scalar", () => {
    const rows = castInto("broadcast_cast", () => {
      const r = T.alloc_local([64, 1], "float32", {
        layout: T.TileLayout("S[(4, 2, 8) : (32@tid_in_wg, 1, 4@tid_in_wg)] + R[4 : 1@tid_in_wg]"),
      });
      T.tile.wg.fill(r, T.cuda.thread_idx("x").cast("float32"));
      return r;
    });
    const scalar = castInto("scalar_cast", () => T.cuda.thread_idx("x").cast("float32"));
    for (const fn of [rows, scalar]) {
      const text = ptx(fn);
      expect(text).not.toMatch(/x2\.f32/);
      expect(text).toMatch(/cvt\.rn\.bf16\.f32 /);
    }
  });

  it("other dtypes: float16 → float32, float32 → float8, float16 → bfloat16: scalar", () => {
    const cases = [
      ["float16", "float32", /cvt\.f32\.f16 /],
      ["float32", "float8_e4m3", /cvt\.rn\.satfinite\.e4m3x2\.f32 /],
      ["float16", "bfloat16", /cvt\.rn\.bf16\.f16 |cvt\.f32\.f16 /],
    ] as const;
    for (const [from, to, re] of cases) {
      const fn = T.function(
        `cast_${from}_${to}`,
        { X: T.Tensor([64, 16], from), O: T.Tensor([64, 16], to) },
        ({ X, O }) => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }), arch: "sm_90" });
          const s = T.alloc_local([64, 16], from, { layout: dLayout(16) });
          const d = T.alloc_local([64, 16], to, { layout: dLayout(16) });
          T.tile.wg.copy(s, X);
          T.tile.wg.cast(d, s);
          T.tile.wg.copy(O, d);
        },
      );
      const text = compileToPtx(fn, { arch: "sm_90" }).text;
      assembleLater(text, "sm_90", fn.name);
      expect(text, `${from} → ${to}`).not.toMatch(/cvt\.rn\.(bf16|f16)x2\.f32/);
      expect(text, `${from} → ${to}`).toMatch(re);
      expect(explainTile(fn).find((l) => l.includes(".cast →"))).not.toMatch(/pairs/);
    }
  });
});
