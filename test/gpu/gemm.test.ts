// On a GPU: gemm() of @tirx-ts/kernels over shapes of bench/gemm-sweep.ts's sweep (M ∈ {16, 128,
// 1024}, N and K from {4096, 14336}: the split-K, 64-row and 128-row configurations gemm()
// picks), bf16 and float16 in every layout, float8 e4m3 with per-tensor scales and with block
// scales (DeepSeek-V3's 1 × 128 / 128 × 128, large and odd sizes, split-K; A's scales by
// ld.global and, config.scaleLoad "tma", staged by TMA with each K-tile, "shared", B's also in shared
// memory per tile; config.overlap; config.cluster 2, B's K-tiles multicast to vertically
// adjacent tiles, on float8 and bf16), the bias + GELU
// epilogue, and odd sizes (m 17, n 40, k 24 in NN/NT/TN/TT; 333 × 517 × 999 with both operands
// padded to TMA's 16-byte pitch), each against the float64 reference of
// test/util/gemm-reference.ts on sampled rows and columns (float8 with the tensor cores' 13-bit alignment
// term per k32 wgmma, core's wgmmaFp8F32Bound, its accumulator the partial sum since the last
// promotion: per 128-wide K-tile by default, over all of K with fastAccum). A second call on the
// same inputs gives the same bytes (no atomics outside split-K: bytes compared only for the
// other configurations). gemm() with tune: every
// candidate timed on the GPU (zero-filled tensors of the m bucket's sizes), its choice checked.
// Skipped, with the reason printed, where no CUDA driver loads.
import { describe, expect, test } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cuda, cudaAvailable, gemm, gemmChoice, tensor } from "tirx-ts";
import { checkGemm, type GemmSpec } from "../util/gemm-reference.js";

const probe = cudaAvailable();
if (!probe.ok) console.log(`test/gpu/gemm: skipped, no CUDA driver (${probe.reason})`);

/** Rows sampled for the reference: the first, the last and three between. */
const sampled = (m: number): number[] =>
  [...new Set([0, 1, Math.floor(m / 3), Math.floor((2 * m) / 3), m - 1])].filter((r) => r < m);

/**
 * Columns sampled for the reference: all of them up to 1024, else the first and last 160 (the
 * edge tiles) and 704 spread between with a stride that is not a multiple of 8 (so that every
 * column of a wgmma fragment's 8-column group is met).
 */
const sampledCols = (n: number): number[] => {
  if (n <= 1024) return Array.from({ length: n }, (_, j) => j);
  const stride = Math.floor((n - 320) / 704) | 1;
  const mid = Array.from({ length: 704 }, (_, s) => 160 + s * stride).filter((j) => j < n - 160);
  const edges = Array.from({ length: 160 }, (_, j) => [j, n - 160 + j]).flat();
  return [...new Set([...edges, ...mid])].sort((x, y) => x - y);
};

const CASES: readonly (GemmSpec & { name: string })[] = [
  {
    name: "16 × 4096 × 4096 bf16 A·Bᵀ (split-K)",
    m: 16,
    n: 4096,
    k: 4096,
    dtype: "bfloat16",
    transB: true,
    outDtype: "bfloat16",
  },
  {
    name: "16 × 14336 × 4096 bf16 NN",
    m: 16,
    n: 14336,
    k: 4096,
    dtype: "bfloat16",
    outDtype: "bfloat16",
  },
  {
    name: "128 × 4096 × 14336 bf16 A·Bᵀ",
    m: 128,
    n: 4096,
    k: 14336,
    dtype: "bfloat16",
    transB: true,
    outDtype: "float32",
  },
  {
    name: "128 × 14336 × 4096 float16 TN",
    m: 128,
    n: 14336,
    k: 4096,
    dtype: "float16",
    transA: true,
    outDtype: "float16",
  },
  {
    name: "1024 × 4096 × 4096 bf16 TT",
    m: 1024,
    n: 4096,
    k: 4096,
    dtype: "bfloat16",
    transA: true,
    transB: true,
    outDtype: "bfloat16",
  },
  {
    name: "1024 × 14336 × 4096 bf16 bias + GELU",
    m: 1024,
    n: 14336,
    k: 4096,
    dtype: "bfloat16",
    transB: true,
    outDtype: "bfloat16",
    bias: "bfloat16",
    activation: "gelu",
  },
  {
    name: "1024 × 4096 × 4096 float8 e4m3 scaled",
    m: 1024,
    n: 4096,
    k: 4096,
    dtype: "float8_e4m3",
    transB: true,
    outDtype: "bfloat16",
    scales: [0.5, 0.25],
  },
  {
    name: "1024 × 4096 × 4096 float8 e4m3 scaled, fastAccum (one accumulator over K)",
    m: 1024,
    n: 4096,
    k: 4096,
    dtype: "float8_e4m3",
    transB: true,
    outDtype: "bfloat16",
    scales: [0.5, 0.25],
    fastAccum: true,
  },
  {
    name: "16 × 4096 × 14336 float8 e4m3 scaled (split-K)",
    m: 16,
    n: 4096,
    k: 14336,
    dtype: "float8_e4m3",
    transB: true,
    outDtype: "bfloat16",
    scales: [2, 0.125],
  },
  {
    name: "1024 × 4096 × 4096 float8 e4m3 block-scaled",
    m: 1024,
    n: 4096,
    k: 4096,
    dtype: "float8_e4m3",
    transB: true,
    outDtype: "bfloat16",
    blockScales: true,
  },
  {
    name: "16 × 4096 × 14336 float8 e4m3 block-scaled (split-K)",
    m: 16,
    n: 4096,
    k: 14336,
    dtype: "float8_e4m3",
    transB: true,
    outDtype: "bfloat16",
    blockScales: true,
  },
  {
    name: "odd 130 × 200 × 300 float8 e5m2 × e4m3 block-scaled, bn 192 (a partial K block, an n block across two tiles)",
    m: 130,
    n: 200,
    k: 300,
    dtype: "float8_e5m2",
    dtypeB: "float8_e4m3",
    transB: true,
    outDtype: "float32",
    blockScales: true,
    config: { bm: 128, bn: 192, stages: 4 },
  },
  {
    name: "1024 × 4096 × 4096 float8 e4m3 block-scaled, A's scales staged by TMA (scaleLoad tma), 128 × 192 tiles",
    m: 1024,
    n: 4096,
    k: 4096,
    dtype: "float8_e4m3",
    transB: true,
    outDtype: "bfloat16",
    blockScales: true,
    config: { bm: 128, bn: 192, stages: 5, scaleLoad: "tma" },
  },
  {
    name: "2048 × 4096 × 4096 float8 e4m3 block-scaled, B's scales in shared memory per tile (scaleLoad shared), 128 × 192 tiles: 352 tiles in 3 turns of the persistent grid",
    m: 2048,
    n: 4096,
    k: 4096,
    dtype: "float8_e4m3",
    transB: true,
    outDtype: "bfloat16",
    blockScales: true,
    config: { bm: 128, bn: 192, stages: 4, scaleLoad: "shared" },
  },
  {
    name: "odd 400 × 200 × 700 float8 e4m3 block-scaled, scaleLoad shared on 192-row tiles (A's scales transposed: 6 K blocks)",
    m: 400,
    n: 200,
    k: 700,
    dtype: "float8_e4m3",
    transB: true,
    outDtype: "float32",
    blockScales: true,
    config: { bm: 192, bn: 128, stages: 4, scaleLoad: "shared" },
  },
  {
    name: "16 × 4096 × 14336 float8 e4m3 block-scaled, scaleLoad tma, split-K 4 on 64-row tiles",
    m: 16,
    n: 4096,
    k: 14336,
    dtype: "float8_e4m3",
    transB: true,
    outDtype: "bfloat16",
    blockScales: true,
    config: { bm: 64, bn: 128, stages: 6, splitK: 4, scaleLoad: "tma" },
  },
  {
    name: "1024 × 4096 × 4096 float8 e4m3 block-scaled, overlap (a K-tile pair's first promotion beside the second's wgmmas), scaleLoad tma, 128 × 128 tiles",
    m: 1024,
    n: 4096,
    k: 4096,
    dtype: "float8_e4m3",
    transB: true,
    outDtype: "bfloat16",
    blockScales: true,
    config: { bm: 128, bn: 128, stages: 6, scaleLoad: "tma", overlap: true },
  },
  {
    name: "1024 × 4096 × 14336 float8 e4m3 scaled, overlap, 128 × 128 tiles",
    m: 1024,
    n: 4096,
    k: 14336,
    dtype: "float8_e4m3",
    transB: true,
    outDtype: "bfloat16",
    scales: [0.5, 2],
    config: { bm: 128, bn: 128, stages: 6, overlap: true },
  },
  {
    name: "odd 130 × 200 × 300 float8 e5m2 × e4m3 block-scaled, scaleLoad tma, bn 192 (rows past m zero-filled by TMA, a partial K block)",
    m: 130,
    n: 200,
    k: 300,
    dtype: "float8_e5m2",
    dtypeB: "float8_e4m3",
    transB: true,
    outDtype: "float32",
    blockScales: true,
    config: { bm: 128, bn: 192, stages: 4, scaleLoad: "tma" },
  },
  {
    name: "odd 130 × 200 × 300 float8 e4m3 block-scaled, gemm()'s choice, bias",
    m: 130,
    n: 200,
    k: 300,
    dtype: "float8_e4m3",
    transB: true,
    outDtype: "bfloat16",
    bias: "float32",
    blockScales: true,
  },
  {
    name: "odd 400 × 200 × 300 float8 e4m3 block-scaled on 192 × 128 tiles (three consumer warpgroups; rows 384 … 399 in the third tile row's first consumer)",
    m: 400,
    n: 200,
    k: 300,
    dtype: "float8_e4m3",
    transB: true,
    outDtype: "float32",
    blockScales: true,
    config: { bm: 192, bn: 128, stages: 4 },
  },
  {
    name: "2048 × 4096 × 4096 bf16 A·Bᵀ on 192 × 128 tiles, bias and GELU",
    m: 2048,
    n: 4096,
    k: 4096,
    dtype: "bfloat16",
    transB: true,
    outDtype: "bfloat16",
    bias: "float32",
    activation: "gelu",
    config: { bm: 192, bn: 128, stages: 5 },
  },
  {
    name: "1536 × 3072 × 512 bf16 A·Bᵀ on 128 × 192 tiles (12 tile rows: the grouped order's last group is short)",
    m: 1536,
    n: 3072,
    k: 512,
    dtype: "bfloat16",
    transB: true,
    outDtype: "bfloat16",
    config: { bm: 128, bn: 192, stages: 5 },
  },
  {
    name: "2048 × 4096 × 4096 float8 e4m3 scaled, cluster 2 (B's halves multicast to vertically adjacent tiles), 128 × 192 tiles",
    m: 2048,
    n: 4096,
    k: 4096,
    dtype: "float8_e4m3",
    transB: true,
    outDtype: "bfloat16",
    scales: [0.5, 2],
    config: { bm: 128, bn: 192, stages: 5, cluster: 2 },
  },
  {
    name: "odd 400 × 200 × 700 float8 e4m3 block-scaled, cluster 2, scaleLoad shared (4 tile rows of 128: the second pair's last rows past m)",
    m: 400,
    n: 200,
    k: 700,
    dtype: "float8_e4m3",
    transB: true,
    outDtype: "float32",
    blockScales: true,
    config: { bm: 128, bn: 192, stages: 4, cluster: 2, scaleLoad: "shared" },
  },
  {
    name: "odd 300 × 264 × 200 bf16 Aᵀ·B (both MN-major), cluster 2 on 128 × 256 tiles (3 tile rows: the last pair's second past m), split-K 2",
    m: 300,
    n: 264,
    k: 200,
    dtype: "bfloat16",
    transA: true,
    outDtype: "float32",
    config: { bm: 128, bn: 256, stages: 4, cluster: 2, splitK: 2 },
  },
  {
    name: "2048 × 4096 × 4096 bf16 A·Bᵀ, cluster 2 on 128 × 256 tiles, bias and GELU",
    m: 2048,
    n: 4096,
    k: 4096,
    dtype: "bfloat16",
    transB: true,
    outDtype: "bfloat16",
    bias: "float32",
    activation: "gelu",
    config: { bm: 128, bn: 256, stages: 4, cluster: 2 },
  },
  { name: "odd NN 17 × 40 × 24", m: 17, n: 40, k: 24, dtype: "bfloat16", outDtype: "float32" },
  {
    name: "odd NT 17 × 40 × 24, α·AB + β·C, SiLU",
    m: 17,
    n: 40,
    k: 24,
    dtype: "bfloat16",
    transB: true,
    outDtype: "float32",
    alpha: 0.5,
    beta: 2,
    c: "float32",
    activation: "silu",
  },
  {
    name: "odd TN 17 × 40 × 24, ReLU, residual",
    m: 17,
    n: 40,
    k: 24,
    dtype: "float16",
    transA: true,
    outDtype: "float16",
    activation: "relu",
    residual: "float16",
  },
  {
    name: "odd TT 17 × 40 × 24",
    m: 17,
    n: 40,
    k: 24,
    dtype: "bfloat16",
    transA: true,
    transB: true,
    outDtype: "bfloat16",
  },
  {
    name: "odd NN 333 × 517 × 999 (both padded)",
    m: 333,
    n: 517,
    k: 999,
    dtype: "bfloat16",
    outDtype: "float32",
  },
];

describe.skipIf(!probe.ok)("gemm() on the GPU against float64 on sampled rows", () => {
  for (const c of CASES) {
    test(
      c.name,
      () => {
        const dev = cuda(0);
        const rows = sampled(c.m);
        const fp8Gpu = c.dtype.startsWith("float8");
        const cols = sampledCols(c.n);
        const first = checkGemm(gemm, dev, c, { rows, cols, fp8Gpu, again: true });
        expect(first.ratio, first.at).toBeLessThanOrEqual(1);
        // The second call on the same inputs: the same bytes, except where split-K's atomics
        // reorder the sums.
        if (c.m > 64) {
          const bits = (t: typeof first.d) => new Uint32Array((t.toArray() as Float32Array).buffer);
          const [x, y] = [bits(first.d), bits(first.again!)];
          const diff = x.findIndex((v, e) => v !== y[e]);
          expect(diff, `element ${diff} differs between two calls`).toBe(-1);
        }
        for (const t of [first.d, first.again])
          (t as { dispose?: () => void } | undefined)?.dispose?.();
      },
      120_000,
    );
  }
});

describe.skipIf(!probe.ok)("gemm() tuned on the GPU", () => {
  test("tune times every candidate (split-K ones with their finishing kernel) and its choice is exact", () => {
    const dev = cuda(0);
    const dir = mkdtempSync(join(tmpdir(), "gemm-tune-"));
    try {
      const [m, n, k] = [100, 512, 8192];
      const a = tensor.zeros([m, k], "bfloat16", dev);
      const b = tensor.zeros([n, k], "bfloat16", dev);
      const tune = { cacheDir: dir, progress: false, warmup: 1, iters: 3, rounds: 1 } as const;
      const choice = gemmChoice(a, b, { transB: true, tune });
      expect(choice.source).toBe("tuned");
      expect(choice.measurements).toBe(choice.candidates!.length);
      expect(choice.candidates!.some((c) => (c.splitK ?? 1) > 1)).toBe(true);
      const spec: GemmSpec = {
        ...{ m, n, k, dtype: "bfloat16", transB: true, outDtype: "float32" },
        config: choice.config,
      };
      const r = checkGemm(gemm, dev, spec, { rows: sampled(m), cols: sampledCols(n) });
      expect(r.ratio, r.at).toBeLessThanOrEqual(1);
      for (const t of [a, b, r.d]) (t as { dispose?: () => void }).dispose?.();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
