// A tile configuration of the Hopper GEMM (makeGemm) and the shared-memory limit it is checked
// against: what both the kernel builder (kernel.ts) and the configuration table (config.ts) read,
// in a file of its own so that neither imports the other both ways.
import { MAX_SHARED_PER_CTA } from "@tirx-ts/core";

/**
 * One tile configuration of makeGemm:
 * - `bm`: rows of D per CTA tile, 64 (one consumer warpgroup, 256 threads), 128 (two, 384
 *   threads: examples/tile/gemm_hopper.ts's design) or 192 (three, 512 threads, at setmaxnreg
 *   160: bn ≤ 128);
 * - `bn`: columns per tile, in 64 … 256 (one wgmma m64nNk16 of N = bn per k16 step): a
 *   multiple of 32 with a K-major B (transB, no block scales: whole 8-row swizzle atoms), else
 *   of 64 (an MN-major B of 16-bit elements in whole 128-byte swizzle rows; block scales meet at
 *   most two 128-column blocks per tile);
 * - `bk`: K elements per stage, 128 bytes' worth (64 for 16-bit inputs, 128 for float8: one
 *   128B-swizzle row of a K-major tile). Absent: that value;
 * - `stages`: depth of the TMA → wgmma ring (2 … 8; shared memory stages · (bm + bn) · 128 B,
 *   plus stages · bm · 16 B (or 4) with `scaleLoad` "tma" or "shared", and B's scales with
 *   "shared", must fit in 227 KiB: gemmSharedBytes);
 * - `cluster`: CTAs per cluster, 1 (the default) or 2. With 2 the CTAs of a cluster take
 *   vertically adjacent tiles (tile rows 2i and 2i + 1 of one tile column), which read the same
 *   K-tiles of B: each CTA loads half of B's K-tile (bn / 2 rows of a K-major B; half of the
 *   64-column blocks of an MN-major one, whose bn is then a multiple of 128) and multicasts it into both (cp.async.bulk.tensor
 *   .multicast::cluster), so that B's bytes cross L2 once per pair (examples/tile/gemm_hopper.ts's
 *   design; DeepGEMM's and CUTLASS's multicast). Each CTA still loads its own A tile (and A's
 *   block scales);
 * - `splitK`: K split over this many CTAs per tile (≥ 1); with more than 1 each CTA adds its
 *   float32 partial product into a zeroed float32 workspace with `red.global.add.f32` and a
 *   second kernel applies the epilogue (the small-M strategy: more CTAs than D's tiles);
 * - `scaleLoad`: float8 block scales only (makeGemm's `scales: "block"`), how the scales reach
 *   the consumers: "global" (the default) plain ld.global by the consumer threads two K-tiles
 *   ahead into registers, A's and B's; "tma" A's by one more TMA copy per stage, the tile's bm
 *   rows of scales on the stage's full mbarrier (DeepGEMM's staging), read back with ld.shared:
 *   A's [m, ⌈k/128⌉] as given, 4 K blocks a row (bm · 16 more bytes a stage), when ⌈k/128⌉ is a
 *   multiple of 4; else MN-major, [⌈k/128⌉, m rounded up to 4] (gemm() transposes them first),
 *   the K block's (bm · 4 bytes); B's as with "global". "shared": A's as with "tma", and B's
 *   copied into shared memory once per tile by the consumer threads (DeepGEMM's), so that the K
 *   loop has no global load at all (gemmScaleTileBytes more bytes). See kernel.ts's header;
 * - `overlap`: float8 that promotes its K-tiles (block scales, or no `fastAccum`) only, its three
 *   register tiles within the consumers' registers (bn ≤ 128, or 64 with bm 192:
 *   {@link gemmTileRegisters}):
 *   true to take the K loop in pairs of K-tiles whose wgmmas are issued together, into two
 *   register tiles of sums (bn / 2 more registers per thread), so that the first one's
 *   promotion FMAs run beside the second one's wgmmas instead of after them. Default false.
 */
export interface GemmConfig {
  readonly bm: 64 | 128 | 192;
  readonly bn: number;
  readonly bk?: number;
  readonly stages: number;
  readonly cluster?: 1 | 2;
  readonly splitK?: number;
  readonly scaleLoad?: GemmScaleLoad;
  readonly overlap?: boolean;
}

/** How a block-scaled float8 GEMM loads its scales ({@link GemmConfig}'s `scaleLoad`). */
export type GemmScaleLoad = "global" | "tma" | "shared";

/** Whether `scaleLoad` stages A's block scales by TMA with each stage ("tma" and "shared"). */
export function scalesByTma(scaleLoad: GemmScaleLoad | undefined): boolean {
  return scaleLoad === "tma" || scaleLoad === "shared";
}

/**
 * Registers a consumer thread has for its float32 register tiles of sums: its setmaxnreg budget
 * (232 beside one or two consumer warpgroups, 160 beside three: the 64K-register file shared with
 * the producer's 40 or 32, PTX ISA, setmaxnreg) less 32 for the loop's addresses, scales and
 * counters. Measured with ptxas -v (13.0, sm_90a, every accepted configuration at 8192³, with and
 * without an epilogue): 192 registers of tiles at 232 and 128 at 160 assemble without spills;
 * 224 at 232 (promoted float8, bn 224) spilled 8-16 bytes, 256 at 232 (bn 256) 300-620, and
 * 192 at 160 (bm 192, bn 128, overlap) 400-580.
 */
export function gemmTileRegisterBudget(bm: GemmConfig["bm"]): number {
  return (bm === 192 ? 160 : 232) - 32;
}

/**
 * Float32 registers per consumer thread that a configuration's register tiles of sums take: the
 * accumulator's bn / 2 (a warpgroup's 64 × bn tile over 128 threads), as many again for a
 * promoted float8 K-tile's sums (`promoted`: block scales, or float8 without `fastAccum`), and
 * again for `overlap`'s second tile.
 * @example gemmTileRegisters({ bm: 128, bn: 192, stages: 4 }, true) // 192
 * @example gemmTileRegisters({ bm: 192, bn: 128, stages: 4, overlap: true }, true) // 192
 */
export function gemmTileRegisters(c: GemmConfig, promoted: boolean): number {
  const tiles = 1 + (promoted ? 1 : 0) + (promoted && c.overlap === true ? 1 : 0);
  return tiles * (c.bn / 2);
}

/** Shared memory a kernel may take per CTA on sm_90 (227 KiB: core's MAX_SHARED_PER_CTA). */
export const MAX_GEMM_SHARED = MAX_SHARED_PER_CTA;

/**
 * Shared memory of one stage of the ring, in bytes: A's and B's K-tiles, (bm + bn) rows of 128
 * bytes (bk is always one 128-byte row of K), and with `scaleLoad` "tma" or "shared" A's float32 block
 * scales of the tile's bm rows: 4 K blocks of each (bm · 16 bytes) when ⌈k/128⌉ is a multiple of
 * 4, else the K block's one (bm · 4 bytes; {@link tmaScalesAsGiven}); without `k`, the
 * larger. The ring takes `stages` of them (at most {@link MAX_GEMM_SHARED}).
 * @example gemmStageBytes({ bm: 128, bn: 192, stages: 5, scaleLoad: "tma" }, 8192) // 43008
 * @example gemmStageBytes({ bm: 128, bn: 192, stages: 5, scaleLoad: "tma" }, 300) // 41472
 */
export function gemmStageBytes(c: GemmConfig, k?: number): number {
  const asGiven = k === undefined || tmaScalesAsGiven(k);
  return (c.bm + c.bn) * 128 + (scalesByTma(c.scaleLoad) ? c.bm * (asGiven ? 16 : 4) : 0);
}

/**
 * Shared memory of B's block scales with `scaleLoad` "shared", in bytes (0 otherwise): two
 * buffers (alternate tiles of the persistent grid: one is read while the next tile's are
 * written), each float32 [blocks, kPer], the scales of the tile's 128-column blocks (1 for bn 64
 * or 128, 2 for 192 or 256) for the kPer K-tiles of its K slice (⌈k/128⌉ split `splitK` ways).
 * @example gemmScaleTileBytes({ bm: 128, bn: 192, stages: 4, scaleLoad: "shared" }, 8192) // 1024
 */
export function gemmScaleTileBytes(c: GemmConfig, k: number): number {
  if (c.scaleLoad !== "shared") return 0;
  const kTiles = Math.ceil(k / 128);
  const kPer = Math.ceil(kTiles / Math.min(c.splitK ?? 1, kTiles));
  return 2 * scaleTileBlocks(c.bn) * kPer * 4;
}

/** B's 128-column scale blocks a tile of bn columns meets: 1 (bn 64, 128) or 2 (192, 256). */
export function scaleTileBlocks(bn: number): 1 | 2 {
  return 128 % bn === 0 ? 1 : 2;
}

/**
 * The dynamic shared memory of makeGemm's main kernel in bytes (what its launch asks for):
 * `stages` ring stages (gemmStageBytes) and, with `scaleLoad` "shared", B's block scales
 * (gemmScaleTileBytes).
 * @example gemmDynamicSharedBytes({ bm: 128, bn: 192, stages: 4 }, 8192) // 163840
 */
export function gemmDynamicSharedBytes(c: GemmConfig, k: number): number {
  return c.stages * gemmStageBytes(c, k) + gemmScaleTileBytes(c, k);
}

/**
 * All of a configuration's shared memory in bytes, at most MAX_GEMM_SHARED: the dynamic part
 * (gemmDynamicSharedBytes) and the ring's mbarriers (static: a "full" and an "empty" uint64 per
 * stage, each array 16-byte aligned).
 * @example gemmSharedBytes({ bm: 128, bn: 192, stages: 4 }, 8192) // 163904
 */
export function gemmSharedBytes(c: GemmConfig, k: number): number {
  return gemmDynamicSharedBytes(c, k) + 2 * Math.ceil((8 * c.stages) / 16) * 16;
}

/**
 * Whether makeGemm's main kernel with config.scaleLoad "tma" or "shared" takes A's block scales as given,
 * [m, ⌈k/128⌉] (kernel.ts, blockScaleShapes): when ⌈k/128⌉ is a multiple of 4, a row of them is a
 * multiple of 16 bytes (TMA's pitch: CUDA Driver API, cuTensorMapEncodeTiled), and each stage
 * takes a box of the tile's bm rows × 4 K blocks (from the K-tile's rounded down to 4; bm · 16
 * bytes). Otherwise the kernel takes them MN-major (kernel.ts, blockScaleShapeMN), one K block's
 * bm scales a stage (bm · 4 bytes), and gemm() transposes them first.
 * @example tmaScalesAsGiven(8192) // true (64 K blocks)
 * @example tmaScalesAsGiven(300) // false (3 K blocks)
 */
export function tmaScalesAsGiven(k: number): boolean {
  return Math.ceil(k / 128) % 4 === 0;
}
