// The Hopper GEMM kernel builder: D (m × n) = epilogue(A · B) for any m, n, k ≥ 1, the four
// layouts (A [m, k] or, with transA, stored [k, m]; B [k, n] or, with transB, stored [n, k]),
// float16 / bfloat16 / float8 inputs, float32 accumulation, a fused epilogue (epilogue.ts) and
// float32 / float16 / bfloat16 output. The design of examples/tile/gemm_hopper.ts:
//   - a persistent grid (at most `ctas` CTAs) walks D's bm × bn tiles in groups of 8 tile rows
//     (L2 reuse of B's tiles); with split-K a work unit is a tile and one of `splitK` K slices;
//   - warpgroup 0 produces: one thread waits for a stage of the ring to be empty, arms its "full"
//     mbarrier with the stage's bytes and issues the TMA loads (cp.async.bulk.tensor.2d) of A's
//     and B's K-tiles into 128B-swizzled shared tiles. The loads are T.cuda.tile.apply with
//     tensor maps of the whole tensors and explicit box coordinates: a box that crosses the
//     tensor's edge (the last tile row / column / K-tile of a size that is not a tile multiple)
//     is filled with zeros by TMA (CUDA Driver API, cuTensorMapEncodeTiled: out-of-bound
//     elements are zero with CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE; PTX ISA, cp.async.bulk.tensor:
//     the whole box's bytes complete on the mbarrier), so zero rows and columns add nothing.
//     (T.tile.copy_async plans coordinates from a view's offset, which is exact only for
//     in-bounds tiles: tma-plan.ts's coordsOf; hence the explicit coordinates here.)
//     A K-major operand's K-tile is one box [rows, bk]; an MN-major one (16-bit only) is stored
//     as 64-wide column blocks [rows / 64, bk, 64] (one 128-byte swizzle row each), one box
//     [bk, 64] per block, read by wgmma through the MN-major descriptor (gemm_async transA /
//     transB: no transpose pass);
//   - config.cluster 2: the grid is 2-CTA clusters whose work unit is a pair of vertically
//     adjacent tiles (tile rows 2p and 2p + 1 of one tile column; grouped by 4 pair rows). Both
//     read the same K-tiles of B, so each CTA loads half of B's K-tile (bn / 2 rows of a K-major
//     B, half of the 64-column blocks of an MN-major one) with cp.async.bulk.tensor
//     .multicast::cluster into both CTAs' stage, at the same offset and completing on the full
//     mbarrier at the same offset in each (PTX ISA, cp.async.bulk.tensor): a full barrier still
//     expects the whole stage. Either CTA's producer writes both CTAs' stage, so a stage's empty
//     barrier counts the consumers of both: consumer thread (or lane) c < 2 arrives on it in CTA c
//     (mbarrier.arrive.shared::cluster). barrier.cluster after the barriers' init (no remote
//     arrive or multicast before the peer initialised its barriers) and before the exit (no CTA
//     leaves while its peer may multicast into it or arrive on its barriers). With an odd count
//     of tile rows the last pair's second tile lies past m: TMA zero-fills its A, its rows are
//     never stored, and it still loads and multicasts its half of B. B's bytes cross L2 once
//     per pair (examples/tile/gemm_hopper.ts's design, DeepGEMM's and CUTLASS's multicast);
//   - bm / 64 consumer warpgroups own 64 rows each: T.tile.wg.gemm_async per K-tile
//     (wgmma.mma_async m64nNk16, or m64nNk32 for float8, N = bn), wait, free the stage;
//   - the epilogue: each thread takes its accumulator slots (the wgmma D fragment: thread t of
//     the warpgroup holds rows 16·⌊t / 32⌋ + ⌊(t mod 32) / 4⌋ + 8·i, columns 8·j + 2·(t mod 4) +
//     e, slot 4·j + 2·i + e; PTX ISA, wgmma "Matrix fragments for accumulator D"), applies the
//     epilogue in float32 and stores the elements inside D (a row guard and a column guard unless
//     the sizes are tile multiples); with split-K it adds the raw products into the float32
//     workspace W by red.global.add.f32 instead, and makeGemm's `finish` kernel (one thread per
//     element) applies the epilogue from W;
//   - float8 block scales (`scales: "block"`, DeepSeek-V3's fine-grained scaling: A's scales 1 ×
//     128, float32 sA [m, ⌈k/128⌉]; B's 128 × 128, float32 sB [⌈n/128⌉, ⌈k/128⌉]): a float8
//     K-tile is one 128-wide K block (bk 128), so per K-tile the wgmmas (4 × k32) accumulate into
//     a second float32 register tile (scale-d 0 at the first k32 step: gemm_async's accum false)
//     and, after the wait, each thread promotes it: acc = fma(tmp, sA[row, kb] · sB[nb, kb], acc) for
//     its slots (its two rows per 64-row block and its columns' n blocks are known from the
//     accumulator layout above). The scales are plain ld.global by the consumer threads, issued
//     two K-tiles ahead into one of two register sets (the K loop unrolled by 2) so that their
//     latency hides behind two whole K-tiles: per K block a
//     thread reads 2 of A's scales and 1 or 2 of B's (a bn ≤ 128 tile lies in one 128-column
//     block; a 192 or 256 tile spans two), L1/L2 hits after the first warp (a [bm] column of sA
//     as stored is no TMA box: 4 bytes wide, where a box's inner extent is a multiple of 16; the
//     third design below transposes sA first).
//     Two ways through shared memory measured slower on the H200 (block against per-tensor in
//     one run, bench/results/gemm-sweep-fp8-block-*-2026-12-03.md): the consumers' own cp.async
//     copies with cp.async.wait_group 1 before each promotion, 0.42-0.53× (against 0.83-0.93×
//     here); a scale warp in the producer warpgroup staging each stage's scales (ld.global,
//     st.shared, an arrival on the full barrier) read back with ld.shared after a named barrier
//     of the warpgroup, 0.81-0.93×.
//     A third design, DeepGEMM's, is an option, not the default (config.scaleLoad "tma"; the
//     default "global" is the design above): A's scales arrive by TMA with each stage, one
//     more box on the stage's full mbarrier, the scales of the tile's bm rows. TMA's box needs
//     an inner extent, and a tensor's row pitch, of a multiple of 16 bytes. When ⌈k/128⌉ is a
//     multiple of 4 (tmaScalesAsGiven), the box is [bm, 4] of A's scales as given,
//     [m, ⌈k/128⌉]: each row's 4 K blocks from the K-tile's rounded down to 4 (TMA's innermost
//     coordinate is a multiple of 16 bytes), of which the consumers read the K-tile's
//     (expect_tx grows by bm · 16 bytes). Otherwise the kernel takes A's scales MN-major,
//     [⌈k/128⌉, m rounded up to 4] (blockScaleShapeMN; the layout of torch._scaled_mm's
//     blockwise scale_a, stride (1, m)), a [1, bm] box of the K block's (bm · 4 bytes), and
//     gemm() first transposes the [m, ⌈k/128⌉] scales it is given into such a scratch
//     (scales.ts: one more kernel and allocation a call; H200 6.3-9.6 µs at m 8192, 9.6 at
//     k 28672 where the untiled one took 16.4). The consumers read their two rows' scales with
//     ld.shared right after the full-barrier wait they do anyway: no new barrier, no new warp.
//     The stage's empty barrier covers the slot's reuse; so that every lane's read comes before
//     the producer's next copy into the slot, it then counts one arrival per consumer warp, by
//     lane 0 after __syncwarp (DeepGEMM arrives per warp too), instead of one per warpgroup.
//     B's scales stay ld.global two K-tiles ahead (1 or 2 a K block, one address for every
//     thread: a broadcast; staging them as well would need a second transposed copy, B's
//     [⌈n/128⌉, ⌈k/128⌉] rows not being 16-byte multiples, for 4 or 8 bytes a stage). Rows
//     past m get scale 0 (TMA's zero fill past m; MN-major, gemm()'s zero columns up to m
//     rounded up to 4 and the zero fill past them), as does a K block past the last (a split-K
//     slice past K: zero-filled by TMA); A's box is zero there too, so their products are 0,
//     and those rows are never stored; nothing divides by a scale. H200, 128 × 192 × 4 at
//     m 8192, MN-major (transposition included): 1-3% faster than "global" in most same-call
//     comparisons at 4096², 8192², 14336 × 4096 and 28672 × 8192, slower at 4096 × 14336 and
//     8192 × 28672 (bench/results/gemm-fp8-block-2026-12-04.md); gemm()'s defaults stay
//     "global". The as-given box ran on the H200 from 2026-12-05 (the GPU tests, the sweep).
//     A fourth, config.scaleLoad "shared" (DeepGEMM's whole design), takes A's scales as "tma"
//     does and copies B's into shared memory once per tile, so that the K loop issues no
//     ld.global at all. The reason, read off the SASS of 128 × 192 × 4 at 8192³ (ptxas 13.0):
//     ptxas hoists the promotion's sA · sB multiplies above the K-tile's wgmmas, and every
//     ld.global of the loop shares one scoreboard, so the first multiply waits for all scale
//     loads in flight, including those issued at the end of the K-tile before ("two K-tiles
//     ahead" is one in effect), before the K-tile's first wgmma issues ("tma": after its first
//     one). The per-tensor kernel's loop has no load to wait for. The copy: sScaleB, two buffers of float32
//     [blocks · kPer] (the tile's one or two 128-column blocks, its slice's K-tiles; clamped at
//     the last block and K block), alternating by turn of the persistent loop; the consumer
//     threads load the next unit's into registers (at most 8 each, else they copy after the
//     epilogue) before this unit's epilogue, store them after it into the other buffer, and a
//     named barrier of the consumer threads publishes them; one barrier a tile suffices because
//     the buffer written at the end of unit u was last read in unit u − 1, before the barrier
//     that ended it. The K loop then reads B's one or two scales with ld.shared (a broadcast),
//     and A's, and forms the products a K-tile ahead: right after K-tile kt's wgmmas issue,
//     K-tile kt + 1's stage is waited for and its factors formed into the other of two register
//     sets, so that kt's promotion FFMAs follow the wgmma wait with no load or multiply before
//     them, and none sits between the wgmma issues (formed in the K-tile itself, before its
//     wgmmas, ptxas interleaved the ld.shared and FMULs with the wgmma issues: H200 0.85-0.92 of
//     per-tensor at the sweep's six m 8192 shapes, against 0.87-0.95 a K-tile ahead,
//     bench/results/gemm-fp8-block-2026-12-05b.md).
//     H200 (gemm-fp8-block-2026-12-05.md, -05b.md): block against per-tensor 0.86-0.95 in
//     same-run comparisons, "shared" and "global" within each other's spread at most shapes
//     (gemm()'s defaults take "shared" at 14336 × 4096, 28672 × 8192 and 8192 × 28672). ncu at
//     base clocks (8192³): 1.355 M cycles against the per-tensor kernel's 1.203 M, tensor pipe
//     76.6% against 86.5% (about 113 more cycles per K-tile of each SM), SM clock 1980 MHz for
//     both outside ncu. Warp-state samples per SASS line (SourceCounters, 8192³): the block
//     kernel's 96 promotion FFMAs hold 20.5 k of 84.4 k samples, the per-tensor kernel's 96
//     FADDs 15.2 k of 74.5 k; the difference is mostly "dispatch" stalls (7.5 k against 3.7 k:
//     an eligible instruction the dispatcher holds back) and "not selected" (1.6 k against
//     0.2 k), the wgmmas' own waits next (+1.7 k). The per-tensor kernel promoting by FFMA
//     (acc = fma(tmp, 1, acc), the 1 a runtime value) instead of FADD ran 3-4% slower at
//     28672 × 8192 (3048 µs against 2929-2949 in the calls beside it; at 8192² within the FADD
//     kernel's spread): there the three-operand FFMA is about a third of the gap. Not kept,
//     measured no better at m 8192: each K-tile's wgmmas as
//     two column-half groups with the first half promoted beside the second's (0.86-0.90 at 5
//     stages, 0.77-0.91 at 4); the consumer warpgroups taking turns issuing their K-tiles
//     (named barriers, FlashAttention-3's ping-pong: 0.83-0.89, and per-tensor no faster), or
//     offset once a unit (consumer c > 0 starting its K loop after c − 1's first K-tile, one
//     named barrier a unit: the block kernel −6% to +2.5%, 5-6% slower at 8192², H200,
//     bench/results/gemm-fp8-stagger-2026-12-05.md); with "shared", a B-scale buffer pair and
//     a named barrier per consumer warpgroup instead of the consumers' one barrier a tile (so
//     that nothing ties them at a tile's end: H100, 0.87-0.96 against the shared barrier's
//     0.86-0.98, 0.02-0.04 lower at 4096 × 14336 and 8192², gemm-fp8-block-2026-12-05d.md);
//     with "shared", the K loop in pairs reading a pair's scales by vector (A's two K blocks by
//     one ld.shared.v2 a row, B's for both K-tiles by one ld.shared.v4: 3 ld.shared a pair
//     instead of 8; the block kernel's time within 0.7% of this one's at 4096², 8192² and
//     14336 × 4096, H200, gemm-fp8-block-2026-12-06.md); a
//     cluster of 2 CTAs multicasting B (block 0.85-0.89 of per-tensor, 0.91 once with "tma",
//     against 0.87-0.90 without in the same runs); A's scales MN-major (transposed) instead of
//     as given (0.88-0.92, as given's spread). The promotion's FFMAs carry the same alternating
//     yield hints as the per-tensor FADDs (ptxas 13.0 yields at every other one, the way
//     DeepGEMM rewrote older ptxas's output): rewriting the cubin so that every one yields, or
//     none does (with or without the factor kept in the reuse cache), ran up to 6% and 16%
//     slower on an H100 (gemm-fp8-block-2026-12-05c.md). Promotion order: row by row (a row's
//     FFMAs read one factor in turn, which ptxas keeps in the operand reuse cache; FFMAs with
//     two source registers in one bank 50 of 192 against 91 in slot order, SASS of ptxas 13.0
//     at 8192³). On an H100 with gemm()'s shipped configs, in three alternating pairs of
//     processes, block against per-tensor 0.91-1.00 against slot order's 0.89-0.99, the
//     weakest shape (8192 × 28672) 0.92-0.93 against 0.89-0.91; within ±0.03 of slot order at
//     the forced 128 × 192 × 4 "shared" (gemm-fp8-block-2026-12-05c.md, -05d.md).
//     A partial last K block is zero-filled by TMA: its scale multiplies zeros there. Rows past
//     m read row m − 1's scale with "global" (their results are never stored). With split-K
//     each slice adds its promoted blocks into W; the finishing kernel then applies no scale.
//   - float8 with per-tensor scales or none promotes too (unless `fastAccum`): each K-tile's
//     wgmmas go into the second register tile and acc += tmp after the wait. The float8 tensor
//     cores keep about 13 fraction bits aligned to the largest term, the accumulator included
//     (DeepSeek-V3 report, 3.3.2), so one accumulator over all of K loses up to 2^-13 of D per
//     k32 step; promotion bounds that by the K-tile's own sum. The second tile costs bn / 2
//     registers per thread: 128 × 256 tiles do not fit beside it (config.ts).
//   - config.overlap (promoting float8, bn ≤ 128): the K loop in pairs of K-tiles, both issuing
//     their wgmmas into two register tiles of sums; wgmma.wait_group 1 retires the first, whose
//     promotion FMAs then run beside the second's wgmmas, instead of every promotion waiting
//     for its own K-tile with the tensor cores of its warpgroup idle. A pipeline across the
//     loop's back edge (K-tile kt + 1 issued before kt's promotion in every iteration) made
//     ptxas serialize every wgmma (C7514), so each pair is waited for within its iteration.
//     H200: 1-5% faster at m 1024 (bench/results/gemm-fp8-2026-12-03d.md), slower on 8192-row
//     shapes than serial 128 × 192 tiles.
// Sizes are compile-time constants (tensor maps need static shapes: core patterns/tma.ts).
import { T, type ExprLike, type ParamType, type PrimExpr, type TileView } from "@tirx-ts/dsl";
import { didYouMean, showValue, type PrimFunc } from "@tirx-ts/core";
import { configError } from "../attention/options.js";
import {
  MAX_GEMM_SHARED,
  gemmDynamicSharedBytes,
  gemmScaleTileBytes,
  gemmSharedBytes,
  gemmStageBytes,
  gemmTileRegisterBudget,
  gemmTileRegisters,
  scaleTileBlocks,
  scalesByTma,
  tmaScalesAsGiven,
  type GemmConfig,
} from "./tile.js";

export { tmaScalesAsGiven };
import { fragCol, fragRow } from "../fragment.js";
import {
  epilogueValue,
  scaleMode,
  checkEpilogueScalar,
  type EpilogueTensors,
  type GemmEpilogue,
  type GemmFloat,
} from "./epilogue.js";

/** The input dtypes of {@link makeGemm}. */
export type GemmInput = "float16" | "bfloat16" | "float8_e4m3" | "float8_e5m2";

/** Sizes and options of {@link makeGemm}. */
export interface GemmSizes extends GemmEpilogue {
  /** D's rows (A's rows), ≥ 1. */
  readonly m: number;
  /** D's columns (B's columns), ≥ 1. */
  readonly n: number;
  /** The reduction length (A's columns, B's rows), ≥ 1. */
  readonly k: number;
  /** A's dtype. */
  readonly dtype: GemmInput;
  /** B's dtype (default `dtype`); float8 with float8 (e4m3 × e5m2 mixes), 16-bit equal to A's. */
  readonly dtypeB?: GemmInput;
  /** D's dtype (default: `dtype` for 16-bit inputs, bfloat16 for float8). */
  readonly outDtype?: GemmFloat;
  /** A is stored [k, m] (row-major; A's transpose is read) instead of [m, k]. Default false. */
  readonly transA?: boolean;
  /** B is stored [n, k] (row-major; B's transpose is read) instead of [k, n]. Default false. */
  readonly transB?: boolean;
  /**
   * Elements per stored row of A (default its inner extent: k, or m with transA): a larger pitch
   * (≥ the inner extent) reads A from a zero-padded copy, as the library call makes for rows
   * that are not a multiple of 16 bytes. Columns past the inner extent must hold zeros when they
   * are K (A [m, pitch] without transA); past m (transA) they are never stored.
   */
  readonly pitchA?: number;
  /** Elements per stored row of B (default n, or k with transB), as {@link GemmSizes.pitchA}. */
  readonly pitchB?: number;
  /**
   * Float8 only: accumulate all of K in the wgmma accumulator (false: promote every K-tile's sum
   * into float32, the default). The float8 tensor cores add with about 13 fraction bits aligned
   * to the largest term, the accumulator included (DeepSeek-V3 report, 3.3.2; core's
   * wgmmaFp8F32Bound): over a long K the accumulator's own truncation adds up (on the H200, 5% of
   * D at k 4096 with inputs of one sign). By default each K-tile's 4 k32 wgmmas go into a second
   * float32 register tile that is then added to the accumulator (as torch._scaled_mm's default
   * and DeepGEMM do); `fastAccum: true` is torch._scaled_mm's use_fast_accum. Not with 16-bit
   * inputs or block scales (which always promote). Default false.
   */
  readonly fastAccum?: boolean;
  /** The tiles, ring and split (see {@link GemmConfig}). */
  readonly config: GemmConfig;
  /**
   * CTAs of the persistent grid at most, a positive integer (the GPU's SM count; default 132, the
   * H200's).
   */
  readonly ctas?: number;
}

/** What {@link makeGemm} builds. */
export interface GemmKernels {
  /**
   * The main kernel. Parameters: A, B, then D [m, n] (outDtype), C, bias, residual, scaleA,
   * scaleB (those the sizes ask for, in this order; scales "tensor": float32 [1] each); with
   * split-K: A, B, W [m, n] float32 (the workspace, zeroed by the caller before each launch).
   * With scales "block", last: scaleA float32 [m, ⌈k/128⌉] and scaleB float32 [⌈n/128⌉,
   * ⌈k/128⌉] ({@link blockScaleShapes}), with or without split-K; with config.scaleLoad "tma"
   * and ⌈k/128⌉ not a multiple of 4 ({@link tmaScalesAsGiven}), scaleA is MN-major instead,
   * float32 [⌈k/128⌉, m rounded up to 4] ({@link blockScaleShapeMN}).
   */
  readonly main: PrimFunc;
  /**
   * With split-K: the finishing kernel, W, D, C, bias, residual, scaleA, scaleB (those asked
   * for; no scales with "block": W holds scaled sums), applying the epilogue to W's sums. Absent
   * without split-K.
   */
  readonly finish?: PrimFunc;
  /** The configuration's values as built (bk filled in, splitK the slices actually used). */
  readonly config: CheckedGemmConfig;
}

/**
 * A checked configuration (checkGemmSizes): every field given, `overlap` only where true.
 */
export type CheckedGemmConfig = Required<Omit<GemmConfig, "overlap">> & Pick<GemmConfig, "overlap">;

/** Elements of K, and of N, per float8 block scale (DeepSeek-V3's 1 × 128 and 128 × 128 blocks). */
export const SCALE_BLOCK = 128;

/**
 * The shapes of the block-scale tensors of an m × n × k float8 GEMM (`scales: "block"`): A's
 * [m, ⌈k/128⌉] (one per row and 128-wide K block) and B's [⌈n/128⌉, ⌈k/128⌉] (one per 128 × 128
 * block of B's [n, k] storage), both float32.
 * @example blockScaleShapes(130, 200, 300) // { a: [130, 3], b: [2, 3] }
 */
export function blockScaleShapes(
  m: number,
  n: number,
  k: number,
): { readonly a: readonly [number, number]; readonly b: readonly [number, number] } {
  const kb = Math.ceil(k / SCALE_BLOCK);
  return { a: [m, kb], b: [Math.ceil(n / SCALE_BLOCK), kb] };
}

/**
 * The shape of A's block scales as makeGemm's main kernel takes them with config.scaleLoad
 * "tma": MN-major, float32 [⌈k/128⌉, m rounded up to a multiple of 4], element [kb, i] the scale
 * of row i and K block kb (A's [m, ⌈k/128⌉] transposed; rows of a multiple of 16 bytes, TMA's
 * pitch: CUDA Driver API, cuTensorMapEncodeTiled). Columns past m are read only for rows whose
 * results are never stored (gemm() writes zeros there).
 * @example blockScaleShapeMN(130, 300) // [3, 132]
 */
export function blockScaleShapeMN(m: number, k: number): readonly [number, number] {
  return [Math.ceil(k / SCALE_BLOCK), Math.ceil(m / 4) * 4];
}

const LOAD_2D = "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes";
/** Tile rows per group of the tile order (L2 reuse of B's tiles; the example's). */
const GROUP = 8;
/** Bytes of a 128B-swizzle row: one K-tile row of a K-major operand, one column block MN-major. */
const ROW = 128;

const isFp8 = (d: GemmInput): boolean => d === "float8_e4m3" || d === "float8_e5m2";
const INPUTS: readonly GemmInput[] = ["float16", "bfloat16", "float8_e4m3", "float8_e5m2"];
const FLOATS: readonly GemmFloat[] = ["float32", "float16", "bfloat16"];

/** A positive integer or TX9001 naming `what`. */
function positive(x: unknown, what: string): number {
  if (!Number.isSafeInteger(x) || (x as number) < 1) {
    throw configError(`gemm: ${what} must be a positive integer, got ${String(x)}`);
  }
  return x as number;
}

/**
 * Check the sizes and the configuration; the configuration with its defaults filled in.
 * @throws TirxError TX9001 as {@link makeGemm}.
 */
export function checkGemmSizes(s: GemmSizes): CheckedGemmConfig {
  positive(s.m, "m");
  positive(s.n, "n");
  positive(s.k, "k");
  if (s.ctas !== undefined) positive(s.ctas, "ctas (the persistent grid's CTAs)");
  const dtB = s.dtypeB ?? s.dtype;
  for (const [name, d] of [
    ["dtype", s.dtype],
    ["dtypeB", dtB],
  ] as const) {
    if (!INPUTS.includes(d)) {
      throw configError(`gemm: ${name} is one of ${INPUTS.join(", ")}, got ${String(d)}`);
    }
  }
  const fp8 = isFp8(s.dtype);
  if (fp8 !== isFp8(dtB) || (!fp8 && s.dtype !== dtB)) {
    throw configError(
      `gemm: A and B are one 16-bit dtype or both float8 (wgmma's kinds: PTX ISA, wgmma.mma_async), got ${s.dtype} and ${dtB}`,
    );
  }
  if (fp8 && (s.transA === true || s.transB !== true)) {
    throw configError(
      `gemm: float8 operands must be K-major (wgmma has no transposed float8 operand: PTX ISA, wgmma.mma_async): A stored [m, k] (transA false) and B stored [n, k] (transB true), got transA ${s.transA === true}, transB ${s.transB === true}; transpose the operand to that layout first`,
    );
  }
  for (const [name, d] of [
    ["outDtype", s.outDtype],
    ["c", s.c],
    ["bias", s.bias],
    ["residual", s.residual],
  ] as const) {
    if (d !== undefined && !FLOATS.includes(d)) {
      throw configError(`gemm: ${name}'s dtype is one of ${FLOATS.join(", ")}, got ${String(d)}`);
    }
  }
  for (const [name, v, atLaunch] of [
    ["alpha", s.alpha, s.alphaAtLaunch],
    ["beta", s.beta, s.betaAtLaunch],
  ] as const) {
    checkEpilogueScalar(name, v);
    if (atLaunch !== undefined && typeof atLaunch !== "boolean") {
      throw configError(`gemm: ${name}AtLaunch is a boolean, got ${showValue(atLaunch)}`);
    }
    if (atLaunch === true && v !== undefined) {
      throw configError(
        `gemm: give ${name} (a constant of the kernel) or ${name}AtLaunch (a launch argument), not both`,
      );
    }
  }
  if (s.betaAtLaunch === true && s.c === undefined) {
    throw configError("gemm: beta scales C: give c (an input of D's shape) with betaAtLaunch");
  }
  if (s.beta !== undefined && s.c === undefined) {
    throw configError("gemm: beta scales C: give c (an input of D's shape) with beta");
  }
  if (
    s.scales !== undefined &&
    s.scales !== false &&
    s.scales !== true &&
    s.scales !== "tensor" &&
    s.scales !== "block"
  ) {
    throw configError(
      `gemm: scales is "tensor" (float32 [1] each) or "block" (A's [m, ⌈k/128⌉], B's [⌈n/128⌉, ⌈k/128⌉]), got ${JSON.stringify(s.scales)}`,
    );
  }
  if (scaleMode(s) !== "none" && !fp8) {
    throw configError(
      "gemm: scaleA and scaleB are the scales of float8 inputs (per tensor or per block); for 16-bit inputs use alpha",
    );
  }
  if (s.fastAccum !== undefined && typeof s.fastAccum !== "boolean") {
    throw configError(`gemm: fastAccum is a boolean, got ${showValue(s.fastAccum)}`);
  }
  if (s.fastAccum === true && !fp8) {
    throw configError(
      "gemm: fastAccum is for float8 inputs (the float8 tensor cores' short accumulation); 16-bit inputs accumulate in float32",
    );
  }
  if (s.fastAccum === true && scaleMode(s) === "block") {
    throw configError(
      'gemm: fastAccum is not offered with scales "block": block scales are applied when each K block\'s sum is promoted into float32',
    );
  }
  const acts = ["relu", "gelu", "silu"];
  if (s.activation !== undefined && !acts.includes(s.activation)) {
    throw configError(
      `gemm: activation is "relu", "gelu" or "silu", got ${JSON.stringify(s.activation)}`,
    );
  }
  const eb = fp8 ? 1 : 2;
  // TMA's global strides are multiples of 16 bytes (CUDA Driver API, cuTensorMapEncodeTiled).
  const pitches = [
    ["A", s.transA ? s.m : s.k, s.transA ? "m" : "k", s.pitchA],
    ["B", s.transB ? s.k : s.n, s.transB ? "k" : "n", s.pitchB],
  ] as const;
  for (const [name, inner, dim, pitch] of pitches) {
    if (pitch !== undefined && (!Number.isSafeInteger(pitch) || pitch < inner)) {
      throw configError(
        `gemm: pitch${name} is an integer ≥ ${name}'s row length ${inner} (${dim}), got ${String(pitch)}`,
      );
    }
    const len = pitch ?? inner;
    if ((len * eb) % 16 !== 0) {
      throw configError(
        `gemm: ${name}'s rows are ${len} elements (${pitch === undefined ? dim : `pitch${name}`}) of ${eb} byte(s), ${len * eb} bytes; TMA needs a row pitch that is a multiple of 16 bytes (CUDA Driver API, cuTensorMapEncodeTiled): pad ${dim} to ${Math.ceil((len * eb) / 16) * (16 / eb)} with zeros (the library call gemm() does)`,
      );
    }
  }
  const c = s.config;
  if (typeof c !== "object" || c === null) {
    throw configError(
      `gemm: config is { bm, bn, stages, bk?, cluster?, splitK?, scaleLoad?, overlap? } (GemmConfig), got ${showValue(c)}`,
    );
  }
  const CONFIG_KEYS = ["bm", "bn", "bk", "stages", "cluster", "splitK", "scaleLoad", "overlap"];
  for (const key of Object.keys(c)) {
    if (!CONFIG_KEYS.includes(key)) {
      const guess = didYouMean(key, CONFIG_KEYS);
      throw configError(
        `gemm: config has no field ${showValue(key)}${guess ? `; did you mean "${guess}"?` : ""} (fields: ${CONFIG_KEYS.join(", ")})`,
      );
    }
  }
  const missing = (["bm", "bn", "stages"] as const).filter((f) => c[f] === undefined);
  if (missing.length > 0) {
    throw configError(
      `gemm: config needs bm, bn and stages (GemmConfig; the other fields have defaults), missing ${missing.join(", ")}`,
    );
  }
  if (c.bm !== 64 && c.bm !== 128 && c.bm !== 192) {
    throw configError(
      `gemm: config.bm is 64, 128 or 192 (one, two or three consumer warpgroups), got ${showValue(c.bm)}`,
    );
  }
  // Three consumer warpgroups share the register file at setmaxnreg 160 (beside the producer's
  // 32: 4 · 128 threads, PTX ISA, setmaxnreg): 64 · bn / 128 accumulator registers per thread,
  // twice that when float8 promotes, fit at bn ≤ 128.
  if (c.bm === 192 && c.bn > 128) {
    throw configError(
      `gemm: config.bm 192 (three consumer warpgroups at setmaxnreg 160) takes bn ≤ 128, got ${showValue(c.bn)}`,
    );
  }
  // K-major B (transB) is read as [bn, bk] boxes: bn rows of one 128-byte swizzle row each, any
  // multiple of 32 (wgmma N a multiple of 8 up to 256: PTX ISA, wgmma.mma_async; whole 8-row
  // swizzle atoms of 1024 bytes, the alignment of each stage's tile). MN-major B is read in
  // 64-column blocks (one 128-byte swizzle row of 16-bit elements each). Block scales take
  // 64 … 256 in steps of 64: a tile then meets at most two 128-column scale blocks, at 64 or 128.
  const step = s.transB === true && s.scales !== "block" ? 32 : 64;
  if (!Number.isInteger(c.bn) || c.bn < 64 || c.bn > 256 || c.bn % step !== 0) {
    throw configError(
      step === 32
        ? `gemm: config.bn is a multiple of 32 in 64 … 256 with a K-major B (wgmma N ≤ 256; whole 8-row swizzle atoms), got ${showValue(c.bn)}`
        : `gemm: config.bn is a multiple of 64 in 64 … 256 (wgmma N ≤ 256; whole 128-byte swizzle rows of an MN-major B${s.scales === "block" ? ", and at most two 128-column block scales per tile" : ""}), got ${showValue(c.bn)}`,
    );
  }
  const bk = c.bk ?? ROW / eb;
  if (bk * eb !== ROW) {
    throw configError(
      `gemm: config.bk is ${ROW / eb} for ${s.dtype} (one 128-byte swizzle row of K), got ${showValue(bk)}`,
    );
  }
  if (
    c.scaleLoad !== undefined &&
    c.scaleLoad !== "global" &&
    c.scaleLoad !== "tma" &&
    c.scaleLoad !== "shared"
  ) {
    throw configError(
      `gemm: config.scaleLoad is "global", "tma" or "shared" (how the block scales are loaded), got ${showValue(c.scaleLoad)}`,
    );
  }
  const scaleLoad = c.scaleLoad ?? "global";
  if (scalesByTma(scaleLoad) && scaleMode(s) !== "block") {
    throw configError(
      `gemm: config.scaleLoad "${scaleLoad}" stages A's block scales with each K-tile; it needs scales "block" (float8 block scales)`,
    );
  }
  if (c.overlap !== undefined && typeof c.overlap !== "boolean") {
    throw configError(`gemm: config.overlap is true or false, got ${showValue(c.overlap)}`);
  }
  const overlap = c.overlap === true;
  const fp8Promoted = isFp8(s.dtype) && (s.fastAccum !== true || scaleMode(s) === "block");
  if (overlap && !fp8Promoted) {
    throw configError(
      `gemm: config.overlap promotes a float8 K-tile while the next one's wgmmas run, in a second register tile of sums: it needs float8 inputs that promote (block scales, or no fastAccum), got ${isFp8(s.dtype) ? "fastAccum" : s.dtype}`,
    );
  }
  // The register tiles of sums within the consumers' registers (ptxas would spill them).
  const tileRegs = gemmTileRegisters(c, fp8Promoted);
  const regBudget = gemmTileRegisterBudget(c.bm);
  if (tileRegs > regBudget) {
    const tiles = [
      `the accumulator's ${c.bn / 2}`,
      ...(fp8Promoted ? [`a promoted float8 K-tile's ${c.bn / 2}`] : []),
      ...(overlap ? [`overlap's second tile's ${c.bn / 2}`] : []),
    ];
    // The widest bn of the config's step whose tiles fit (bn is a multiple of the step).
    let fits = c.bn;
    while (fits > step && gemmTileRegisters({ ...c, bn: fits }, fp8Promoted) > regBudget)
      fits -= step;
    const without =
      overlap && gemmTileRegisters({ ...c, overlap: false }, fp8Promoted) <= regBudget;
    throw configError(
      `gemm: config bm ${c.bm}, bn ${c.bn}${overlap ? ", overlap" : ""} needs ${tileRegs} float32 registers of sums per consumer thread (${tiles.join(" + ")}), over the ${regBudget} its setmaxnreg of ${c.bm === 192 ? 160 : 232} leaves (ptxas would spill them); bn ${fits} fits${without ? `, and bn ${c.bn} without overlap` : ""}`,
    );
  }
  // With scaleLoad "tma" or "shared" each stage also holds A's float32 scales of the tile's bm
  // rows (gemmStageBytes: 4 K blocks of each, or the K block's); with "shared", B's scales of
  // the tile take gemmScaleTileBytes beside the ring.
  const stageBytes = gemmStageBytes(c, s.k);
  if (!Number.isInteger(c.stages) || c.stages < 2 || c.stages > 8) {
    throw configError(`gemm: config.stages is an integer in 2 … 8, got ${showValue(c.stages)}`);
  }
  // Split-K first: B's scales with "shared" take shared memory by K slice.
  const split = c.splitK ?? 1;
  if (!Number.isInteger(split) || split < 1) {
    throw configError(`gemm: config.splitK is a positive integer, got ${showValue(split)}`);
  }
  const sharedBytes = gemmSharedBytes(c, s.k);
  if (sharedBytes > MAX_GEMM_SHARED) {
    const bScales = gemmScaleTileBytes(c, s.k);
    let most = 0;
    while (most < 8 && gemmSharedBytes({ ...c, stages: most + 1 }, s.k) <= MAX_GEMM_SHARED) most++;
    const fix =
      most >= 2
        ? `at most ${most} stages`
        : bScales > 0
          ? `fewer than 2 stages fit beside B's scales: split K (config.splitK) or use "tma"`
          : "fewer than 2 stages fit: smaller tiles";
    throw configError(
      `gemm: ${c.stages} stages of ${c.bm} × ${c.bn} tiles take ${sharedBytes} bytes of shared memory${scalesByTma(scaleLoad) ? ` (with A's block scales${bScales > 0 ? `, and ${bScales} of B's` : ""})` : ""}, over ${MAX_GEMM_SHARED}; ${fix}`,
    );
  }
  if (c.cluster !== undefined && c.cluster !== 1 && c.cluster !== 2) {
    throw configError(
      `gemm: config.cluster is 1 or 2 (CTAs per cluster; 2 multicasts B's K-tiles to a pair of vertically adjacent tiles), got ${showValue(c.cluster)}`,
    );
  }
  const cluster = c.cluster ?? 1;
  // An MN-major B (16-bit, no transB) is loaded in 64-column blocks: a cluster's ranks take
  // half of them each, so that every copy's bytes are known where the stage's expect_tx is.
  if (cluster > 1 && s.transB !== true && (c.bn / (ROW / eb)) % cluster !== 0) {
    throw configError(
      `gemm: config.cluster ${cluster} splits B's K-tile between the cluster's CTAs: with an MN-major B (transB false) in ${ROW / eb}-column blocks, bn must be a multiple of ${(cluster * ROW) / eb}, got ${showValue(c.bn)}`,
    );
  }
  if (cluster > 1 && s.ctas !== undefined && s.ctas < cluster) {
    throw configError(
      `gemm: config.cluster ${cluster} needs ctas ≥ ${cluster} (the persistent grid is whole clusters), got ctas ${s.ctas}`,
    );
  }
  const kTiles = Math.ceil(s.k / bk);
  // The split-K epilogue kernel numbers D's elements with one int32 per thread.
  if (split > 1 && s.m * s.n > 2 ** 31 - 256) {
    throw configError(
      `gemm: split-K's epilogue kernel takes m · n below 2^31 (one int32 index per element), got ${s.m} · ${s.n}; use splitK 1`,
    );
  }
  // Slices of ⌈kTiles / split⌉ K-tiles; no slice is empty.
  const per = Math.ceil(kTiles / Math.min(split, kTiles));
  return {
    bm: c.bm,
    bn: c.bn,
    bk,
    stages: c.stages,
    cluster,
    splitK: Math.ceil(kTiles / per),
    scaleLoad,
    ...(overlap ? { overlap: true } : {}),
  };
}

/**
 * The GEMM kernels for D = epilogue(A · B) (see the file's header and {@link GemmEpilogue}):
 * A [m, k] (transA: stored [k, m]) and B [k, n] (transB: stored [n, k]) row-major, of `dtype`
 * (B `dtypeB`); D [m, n] of `outDtype`; any m, n, k ≥ 1 (rows of A and B a multiple of 16
 * bytes: TMA's pitch). Float32 accumulation; each element of D within output rounding plus
 * float32 accumulation error (k · 2^-24 · Σ|a·b|) of the exact result of the rounded inputs.
 * With `scales: "block"` (float8 only) the main kernel takes A's and B's block scales after its
 * other parameters (see {@link GemmKernels.main}) and applies them per 128-wide K block (the
 * file's header); each element is then within the block sums' float32 rounding (Σ over blocks of
 * (128 + 3)·2^-24·|sA·sB|·Σ_block |a·b|, plus 2^-24 per block's add) of the exact scaled sum.
 * On a GPU, float8 inputs add the tensor cores' truncation (core's wgmmaFp8F32Bound per k32
 * wgmma, its accumulator term the K-tile's partial sum; with `fastAccum`, the partial sum of all
 * of K so far).
 * @example
 *   const { main } = makeGemm({ m: 17, n: 40, k: 24, dtype: "bfloat16", bias: "float32",
 *     activation: "gelu", config: { bm: 64, bn: 64, stages: 2 } });
 * @example
 *   // k 300 of 1 byte is no multiple of 16 bytes: A and B stored with rows of 304
 *   const { main } = makeGemm({ m: 130, n: 200, k: 300, dtype: "float8_e4m3", transB: true,
 *     scales: "block", pitchA: 304, pitchB: 304, config: { bm: 128, bn: 128, stages: 4 } });
 *   // main(A, B, D, sA, sB)
 * @example // A's scales staged by TMA: main(A, B, D, sAᵀ [3, 132], sB [2, 3])
 *   makeGemm({ m: 130, n: 200, k: 300, dtype: "float8_e4m3", transB: true, scales: "block",
 *     pitchA: 304, pitchB: 304, config: { bm: 128, bn: 128, stages: 4, scaleLoad: "tma" } });
 * @throws TirxError TX9001 (kernels/config) for sizes (and `ctas`) that are not positive integers, an input
 *   dtype other than float16, bfloat16, float8_e4m3, float8_e5m2 (A and B one 16-bit dtype or
 *   both float8), a float8 operand that is not K-major (transA, or B without transB), an output
 *   or epilogue dtype other than float32/float16/bfloat16, alpha / beta not finite in float32, beta
 *   (or betaAtLaunch) without c, alphaAtLaunch / betaAtLaunch not booleans or given with alpha /
 *   beta, scales with 16-bit inputs or other than true / false / "tensor" / "block", fastAccum not a
 *   boolean or true with 16-bit inputs or block scales, an unknown activation, a row pitch that is not a multiple of 16
 *   bytes, a configuration that is not an object, lacks bm, bn or stages, has a field GemmConfig lacks or is outside {@link GemmConfig}'s ranges (bm, bn, bk, stages, shared memory,
 *   cluster, splitK; scaleLoad other than "global" / "tma" / "shared", or "tma" / "shared"
 *   without block scales; cluster 2 with ctas below 2, or with an MN-major B whose bn is not a
 *   multiple of 2 · 64 columns (128 bytes each); register tiles of sums over the consumers'
 *   registers: gemmTileRegisters over gemmTileRegisterBudget, e.g. promoted float8 at bn 224 or
 *   256, overlap at bn 192 or at bm 192 and bn 128),
 *   split-K with m · n of 2^31 − 256 or more.
 */
export function makeGemm(s: GemmSizes): GemmKernels {
  const cfg = checkGemmSizes(s);
  const { m, n, k } = s;
  const { bm: BM, bn: BN, bk: BK, stages: STAGES, splitK: SPLIT, cluster: CL } = cfg;
  const dtA = s.dtype;
  const dtB = s.dtypeB ?? dtA;
  const fp8 = isFp8(dtA);
  const eb = fp8 ? 1 : 2;
  const outDt: GemmFloat = s.outDtype ?? (fp8 ? "bfloat16" : (dtA as GemmFloat));
  const transA = s.transA === true;
  const transB = s.transB === true;
  const consumers = BM / 64;
  const mTiles = Math.ceil(m / BM);
  const nTiles = Math.ceil(n / BN);
  const kTiles = Math.ceil(k / BK);
  const kPer = Math.ceil(kTiles / SPLIT);
  // With config.cluster 2 a work unit is a pair of vertically adjacent tiles, CTA rank r of the
  // cluster taking tile row CL · p + r of pair row p (with mTiles odd the last pair's second
  // tile lies past m: its loads of A are TMA's zero fill, its rows never stored).
  const mPairs = Math.ceil(mTiles / CL);
  const units = mPairs * nTiles * SPLIT;
  // Clusters of the persistent grid (CTAs, with clusters of 1).
  const clusters = Math.min(units, Math.floor((s.ctas ?? 132) / CL));
  const turns = Math.ceil(units / clusters);
  // Every tile row lies inside D: no row guard on D's stores (nor clamp of A's scale rows).
  const wholeRows = m % (BM * CL) === 0;
  // A multicast B load (cluster 2) into both CTAs' stage.
  const LOAD_2D_MC = `${LOAD_2D}.multicast::cluster`;
  // Columns per 128-byte block of an MN-major 16-bit operand.
  const E = ROW / eb;
  const split = SPLIT > 1;
  const mode = scaleMode(s);
  const block = mode === "block";
  // Float8 K-tiles summed in a second register tile and promoted into acc (see fastAccum).
  const promoted = block || (fp8 && s.fastAccum !== true);
  const blockShapes = blockScaleShapes(m, n, k);
  // A's block scales by TMA with each stage (config.scaleLoad "tma" or "shared"; the file's
  // header); with "shared" B's are copied into shared memory once per tile.
  const tmaScales = block && scalesByTma(cfg.scaleLoad);
  const sharedScales = block && cfg.scaleLoad === "shared";
  // B's 128-column scale blocks a tile meets (1, or 2 for 192- and 256-column tiles).
  const nbt = scaleTileBlocks(BN);
  // Promotion beside the next K-tile's wgmmas (config.overlap; the file's header).
  const overlap = promoted && cfg.overlap === true;
  // A's scales with "tma" / "shared": as given, [m, kb], a [BM, 4] box of 4 K blocks (one of
  // them used) a stage, when their rows are whole 16 bytes; else MN-major [kb, mp], a [1, BM] box
  // of the K block's.
  const scalesAsGiven = tmaScales && tmaScalesAsGiven(k);
  // A stage's bytes, its full barrier's transaction bytes: A's and B's K-tiles, and A's scales
  // with "tma" / "shared" (gemmStageBytes).
  const stageBytes = gemmStageBytes(cfg, k);

  const epiParams = (): Record<string, ParamType> => ({
    ...(s.c !== undefined ? { C: T.Tensor([m, n], s.c) } : {}),
    ...(s.bias !== undefined ? { bias: T.Tensor([n], s.bias) } : {}),
    ...(s.residual !== undefined ? { residual: T.Tensor([m, n], s.residual) } : {}),
    ...(mode === "tensor"
      ? { scaleA: T.Tensor([1], "float32"), scaleB: T.Tensor([1], "float32") }
      : {}),
    ...(s.alphaAtLaunch === true ? { alpha: T.float32 } : {}),
    ...(s.c !== undefined && s.betaAtLaunch === true ? { beta: T.float32 } : {}),
  });
  const epiTensors = (h: Record<string, TileView | undefined>): EpilogueTensors => ({
    ...(h.C ? { C: h.C } : {}),
    ...(h.bias ? { bias: h.bias } : {}),
    ...(h.residual ? { residual: h.residual } : {}),
    ...(mode === "tensor" && h.scaleA && h.scaleB
      ? { scale: T.let_("sab", T.mul(h.scaleA.get([0]), h.scaleB.get([0]))) }
      : {}),
    ...(s.alphaAtLaunch === true ? { alpha: (h as unknown as { alpha: PrimExpr }).alpha } : {}),
    ...(s.betaAtLaunch === true ? { beta: (h as unknown as { beta: PrimExpr }).beta } : {}),
  });

  const params: Record<string, ParamType> = {
    A: T.Tensor(transA ? [k, s.pitchA ?? m] : [m, s.pitchA ?? k], dtA),
    B: T.Tensor(transB ? [n, s.pitchB ?? k] : [k, s.pitchB ?? n], dtB),
    ...(split
      ? { W: T.Tensor([m, n], "float32") }
      : { D: T.Tensor([m, n], outDt), ...epiParams() }),
    ...(block
      ? {
          scaleA: T.Tensor(
            tmaScales && !scalesAsGiven ? [...blockScaleShapeMN(m, k)] : [...blockShapes.a],
            "float32",
          ),
          scaleB: T.Tensor([...blockShapes.b], "float32"),
        }
      : {}),
  };
  const main = T.function(split ? "gemm_splitk" : "gemm", params, (args) => {
    const h = args as unknown as Record<string, TileView | undefined>;
    const A = h.A!;
    const B = h.B!;
    T.device_entry({
      launch: T.cuda.LaunchConfig({
        grid: clusters * CL,
        block: 128 * (1 + consumers),
        dynamic_shared_bytes: gemmDynamicSharedBytes(cfg, k),
        ...(CL > 1 ? { cluster: [CL, 1, 1] as [number, number, number] } : {}),
      }),
    });
    const tid = T.cuda.thread_idx("x");
    const wg = T.let_("wg", tid.floordiv(128));
    const swz = { align: 1024, layout: T.swizzle_mode("128B"), dynamic: true } as const;
    // K-major: [stages, rows, bk]; MN-major: [stages, rows / 64, bk, 64] (column blocks).
    const sA = transA
      ? T.alloc_shared([STAGES, BM / E, BK, E], dtA, { name: "sA", ...swz })
      : T.alloc_shared([STAGES, BM, BK], dtA, { name: "sA", ...swz });
    const sB = transB
      ? T.alloc_shared([STAGES, BN, BK], dtB, { name: "sB", ...swz })
      : T.alloc_shared([STAGES, BN / E, BK, E], dtB, { name: "sB", ...swz });
    // scaleLoad "tma": each stage's A scales, one TMA box after the tiles: [BM, 4] (as given:
    // row r's 4 K blocks from the K-tile's, rounded down to 4) or [1, BM] (a row of the MN-major
    // scales); TMA writes shared memory at 128-byte aligned addresses (PTX ISA,
    // cp.async.bulk.tensor), and BM · 16 and BM · 4 are multiples of 128.
    const sScaleA = tmaScales
      ? T.alloc_shared(scalesAsGiven ? [STAGES, BM, 4] : [STAGES, 1, BM], "float32", {
          name: "sScaleA",
          align: 128,
          dynamic: true,
        })
      : undefined;
    // scaleLoad "shared": B's scales of a tile, [blocks · kPer] (block j's K-tile kt at
    // j · kPer + kt), in two buffers used by alternate turns of the persistent loop.
    const sScaleB = sharedScales
      ? T.alloc_shared([2, nbt * kPer], "float32", {
          name: "sScaleB",
          align: 16,
          dynamic: true,
        })
      : undefined;
    const full = T.alloc_shared([STAGES], "uint64", { name: "full" });
    const empty = T.alloc_shared([STAGES], "uint64", { name: "empty" });
    const mapA = T.tensormap_encode_tiled(A, {
      box: transA ? [BK, E] : [BM, BK],
      swizzle: "128B",
    });
    // K-major B with a cluster of 2: each CTA loads BN / 2 rows (whole 8-row swizzle atoms:
    // BN is a multiple of 32).
    const mapB = T.tensormap_encode_tiled(B, {
      box: transB ? [BN / CL, BK] : [BK, E],
      swizzle: "128B",
    });
    // A's scales as given [m, ⌈k/128⌉]: a box of the tile's BM rows × 4 K blocks (inner extent
    // 16 bytes); MN-major [⌈k/128⌉, m rounded up to 4]: a box of one K block's BM rows (inner
    // extent BM · 4 bytes). Both multiples of 16: cuTensorMapEncodeTiled.
    const mapScaleA = tmaScales
      ? T.tensormap_encode_tiled(h.scaleA!, {
          box: scalesAsGiven ? [BM, 4] : [1, BM],
          swizzle: "none",
        })
      : undefined;
    T.if_(tid.eq(0), () => {
      for (const st of T.unroll(STAGES)) {
        T.ptx.mbarrier.init(full.sub(st), 1);
        // scaleLoad "tma": one arrival per consumer warp (each after its lanes' ld.shared of the
        // stage's scales, __syncwarp); else one per consumer warpgroup. With a cluster of 2,
        // those of both CTAs: either CTA's producer multicasts into both CTAs' stage.
        T.ptx.mbarrier.init(empty.sub(st), (tmaScales ? 4 * consumers : consumers) * CL);
      }
      T.ptx.fence.mbarrier_init();
    });
    // With a cluster, no CTA's barriers are armed, arrived on or multicast into before both
    // CTAs initialised them (PTX ISA, barrier.cluster: arrive has release, wait acquire
    // semantics by default).
    if (CL > 1) T.cuda.cluster_sync();
    else T.cuda.cta_sync();
    const rank = CL > 1 ? T.let_("rank", T.cuda.cluster_ctarank()) : undefined;
    // This CTA's cluster (its CTA index, with clusters of 1): the persistent loop's first unit.
    const unit0 = CL > 1 ? T.let_("unit0", T.cuda.block_idx("x").floordiv(CL)) : undefined;
    // Work unit u → its tile (grouped order: GROUP tile rows at a time; with a cluster, GROUP / CL
    // rows of pairs) and K slice.
    const GP = GROUP / CL;
    const tileOf = (u: ExprLike): PrimExpr => (split ? T.floordiv(u, SPLIT) : T.add(u, 0));
    const g = GP * nTiles;
    const rowsOf = (t: ExprLike) => T.min(T.sub(mPairs, T.floordiv(t, g).mul(GP)), GP);
    const origin = (u: ExprLike) => {
      const t = T.let_("t", tileOf(u));
      const rows = T.let_("rows", rowsOf(t));
      const grouped = T.floordiv(t, g)
        .mul(GP)
        .add(T.floormod(T.floormod(t, g), rows));
      // Below mPairs for every tile (the last group has mPairs mod GP rows), but the
      // verifier's ranges do not tie `rows` to the group: with mPairs not a multiple of GP
      // the tile row is clamped (a no-op at run time) so that D's stores are provably inside it
      // when m and n are tile multiples and they have no guard (TX2006 otherwise).
      // (One group, or whole groups: provable as it is.)
      const whole = mPairs <= GP || mPairs % GP === 0;
      const mp = whole ? grouped : T.min(grouped, mPairs - 1);
      const mt = rank ? mp.mul(CL).add(rank) : mp;
      // The tile column likewise: (t mod g) / rows is below nTiles, rows being the group's.
      const byRows = T.floordiv(T.floormod(t, g), rows);
      const nt = whole ? byRows : T.min(byRows, nTiles - 1);
      return {
        m0: T.let_("m0", mt.mul(BM)),
        n0: T.let_("n0", nt.mul(BN)),
        kt0: split ? T.let_("kt0", T.floormod(u, SPLIT).mul(kPer)) : undefined,
      };
    };
    // Ring iteration i (turn · kPer + kt): stage i mod STAGES, phase ⌊i / STAGES⌋ mod 2.
    const phase = (i: ExprLike) => T.floormod(T.floordiv(i, STAGES), 2);
    const eachUnit = (body: (u: PrimExpr, turn: PrimExpr) => void): void => {
      for (const turn of T.range(turns)) {
        const u = T.let_("u", T.add(unit0 ?? T.cuda.block_idx("x"), turn.mul(clusters)));
        T.if_(u.lt(units), () => body(u, turn));
      }
    };
    T.if_(
      wg.eq(0),
      () => {
        T.ptx.setmaxnreg(false, consumers === 3 ? 32 : 40);
        T.if_(tid.eq(0), () =>
          eachUnit((u, turn) => {
            const { m0, n0, kt0 } = origin(u);
            for (const kt of T.range(kPer)) {
              const it = T.let_("it", T.add(T.mul(turn, kPer), kt));
              const st = T.let_("st", T.floormod(it, STAGES));
              T.ptx.mbarrier.try_wait(empty.sub(st), T.sub(1, phase(it)));
              T.ptx.mbarrier.arrive.expect_tx(full.sub(st), stageBytes);
              const kb = kt0 ? T.add(kt0, kt) : kt;
              const k0 = T.let_("k0", T.mul(kb, BK));
              const bar = full.sub(st);
              // A's scales of K block kb (a float8 K-tile is one K block) for the tile's rows
              // m0 … m0 + BM − 1: rows past the tensor's m rounded up to 4 and a K block past the
              // last (a split-K slice running past K) are zero-filled by TMA, as A's own box is
              // there; the box's bytes complete on the full barrier either way.
              if (tmaScales) {
                T.cuda.tile.apply(T.ptx[LOAD_2D], sScaleA!.sub(st), h.scaleA!, {
                  tensor_map: mapScaleA!,
                  // As given: the box starts at K block kb rounded down to 4 (TMA's innermost
                  // coordinate is a multiple of 16 bytes: PTX ISA, cp.async.bulk.tensor).
                  coords: scalesAsGiven ? [m0, T.mul(T.floordiv(kb, 4), 4)] : [kb, m0],
                  mbar: bar,
                });
              }
              if (transA) {
                for (let b = 0; b < BM / E; b++) {
                  T.cuda.tile.apply(T.ptx[LOAD_2D], sA.sub(st, b), A, {
                    tensor_map: mapA,
                    coords: [k0, T.add(m0, b * E)],
                    mbar: bar,
                  });
                }
              } else {
                T.cuda.tile.apply(T.ptx[LOAD_2D], sA.sub(st), A, {
                  tensor_map: mapA,
                  coords: [m0, k0],
                  mbar: bar,
                });
              }
              // With a cluster of 2, B's K-tile in two parts, this CTA's (rank r's) multicast into
              // both CTAs' stage at the same offset, completing its bytes on the full barrier at
              // the same offset in each (PTX ISA, cp.async.bulk.tensor: .multicast::cluster):
              // rows r · BN / 2 … of a K-major B, column blocks r · BN / 128 … of an MN-major one.
              // Each CTA's full barrier thus expects the whole stage's bytes, as without.
              const mc = rank ? { cta_mask: T.uint16((1 << CL) - 1) } : {};
              const loadB = rank ? T.ptx[LOAD_2D_MC] : T.ptx[LOAD_2D];
              if (transB) {
                const part = rank
                  ? sB.sub(st).rearrange("(p r) c -> p r c", { p: CL }).sub(rank)
                  : sB.sub(st);
                T.cuda.tile.apply(loadB, part, B, {
                  tensor_map: mapB,
                  coords: [rank ? T.add(n0, rank.mul(BN / CL)) : n0, k0],
                  mbar: bar,
                  ...mc,
                });
              } else {
                // Rank r's blocks r · BN / (E · CL) + i (checkGemmSizes: an even count).
                const per = BN / E / CL;
                for (let i = 0; i < per; i++) {
                  const b = rank ? T.let_("bb", rank.mul(per).add(i)) : i;
                  T.cuda.tile.apply(loadB, sB.sub(st, b), B, {
                    tensor_map: mapB,
                    coords: [k0, T.add(n0, T.mul(b, E))],
                    mbar: bar,
                    ...mc,
                  });
                }
              }
            }
          }),
        );
      },
      () => {
        // The register file (64K) holds the producer's 40 and two consumers' 232, or the
        // producer's 32 and three consumers' 160 (PTX ISA, setmaxnreg: .inc blocks until the
        // registers are free).
        T.ptx.setmaxnreg(true, consumers === 3 ? 160 : 232);
        // Consumer cw = wg − 1: 0 with one consumer; with two, spelled (wg + 1) mod 2 so that
        // bounds analysis sees it non-negative (as the example does); with three, (wg + 2) mod 3.
        const cw =
          consumers === 1 ? undefined : T.let_("cw", wg.add(consumers - 1).floormod(consumers));
        const D = T.layout.wgmma_tile_layout("D", 64, BN, "float32");
        const acc = T.alloc_local([64, BN], "float32", { name: "acc", layout: D });
        const slots = acc.flat();
        // Float8 (unless fastAccum): the K-tile's products, promoted into acc after each K-tile
        // (with block scales, scaled there).
        // With config.overlap two of them, used by the two K-tiles of a pair.
        const tmpTiles = promoted
          ? (overlap ? [0, 1] : [0]).map((i) =>
              T.alloc_local([64, BN], "float32", { name: `tmp${i}`, layout: D }),
            )
          : undefined;
        const tmps = tmpTiles?.map((x) => x.flat());
        const epi = split ? undefined : epiTensors(h);
        const t = T.let_("t", T.floormod(tid, 128));
        // The pair of columns a thread stores goes out as one 4- or 8-byte store when n is even.
        // Without an epilogue (or with ReLU) the vectorized loop converts the accumulator slots
        // straight into D; an epilogue that reads C, the bias or the residual, or binds its value
        // (GELU, SiLU), computes the pair into `pairOut` first, then stores it vectorized.
        const direct =
          s.c === undefined &&
          s.bias === undefined &&
          s.residual === undefined &&
          (s.activation === undefined || s.activation === "relu");
        const pairOut = split || direct ? undefined : T.alloc_local([2], outDt, { name: "pair" });
        // This thread's first row of its warpgroup's 64 (the wgmma D fragment: 16 per warp, 8
        // lanes' groups of 4), and of the tile from row m0 (see the header).
        const wgRow = cw ? T.mul(cw, 64) : 0;
        const firstRow = (m0: PrimExpr): PrimExpr =>
          T.let_("r0", T.add(T.add(m0, wgRow), fragRow(t)));
        // K block kb's scales for this thread's rows r0 and r0 + 8 (sa0, sa1) and its columns'
        // one or two n blocks (sb0, sb1), as plain loads (the file's header); with scaleLoad
        // "tma" only B's (sb0, sb1): A's come with the stage.
        const two = nbt === 2;
        const loadBlockScales = (r0: PrimExpr, n0: PrimExpr, kb: ExprLike): PrimExpr[] => {
          const SA = h.scaleA!;
          const SB = h.scaleB!;
          const nBlocks = blockShapes.b[0];
          const sa = tmaScales
            ? []
            : [0, 1].map((i) => {
                const r = T.add(r0, i * 8);
                return SA.get([wholeRows ? r : T.min(r, m - 1), kb]);
              });
          const nb0 = T.floordiv(n0, SCALE_BLOCK);
          // n0 is a multiple of bn: a 64- or 128-column tile lies in one 128-column block, a
          // 192- or 256-column one spans two (the second clamped at the last block: its columns
          // past n are never stored).
          const sb0 = SB.get([nb0, kb]);
          const sb1 = two ? SB.get([T.min(T.add(nb0, 1), nBlocks - 1), kb]) : undefined;
          return sb1 === undefined ? [...sa, sb0] : [...sa, sb0, sb1];
        };
        // A K block's promotion factors sA · sB, from its scales [sa0, sa1, sb0, sb1?] and n0 the
        // tile's column: f(j, i) scales column group j (8 columns) of this thread's row i (0, 1).
        const blockFactors = (
          v: readonly ExprLike[],
          n0: PrimExpr,
          live: PrimExpr | undefined,
        ): ((j: number, i: number) => ExprLike) => {
          const [sa0, sa1, sb0, sb1] = v;
          const sa = [sa0!, sa1!];
          // sA·sB for this thread's two rows and the tile's one or two n blocks, once per K
          // block (not per column group). A K-tile past K (`live` false: the last split-K
          // slice's tail) has sums of TMA's zero fill and scales of a block it does not own:
          // its factor is 0, so that it adds nothing even when that block's scales are not
          // finite (0 · ±Inf would be NaN).
          const factor = (x: ExprLike): ExprLike =>
            live === undefined ? x : T.if_then_else(live, x, 0);
          const sab = [0, 1].map((i) => [
            T.let_(`sab${i}`, factor(T.mul(sa[i]!, sb0!))),
            sb1 === undefined ? undefined : T.let_(`sabn${i}`, factor(T.mul(sa[i]!, sb1))),
          ]);
          // n0 is a multiple of bn (a multiple of 64), so it starts a 128-column block or
          // sits 64 columns into one: the tile's columns cross into the next block at 128 or
          // 64 (only 192-column tiles meet both; 256-column ones always start a block).
          if (sb1 === undefined) return (_, i) => sab[i]![0]!;
          if (BN % (2 * SCALE_BLOCK) === 0) return (j, i) => sab[i]![8 * j < SCALE_BLOCK ? 0 : 1]!;
          // 192 columns: 0 … 63 in block nb0 and 128 … 191 in nb0 + 1 either way; 64 … 127
          // in nb0 when the tile starts a block, else in nb0 + 1. One selected factor per
          // row for those, so that one promotion serves both tiles: H200, 1.3-2.5% faster
          // at m 8192 than a branch between two copies of it in every K-tile
          // (bench/results/gemm-fp8-2026-12-03d.md, table 4).
          const starts = T.floormod(n0, SCALE_BLOCK).eq(0);
          const mid = [0, 1].map((i) =>
            T.let_(`sabm${i}`, T.if_then_else(starts, sab[i]![0]!, sab[i]![1]!)),
          );
          return (j, i) =>
            8 * j < SCALE_BLOCK / 2 ? sab[i]![0]! : 8 * j < SCALE_BLOCK ? mid[i]! : sab[i]![1]!;
        };
        /**
         * The promotion acc = fma(tmp, f(j, i), acc) after a K block's wgmmas, row by row: this
         * thread's rows i (0, 1) outer, their column groups j (8 columns) inner, so that a row's
         * FFMAs read one factor in turn (see the header's promotion order); slots as in the
         * header's D fragment.
         */
        const promoteBy = (
          tmp: NonNullable<typeof tmps>[number],
          f: (j: number, i: number) => ExprLike,
        ): void => {
          for (const i of [0, 1]) {
            for (let j = 0; j < BN / 8; j++) {
              for (const e of [0, 1]) {
                const slot = 4 * j + 2 * i + e;
                slots.set([slot], T.fma(tmp.get([slot]), f(j, i), slots.get([slot])));
              }
            }
          }
        };
        // Block scales in registers, two sets used by alternate K-tiles (the K loop unrolled by 2):
        // K-tile kt's promotion reads its set, then refills it with K-tile kt + 2's scales, so a
        // load has two whole K-tiles (waits, wgmmas, promotions) to land before it is read. With
        // one set refilled a K-tile ahead (the loads' first use was the copy into the set at the
        // end of the same K-tile) the block-scaled kernel ran 6% slower at 8192³ and 17% at
        // 1024 × 8192 × 8192 than with its scales loaded once per tile (H200,
        // bench/results/gpu-runs-2026-12-02f.md): a load served by L2 outlasts one K-tile.
        // With scaleLoad "shared" there are none: both scales are read from shared memory.
        const NS = sharedScales ? 0 : (two ? 2 : 1) + (tmaScales ? 0 : 2);
        // With scaleLoad "tma" the sets hold B's scales only. This thread's first row within
        // the tile: its rows' scales are rows rl and rl + 8 of the stage's slot ([BM, 4] as
        // given: the K block's column; [1, BM] transposed: elements rl and rl + 8).
        const rl = tmaScales ? T.let_("rl", T.add(wgRow, fragRow(t))) : undefined;
        const sets =
          block && NS > 0
            ? [0, 1].map((i) => T.alloc_local([NS], "float32", { name: `scl${i}` }))
            : undefined;
        // scaleLoad "shared": B's block scales of a unit's tile in sScaleB's buffer of its turn's
        // parity, element j · kPer + kt the scale of the tile's 128-column block j (nb0 + j,
        // clamped at the last: its columns past n are never stored) and of its slice's K-tile
        // kt (clamped at the last K block: a K-tile past K has factor 0, blockFactors' `live`).
        // The consumer threads copy them, thread tc (its index among them) elements tc + CT · r;
        // the next unit's are loaded into registers before this unit's epilogue and stored
        // after it (their latency hidden behind the epilogue; more than 8 a thread are copied
        // at the unit's end instead), then one named barrier of the consumers publishes them.
        // Two buffers: unit u + 1's copy, at unit u's end, goes into the buffer unit u − 1 read,
        // and every consumer thread's reads of unit u − 1 came before the barrier that ended it.
        const tileScales = nbt * kPer;
        const CT = 128 * consumers;
        const perThread = Math.ceil(tileScales / CT);
        // tid − 128, spelled (tid + CT − 128) mod CT so that bounds analysis sees it in 0 … CT − 1
        // (as cw above).
        const tc = sharedScales ? T.let_("tc", T.add(tid, CT - 128).floormod(CT)) : undefined;
        const tileScale = (n0: PrimExpr, kt0: PrimExpr | undefined, i: PrimExpr): PrimExpr => {
          const nb = T.min(
            T.add(T.floordiv(n0, SCALE_BLOCK), T.floordiv(i, kPer)),
            blockShapes.b[0] - 1,
          );
          const kt = T.floormod(i, kPer);
          return h.scaleB!.get([nb, kt0 ? T.min(T.add(kt0, kt), kTiles - 1) : kt]);
        };
        /** `body(i, r)` for this thread's elements i = tc + CT · r of a tile's B scales. */
        const eachTileScale = (body: (i: PrimExpr, r: number) => void): void => {
          for (let r = 0; r < perThread; r++) {
            const i = T.let_("si", T.add(tc!, r * CT));
            if ((r + 1) * CT <= tileScales) body(i, r);
            else T.if_(i.lt(tileScales), () => body(i, r));
          }
        };
        const prefetch = sharedScales && perThread <= 8;
        const nextScales = prefetch
          ? T.alloc_local([perThread], "float32", { name: "sbNext" })
          : undefined;
        /**
         * Copy unit (n0, kt0)'s B scales into buffer `par`, global → shared directly (a loop: the
         * first unit's, and every unit's when they are more than 8 a thread).
         */
        const copyTileScales = (n0: PrimExpr, kt0: PrimExpr | undefined, par: ExprLike): void => {
          for (const r of T.range(perThread)) {
            const i = T.let_("si", T.add(tc!, T.mul(r, CT)));
            T.if_(i.lt(tileScales), () => sScaleB!.set([par, i], tileScale(n0, kt0, i)));
          }
        };
        if (sharedScales) {
          // The first unit's (this CTA's first, blockIdx.x: there are at least as many units as
          // CTAs) into buffer 0.
          const o = origin(unit0 ?? T.cuda.block_idx("x"));
          copyTileScales(o.n0, o.kt0, 0);
          T.cuda.bar_sync(1, CT);
        }
        // scaleLoad "tma" with overlap: a K-tile's two A scales read from its stage, one pair
        // per register tile of sums (the pair's second K-tile's are read before the first's
        // promotion).
        const stg =
          tmaScales && overlap
            ? [0, 1].map((i) => T.alloc_local([2], "float32", { name: `stg${i}` }))
            : undefined;
        eachUnit((u, turn) => {
          const { m0, n0, kt0 } = origin(u);
          // scaleLoad "shared": this unit's buffer of B's scales.
          const par = sharedScales ? T.let_("par", T.floormod(turn, 2)) : undefined;
          T.tile.wg.zero(acc);
          const rb = block ? firstRow(m0) : undefined;
          // K block kb's index, clamped at the last one (a split-K slice may run past the last
          // K-tile, where TMA fills zeros; the loads two K-tiles ahead run past it too).
          const kbOf = (kt: ExprLike, ahead: number): ExprLike => {
            const kb = kt0 ? T.add(T.add(kt0, kt), ahead) : T.add(kt, ahead);
            return ahead > 0 || SPLIT * kPer > kTiles ? T.min(kb, kTiles - 1) : kb;
          };
          /** Set `set` := K-tile kt + ahead's scales. */
          const fill = (set: number, kt: ExprLike, ahead: number): void =>
            loadBlockScales(rb!, n0, kbOf(kt, ahead)).forEach((x, i) => sets![set]!.set([i], x));
          /** Whether K-tile kt holds K (false only in the last split-K slice's tail). */
          const liveOf = (kt: ExprLike): PrimExpr | undefined =>
            SPLIT * kPer > kTiles ? T.add(kt0 ?? 0, kt).lt(kTiles) : undefined;
          /** The factors of K-tile kt's promotion from A's scales `sa` and B's `sb`. */
          const factorsOf = (kt: ExprLike, sa: ExprLike[], sb: ExprLike[]) =>
            blockFactors([...sa, ...sb], n0, liveOf(kt));
          /** What `issue` hands to the K-tile's promotion. */
          interface Issued {
            readonly st: PrimExpr;
            readonly sa: ExprLike[];
            /** With scaleLoad "shared": the factors, computed before the wgmmas. */
            readonly f?: (j: number, i: number) => ExprLike;
          }
          /** K-tile kt's stage: `it` its place in the CTA's sequence of K-tiles, `st` its slot. */
          const stageOf = (kt: ExprLike): { it: PrimExpr; st: PrimExpr } => {
            const it = T.let_("it", T.add(T.mul(turn, kPer), kt));
            return { it, st: T.let_("st", T.floormod(it, STAGES)) };
          };
          /** Wait until K-tile kt's stage is full (its slot `st` returned). */
          const waitFull = (kt: ExprLike): PrimExpr => {
            const { it, st } = stageOf(kt);
            T.ptx.mbarrier.try_wait(full.sub(st), phase(it));
            return st;
          };
          /**
           * With scaleLoad "tma" or "shared": A's scales of this thread's two rows for K-tile kt,
           * read from its full stage `st` (each lane's reads come before its warp's arrival on
           * the empty barrier in `release`, which lets the producer overwrite the slot); with
           * overlap kept in `stg[buf]`. None otherwise.
           */
          const readScalesA = (kt: ExprLike, st: PrimExpr, buf: number): ExprLike[] => {
            if (!tmaScales) return [];
            // As given, the K block's column of the stage's 4 (its index mod 4).
            const col = scalesAsGiven ? T.floormod(kt0 ? T.add(kt0, kt) : kt, 4) : undefined;
            const read = [0, 1].map((i) => {
              const r = i === 0 ? rl! : T.add(rl!, 8);
              return sScaleA!.get(col ? [st, r, col] : [st, 0, r]);
            });
            if (!stg) return read.map((x, i) => T.let_(`sa${i}`, x));
            read.forEach((x, i) => stg[buf]!.set([i], x));
            return [0, 1].map((i) => stg[buf]!.get([i]));
          };
          /**
           * With scaleLoad "shared": K-tile kt's promotion factors from A's scales `sa` and B's,
           * read from this unit's buffer (one address for every thread: a broadcast).
           */
          const sharedFactors = (kt: ExprLike, sa: ExprLike[]) =>
            factorsOf(
              kt,
              sa,
              Array.from({ length: nbt }, (_, j) =>
                T.let_(`sb${j}`, sScaleB!.get([par!, T.add(kt, j * kPer)])),
              ),
            );
          /**
           * Issue the wgmmas of the K-tile in stage `st` (into register tile `buf` of the sums
           * when promoted).
           */
          const issueMma = (st: PrimExpr, buf: number): void => {
            const opA = transA
              ? sA.sub(st, cw ?? 0)
              : consumers === 1
                ? sA.sub(st)
                : sA.sub(st).rearrange("(w r) c -> w r c", { r: 64 }).sub(cw!);
            const opB = transB ? sB.sub(st) : sB.sub(st).rearrange("b k c -> k b c");
            if (promoted) {
              T.tile.wg.gemm_async(tmpTiles![buf]!, opA, opB, { transA, transB, accum: false });
            } else T.tile.wg.gemm_async(acc, opA, opB, { transA, transB });
          };
          /**
           * K-tile kt's first half: wait for its stage and issue its wgmmas (into register tile
           * `buf` of the sums when promoted); with scaleLoad "tma", read the stage's A scales of
           * this thread's two rows as soon as the stage is full: returned, or with overlap kept
           * in `stg[buf]`. With "shared" (in the overlap loop; the serial loop reads a K-tile
           * ahead, below), B's scales are read too and the promotion's factors computed here,
           * before the wgmmas, so that after their wait the promotion's FMAs depend on no load.
           */
          const issue = (kt: ExprLike, buf: number): Issued => {
            const st = waitFull(kt);
            const sa = readScalesA(kt, st, buf);
            const f = sharedScales ? sharedFactors(kt, sa) : undefined;
            issueMma(st, buf);
            return { st, sa, ...(f ? { f } : {}) };
          };
          /** Free K-tile stage `st` for the producer, after a wait that covers its wgmmas. */
          const release = (st: PrimExpr): void => {
            // With a cluster of 2, thread (lane) c arrives on the stage's empty barrier in CTA
            // c: either CTA's producer multicasts into this CTA's stage (a remote arrive,
            // mbarrier.arrive.shared::cluster, as the example's).
            const arrive = (x: PrimExpr): void => {
              if (CL > 1) {
                T.if_(x.lt(CL), () =>
                  T.ptx.mbarrier.arrive.cluster(empty.sub(st), x.cast("uint32")),
                );
              } else T.if_(x.eq(0), () => T.ptx.mbarrier.arrive(empty.sub(st)));
            };
            if (tmaScales) {
              // Every lane of the warp has read its scales (bar.warp.sync orders the lanes'
              // reads before lane 0's arrival: PTX ISA, memory consistency model); then one
              // arrival per warp (the empty barrier counts 4 per consumer warpgroup).
              T.cuda.__syncwarp();
              arrive(T.floormod(t, 32));
            } else arrive(t);
          };
          /**
           * K-tile kt's promotion factors with block scales: computed in `issue` with "shared";
           * else from A's `sa` with scaleLoad "tma" and the rest of register set `set`.
           */
          const factors = (kt: ExprLike, h: Issued, set: number) =>
            h.f ??
            factorsOf(
              kt,
              h.sa,
              Array.from({ length: NS }, (_, i) => sets![set]!.get([i])),
            );
          /**
           * K-tile kt's second half, after a wait that covers its wgmmas: free its stage, promote
           * register tile `buf` (block scales: see `factors`; register set `set` is then
           * refilled two K-tiles ahead).
           */
          const finish = (kt: ExprLike, h: Issued, buf: number, set: number): void => {
            release(h.st);
            if (block) {
              promoteBy(tmps![buf]!, factors(kt, h, set));
              if (NS > 0) fill(set, kt, 2);
            } else if (promoted) T.tile.wg.add(acc, acc, tmpTiles![buf]!);
          };
          if (block && NS > 0) {
            fill(0, 0, 0);
            fill(1, 0, 1);
          }
          if (overlap) {
            // K-tiles in pairs: both issue their wgmmas (into the two register tiles of sums),
            // then wgmma.wait_group 1 retires the first, whose promotion's FMAs run beside the
            // second's wgmmas; then the second is waited for and promoted. (A pipeline across
            // the loop's back edge, K-tile kt + 1 issued before kt's promotion in every
            // iteration, made ptxas serialize every wgmma: C7514, an accumulator read while a
            // wgmma group issued in the previous iteration may be in flight.) kPer is static:
            // an odd last K-tile runs alone. The scale sets go by K-tile parity, as below.
            for (const kp of T.range(Math.floor(kPer / 2))) {
              const k0 = T.let_("kt", T.mul(kp, 2));
              const h0 = issue(k0, 0);
              const h1 = issue(T.add(k0, 1), 1);
              T.ptx.wgmma.wait_group(1);
              finish(k0, h0, 0, 0);
              T.ptx.wgmma.wait_group(0);
              finish(T.add(k0, 1), h1, 1, 1);
            }
            if (kPer % 2 === 1) {
              const h = issue(kPer - 1, 0);
              T.ptx.wgmma.wait_group(0);
              finish(kPer - 1, h, 0, 0);
            }
          } else {
            /**
             * The K loop unrolled by 2: `f(kt, 0)` for the even K-tiles and `f(kt, 1)` for the odd
             * ones (the last pair's second guarded when kPer is odd), so that alternate K-tiles use
             * alternate register sets.
             */
            const inPairs = (f: (kt: PrimExpr, set: number) => void): void => {
              for (const kp of T.range(Math.ceil(kPer / 2))) {
                const k0 = T.let_("kt", T.mul(kp, 2));
                f(k0, 0);
                const k1 = T.add(k0, 1);
                if (kPer % 2 === 0) f(k1, 1);
                else T.if_(k1.lt(kPer), () => f(k1, 1));
              }
            };
            /** K-tile kt whole: its wgmmas, their wait, its promotion (set: its scales). */
            const step = (kt: PrimExpr, set: number): void => {
              const h = issue(kt, 0);
              T.ptx.wgmma.wait_group(0);
              finish(kt, h, 0, set);
            };
            if (block && NS > 0) {
              inPairs(step);
            } else if (sharedScales) {
              // scaleLoad "shared", a K-tile ahead: right after K-tile kt's wgmmas are issued,
              // while they run, K-tile kt + 1's stage is waited for, its scales read and its
              // promotion factors formed into the other of two register sets (the loop unrolled
              // by 2); kt's promotion then reads the factors formed during K-tile kt − 1. Formed
              // in the K-tile itself (`issue`), ptxas placed the ld.shared and multiplies between
              // the K-tile's wgmma issues, each wgmma after the first waiting for them (SASS,
              // ptxas 13.0); the mbarrier wait loop before them here keeps them after the last.
              // Measured against forming them in the K-tile: the file header's scaleLoad "shared".
              // The two register sets of a K-tile's distinct factors (2, 4 or 6: see
              // blockFactors), allocated at the first K-tile's, and which of them scales column
              // group j of row i (the same in every K-tile).
              let facs: ReturnType<typeof T.alloc_local>[] | undefined;
              let pick: ((j: number, i: number) => number) | undefined;
              /** Wait for K-tile kt's stage; its distinct factors into register set `set`. */
              const prepare = (kt: ExprLike, set: number): void => {
                const f = sharedFactors(kt, readScalesA(kt, waitFull(kt), 0));
                const distinct = new Map<ExprLike, number>();
                const at = Array.from({ length: BN / 8 }, (_, j) =>
                  [0, 1].map((i) => {
                    const x = f(j, i);
                    if (!distinct.has(x)) distinct.set(x, distinct.size);
                    return distinct.get(x)!;
                  }),
                );
                pick ??= (j, i) => at[j]![i]!;
                facs ??= [0, 1].map((q) =>
                  T.alloc_local([distinct.size], "float32", { name: `fac${q}` }),
                );
                for (const [x, q] of distinct) facs[set]!.set([q], x);
              };
              /** K-tile kt (its stage full): wgmmas, kt + 1's factors, wait, promotion. */
              const body = (kt: PrimExpr, cur: number): void => {
                const { st } = stageOf(kt);
                issueMma(st, 0);
                const k1 = T.add(kt, 1);
                T.if_(k1.lt(kPer), () => prepare(k1, 1 - cur));
                T.ptx.wgmma.wait_group(0);
                release(st);
                promoteBy(tmps![0]!, (j, i) => facs![cur]!.get([pick!(j, i)]));
              };
              prepare(0, 0);
              inPairs(body);
            } else {
              for (const kt of T.range(kPer)) step(kt, 0);
            }
          }
          // scaleLoad "shared": the next unit's B scales, loaded now, stored after the epilogue.
          const next = sharedScales ? T.let_("un", T.add(u, clusters)) : undefined;
          const nextOrigin = (): ReturnType<typeof origin> => origin(next!);
          if (prefetch) {
            T.if_(next!.lt(units), () => {
              const o = nextOrigin();
              eachTileScale((i, r) => nextScales!.set([r], tileScale(o.n0, o.kt0, i)));
            });
          }
          // This thread's first row and column of the tile (see the header).
          const r0 = rb ?? firstRow(m0);
          const c0 = T.let_("c0", T.add(n0, fragCol(t)));
          const put = (r: PrimExpr, c: PrimExpr, v: PrimExpr): void => {
            if (split) T.cuda.red_add(h.W!.ptr([r, c]), v);
            else h.D!.set([r, c], epilogueValue(v, r, c, s, epi!).cast(outDt));
          };
          // Column pairs outer, this thread's two rows (r0, r0 + 8) inner: a bias pair is loaded
          // once for both rows.
          for (const j of T.unroll(BN / 8)) {
            const c = T.let_("c", T.add(c0, T.mul(j, 8)));
            const v = (i: number, e: ExprLike): PrimExpr =>
              slots.get([T.add(T.add(T.mul(j, 4), i * 2), e)]);
            /** `body` for each of the two rows inside D (a row guard unless m is whole tiles). */
            const rows = (body: (i: number, r: PrimExpr) => void): void => {
              for (const i of [0, 1]) {
                const r = T.let_("r", T.add(r0, i * 8));
                if (wholeRows) body(i, r);
                else T.if_(r.lt(m), () => body(i, r));
              }
            };
            // With n even the pair is one vectorized store (c even: 4- or 8-byte aligned), as
            // the example's T.tile.wg.copy stores it.
            const pairs = (): void => {
              if (n % 2 === 0 && direct && !split) {
                rows((i, r) => {
                  for (const e of T.vectorized(2)) put(r, T.add(c, e), v(i, e));
                });
              } else if (n % 2 === 0 && pairOut !== undefined) {
                const bias =
                  epi!.bias === undefined
                    ? undefined
                    : [0, 1].map((e) =>
                        T.let_(`bias${e}`, epi!.bias!.get([T.add(c, e)]).cast("float32")),
                      );
                rows((i, r) => {
                  for (const e of [0, 1]) {
                    const ce = T.add(c, e);
                    const pre = bias ? { bias: bias[e]! } : undefined;
                    pairOut.set([e], epilogueValue(v(i, e), r, ce, s, epi!, pre).cast(outDt));
                  }
                  for (const e of T.vectorized(2)) h.D!.set([r, T.add(c, e)], pairOut.get([e]));
                });
              } else {
                rows((i, r) => {
                  for (const e of [0, 1]) put(r, T.add(c, e), v(i, e));
                });
              }
            };
            // c is even: with n even, c < n − 1 ⇔ c < n (the pair is inside or outside
            // together); with n odd the last pair may hold one column.
            if (n % BN === 0) pairs();
            else if (n % 2 === 0) T.if_(c.lt(n - 1), pairs);
            else {
              T.if_(c.lt(n - 1), pairs, () =>
                T.if_(c.lt(n), () => rows((i, r) => put(r, c, v(i, 0)))),
              );
            }
          }
          if (sharedScales) {
            // The next unit's B scales into the other buffer, then the consumers' barrier (every
            // consumer thread runs the same units: a uniform barrier).
            T.if_(next!.lt(units), () => {
              const other = T.sub(1, par!);
              if (prefetch) eachTileScale((i, r) => sScaleB!.set([other, i], nextScales!.get([r])));
              else {
                const o = nextOrigin();
                copyTileScales(o.n0, o.kt0, other);
              }
            });
            T.cuda.bar_sync(1, CT);
          }
        });
      },
    );
    // No CTA exits while its peer may still multicast into it or arrive on its barriers.
    if (CL > 1) T.cuda.cluster_sync();
  });
  if (!split) return { main, config: cfg };
  const finishParams: Record<string, ParamType> = {
    W: T.Tensor([m, n], "float32"),
    D: T.Tensor([m, n], outDt),
    ...epiParams(),
  };
  const THREADS = 256;
  const finish = T.function("gemm_splitk_epilogue", finishParams, (args) => {
    const h = args as unknown as Record<string, TileView | undefined>;
    T.device_entry({
      launch: T.cuda.LaunchConfig({ grid: Math.ceil((m * n) / THREADS), block: THREADS }),
    });
    const idx = T.let_("idx", T.add(T.mul(T.cuda.block_idx("x"), THREADS), T.cuda.thread_idx("x")));
    T.if_(idx.lt(m * n), () => {
      const epi = epiTensors(h);
      const r = T.let_("r", T.floordiv(idx, n));
      const c = T.let_("c", T.floormod(idx, n));
      const v = h.W!.get([r, c]);
      h.D!.set([r, c], epilogueValue(v, r, c, s, epi).cast(outDt));
    });
  });
  return { main, finish, config: cfg };
}
