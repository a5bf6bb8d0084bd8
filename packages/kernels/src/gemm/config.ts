// The tile configurations of the Hopper GEMM (makeGemm) as data: a record of tile sizes, ring
// depth and split-K, the candidates the library call picks from (GEMM_CONFIGS, first match
// wins), and the picker; the tuning key of gemm() (gemmTuneKey, m bucketed by gemmRowsBucket) and
// the shipped tuned choices (GEMM_TUNED_DEFAULTS). Every candidate builds a correct kernel for
// every size (the simulator tests run each of them); the table only chooses which is fast.
import { tuneKeyText } from "@tirx-ts/runtime";
import { configError } from "../attention/options.js";
import type { GemmSizes } from "./kernel.js";
import type { GemmConfig } from "./tile.js";

export type { GemmConfig, GemmScaleLoad } from "./tile.js";

/** The sizes a configuration's `when` reads: D is m × n, the reduction k, and the input bytes. */
export interface GemmShape {
  readonly m: number;
  readonly n: number;
  readonly k: number;
  /** Bytes of an input element: 2 (float16, bfloat16) or 1 (float8). */
  readonly inBytes: 1 | 2;
  /**
   * Float8 whose K-tiles are summed in a second float32 register tile and promoted (block
   * scales, or float8 without makeGemm's `fastAccum`): bn / 2 more registers per thread.
   * Default false.
   */
  readonly promoted?: boolean;
  /**
   * B is K-major (stored [n, k], makeGemm's transB) and has no block scales: tiles of any
   * multiple of 32 columns build (makeGemm), not only multiples of 64. Default false.
   */
  readonly kMajorB?: boolean;
  /**
   * Float8 with block scales (makeGemm's `scales: "block"`): tuning also tries each candidate
   * with `scaleLoad: "tma"` and with "shared" (GemmConfig). Default false.
   */
  readonly blockScales?: boolean;
}

/** One row of {@link GEMM_CONFIGS}. */
export interface GemmConfigEntry {
  /** A name for messages and the bench's table. */
  readonly name: string;
  /** The shapes the row serves; absent: every shape. */
  readonly when?: (s: GemmShape) => boolean;
  readonly config: GemmConfig;
  /** Why the row is there. */
  readonly note: string;
}

/** D's tiles of a configuration for m × n. */
export function gemmTiles(s: { m: number; n: number }, c: GemmConfig): number {
  return Math.ceil(s.m / c.bm) * Math.ceil(s.n / c.bn);
}

/**
 * The candidate configurations, tried in order (the first whose `when` holds is taken; the last
 * has none). The large-shape row is examples/tile/gemm_hopper.ts's (128 × 256 tiles, 4 stages:
 * 0.93–1.03× cuBLAS at 4096³ and 8192³ bf16, bench/results/tile-layer-2026-12-02.md); the small-M
 * rows are first guesses, to be measured by bench/gemm-sweep.ts: with m ≤ 64 one consumer
 * warpgroup (bm 64) wastes no wgmma rows, and when D has fewer 64 × 128 tiles than a quarter of
 * the GPU's 132 SMs the K loop is split in 4 (each slice keeps ≥ 16 K-tiles).
 */
export const GEMM_CONFIGS: readonly GemmConfigEntry[] = [
  {
    name: "m64-splitk4",
    when: (s) => s.m <= 64 && Math.ceil(s.n / 128) <= 33 && s.k * s.inBytes >= 4 * 16 * 128,
    config: { bm: 64, bn: 128, stages: 6, splitK: 4 },
    note: "small M, few tiles, long K: 4 CTAs per 64 × 128 tile, float32 partials reduced by red.global.add",
  },
  {
    name: "m64",
    when: (s) => s.m <= 64,
    config: { bm: 64, bn: 128, stages: 6 },
    note: "small M: one consumer warpgroup per 64 × 128 tile",
  },
  {
    name: "m128-n128",
    when: (s) => s.m <= 128 || gemmTiles(s, { bm: 128, bn: 256, stages: 4 }) < 66,
    config: { bm: 128, bn: 128, stages: 6 },
    note: "few 128 × 256 tiles: 128 × 128 tiles give twice the CTAs",
  },
  {
    name: "promoted-m128-n128",
    when: (s) => s.promoted === true,
    config: { bm: 128, bn: 128, stages: 6 },
    note: "float8 promoted per K-tile (block scales, or without fastAccum): the K-tile's second float32 register tile beside 128 × 256's 128 accumulators would spill; 128 × 128 tiles",
  },
  {
    name: "m128-n256",
    config: { bm: 128, bn: 256, stages: 4 },
    note: "examples/tile/gemm_hopper.ts: 128 × 256 tiles, 4 stages, persistent, grouped order",
  },
];

/**
 * Configurations only tuning tries, beside {@link GEMM_CONFIGS}' rows (no shape picks them
 * untuned): 128 × 128 tiles split in 2 over K (a few large tiles over a long K: 128 rows of D at
 * k 14336), 128 × 192 tiles (between 128 × 128's CTA count and 128 × 256's operand reuse),
 * 64 × 256 tiles (small m with one consumer warpgroup and half the CTAs of 64 × 128), 192 × 128
 * tiles (three consumer warpgroups: another wave count, and three warpgroups to share the tensor
 * cores while one promotes), and, with a
 * K-major B, 128 × 224 and 128 × 160 tiles (wave counts of 132 CTAs that 64-column steps miss);
 * and 128 × 192 and 128 × 128 (overlap) with 4 stages, the block-scaled float8 winners on the
 * H200 (fewer stages were faster there; why was not established: less shared memory leaves the
 * SM's L1 more room for the scale loads, but "tma" scales, read from shared memory, gained too);
 * and 128 × 256, 128 × 192 and 128 × 192 × 4 in clusters of 2 (B's K-tiles multicast to a pair
 * of vertically adjacent tiles: GemmConfig's `cluster`; tuning times them against their
 * cluster-1 rows, and leaves them out with an MN-major B of 192 columns. On the H200 with float8 at
 * m 8192, per-tensor 128 × 192 × 5 in clusters of 2 ran within ±2.5% of cluster 1 and block-scaled
 * 128 × 192 × 4 1-5% slower: bench/results/gemm-fp8-block-2026-12-05b.md).
 * Each builds a correct kernel at every size it is tried at (test/kernels-gemm-persistent.test.ts
 * runs each on the simulator at an odd size; of rows that differ only in ring depth, the first). For
 * block-scaled float8, tuning tries every row of both tables twice more, with `scaleLoad: "tma"`
 * and with "shared" (gemm.ts's gemmTuneCandidates).
 */
export const GEMM_TUNE_EXTRA: readonly GemmConfigEntry[] = [
  {
    name: "m128-n128-splitk2",
    config: { bm: 128, bn: 128, stages: 6, splitK: 2 },
    note: "few 128 × 128 tiles, long K: 2 CTAs per tile",
  },
  {
    name: "m128-n192",
    config: { bm: 128, bn: 192, stages: 5 },
    note: "128 × 192 tiles, 5 stages (200 KiB)",
  },
  {
    name: "m64-n256",
    config: { bm: 64, bn: 256, stages: 5 },
    note: "small M: one consumer warpgroup per 64 × 256 tile",
  },
  {
    name: "m128-n224",
    config: { bm: 128, bn: 224, stages: 5 },
    note: "K-major B only: 128 × 224 tiles, 5 stages (220 KiB); n 14336 is 64 of them, so m 1024 fills 3.9 waves of 132 CTAs where 128 × 256 fills 3.4 (4 waves, the last 40% idle)",
  },
  {
    name: "m128-n128-overlap",
    config: { bm: 128, bn: 128, stages: 6, overlap: true },
    note: "float8 that promotes only: 128 × 128 tiles whose K-tiles go in pairs, the first's promotion beside the second's wgmmas (two register tiles of sums)",
  },
  {
    name: "m128-n192-s4",
    config: { bm: 128, bn: 192, stages: 4 },
    note: "128 × 192 tiles, 4 stages (160 KiB): block-scaled float8 at m 8192 ran 2-9% faster than with 5 at k ≥ 14336 (H200), the other shapes within ±2%",
  },
  {
    name: "m128-n128-overlap-s4",
    config: { bm: 128, bn: 128, stages: 4, overlap: true },
    note: "float8 that promotes only: m128-n128-overlap with 4 stages (128 KiB), block-scaled float8's fastest at m 1024 at five of six shapes (H200)",
  },
  {
    name: "m192-n128-s4",
    config: { bm: 192, bn: 128, stages: 4 },
    note: "three consumer warpgroups (512 threads, setmaxnreg 160) on 192 × 128 tiles, 4 stages (160 KiB): H200, m 8192 × 4096 × 14336: block-scaled float8 3-6% faster than 128 × 192 × 4 in two runs (its shipped default there), per-tensor 3-4% faster than 128 × 192 × 5; within ±6% either way at the other large shapes (bench/results/gemm-bm192-2026-12-04.md)",
  },
  {
    name: "m128-n160",
    config: { bm: 128, bn: 160, stages: 6 },
    note: "K-major B only: 128 × 160 tiles, 6 stages (216 KiB), another wave count between 128 × 128 and 128 × 192",
  },
  {
    name: "m128-n256-c2",
    config: { bm: 128, bn: 256, stages: 4, cluster: 2 },
    note: "m128-n256 in clusters of 2: vertically adjacent tiles, each CTA loading half of B's K-tile and multicasting it to both (B's bytes cross L2 once per pair)",
  },
  {
    name: "m128-n192-c2",
    config: { bm: 128, bn: 192, stages: 5, cluster: 2 },
    note: "m128-n192 in clusters of 2 (B multicast; K-major B, or an MN-major one's 64-column blocks split evenly: not at 192 columns)",
  },
  {
    name: "m128-n192-s4-c2",
    config: { bm: 128, bn: 192, stages: 4, cluster: 2 },
    note: "m128-n192-s4 in clusters of 2 (B multicast)",
  },
];

/**
 * The configuration for `s` from `configs` (default {@link GEMM_CONFIGS}): the first row whose
 * `when` holds (absent: every shape).
 * @throws TirxError TX9001 (kernels/config) when no row matches (a table without a general row).
 */
export function pickGemmConfig(
  s: GemmShape,
  configs: readonly GemmConfigEntry[] = GEMM_CONFIGS,
): GemmConfigEntry {
  const hit = configs.find((c) => c.when === undefined || c.when(s));
  if (hit === undefined) {
    throw configError(
      `gemm: no configuration row matches m ${s.m}, n ${s.n}, k ${s.k} (a table needs a last row without when)`,
    );
  }
  return hit;
}

/**
 * The m bucket of the tuning key: m ≤ 16, ≤ 64, ≤ 256, ≤ 1024, then the next power of two (2048,
 * 4096, …). gemm()'s tuning builds and times each candidate at the bucket's top (the kernels are
 * built for static sizes, and the cached choice is checked against the candidates' source): one
 * tuning serves every m of the bucket (batch and token counts vary; a model's n and k do not).
 * @example gemmRowsBucket(100) // 256
 */
export function gemmRowsBucket(m: number): number {
  for (const top of [16, 64, 256, 1024]) if (m <= top) return top;
  return 2 ** Math.ceil(Math.log2(m));
}

/** What a tuning key of gemm() reads: the sizes and options of makeGemm without the config. */
export type GemmKeySizes = Omit<GemmSizes, "config" | "pitchA" | "pitchB" | "ctas">;

/**
 * The tuning key of a gemm() call (autotune's `key`, and the key of {@link GEMM_TUNED_DEFAULTS}
 * written by runtime's `tuneKeyText`): m's bucket ({@link gemmRowsBucket}), n and k exact (a
 * model's layers have a handful of them), the dtypes of A, B and D, the layouts, and the epilogue
 * (C's, the bias's and the residual's dtypes, the activation, α ≠ 1, β, the scaling: each changes
 * the epilogue's cost, and block scales and float8's fastAccum the main loop's).
 * @example gemmTuneKey({ m: 100, n: 4096, k: 4096, dtype: "bfloat16", transB: true })
 *   // { m: 256, n: 4096, k: 4096, a: "bfloat16", b: "bfloat16", d: "bfloat16", layout: "NT", epilogue: "none" }
 */
export function gemmTuneKey(s: GemmKeySizes): { readonly [k: string]: string | number } {
  const fp8 = s.dtype.startsWith("float8");
  const epi = [
    s.scales === "block" ? "blockscale" : s.scales === true || s.scales === "tensor" ? "scale" : "",
    fp8 && s.fastAccum === true ? "fastaccum" : "",
    (s.alpha !== undefined && s.alpha !== 1) || s.alphaAtLaunch === true ? "alpha" : "",
    s.c !== undefined
      ? `c:${s.c}${(s.beta !== undefined && s.beta !== 1) || s.betaAtLaunch === true ? "*beta" : ""}`
      : "",
    s.bias !== undefined ? `bias:${s.bias}` : "",
    s.activation ?? "",
    s.residual !== undefined ? `residual:${s.residual}` : "",
  ].filter((x) => x !== "");
  return {
    m: gemmRowsBucket(s.m),
    n: s.n,
    k: s.k,
    a: s.dtype,
    b: s.dtypeB ?? s.dtype,
    d: s.outDtype ?? (fp8 ? "bfloat16" : s.dtype),
    layout: `${s.transA === true ? "T" : "N"}${s.transB === true ? "T" : "N"}`,
    epilogue: epi.length > 0 ? epi.join("+") : "none",
  };
}

/**
 * The winners of `bench/gemm-sweep.ts --tune` on the H200 (autotune's medians over GEMM_CONFIGS
 * and GEMM_TUNE_EXTRA; bench/results/gemm-tune-2026-12-02.md: bf16 A·Bᵀ → bf16, with m 1024 and
 * 8192 re-tuned with the 224- and 160-column tiles in gemm-tune-bf16-2026-12-02f.md;
 * gemm-tune-fp8-2026-12-02.md: float8 e4m3 A·Bᵀ with per-tensor scales → bf16, each K-tile
 * promoted; gemm-tune-fp8-block-2026-12-02c.md: with block scales at m 1024 and 8192; the rows
 * with `overlap` at m 1024 beat the rows they replace, gemm-fp8-2026-12-03d.md: per-tensor 31.9
 * against 33.4 µs at 4096 × 4096, 99.5 against 102.5 at 14336 × 4096, 86.7 against 89.4 at
 * 4096 × 14336, in one run; block-scaled 108.7 against 111.6, 96.1 against 99.4, 376.4 against
 * 398.5 at 8192 × 28672, the next run against the one before; block-scaled rows re-measured with
 * 4 stages, gemm-fp8-block-stages-2026-12-03g.md: 128 × 192 × 4 against × 5 at m 8192, in two
 * runs 723–726 against 774–779 µs at 4096 × 14336 and 2688–2896 against 2948–3010 at
 * 8192 × 28672, the other four within ±2%; 128 × 128 × 4 with overlap at m 1024 the fastest at
 * five of six shapes, 358.6 against 378.9 µs (× 6 with overlap) at 8192 × 28672; block-scaled
 * 192 × 128 × 4 at m 8192 × 4096 × 14336, 3-6% faster than 128 × 192 × 4 in two runs,
 * gemm-bm192-2026-12-04.md; block-scaled 128 × 192 × 4 with scaleLoad "shared" at m 8192 ×
 * 8192 × 28672, 0.90 of per-tensor in two same-run comparisons against 0.86-0.87 with "global",
 * gemm-fp8-block-2026-12-05.md runs C and F; and, its factors formed a K-tile ahead, at
 * 14336 × 4096 and 28672 × 8192, medians 0.89 and 0.91 against 0.88 and 0.89 with "global" in
 * three alternating rounds, level at 28672 × 8192 in five longer ones,
 * gemm-fp8-block-2026-12-05b.md runs L and K; and at 8192³, its promotion row by row: medians
 * 0.91 (7 processes, 0.88-0.95) against 0.89 (7, 0.88-0.90) with "global",
 * gemm-fp8-block-2026-12-05e.md), as (kind, m, n, k, config): what
 * {@link GEMM_TUNED_DEFAULTS} ships for those keys.
 */
const H200_TUNED: readonly (readonly [
  "bf16" | "fp8" | "fp8-block",
  number,
  number,
  number,
  GemmConfig,
])[] = [
  ["bf16", 16, 4096, 4096, { bm: 64, bn: 128, stages: 6 }],
  ["bf16", 16, 14336, 4096, { bm: 64, bn: 256, stages: 5 }],
  ["bf16", 16, 4096, 14336, { bm: 64, bn: 128, stages: 6, splitK: 4 }],
  ["bf16", 16, 8192, 8192, { bm: 64, bn: 128, stages: 6 }],
  ["bf16", 16, 28672, 8192, { bm: 64, bn: 256, stages: 5 }],
  ["bf16", 16, 8192, 28672, { bm: 64, bn: 128, stages: 6, splitK: 4 }],
  ["bf16", 128, 4096, 4096, { bm: 64, bn: 128, stages: 6 }],
  ["bf16", 128, 14336, 4096, { bm: 128, bn: 128, stages: 6 }],
  ["bf16", 128, 4096, 14336, { bm: 128, bn: 128, stages: 6, splitK: 2 }],
  ["bf16", 128, 8192, 8192, { bm: 64, bn: 128, stages: 6 }],
  ["bf16", 128, 28672, 8192, { bm: 128, bn: 256, stages: 4 }],
  ["bf16", 128, 8192, 28672, { bm: 64, bn: 128, stages: 6 }],
  ["bf16", 1024, 4096, 4096, { bm: 128, bn: 256, stages: 4 }],
  ["bf16", 1024, 14336, 4096, { bm: 128, bn: 224, stages: 5 }],
  ["bf16", 1024, 4096, 14336, { bm: 128, bn: 256, stages: 4 }],
  ["bf16", 1024, 8192, 8192, { bm: 128, bn: 256, stages: 4 }],
  ["bf16", 1024, 28672, 8192, { bm: 128, bn: 256, stages: 4 }],
  ["bf16", 1024, 8192, 28672, { bm: 128, bn: 256, stages: 4 }],
  ["bf16", 8192, 4096, 4096, { bm: 128, bn: 256, stages: 4 }],
  ["bf16", 8192, 14336, 4096, { bm: 128, bn: 192, stages: 5 }],
  ["bf16", 8192, 4096, 14336, { bm: 128, bn: 160, stages: 6 }],
  ["bf16", 8192, 8192, 8192, { bm: 128, bn: 256, stages: 4 }],
  ["bf16", 8192, 28672, 8192, { bm: 128, bn: 256, stages: 4 }],
  ["bf16", 8192, 8192, 28672, { bm: 128, bn: 256, stages: 4 }],
  ["fp8", 16, 4096, 4096, { bm: 64, bn: 128, stages: 6 }],
  ["fp8", 16, 14336, 4096, { bm: 64, bn: 128, stages: 6 }],
  ["fp8", 16, 4096, 14336, { bm: 64, bn: 128, stages: 6, splitK: 4 }],
  ["fp8", 16, 8192, 8192, { bm: 64, bn: 128, stages: 6 }],
  ["fp8", 16, 28672, 8192, { bm: 64, bn: 128, stages: 6 }],
  ["fp8", 16, 8192, 28672, { bm: 64, bn: 128, stages: 6, splitK: 4 }],
  ["fp8", 128, 4096, 4096, { bm: 64, bn: 128, stages: 6 }],
  ["fp8", 128, 14336, 4096, { bm: 128, bn: 128, stages: 6 }],
  ["fp8", 128, 4096, 14336, { bm: 64, bn: 128, stages: 6 }],
  ["fp8", 128, 8192, 8192, { bm: 64, bn: 128, stages: 6 }],
  ["fp8", 128, 28672, 8192, { bm: 128, bn: 128, stages: 6 }],
  ["fp8", 128, 8192, 28672, { bm: 64, bn: 128, stages: 6 }],
  ["fp8", 1024, 4096, 4096, { bm: 128, bn: 128, stages: 6, overlap: true }],
  ["fp8", 1024, 14336, 4096, { bm: 128, bn: 128, stages: 6, overlap: true }],
  ["fp8", 1024, 4096, 14336, { bm: 128, bn: 128, stages: 6, overlap: true }],
  ["fp8", 1024, 8192, 8192, { bm: 128, bn: 192, stages: 5 }],
  ["fp8", 1024, 28672, 8192, { bm: 128, bn: 192, stages: 5 }],
  ["fp8", 1024, 8192, 28672, { bm: 128, bn: 192, stages: 5 }],
  ["fp8", 8192, 4096, 4096, { bm: 128, bn: 192, stages: 5 }],
  ["fp8", 8192, 14336, 4096, { bm: 128, bn: 192, stages: 5 }],
  ["fp8", 8192, 4096, 14336, { bm: 128, bn: 192, stages: 5 }],
  ["fp8", 8192, 8192, 8192, { bm: 128, bn: 192, stages: 5 }],
  ["fp8", 8192, 28672, 8192, { bm: 128, bn: 192, stages: 5 }],
  ["fp8", 8192, 8192, 28672, { bm: 128, bn: 192, stages: 5 }],
  ["fp8-block", 1024, 4096, 4096, { bm: 128, bn: 128, stages: 4, overlap: true }],
  ["fp8-block", 1024, 14336, 4096, { bm: 128, bn: 128, stages: 6, overlap: true }],
  ["fp8-block", 1024, 4096, 14336, { bm: 128, bn: 128, stages: 4, overlap: true }],
  ["fp8-block", 1024, 8192, 8192, { bm: 128, bn: 128, stages: 4, overlap: true }],
  ["fp8-block", 1024, 28672, 8192, { bm: 128, bn: 128, stages: 4, overlap: true }],
  ["fp8-block", 1024, 8192, 28672, { bm: 128, bn: 128, stages: 4, overlap: true }],
  ["fp8-block", 8192, 4096, 4096, { bm: 128, bn: 192, stages: 4 }],
  ["fp8-block", 8192, 14336, 4096, { bm: 128, bn: 192, stages: 4, scaleLoad: "shared" }],
  ["fp8-block", 8192, 4096, 14336, { bm: 192, bn: 128, stages: 4 }],
  ["fp8-block", 8192, 8192, 8192, { bm: 128, bn: 192, stages: 4, scaleLoad: "shared" }],
  ["fp8-block", 8192, 28672, 8192, { bm: 128, bn: 192, stages: 4, scaleLoad: "shared" }],
  ["fp8-block", 8192, 8192, 28672, { bm: 128, bn: 192, stages: 4, scaleLoad: "shared" }],
];

/**
 * The shipped tuning defaults of gemm() (registered with runtime's registerTunedDefaults as the
 * family "gemm"), by key text ({@link gemmTuneKey}; no arch prefix: the kernel runs on Hopper
 * only). A call whose key is here takes its config without tuning (also with `tune: true`, unless
 * `retune`). The entries are bench/gemm-sweep.ts's cases (m 16, 128, 1024, 8192 × the six (n, k)
 * of issue 24; bf16 A·Bᵀ → bf16, and float8 e4m3 A·Bᵀ with per-tensor scales → bf16): the
 * measured H200 winners of H200_TUNED where there is one, else pickGemmConfig's choice; and
 * H200_TUNED's block-scaled float8 winners (m 1024 and 8192).
 */
export const GEMM_TUNED_DEFAULTS: Readonly<Record<string, GemmConfig>> = (() => {
  const table: Record<string, GemmConfig> = {};
  const nk = [
    [4096, 4096],
    [14336, 4096],
    [4096, 14336],
    [8192, 8192],
    [28672, 8192],
    [8192, 28672],
  ] as const;
  for (const m of [16, 128, 1024, 8192]) {
    for (const [n, k] of nk) {
      for (const fp8 of [false, true]) {
        const s: GemmKeySizes = fp8
          ? { m, n, k, dtype: "float8_e4m3", transB: true, scales: true }
          : { m, n, k, dtype: "bfloat16", transB: true };
        table[tuneKeyText(gemmTuneKey(s))] = pickGemmConfig({
          m,
          n,
          k,
          inBytes: fp8 ? 1 : 2,
          promoted: fp8,
        }).config;
      }
    }
  }
  for (const [kind, m, n, k, config] of H200_TUNED) {
    const s: GemmKeySizes =
      kind === "fp8"
        ? { m, n, k, dtype: "float8_e4m3", transB: true, scales: true }
        : kind === "fp8-block"
          ? { m, n, k, dtype: "float8_e4m3", transB: true, scales: "block" }
          : { m, n, k, dtype: "bfloat16", transB: true };
    table[tuneKeyText(gemmTuneKey(s))] = config;
  }
  return table;
})();
