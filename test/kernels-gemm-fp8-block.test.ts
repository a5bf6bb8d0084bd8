// gemm() with float8 block scales (DeepSeek-V3's fine-grained scaling: a's scales [m, ⌈k/128⌉],
// b's [⌈n/128⌉, ⌈k/128⌉]) on the simulated device, against the float64 reference of the same
// scaling (test/util/gemm-reference.ts: Σ_kb sA·sB·Σ_{x in kb} a·b, the bound with 3 float32
// roundings per K block): several K blocks and a partial last one (k 300: blocks of 128, 128,
// 44), a tile that straddles two n blocks (bn 192: columns 0 … 127 in block 0, 128 … 135 in
// block 1, past n the rest), two consumer warpgroups (rows 64 … 69 read their own scales) with
// split-K, and the shapes gemm() refuses (TX9002); scales that are not finite (±Inf in a real K
// block gives ±Inf exactly, also where the last split-K slice runs past K: its K-tiles there add
// nothing, not 0 · Inf = NaN); the block-scaled main kernel's PTX (sm_90a,
// assembled by ptxas): the scale loads per K block and the promotion's arithmetic.
import { describe, expect, test } from "vitest";
import { gemm, sim, tensor } from "tirx-ts";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { blockScaleShapes, makeGemm } from "@tirx-ts/kernels";
import { assembleLater } from "./util/ptxas-deferred.js";
import { checkGemm, type GemmSpec } from "./util/gemm-reference.js";
import { errorOf } from "./util/error-of.js";

const dev = sim();

describe("gemm() with float8 block scales on the simulator against float64", () => {
  const cases: readonly (GemmSpec & { name: string })[] = [
    {
      name: "e4m3, m 20, n 136, k 300, bn 192: a partial K block, a tile across two n blocks",
      ...{ m: 20, n: 136, k: 300, dtype: "float8_e4m3", transB: true, outDtype: "float32" },
      ...{ blockScales: true, config: { bm: 64, bn: 192, stages: 2 } },
    },
    {
      name: "e5m2 × e4m3, m 70 on two consumer warpgroups, split-K 2, bias → bfloat16",
      ...{ m: 70, n: 40, k: 300, dtype: "float8_e5m2", dtypeB: "float8_e4m3", transB: true },
      ...{ outDtype: "bfloat16", bias: "float32", blockScales: true },
      config: { bm: 128, bn: 64, stages: 2, splitK: 2 },
    },
    {
      name: "e4m3, m 140 on three consumer warpgroups (bm 192: rows 128 … 139 in the third), n 72 in two tiles",
      ...{ m: 140, n: 72, k: 300, dtype: "float8_e4m3", transB: true, outDtype: "bfloat16" },
      ...{ blockScales: true, config: { bm: 192, bn: 64, stages: 2 } },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const { ratio, at } = checkGemm(gemm, dev, c);
      expect(ratio, at).toBeLessThanOrEqual(1);
    });
  }

  test("scale tensors of other shapes are TX9002: scaleA's rank sets the kind, and the message names the shape each must have", () => {
    const a = tensor.zeros([20, 300], "float8_e4m3", dev);
    const b = tensor.zeros([136, 300], "float8_e4m3", dev);
    const f32 = (shape: number[]) => tensor.zeros(shape, "float32", dev);
    const both =
      "the scales are float32 [1] each (per tensor), or scaleA [20, 3] and scaleB [2, 3]";
    const e = errorOf(() => gemm(a, b, { transB: true, scaleA: f32([20, 3]), scaleB: f32([1]) }));
    expect([e.code, e.message]).toEqual([
      "TX9002",
      expect.stringContaining(
        `gemm: scaleB must be float32 [2, 3] (with a block scaleA [20, 3]), got float32 [1]; ${both}`,
      ),
    ]);
    expect(e.span?.file).toMatch(/kernels-gemm-fp8-block\.test\.ts$/);
    // A per-tensor scaleA with a block scaleB (a rank mismatch, once refused by a message that
    // named [1] both as the shape wanted and the shape got).
    const e1 = errorOf(() => gemm(a, b, { transB: true, scaleA: f32([1]), scaleB: f32([2, 3]) }));
    expect([e1.code, e1.message]).toEqual([
      "TX9002",
      expect.stringContaining(
        "gemm: scaleB must be float32 [1] (with a per-tensor scaleA [1]), got float32 [2, 3]",
      ),
    ]);
    const scaleAWant = "scaleA must be float32 [1] (per tensor) or [20, 3] (per 1 × 128 block";
    for (const shape of [[20, 2], [], [1, 1, 1]]) {
      const e2 = errorOf(() =>
        gemm(a, b, { transB: true, scaleA: f32(shape), scaleB: f32([2, 3]) }),
      );
      expect([e2.code, e2.message], `scaleA [${shape}]`).toEqual([
        "TX9002",
        expect.stringContaining(`${scaleAWant}: [m, ⌈k/128⌉]), got float32 [${shape.join(", ")}]`),
      ]);
    }
  });

  // Small integers and power-of-two scales: every product and sum is exact in float32, so D is
  // compared bit for bit with the float64 reference Σ_kb (sA·sB) · Σ_{x in kb} a·b. k 300 is 3
  // K-tiles; split-K 2 gives slices of 2, the second running past K (its K-tile 3 is TMA's zero
  // fill). A's scale of row 3 in K block 2, or B's of n block 0 in K block 2, is ±Inf.
  describe("scales that are not finite, split-K past K", () => {
    const m = 8;
    const n = 64;
    const k = 300;
    const kb = 3;
    /** Deterministic small integers (1 or 2 in [m, k] A and [n, k] B: every block sum > 0). */
    const ints = (len: number, seed: number) =>
      Float32Array.from({ length: len }, (_, i) => 1 + ((i * 7 + seed * 13 + ((i * i) % 5)) % 2));
    const pow2 = (len: number, seed: number) =>
      Float32Array.from({ length: len }, (_, i) => 2 ** (((i * 3 + seed) % 4) - 1));
    const reference = (A: Float32Array, B: Float32Array, sA: Float32Array, sB: Float32Array) =>
      Array.from({ length: m * n }, (_, e) => {
        const [r, c] = [Math.floor(e / n), e % n];
        let d = 0;
        for (let b = 0; b < kb; b++) {
          let sum = 0;
          for (let x = 128 * b; x < Math.min(k, 128 * b + 128); x++)
            sum += A[r * k + x]! * B[c * k + x]!;
          d += sA[r * kb + b]! * sB[Math.floor(c / 128) * kb + b]! * sum;
        }
        return d;
      });
    for (const [name, scaleLoad, which, inf] of [
      ["global: A's scale +Inf", "global", "a", Infinity],
      ["global: A's scale −Inf", "global", "a", -Infinity],
      ["tma: B's scale +Inf", "tma", "b", Infinity],
    ] as const) {
      test(name, () => {
        const A = ints(m * k, 1);
        const B = ints(n * k, 2);
        const sA = pow2(m * kb, 3);
        const sB = pow2(kb, 4);
        if (which === "a") sA[3 * kb + 2] = inf;
        else sB[2] = inf;
        const f8 = (x: Float32Array, shape: number[]) =>
          tensor(x, { shape, dtype: "float8_e4m3", device: dev });
        const f32 = (x: Float32Array, shape: number[]) =>
          tensor(x, { shape, dtype: "float32", device: dev });
        const d = gemm(f8(A, [m, k]), f8(B, [n, k]), {
          transB: true,
          outDtype: "float32",
          scaleA: f32(sA, [m, kb]),
          scaleB: f32(sB, [1, kb]),
          config: { bm: 64, bn: 64, stages: 2, splitK: 2, scaleLoad },
        });
        const want = reference(A, B, sA, sB);
        expect(want.filter((x) => x === inf).length).toBe(which === "a" ? n : m * n);
        expect(Array.from(d.toArray() as Float32Array)).toEqual(want);
      });
    }
  });

  test("block scales with 16-bit inputs are TX9001", () => {
    const base = { m: 16, n: 16, k: 32, dtype: "float16", scales: "block" } as const;
    const e = errorOf(() => makeGemm({ ...base, config: { bm: 64, bn: 64, stages: 2 } }));
    expect(e.code).toBe("TX9001");
    expect(e.message).toMatch(/scales of float8 inputs/);
  });

  test("the PTX: 3 scale loads per K block, two K-tiles ahead into alternate register sets, one fma per slot", () => {
    const lines = (fn: Parameters<typeof compileToPtx>[0]) =>
      compileToPtx(fn, { arch: "sm_90a" }).text.split("\n");
    const count = (ls: string[], re: RegExp) => ls.filter((l) => re.test(l)).length;
    const big = makeGemm({
      ...{ m: 4096, n: 4096, k: 4096, dtype: "float8_e4m3", transB: true, scales: "block" },
      config: { bm: 128, bn: 128, stages: 6 },
    });
    const ls = lines(big.main);
    assembleLater(ls.join("\n"), "sm_90a", "gemm fp8 block scales 128x128");
    const loop = ls.filter((l) => /ld\.global|wgmma\.mma_async/.test(l)).map((l) => l.trim());
    // The first two K blocks' 3 scales each before the K loop (sets 0 and 1); in the loop,
    // unrolled by 2, each K-tile's 4 wgmmas, then (after its promotion) its set refilled with the
    // scales of the K block two ahead.
    const wgmma = "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3";
    const ld = "ld.global.f32";
    expect(loop.map((l) => l.split(" ")[0])).toEqual([
      ...Array<string>(6).fill(ld),
      ...[...Array<string>(4).fill(wgmma), ...Array<string>(3).fill(ld)],
      ...[...Array<string>(4).fill(wgmma), ...Array<string>(3).fill(ld)],
    ]);
    // A 128-column tile lies in one 128-column block of B: sA·sB is two products (rows r0 and
    // r0 + 8), then one fma acc = tmp · (sA·sB) + acc for each of the 64 slots, in each of the
    // loop's two K-tiles.
    expect([count(ls, /mul\.(rn\.)?f32/), count(ls, /fma\.rn\.f32/)]).toEqual([2 * 2, 2 * 64]);
    // A 192-column tile spans two blocks of B, crossing into the second at column 128 or 64
    // (n0 a multiple of 192): four products sA·sB (two rows × two blocks) per K block, one
    // select per row for columns 64 … 127 (block nb0 or nb0 + 1 by n0 mod 128), then one
    // fully unrolled promotion (96 slots), with no branch and no per-column select.
    const odd = makeGemm({
      ...{ m: 130, n: 200, k: 300, pitchA: 304, pitchB: 304, dtype: "float8_e4m3" },
      ...{ transB: true, scales: "block", config: { bm: 128, bn: 192, stages: 4 } },
    });
    const ls2 = lines(odd.main);
    assembleLater(ls2.join("\n"), "sm_90a", "gemm fp8 block scales 128x192");
    // 3 K-tiles: the loop's second K-tile under a guard (an odd count); 4 scales per K block.
    expect(count(ls2, /ld\.global\.f32/)).toBe(4 * 4);
    // Per K-tile of the unrolled pair: 2 selects, 4 products, 96 fmas.
    expect([
      count(ls2, /selp\.f32/),
      count(ls2, /mul\.(rn\.)?f32/),
      count(ls2, /fma\.rn\.f32/),
    ]).toEqual([2 * 2, 2 * 4, 2 * 96]);
    expect(blockScaleShapes(130, 200, 300)).toEqual({ a: [130, 3], b: [2, 3] });
  });
});
