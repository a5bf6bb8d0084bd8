// The tile configurations of the Hopper GEMM (makeGemm) as data: a record of tile sizes, ring
// depth and split-K, the candidates the library call picks from (GEMM_CONFIGS, first match
// wins), and the picker. Every candidate builds a correct kernel for every size (the simulator
// tests run each of them); the table only chooses which is fast.
import { configError } from "../attention/options.js";

/**
 * One tile configuration of {@link makeGemm}:
 * - `bm`: rows of D per CTA tile, 64 (one consumer warpgroup, 256 threads) or 128 (two, 384
 *   threads: examples/tile/gemm_hopper.ts's design);
 * - `bn`: columns per tile, a multiple of 64 in 64 … 256 (one wgmma m64nNk16 of N = bn per k16
 *   step; 64 keeps an MN-major B of 16-bit elements whole 128-byte swizzle rows);
 * - `bk`: K elements per stage, 128 bytes' worth (64 for 16-bit inputs, 128 for float8: one
 *   128B-swizzle row of a K-major tile). Absent: that value;
 * - `stages`: depth of the TMA → wgmma ring (2 … 8; shared memory stages · (bm + bn) · 128 B
 *   must fit in 227 KiB);
 * - `cluster`: CTAs per cluster; only 1 today (multicast of B across a cluster, as the example
 *   does, is not in this kernel yet);
 * - `splitK`: K split over this many CTAs per tile (≥ 1); with more than 1 each CTA adds its
 *   float32 partial product into a zeroed float32 workspace with `red.global.add.f32` and a
 *   second kernel applies the epilogue (the small-M strategy: more CTAs than D's tiles).
 */
export interface GemmConfig {
  readonly bm: 64 | 128;
  readonly bn: number;
  readonly bk?: number;
  readonly stages: number;
  readonly cluster?: 1;
  readonly splitK?: number;
}

/** The sizes a configuration's `when` reads: D is m × n, the reduction k, and the input bytes. */
export interface GemmShape {
  readonly m: number;
  readonly n: number;
  readonly k: number;
  /** Bytes of an input element: 2 (float16, bfloat16) or 1 (float8). */
  readonly inBytes: 1 | 2;
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

/** Shared memory a kernel may take per CTA on sm_90 (227 KiB: CUDA C Programming Guide, H.8.1). */
export const MAX_GEMM_SHARED = 227 * 1024;

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
    name: "m128-n256",
    config: { bm: 128, bn: 256, stages: 4 },
    note: "examples/tile/gemm_hopper.ts: 128 × 256 tiles, 4 stages, persistent, grouped order",
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
