// FlashAttention forward on Hopper with the tile layer: O = softmax(Q·Kᵀ · scale) · V per batch
// and head, Q, K, V and O [batch, seq, heads, head_dim] (bshd, contiguous), float16 or
// bfloat16 in and out, float32 accumulation and softmax. The design (FlashAttention-3's, without
// its ping-pong and intra-warpgroup overlap yet):
//   - a CTA per 128 query rows of one (batch, head) (with `ctas`, a persistent grid: below); 384
//     threads: warpgroup 0 produces, warpgroups 1 and 2 consume 64 query rows each (192 rows and
//     three consumers with `blockM`, below);
//   - the producer thread loads Q's tile once and K's and V's 128-row blocks through a 2-deep
//     ring by T.tile.copy_async (TMA, 128B swizzle; tensor maps planned from the views), each on
//     its own "full" mbarrier, after the consumers freed the stage ("empty", one arrive each);
//   - per KV block a consumer computes S = Q·Kᵀ with T.tile.wg.gemm_async (wgmma SS, 64 × 128
//     float32 in the wgmma accumulator layout), the online softmax in registers with T.tile.wg
//     reductions (row max and sum: shuffles within each row's 4 lanes) and elementwise ops
//     broadcast along rows (exp2 with the scale folded in, log2(e) · scale), then O += P·V with
//     P kept in registers (wgmma RS: the accumulator layout of S is the A operand's layout, so
//     T.tile.wg.cast makes P in place);
//   - the epilogue divides by the row sums, writes O into shared memory (a slot of its own, or
//     the consumer's rows of Q's tile) and one thread per consumer stores it by TMA
//     (FlashAttention-3's); a block of 64 rows that is not wholly inside its sequence (with
//     `dynamic` or a partial tile), and every block with varlen, is stored by each thread for
//     its own rows under guards instead.
// FlashAttention-3's intra-warpgroup overlap (block j's Q·Kᵀ issued with block j − 1's P·V)
// and its ping-pong of the two consumers by named barriers are the `schedule` option. Measured
// side by side on the H200 (bench/results/attention-schedules-2026-12-02.md), "pingpong" is the
// fastest at head dims 128 and 256 (0.92–1.02× cuDNN against serial's 0.84–0.94×) and on a par
// at 64, and is the default.
// Numerics: the running max starts at -inf and is taken in float32 of the scaled logits, so
// float16 inputs never overflow before it is subtracted.
// Causal: a query tile reads the KV blocks up to its last row, those that cross the diagonal
// masked to -inf by maskBlock (by 64-column chunks, an element test against a per-row threshold
// only where a chunk crosses an edge); tiles run longest
// first (without `ctas`, the grid's CTAs dealt so in L2 sections of (batch, head) pairs:
// order.ts). Causal is the sliding window [-1, 0] aligned bottom-right as in FlashAttention (query i
// sees keys j ≤ i + seq_k − seq_q, so seq_q ≠ seq_k is allowed; with seq_q > seq_k the first
// seq_q − seq_k rows see no key).
// Options (FlashAttention's): `kvHeads` for grouped-query / multi-query attention (query head h
// reads KV head ⌊h / (heads / kvHeads)⌋; only the producer's K and V views change); `window:
// [left, right]`, query i seeing keys i + s − left ≤ j ≤ i + s + right, s = seq_k − seq_q
// (bottom-right aligned, as causal; −1: unbounded on that side):
// a query tile loops over the KV blocks that meet the union of its rows' windows (the producer
// and both consumers over the same range), masking those that cross an edge; `lse` adds the
// output LSE [batch, heads, seq_q] float32, log Σ_j exp(scale · q_i · k_j) (natural log).
// A row that sees no key (a window can hide them all) gives O = 0 and LSE = −inf, not NaN.
// Variable-length batches (`varlen`, FlashAttention's cu_seqlens): Q and O [totalQ, heads, hd],
// K and V [totalK, kvHeads, hd], sequence b at rows cuSeqlensQ[b] … cuSeqlensQ[b + 1] − 1 (and
// the same for keys), two int32 parameters [batch + 1] after O; LSE [heads, totalQ]. The grid is
// ⌈maxSeqQ / 128⌉ query tiles per (sequence, head); each CTA reads its sequence's offsets and
// lengths, and one whose tile starts past its sequence's end exits before its first barrier
// (the whole CTA). Tiles are views at a dynamic row of the packed tensors (TMA coordinates
// cuSeqlens[b] + 128·tile): Q rows past the sequence's end load whatever follows (the next
// sequence, or zeros past the tensor's end, which TMA fills) and are never stored; keys past the
// end are masked to -inf in the last KV block (k ≥ lenK: one more edge of the mask), so V's rows
// there meet P = 0. O and LSE are stored by each thread for its own rows of the wgmma
// accumulator layout, each row under its guard (the tile copy has no predicate). Causal and
// `window` are bottom-right aligned per sequence (shift lenK − lenQ, a runtime value in the
// block range and the mask); a sequence with no keys gives O = 0, LSE = −inf.
// Tiles (`blockM`, `blockN`): by default 128 query rows (two consumers) and KV blocks of 128 keys
// (64 at head dim 256). At head dim 64, FlashAttention-3's tiles (hopper/tile_size.h): 192 query
// rows, three consumer warpgroups (512 threads; setmaxnreg 32 for the producer, 160 for each
// consumer: 128·32 + 384·160 = 65536, and 65536 / 512 = 128 registers a thread at launch; the
// "empty" barriers count three arrivals and the ping-pong is a ring of named barriers 8, 9, 10:
// consumer i waits on 8 + i, issues, and arrives at the next's); and KV blocks of 192 keys (two
// consumers at setmaxnreg 24 / 240, or with three the "serial" schedule only). 192 divides none of
// 1k, 4k, 16k: a static build with a 192 tile takes any lengths ≥ the tiles, its last query tile
// or KV block partial as with `dynamic` (rows past seq_q loaded as TMA gives them, never stored;
// keys k ≥ seq_k masked). The tile cast of P (T.tile.wg.cast from float32) converts a column
// pair at a time into 32-bit registers (cvt.rn.{f16x2,bf16x2}.f32), the pairs wgmma's register A
// operand takes: ptxas -v then reports no spills for every schedule at 192 × 128 in 160 registers
// (it spilled 140–170 bytes a thread with P cast element by element, each element a register
// until the P·V wgmma packs them), and with 128 × 128 tiles it saves ALU instructions (castP).
// Head dims 64, 128 and 256 (KV blocks of 64 keys at 256); Q, K and V tiles are stored as
// 64-wide column blocks (one 128-byte swizzle row each), as TMA writes them and wgmma reads them.
// Shapes: seq_q and seq_k multiples of 128 (of 64 for seq_k at head dim 256), or any packed
// lengths with varlen (totals ≥ 128: a tile's TMA box must fit in the tensor), or any lengths
// seq_q ≥ 1, seq_k ≥ 1 with `dynamic`. By default the sizes are compile-time constants (the
// grid, the block counts and the causal shift fold into the code). With `dynamic`, batch, seq_q
// and seq_k are kernel parameters instead (int32 scalars after O, the tensors' symbolic dims):
// one build serves every size, the grid is computed at launch from them ([⌈seq_q / 128⌉, heads,
// batch]), the tensor maps (TMA) are encoded at launch from the bound sizes (core
// tile/tma-plan.ts: the box stays the tile), and the block counts and the causal / window shift
// seq_k − seq_q are runtime values; heads, kvHeads and the head dim stay static. Lengths that are
// not tile multiples take varlen's machinery with batch b's sequence at q0 = b·seq_q, lenQ =
// seq_q, k0 = b·seq_k, lenK = seq_k: the last query tile's rows past seq_q load what TMA gives
// there (zeros, or the next batch's rows) and are never stored, keys k ≥ seq_k are masked to
// -inf in the last KV block (⌈seq_k / BN⌉ blocks), and O and LSE are stored by each thread for
// its own rows, each under the guard r < seq_q and b < batch (from which the verifier proves the
// stores inside the tensors, TX2006, for every batch and length). A length of 0 is out of TMA's
// limits (a tensor map's dims are ≥ 1: TX4024 at launch for seq_k = 0; a grid of ⌈0 / 128⌉ = 0
// CTAs is TX5009). The dynamic build's own cost: the runtime block counts and shift, the causal
// tile index clamped at 0, the k ≥ seq_k edge of the mask (tested once per block), the guard of
// rows that see no key, and O's and LSE's per-row guarded stores; a static build's PTX is
// unchanged. varlen makes the sequence lengths runtime values its own way (per sequence).
// Persistent grid (`ctas`, FlashAttention-3's): a unit of work is one query tile of one (batch,
// head), ⌈seq_q / blockM⌉ · heads · batch of them; with `ctas: N` the grid is min(N, units) CTAs
// and CTA x runs units x, x + grid, x + 2·grid, … in turn (the units' order: causal longest
// first in L2 sections of (batch, head) pairs, each odd turn then taken in reverse, unit
// turn·grid + grid − 1 − x, so that no CTA takes the longest unit of every turn; else the query
// tile fastest; FlashAttentionSizes.ctas). A CTA pays its fixed costs once (launch, mbarrier init, setmaxnreg), and the producer
// runs ahead into the next unit: Q has its own full/empty mbarrier pair (qFull, qEmpty: each
// consumer arrives on qEmpty once its last Q·Kᵀ wgmma of the unit has completed, or once Q has
// landed in a unit that sees no KV block), and the producer loads the next unit's first K block,
// then its Q as soon as qEmpty completes, then its other K and V blocks through the same ring, so
// the consumers' epilogue (normalise, store O and LSE) of one unit overlaps the next one's
// loads. The ring's position runs on across units (block j of a unit is the CTA's ring position
// r + j, r the blocks of its units before; stage and phase from it as without `ctas`), and so
// does the ping-pong (the last consumer arrives at PING once before the first unit, each
// consumer hands the turn on after every turn, consumer 0 takes the last one after the last
// unit), so consumer 0 issues the next unit's first Q·Kᵀ while the last consumer stores the unit
// before. The arithmetic of each row is the same as with one CTA per unit, so O and LSE are the
// same bits (test/flash-attention-persistent.test.ts compares them on the simulator). The
// one-CTA-a-unit build's PTX is unchanged. Static builds only (TX9001 with `dynamic` or
// `varlen`, whose units are known at launch only).
// The runnable example: examples/flash_attention.ts.
import { T, type ExprLike, type ParamType, type PrimExpr, type TileView } from "@tirx-ts/dsl";
import { MAX_SHARED_PER_CTA, showValue, type PrimFunc } from "@tirx-ts/core";
import {
  anyOf,
  checkHeadsAndWindow,
  configError,
  minus,
  plus,
  launchScaleSign,
  windowOffsets,
} from "./options.js";
import { W, blocked, cols, rows, rowsAt } from "./views.js";
import { fragCol, fragRow, fragmentStager } from "../fragment.js";
import { dealLongestFirst, l2Section, launchIndex } from "./order.js";

/** The largest and the smallest normal float32. */
const FLT_MAX = 3.4028234663852886e38;
const FLT_MIN = 2 ** -126;
/**
 * The KV blocks (keys per block) makeFlashAttention offers at each head dim (64, 128, 256); the
 * first is the default. Above the default the last block may be partial and is masked; 176 and 192
 * at head dim 128 are FlashAttention-3's non-causal tiles (hopper/tile_size.h), 80 at head dim 256
 * the widest whose two K/V stages fit 227 KiB of shared memory beside Q.
 */
export const FLASH_ATTENTION_BLOCK_N: Readonly<
  Record<64 | 128 | 256, readonly [number, ...number[]]>
> = {
  64: [128, 192],
  128: [128, 176, 192],
  256: [64, 80],
};

/** Query rows per CTA by default (two consumer warpgroups of 64); `blockM` 192 takes three. */
const BM128 = 128;
const STAGES = 2;
/** Named barriers of the consumers' ping-pong: PING + cw is consumer cw's turn to issue. */
const PING = 8;
/** Named barriers of a consumer warpgroup's epilogue (EPI + cw, 128 threads: O's staging). */
const EPI = 4;
/**
 * Shared memory beside the dynamic buffers: up to 1008 bytes of padding that align the dynamic
 * array to 1024 (codegen-ptx's module), and the static mbarriers.
 */
const SHARED_SLACK = 2048;

/** Sizes and options of {@link makeFlashAttention}. */
export interface FlashAttentionSizes {
  /** Batch size, ≥ 1 (grid z); with `varlen`, the number of sequences. */
  readonly batch: number;
  /** Query heads, ≥ 1 (grid y). */
  readonly heads: number;
  /**
   * Query rows per (batch, head): a positive multiple of 128 (with `blockM` or `blockN` 192 any
   * integer ≥ `blockM`; with `dynamic`, not the kernel's: any value, the launch's seqQ is any
   * integer ≥ 1). With `varlen`, the packed row count of Q and O (totalQ, the sum of the
   * sequences' query lengths or more), an integer ≥ `blockM` (128 by default).
   */
  readonly seqQ: number;
  /**
   * Key / value rows per (batch, head): a positive multiple of 128 (64 at head dim 256; with
   * `blockM` or `blockN` 192 any integer ≥ `blockN`; with `dynamic`, not the kernel's: the
   * launch's seqK is any integer ≥ 1). With `varlen`, the packed row count of K and V (totalK),
   * an integer ≥ `blockN` (128 by default, 64 at head dim 256).
   */
  readonly seqK: number;
  /** Head dim: 64, 128 or 256. */
  readonly headDim: 64 | 128 | 256;
  /** Q, K, V and O element type (accumulation and softmax in float32). */
  readonly dtype: "float16" | "bfloat16";
  /**
   * Query i sees keys j ≤ i + seq_k − seq_q (FlashAttention's bottom-right alignment: the last
   * query sees the last key; with `varlen`, each sequence's own lengths): the window [-1, 0]
   * aligned there. A row that sees no key (seq_q > seq_k) gives O = 0 and LSE = −inf. Default
   * false.
   */
  readonly causal?: boolean;
  /** Softmax scale, a build-time constant (default 1 / √head_dim; not given with `scaleAtLaunch`). */
  readonly scale?: number;
  /**
   * The softmax scale is a launch argument instead: one kernel for every positive scale, or with
   * `negativeScale` every negative one (attention()'s builds). The forward takes the float32
   * scalar `scaleLog2` = scale · log2 e last, the backward's main kernel `scale` and `scaleLog2`
   * last and its postprocessing kernel `scale` last (`launchScale` rounds them as a build-time
   * scale's constants are rounded). Default false.
   */
  readonly scaleAtLaunch?: boolean;
  /**
   * With `scaleAtLaunch`: the launch scale is negative (the kernels mask logits to +inf instead
   * of −inf and take the running max from rowmin(S) instead of rowmax(S), both chosen at build
   * time). Only with `scaleAtLaunch` (a build-time scale carries its own sign). Default false.
   */
  readonly negativeScale?: boolean;
  /**
   * KV heads (grouped-query attention; 1: multi-query), an integer ≥ 1 dividing `heads`
   * (default `heads`): K and V are [batch, seqK, kvHeads, hd] ([totalK, kvHeads, hd] with
   * `varlen`) and query head h reads KV head ⌊h / (heads / kvHeads)⌋.
   */
  readonly kvHeads?: number;
  /**
   * Sliding window [left, right] in keys, bottom-right aligned as FlashAttention's: query i sees
   * keys j with i + seq_k − seq_q − left ≤ j ≤ i + seq_k − seq_q + right (with `varlen`, per
   * sequence: seqlen_k − seqlen_q), −1 leaving that side unbounded (any other integer bounds
   * it, a negative right excluding the diagonal). `causal` is [-1, 0] (not given with it).
   * Default [-1, -1] (no mask).
   */
  readonly window?: readonly [number, number];
  /**
   * Add the output LSE after O: [batch, heads, seqQ] float32, or [heads, totalQ] with `varlen`
   * (default false).
   */
  readonly lse?: boolean;
  /**
   * A variable-length batch (FlashAttention's `cu_seqlens` convention): Q and O are [totalQ,
   * heads, hd] and K, V [totalK, kvHeads, hd] (totalQ = `seqQ`, totalK = `seqK`), sequence b's
   * queries rows cuSeqlensQ[b] … cuSeqlensQ[b + 1] − 1 and its keys rows cuSeqlensK[b] …
   * cuSeqlensK[b + 1] − 1, of any lengths (0 included); the kernel takes two more int32
   * parameters after O, cuSeqlensQ and cuSeqlensK [batch + 1] (non-decreasing cumulative offsets,
   * the first 0, the last ≤ totalQ / totalK). `maxSeqQ` (an integer in 1 … seqQ), the longest
   * sequence's query rows, sizes the grid: ⌈maxSeqQ / 128⌉ query tiles per (sequence, head)
   * (rows of a longer sequence past ⌈maxSeqQ / 128⌉ · 128 would be left unwritten). `maxSeqK`,
   * the longest sequence's key rows, is the backward's (makeFlashAttentionBackward, whose main
   * grid is over key tiles; this kernel ignores it), so that one sizes object serves both.
   */
  readonly varlen?: { readonly maxSeqQ: number; readonly maxSeqK?: number };
  /**
   * A persistent grid of at most `ctas` CTAs (a positive integer; the GPU's SM count, 132 on an
   * H200, is the natural value): the grid is min(ctas, units) CTAs over the units (query tile,
   * head, batch), ⌈seq_q / blockM⌉ · heads · batch of them, and CTA x runs units x, x + grid,
   * x + 2·grid, … (FlashAttention-3's static persistent scheduler). Causal (a window unbounded on
   * the left and bounded on the right) orders the units longest first within sections of
   * (batch, head) pairs whose K and V fit a 32 MiB share of L2 (FlashAttention-3's
   * hopper/tile_scheduler.hpp), and CTA x takes unit turn · grid + grid − 1 − x on odd turns (a
   * snake: FlashAttention-3 balances the lengths with an atomic counter instead); otherwise the query tile varies fastest, as the one-CTA-a-unit
   * grid is dispatched. The producer runs ahead into the CTA's next unit (its first K block and Q,
   * once the consumers have released Q, then the rest through the same K/V ring) while the
   * consumers finish the unit before, so one unit's epilogue overlaps the next one's loads. The
   * same arithmetic per row: the output is bit for bit the one-CTA-a-unit grid's. Absent (the
   * default): one CTA per unit, grid [⌈seq_q / blockM⌉, heads, batch]. Static builds only: not
   * with `dynamic` or `varlen` (TX9001: their unit count and each unit's sequence are launch
   * values, which this static unit walk does not take).
   */
  readonly ctas?: number;
  /**
   * The consumers' schedule (the same result, bit for bit): "serial" issues a block's P·V after
   * its softmax and waits for it; "overlap" (FlashAttention-3's intra-warpgroup overlap) issues
   * block j's Q·K_jᵀ with block j − 1's P·V and runs block j's softmax while that wgmma does;
   * "pingpong" adds FlashAttention-3's inter-warpgroup ping-pong (named barriers 8 and 9: the two
   * consumers take turns to issue their wgmmas; with `blockM` 192 a ring of three, 8, 9 and 10).
   * Default "pingpong" (the fastest on the H200, bench/results/attention-schedules-2026-12-02.md),
   * "serial" with `blockM` and `blockN` both 192 (the only one offered there).
   */
  readonly schedule?: "serial" | "overlap" | "pingpong";
  /**
   * The backward's main kernel at head dims 64 and 128 (`makeFlashAttentionBackward`; the
   * forward ignores it), the same gradients either way up to float32 summation order:
   * - "ss" (default): S = Q·K_wᵀ and dP = dO·V_wᵀ with the queries as wgmma M; P and dS go
   *   through shared memory and dV += Pᵀ·dO, dK += dSᵀ·Q read them transposed (both operands
   *   from shared memory), after a fence and a barrier;
   * - "rs": Sᵀ = K_w·Qᵀ and dPᵀ = V_w·dOᵀ with the keys as wgmma M (FlashAttention-3's
   *   SdP_swapAB, hopper/flash_bwd_launch_template.h), so Pᵀ and dSᵀ are in registers in the
   *   layout of an A operand: dV += Pᵀ·dO is issued as soon as P is computed and dK += dSᵀ·Q as
   *   soon as dS is, from registers (PTX ISA, wgmma: A in registers), while dSᵀ is stored for
   *   dQ = dS·K (read transposed); P never goes to shared memory. LSE₂ and Δ are then per column.
   *   On the H200 (bench/results/attention-warmup-2026-12-04.md, both in one run): at head
   *   dim 128 0-4% faster than "ss" in 19 of 20 comparisons (seq 1k-16k, causal and not, both
   *   dtypes; attention()'s default there); at head dim 64 2-10% slower. Both wait for every
   *   wgmma group within a step (before, "rs" kept one in flight across the loop's back edge
   *   and ptxas serialized its wgmmas, C7518).
   */
  readonly backwardMma?: "ss" | "rs";
  /**
   * Batch and sequence lengths from kernel parameters (default false): the kernel takes three
   * int32 scalars after O (before LSE), `batch`, `seqQ` and `seqK`, the tensors' symbolic dims (Q
   * and O [batch, seqQ, heads, hd], K and V [batch, seqK, kvHeads, hd], LSE [batch, heads, seqQ]),
   * so that one build runs at every size: the grid is [⌈seqQ / 128⌉, heads, batch] at launch and
   * the tensor maps are encoded from the launch's sizes. `batch`, `seqQ` and `seqK` of these
   * sizes are then not the kernel's (any values; attention() passes the first call's); at launch
   * seqQ and seqK are any integers ≥ 1 (not multiples of the tiles: the last query tile and KV
   * block are partial, keys past seqK masked and rows past seqQ not stored, as with `varlen`;
   * seqK = 0 is TX4024 at launch, a tensor map's dims being ≥ 1, and seqQ = 0 an empty grid,
   * TX5009; {@link checkDynamicSeqs}). Heads, kvHeads, the head dim, the dtype and the
   * options stay compile-time. Not with `varlen`. A static build (false) has none of the runtime
   * arithmetic.
   */
  readonly dynamic?: boolean;
  /**
   * Query rows per CTA: 128 (default; two consumer warpgroups of 64 rows, 384 threads, setmaxnreg
   * 40 / 232) or 192 at head dim 64 only (three consumer warpgroups, 512 threads, setmaxnreg 32 /
   * 160: 128·32 + 384·160 = 65536 registers; FlashAttention-3's tile for head dims ≤ 64,
   * hopper/tile_size.h: at head dim 64 a 128-row tile leaves the tensor cores idle during the
   * softmax too often, and the third warpgroup fills them). The ping-pong then is a ring over the
   * three consumers. With 192 a static build takes seq_q any integer ≥ 192 (192 divides none of
   * 1k, 4k, 16k): the grid is ⌈seq_q / 192⌉ tiles, the last one partial, its rows past seq_q
   * loaded as TMA gives them (zeros) and never stored (O and LSE stored per row under r < seq_q,
   * as with `dynamic`).
   */
  readonly blockM?: 128 | 192;
  /**
   * Keys per KV block: 128 (default; 64 at head dim 256, the only size there) or, at head dim 64,
   * 192 (FlashAttention-3's for head dims ≤ 64 when neither causal nor windowed,
   * hopper/tile_size.h: fewer, longer blocks). S is then 96 float32 registers a thread: with two
   * consumers setmaxnreg 24 / 240 (128·24 + 256·240 = 64512), with three (`blockM` 192) the
   * "serial" schedule only (overlapped, S and the block before's P do not fit in 160 registers;
   * FlashAttention-3 keeps P in shared memory there, which this kernel does not). With 192 a
   * static build takes seq_k any integer ≥ 192: ⌈seq_k / 192⌉ blocks, the last one partial, its
   * keys k ≥ seq_k masked to -inf (as with `dynamic`). Wider blocks elsewhere, each with a
   * partial last block likewise (seq_k any integer ≥ blockN), FlashAttention-3's tiles for those
   * head dims without causal or a window (hopper/tile_size.h):
   * - head dim 128: 176 or 192 (S 88 or 96 registers a thread, setmaxnreg 24 / 240; Q and two
   *   stages of K and V: 208 or 224 KiB of shared memory);
   * - head dim 256: 80 (S 40 registers; 224 KiB).
   */
  readonly blockN?: 64 | 80 | 128 | 176 | 192;
}

/** A work unit of the forward: its query tile, query head and batch (sequence). */
interface Unit {
  readonly qt: ExprLike;
  readonly h: ExprLike;
  readonly b: ExprLike;
}

/**
 * A unit with its KV head `hk` and KV range: the loop's n-th block is KV block kvBlock(n), for
 * n < blocks.
 */
interface Work extends Unit {
  readonly hk: ExprLike;
  readonly blocks: ExprLike;
  readonly kvBlock: (n: ExprLike) => ExprLike;
}

/** The persistent grid of a static build with `ctas` (FlashAttentionSizes.ctas). */
interface PersistentPlan {
  /** Query tiles per (batch, head): ⌈seq_q / blockM⌉. */
  readonly qTiles: number;
  /** (batch, head) pairs: batch · heads. */
  readonly pairs: number;
  /** Work units: qTiles · pairs. */
  readonly units: number;
  /** CTAs: min(ctas, units). */
  readonly grid: number;
  /** Units per CTA at most: ⌈units / grid⌉ (CTA x runs x + turn · grid for each turn below). */
  readonly turns: number;
  /**
   * (batch, head) pairs per L2 section of the longest-first order: every pair when the K and V
   * of `grid` KV heads fit in {@link L2_RESIDENT_BYTES} (the CTAs running at once take units of
   * one rank, each of another pair); else the KV heads whose K and V (2 · seq_k · hd · 2 bytes
   * each) fit in {@link PERSISTENT_SECTION_BYTES}, rounded down to a power of two (at least
   * one), times the query heads per KV head, at most `pairs` (FlashAttention-3's swizzle,
   * hopper/tile_scheduler.hpp, DynamicPersistentTileScheduler).
   */
  readonly section: number;
}

/**
 * L2 bytes a persistent section's K and V may take (FlashAttention-3's 32 MB "for K & V"; the
 * one-CTA-a-tile grid's sections are order.ts's).
 */
const PERSISTENT_SECTION_BYTES = 32 * 2 ** 20;

/**
 * L2 bytes of K and V that the CTAs running at once may read, below the H200's (and H100's) 50
 * MB L2: where `grid` pairs' K and V fit, the units are taken longest first over every pair. H200,
 * hd 64 causal seq 1k bf16 (132 × 256 KiB = 33 MiB): 228.4-229.5 µs against 237.2-237.8 with
 * sections of 128 pairs (32 MiB) and 309.6-309.7 with 32 (8 MiB)
 * (bench/results/attention-order-2026-12-04.md).
 */
const L2_RESIDENT_BYTES = 40 * 2 ** 20;

/**
 * The persistent grid of static sizes `s` with `ctas` CTAs at most, `bm` query rows per tile and
 * `group` query heads per KV head (see {@link PersistentPlan}).
 */
function persistentPlan(
  s: FlashAttentionSizes,
  bm: number,
  group: number,
  ctas: number,
): PersistentPlan {
  const qTiles = Math.ceil(s.seqQ / bm);
  const pairs = s.batch * s.heads;
  const units = qTiles * pairs;
  const grid = Math.min(ctas, units);
  const kvBytes = 2 * s.seqK * s.headDim * 2;
  let heads = 1;
  while (2 * heads * kvBytes <= PERSISTENT_SECTION_BYTES) heads *= 2;
  // KV heads read by `grid` CTAs each on another query head: ⌈grid / group⌉.
  const resident = Math.ceil(grid / group) * kvBytes <= L2_RESIDENT_BYTES;
  return {
    qTiles,
    pairs,
    units,
    grid,
    turns: Math.ceil(units / grid),
    section: resident ? pairs : Math.min(pairs, heads * group),
  };
}

/**
 * The sequence lengths of a static dense (not varlen, not `dynamic`) forward: seq_q a positive
 * multiple of 128 (the query tile), seq_k of the KV block (128, or 64 at head dim 256), as
 * {@link makeFlashAttention} checks them.
 * @throws TirxError TX9001 (kernels/config) naming the multiples.
 */
export function checkDenseSeqs(seqQ: number, seqK: number, headDim: number): void {
  const bn = headDim === 256 ? 64 : 128;
  if (
    !Number.isInteger(seqQ) ||
    !Number.isInteger(seqK) ||
    seqQ <= 0 ||
    seqK <= 0 ||
    seqQ % BM128 ||
    seqK % bn
  ) {
    throw configError(
      `flash_attention needs seq_q a positive multiple of ${BM128} and seq_k of ${bn}, got ${showValue(seqQ)} and ${showValue(seqK)}`,
    );
  }
}

/**
 * The launch sizes of a `dynamic` forward: seq_q and seq_k integers ≥ 1 (any lengths, not tile
 * multiples; a tensor map's dims are at least 1: CUDA Driver API, cuTensorMapEncodeTiled, and
 * the grid's x extent ⌈seq_q / 128⌉ is at least 1) and at most 2^31 − 1 (int32 parameters).
 * attention() checks its dense calls with it before launching the dynamic build.
 * @example checkDynamicSeqs(100, 77); // passes
 * @throws TirxError TX9001 (kernels/config) naming the lengths given.
 */
export function checkDynamicSeqs(seqQ: number, seqK: number): void {
  const ok = (n: number) => Number.isInteger(n) && n >= 1 && n <= 2 ** 31 - 1;
  if (!ok(seqQ) || !ok(seqK)) {
    throw configError(
      `flash_attention needs seq_q and seq_k integers ≥ 1 (a tensor map's dims are at least 1), got ${seqQ} and ${seqK}`,
    );
  }
}

/**
 * The forward kernel for Q [batch, seqQ, heads, hd], K and V [batch, seqK, kvHeads, hd] → O
 * [batch, seqQ, heads, hd] (all `dtype`), and with `lse` LSE [batch, heads, seqQ] float32:
 * the natural log of row i's softmax denominator, log Σ_j exp(scale · q_i · k_j) over the keys
 * it sees (−inf for a row that sees none; its O row is 0). With `varlen`: Q [totalQ, heads, hd],
 * K and V [totalK, kvHeads, hd], O [totalQ, heads, hd], cuSeqlensQ and cuSeqlensK [batch + 1]
 * int32, then LSE [heads, totalQ] float32 with `lse`; O and LSE rows outside every sequence are
 * not written. With `dynamic`: Q, K, V, O as without it, then the int32 scalars batch, seqQ and
 * seqK (their symbolic dims), then LSE [batch, heads, seqQ] with `lse`.
 * @example
 *   makeFlashAttention({ batch: 3, heads: 8, seqQ: 4096, seqK: 4096, headDim: 128,
 *     dtype: "bfloat16", causal: true, varlen: { maxSeqQ: 2048 } })
 * @example
 *   // One build for every batch and sequence length (any lengths ≥ 1, e.g. seqQ 100, seqK 77):
 *   const f = makeFlashAttention({ batch: 1, heads: 8, seqQ: 128, seqK: 128, headDim: 128,
 *     dtype: "bfloat16", causal: true, dynamic: true });
 *   compile(f)(q, k, v, o, batch, seqQ, seqK);
 * @example
 *   // A persistent grid of at most 132 CTAs (an H200's SMs), 2048 units: 15 or 16 each.
 *   makeFlashAttention({ batch: 16, heads: 16, seqQ: 1024, seqK: 1024, headDim: 128,
 *     dtype: "bfloat16", ctas: 132 })
 * @throws TirxError TX9001 (kernels/config) for a head dim other than 64, 128, 256, sequence
 *   lengths that are not positive multiples of 128 (without `dynamic`, whose builder takes any
 *   and whose launch any ≥ 1; with `varlen`: packed row counts under 128,
 *   or 64 for K at head dim 256, or a `varlen` that is not `{ maxSeqQ }` with an integer in
 *   1 … seqQ), a `kvHeads` that is not a positive integer dividing `heads`, a `window` that is
 *   not two integers or is given with `causal`, a non-boolean `lse` or `dynamic`, `dynamic`
 *   with `varlen`, a `blockM` other than 128 or 192 (192 at head dim 64 only), a `blockN` the
 *   head dim does not offer (128 or 192 at 64; 128, 176 or 192 at 128; 64 or 80 at 256), `blockM` and `blockN`
 *   both 192 with a schedule other than "serial", with a 192 tile, static sequence lengths
 *   under a tile (seq_q < blockM, seq_k < blockN; packed totals too with `varlen`), a `ctas`
 *   that is not a positive integer or is given with `dynamic` or `varlen`, a `scale` it cannot
 *   take (options.ts's scaleProblem), a non-boolean `scaleAtLaunch` or one given with `scale`,
 *   or a non-boolean `negativeScale` or one given without `scaleAtLaunch`.
 */
export function makeFlashAttention(s: FlashAttentionSizes): PrimFunc {
  const { batch, heads, seqQ, seqK, headDim: D, dtype: dt } = s;
  if (D !== 64 && D !== 128 && D !== 256) {
    throw configError(`flash_attention: head_dim is 64, 128 or 256, got ${D}`);
  }
  // Query rows per CTA, 64 per consumer warpgroup: 128 (two), or 192 (three) at head dim 64,
  // where S (64 × BN), P and O's accumulators fit in 160 registers per consumer thread.
  const BM = s.blockM ?? BM128;
  if (BM !== 128 && BM !== 192) {
    throw configError(
      `flash_attention: blockM (query rows per CTA) is 128 or 192, got ${showValue(BM)}`,
    );
  }
  if (BM === 192 && D !== 64) {
    throw configError(
      `flash_attention: blockM 192 (three consumer warpgroups at 160 registers each) is offered at head dim 64 only, got head dim ${D}`,
    );
  }
  /** Consumer warpgroups (64 query rows each). */
  const NC = BM / 64;
  // Keys per KV block: FLASH_ATTENTION_BLOCK_N's first by default, 128, or 64 at head dim 256
  // (Q, two stages of K and V in 227 KiB of shared memory, and O's 64 × 256 float32 accumulators
  // are 128 registers per thread); the others if asked.
  const offeredBN = FLASH_ATTENTION_BLOCK_N[D];
  const BN = s.blockN ?? offeredBN[0];
  if (!offeredBN.includes(BN)) {
    throw configError(
      `flash_attention: blockN (keys per KV block) is ${offeredBN.slice(0, -1).join(", ")}${offeredBN.length > 1 ? " or " : ""}${offeredBN.at(-1)} at head dim ${D}, got ${showValue(BN)}`,
    );
  }
  // A KV block other than the head dim's default: the last one may be partial.
  const wideBN = BN !== offeredBN[0];
  const varlen = s.varlen;
  if (s.dynamic !== undefined && typeof s.dynamic !== "boolean") {
    throw configError(`flash_attention: dynamic is a boolean, got ${showValue(s.dynamic)}`);
  }
  const dynamic = s.dynamic ?? false;
  if (dynamic && varlen !== undefined) {
    throw configError(
      "flash_attention: dynamic and varlen are two ways to take sequence lengths at launch; give one",
    );
  }
  if (varlen !== undefined) {
    const maxSeqQ: unknown =
      typeof varlen === "object" && varlen !== null ? varlen.maxSeqQ : undefined;
    if (!Number.isInteger(maxSeqQ) || (maxSeqQ as number) < 1 || (maxSeqQ as number) > seqQ) {
      throw configError(
        `flash_attention: varlen is { maxSeqQ }, the longest sequence's query rows, an integer in 1 … seq_q (${seqQ}), got ${showValue(varlen)}`,
      );
    }
    // A TMA box of a tile's rows (128 queries, BN keys) must fit in the tensor's rows.
    if (!Number.isInteger(seqQ) || !Number.isInteger(seqK) || seqQ < BM || seqK < BN) {
      throw configError(
        `flash_attention: with varlen, seq_q and seq_k are the packed row counts of Q and K, integers ≥ ${BM} and ≥ ${BN} respectively (a tile's TMA box fits in the tensor: pad the packed tensors), got ${seqQ} and ${seqK}`,
      );
    }
  } else if (!dynamic) {
    if (BM === BM128 && !wideBN) checkDenseSeqs(seqQ, seqK, D);
    else if (!Number.isInteger(seqQ) || !Number.isInteger(seqK) || seqQ < BM || seqK < BN) {
      // With a 192-row or 192-key tile the last query tile and KV block may be partial (rows
      // guarded, keys masked); a tile's TMA box fits in the tensor.
      throw configError(
        `flash_attention: with blockM ${BM} and blockN ${BN}, seq_q and seq_k are integers ≥ ${BM} and ≥ ${BN} respectively (not tile multiples: the last tiles are partial), got ${seqQ} and ${seqK}`,
      );
    }
  }
  // A static build whose last query tile (KV block) is partial: 192 does not divide seq_q
  // (seq_k). Its rows past seq_q are not stored, its keys k ≥ seq_k masked (`partQ`, `partK`).
  const partQ = !varlen && !dynamic && seqQ % BM !== 0;
  // O through shared memory and a TMA store (every block of 64 rows wholly inside its sequence;
  // with varlen, and a partial block's rows, each thread stores its own rows under guards):
  // into a slot of its own when it fits beside Q and the K/V ring, else into the consumer's own
  // rows of Q's tile, which no wgmma reads after its last Q·Kᵀ (not with `ctas`: the next
  // unit's Q lands there).
  const ringBytes = (BM + 2 * STAGES * BN) * D * 2;
  const oSlotFits = ringBytes + BM * D * 2 + SHARED_SLACK <= MAX_SHARED_PER_CTA;
  const tmaO = !varlen && (oSlotFits || s.ctas === undefined);
  // O's staging in a slot of its own (else in Q's tile).
  const oSlot = tmaO && oSlotFits;
  const partK = !varlen && !dynamic && seqK % BN !== 0;
  const causal = s.causal ?? false;
  const kvHeads = checkHeadsAndWindow(s, "flash_attention");
  if (s.lse !== undefined && typeof s.lse !== "boolean") {
    throw configError(`flash_attention: lse is a boolean, got ${showValue(s.lse)}`);
  }
  const lse = s.lse ?? false;
  // 192 × 192 tiles take "serial" only: the overlapped schedules keep S, the block before's P and
  // O's accumulators live at once, 96 + 48 + 32 of a consumer's 160 registers before any other.
  const schedule = s.schedule ?? (NC === 3 && BN === 192 ? "serial" : "pingpong");
  if (schedule !== "serial" && schedule !== "overlap" && schedule !== "pingpong") {
    throw configError(
      `flash_attention: schedule is "serial", "overlap" or "pingpong", got ${showValue(schedule)}`,
    );
  }
  if (NC === 3 && BN === 192 && schedule !== "serial") {
    throw configError(
      `flash_attention: blockM 192 with blockN 192 takes the "serial" schedule only (overlapped, S 64 × 192, the block before's P and O take 176 registers a thread, more than a consumer's 160: ptxas spills), got "${schedule}"`,
    );
  }
  // A persistent grid (`ctas`): static builds only, where the units and their order are known
  // when the kernel is built.
  const ctas = s.ctas;
  if (ctas !== undefined) {
    if (!Number.isInteger(ctas) || ctas < 1) {
      throw configError(
        `flash_attention: ctas (the persistent grid's CTAs at most) is a positive integer, got ${showValue(ctas)}`,
      );
    }
    if (dynamic || varlen !== undefined) {
      throw configError(
        `flash_attention: ctas (a persistent grid) is offered with static sizes only, not with ${dynamic ? "dynamic" : "varlen"}: there the number of units ${dynamic ? "(query tiles of seq_q)" : "and each unit's sequence (from cuSeqlensQ)"} is known at launch only, and the persistent walk over the units is planned when the kernel is built`,
      );
    }
  }
  // Registers per thread after setmaxnreg, the producer's and each consumer's (of an SM's 65536;
  // at launch 65536 / threads each): 128·40 + 256·232 = 64512; 128·24 + 256·240 = 64512 with
  // 192-key blocks (S is 96 registers a thread); 128·32 + 384·160 = 65536 with three consumers
  // (FlashAttention-3's, hopper/flash_fwd_kernel_sm90.h).
  const [producerRegs, consumerRegs] = NC === 3 ? [32, 160] : BN > 128 ? [24, 240] : [40, 232];
  // Query heads per KV head.
  const group = heads / kvHeads;
  // The window [left, right]; undefined: unbounded on that side ([-1, -1] is no mask).
  const [wl, wr] = s.window ?? (causal ? [-1, 0] : [-1, -1]);
  const winLeft = wl === -1 ? undefined : wl;
  const winRight = wr === -1 ? undefined : wr;
  // exp(x · scale) = exp2(x · scale · log2 e): the scale and log2 e folded into one multiply, c,
  // a constant, or the launch's float32 `scaleLog2` (of the build's sign).
  const atLaunch = s.scaleAtLaunch === true;
  // With a launch scale, a stand-in of its sign (the sign is all the build reads of it).
  const cConst = atLaunch ? launchScaleSign(s) : (s.scale ?? 1 / Math.sqrt(D)) * Math.LOG2E;
  // A hidden logit: −inf, or +inf for a negative scale, so that c · S is −inf (exp2 gives 0)
  // and the running max of c · S skips it either way.
  const HIDDEN = cConst < 0 ? Infinity : -Infinity;
  const tileBytes = BN * D * 2;
  // Tiles whose windows are unbounded on the left and bounded on the right (causal) read more KV
  // blocks the later they are: such tiles run longest first.
  const longestFirst = winLeft === undefined && winRight !== undefined;
  const plan = ctas === undefined ? undefined : persistentPlan(s, BM, group, ctas);
  // Causal without `ctas`: the grid's CTAs dealt longest first in L2 sections of (batch, head)
  // pairs (order.ts; a pair streams its K and V, shared by the group's query heads). One query
  // tile, or sections of one pair, is the grid's own order: no remapping.
  const section =
    plan || varlen || dynamic || !longestFirst || Math.ceil(seqQ / BM) === 1
      ? 1
      : l2Section(heads * batch, (2 * seqK * D * 2) / group);
  const lseParam = lse
    ? {
        LSE: T.Tensor(
          varlen ? [heads, seqQ] : dynamic ? ["batch", heads, "seqQ"] : [batch, heads, seqQ],
          "float32",
        ),
      }
    : {};
  const params = dynamic
    ? {
        Q: T.Tensor(["batch", "seqQ", heads, D], dt),
        K: T.Tensor(["batch", "seqK", kvHeads, D], dt),
        V: T.Tensor(["batch", "seqK", kvHeads, D], dt),
        O: T.Tensor(["batch", "seqQ", heads, D], dt),
        batch: T.int32,
        seqQ: T.int32,
        seqK: T.int32,
        ...lseParam,
      }
    : varlen
      ? {
          Q: T.Tensor([seqQ, heads, D], dt),
          K: T.Tensor([seqK, kvHeads, D], dt),
          V: T.Tensor([seqK, kvHeads, D], dt),
          O: T.Tensor([seqQ, heads, D], dt),
          cuSeqlensQ: T.Tensor([batch + 1], "int32"),
          cuSeqlensK: T.Tensor([batch + 1], "int32"),
          ...lseParam,
        }
      : {
          Q: T.Tensor([batch, seqQ, heads, D], dt),
          K: T.Tensor([batch, seqK, kvHeads, D], dt),
          V: T.Tensor([batch, seqK, kvHeads, D], dt),
          O: T.Tensor([batch, seqQ, heads, D], dt),
          ...lseParam,
        };
  const allParams = { ...params, ...(atLaunch ? { scaleLog2: T.float32 } : {}) };
  return T.function("flash_attention", allParams as Record<string, ParamType>, (args) => {
    const { Q, K, V, O, LSE, cuSeqlensQ, cuSeqlensK } = args as unknown as Record<
      string,
      TileView | undefined
    >;
    const c: ExprLike = atLaunch ? (args as unknown as { scaleLog2: PrimExpr }).scaleLog2 : cConst;
    // With `dynamic`: batch, seq_q and seq_k, the kernel's scalar parameters.
    const dyn = dynamic
      ? (args as unknown as Record<"batch" | "seqQ" | "seqK", PrimExpr>)
      : undefined;
    T.device_entry({
      launch: T.cuda.LaunchConfig({
        grid: plan
          ? plan.grid
          : dyn
            ? [T.ceildiv(dyn.seqQ, BM), heads, dyn.batch]
            : [Math.ceil((varlen ? varlen.maxSeqQ : seqQ) / BM), heads, batch],
        block: 128 * (NC + 1),
        dynamic_shared_bytes: ringBytes + (oSlot ? BM * D * 2 : 0),
      }),
    });
    const tid = T.cuda.thread_idx("x");
    // The batch index (read here with varlen, for the sequence's offsets; else where the
    // kernel always read it, after the head).
    const bz = varlen ? T.cuda.block_idx("z") : undefined;
    // With varlen: sequence b's first query and key rows and its lengths.
    const seq = varlen
      ? (() => {
          const q0 = T.let_("seqQ0", cuSeqlensQ!.get([bz!]));
          const k0 = T.let_("seqK0", cuSeqlensK!.get([bz!]));
          const lenQ = T.let_("lenQ", T.sub(cuSeqlensQ!.get([T.add(bz!, 1)]), q0));
          const lenK = T.let_("lenK", T.sub(cuSeqlensK!.get([T.add(bz!, 1)]), k0));
          return { q0, k0, lenQ, lenK };
        })()
      : undefined;
    // The lengths that are runtime values: with varlen the sequence's, with `dynamic` seq_q and
    // seq_k (any lengths: the last query tile and KV block may be partial).
    const lens = seq
      ? { lenQ: seq.lenQ, lenK: seq.lenK }
      : dyn
        ? { lenQ: dyn.seqQ, lenK: dyn.seqK }
        : undefined;
    // Query i sees keys j with i − leftOff ≤ j ≤ i + rightOff (undefined: unbounded): the
    // window (causal: [-1, 0]) shifted by seq_k − seq_q, bottom-right aligned as
    // FlashAttention's (per sequence with varlen), and, with varlen or `dynamic`, keys j < lenK
    // only.
    const shift: ExprLike = seq
      ? T.let_("shift", T.sub(seq.lenK, seq.lenQ))
      : causal || s.window !== undefined
        ? dyn
          ? T.let_("shift", T.sub(dyn.seqK, dyn.seqQ))
          : seqK - seqQ
        : 0;
    const { rightOff, leftOff } = windowOffsets(winLeft ?? -1, winRight ?? -1, shift);
    // Keys j ≥ lenK are masked (a runtime length, or a static seq_k that BN does not divide).
    const lenK: ExprLike | undefined = lens ? lens.lenK : partK ? seqK : undefined;
    const masked = lenK !== undefined || winLeft !== undefined || winRight !== undefined;
    // A row may see no key in its first blocks (or at all) unless the window is unbounded on
    // the left and reaches the diagonal (then every row sees key 0, in the first block); with
    // varlen or `dynamic`, a sequence of no keys or a causal one with lenQ > lenK has such rows
    // (with `dynamic`, the causal shift seq_k − seq_q is a runtime value: it may be negative).
    const emptyRows =
      lens !== undefined ||
      leftOff !== undefined ||
      (typeof rightOff === "number" ? rightOff < 0 : rightOff !== undefined);
    // KV blocks of the sequence (the last one partial where lenK is not a multiple of BN).
    const kvBlocks: ExprLike = lens
      ? T.let_("kvBlocks", T.ceildiv(lens.lenK, BN))
      : Math.ceil(seqK / BN);
    // Query tiles of the sequence (with varlen, tiles past its end exit at once; with `dynamic`
    // the grid's x extent, ⌈seq_q / BM⌉).
    const qTiles: ExprLike = seq
      ? T.let_("qTiles", T.ceildiv(seq.lenQ, BM))
      : dyn
        ? T.ceildiv(dyn.seqQ, BM)
        : Math.ceil(seqQ / BM);
    // With a window unbounded on the left (causal), query tile qt sees the KV blocks up to
    // its last row's right edge: the longest tiles go first.
    // (With `dynamic`, clamped at 0: the CTA's index is below qTiles, but the verifier's ranges
    // of a runtime grid do not show it, and O's and LSE's stores must be provably in bounds.)
    // (With `ctas`, each unit's own: unitAt.)
    // (Causal without `ctas`, from its launch index: `dealt` below.)
    const qt =
      plan || section > 1
        ? undefined
        : longestFirst
          ? T.let_(
              "qt",
              dyn
                ? T.max(T.sub(T.sub(qTiles, 1), T.cuda.block_idx("x")), 0)
                : T.sub(
                    typeof qTiles === "number" ? qTiles - 1 : T.sub(qTiles, 1),
                    T.cuda.block_idx("x"),
                  ),
            )
          : T.cuda.block_idx("x");
    // With `dynamic`: `r` rows of batch b's sequence of `len` rows from `row` on, head `hh`, as a
    // [r, D] view of the [batch, len, nh, D] tensor, its offset a sum of one term per axis
    // (b · len · nh·D, row · nh·D, hh · D) so that TMA's coordinates come off it per axis.
    const seqRows = (
      x: TileView,
      b: ExprLike,
      len: ExprLike,
      row: ExprLike,
      hh: ExprLike,
      r: number,
      nh: number,
    ): TileView =>
      x.as_strided({
        offset: T.add(
          T.add(
            T.mul(b, typeof len === "number" ? len * nh * D : T.mul(len, nh * D)),
            T.mul(row, nh * D),
          ),
          T.mul(hh, D),
        ),
        shape: [r, D],
        strides: [nh * D, 1],
      });
    /**
     * The unit of query tile qt (its head and batch from `head` and `batch`) with its KV range and
     * KV head: KV blocks j0 ≤ j < j0 + blocks meet some row's window (keys from the first row's
     * left edge, qt·BM − leftOff, to the last row's right edge, qt·BM + BM − 1 + rightOff);
     * kvBlock(n) is the loop's n-th block; query head h reads KV head ⌊h / group⌋.
     */
    const work = (qt: ExprLike, head: () => ExprLike, batch: () => ExprLike): Work => {
      const j0 =
        leftOff === undefined
          ? 0
          : T.let_("j0", T.floordiv(T.max(T.sub(T.mul(qt, BM), leftOff), 0), BN).min(kvBlocks));
      const blocks =
        rightOff === undefined
          ? leftOff === undefined
            ? kvBlocks
            : T.let_("blocks", T.sub(kvBlocks, j0))
          : T.let_(
              "blocks",
              T.max(
                T.sub(
                  T.min(
                    T.floordiv(T.max(T.add(T.mul(qt, BM), plus(rightOff, BM - 1 + BN)), 0), BN),
                    kvBlocks,
                  ),
                  j0,
                ),
                0,
              ),
            );
      const kvBlock = (n: ExprLike): ExprLike => (leftOff === undefined ? n : T.add(j0, n));
      // The head, its KV head, then the batch, in the order the one-CTA-a-unit kernel always
      // read them (its PTX is unchanged).
      const h = head();
      const hk = group === 1 ? h : T.let_("hk", T.floordiv(h, group));
      return { qt, h, b: batch(), hk, blocks, kvBlock };
    };
    /**
     * Unit u of `order` (its qTiles, pairs and section; the persistent plan, or the one-CTA-a-tile
     * grid's with the CTA's launch index): its query tile, head and batch. Longest first: rank r
     * (query tile qTiles − 1 − r) of its pair, dealt in L2 sections (order.ts,
     * dealLongestFirst); otherwise query tile u mod qTiles of pair ⌊u / qTiles⌋ (pair = batch ·
     * heads + head).
     */
    const unitAt = (
      u: PrimExpr,
      order: { readonly qTiles: number; readonly pairs: number; readonly section: number },
    ): Unit => {
      const { qTiles: nq, pairs, section } = order;
      const { rank, pair } = longestFirst
        ? dealLongestFirst({ lin: u, tiles: nq, pairs, section })
        : { rank: T.floormod(u, nq), pair: T.floordiv(u, nq) };
      const pr = T.let_("pair", pair);
      return {
        qt: T.let_("qt", longestFirst ? T.sub(nq - 1, rank) : rank),
        h: T.let_("h", T.floormod(pr, heads)),
        b: T.let_("b", T.floordiv(pr, heads)),
      };
    };
    // Causal without `ctas`: the CTA's unit, its launch index dealt as the persistent units are.
    const dealt =
      section > 1
        ? unitAt(launchIndex(Math.ceil(seqQ / BM), heads), {
            qTiles: Math.ceil(seqQ / BM),
            pairs: heads * batch,
            section,
          })
        : undefined;
    const kernel = (): void => {
      // Without `ctas`, the CTA's one unit (grid [query tiles, heads, batch]).
      const work0 = plan
        ? undefined
        : dealt
          ? work(
              dealt.qt,
              () => dealt.h,
              () => dealt.b,
            )
          : work(
              qt!,
              () => T.cuda.block_idx("y"),
              () => bz ?? T.cuda.block_idx("z"),
            );
      /**
       * `body(w, turn)` for each unit of the CTA: its one unit (turn 0) without `ctas`; with it,
       * unit u = blockIdx.x + turn · grid of turn 0, 1, … while u < units (a prefix of the turns,
       * so the CTA's i-th unit is turn i).
       */
      const eachUnit = (body: (w: Work, turn: ExprLike) => void): void => {
        if (!plan) {
          body(work0!, 0);
          return;
        }
        for (const turn of T.range(plan.turns)) {
          // Longest first, CTA x takes unit x of even turns and grid − 1 − x of odd ones (a
          // snake): with x of every turn the CTAs of low x take the longest unit of each turn,
          // and a causal grid's first CTAs worked up to three times as long as its last (H200,
          // bench/results/attention-persistent-2026-12-03.md).
          const x = T.cuda.block_idx("x");
          const at = longestFirst
            ? T.if_then_else(T.floormod(turn, 2).eq(1), T.sub(plan.grid - 1, x), x)
            : x;
          const u = T.let_("u", T.add(at, T.mul(turn, plan.grid)));
          const run = () => {
            const unit = unitAt(u, plan);
            body(
              work(
                unit.qt,
                () => unit.h,
                () => unit.b,
              ),
              turn,
            );
          };
          if (plan.turns * plan.grid === plan.units) run();
          else T.if_(u.lt(plan.units), run);
        }
      };
      // The warpgroup index, read back from lane 0 (shfl.sync.idx, as CUTLASS's
      // canonical_warp_group_idx): ptxas then knows it is the same in every lane of a warp and
      // keeps what derives from it (the consumer's Q rows, its wgmma descriptors, its barrier
      // ids) in uniform registers, where tid / 128 put them in per-thread registers and each
      // wgmma's descriptors had to be moved over (R2UR: 69 in the hd 64 causal kernel, 3 now).
      // H200, same call, forward at seq 1k: hd 64 −4.7%, hd 64 causal −4.9%, hd 128 −2.4%
      // (bench/results/attention-uniform-2026-12-04.md). The backward (within noise) and the GEMM
      // (up to 5% slower at 8192³) keep tid / 128.
      const wg = T.let_("wg", T.cuda.__shfl_sync(0xffffffff, tid.floordiv(128), 0));
      const sw = T.swizzle_mode("128B");
      const sQ = T.alloc_shared([D / W, BM, W], dt, {
        name: "sQ",
        align: 1024,
        layout: sw,
        dynamic: true,
      });
      const sK = T.alloc_shared([STAGES, D / W, BN, W], dt, {
        name: "sK",
        align: 1024,
        layout: sw,
        dynamic: true,
      });
      const sV = T.alloc_shared([STAGES, D / W, BN, W], dt, {
        name: "sV",
        align: 1024,
        layout: sw,
        dynamic: true,
      });
      // O's staging slot, [NC, D / W, 64, W] as TMA reads it.
      const sO = oSlot
        ? T.alloc_shared([NC, D / W, 64, W], dt, {
            name: "sO",
            align: 1024,
            layout: sw,
            dynamic: true,
          })
        : undefined;
      const qFull = T.alloc_shared([1], "uint64", { name: "qFull" });
      const kFull = T.alloc_shared([STAGES], "uint64", { name: "kFull" });
      const vFull = T.alloc_shared([STAGES], "uint64", { name: "vFull" });
      const kEmpty = T.alloc_shared([STAGES], "uint64", { name: "kEmpty" });
      const vEmpty = T.alloc_shared([STAGES], "uint64", { name: "vEmpty" });
      // With `ctas`: Q's slot is free again (one arrive per consumer after its unit's last
      // Q·Kᵀ wgmma completed), so the producer may load the next unit's Q.
      const qEmpty = plan ? T.alloc_shared([1], "uint64", { name: "qEmpty" }) : undefined;
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.init(qFull.sub(0), 1);
        if (qEmpty) T.ptx.mbarrier.init(qEmpty.sub(0), NC);
        for (const st of T.unroll(STAGES)) {
          T.ptx.mbarrier.init(kFull.sub(st), 1);
          T.ptx.mbarrier.init(vFull.sub(st), 1);
          T.ptx.mbarrier.init(kEmpty.sub(st), NC);
          T.ptx.mbarrier.init(vEmpty.sub(st), NC);
        }
        T.ptx.fence.mbarrier_init();
      });
      T.cuda.cta_sync();
      // A unit's query tile's rows and KV block kj's rows of its KV head ([r, D] views).
      const qTile = ({ qt, h, b }: Work): TileView =>
        seq
          ? rowsAt(Q!, D, T.add(seq.q0, T.mul(qt, BM)), h, BM, heads)
          : dyn
            ? seqRows(Q!, b, dyn.seqQ, T.mul(qt, BM), h, BM, heads)
            : partQ
              ? seqRows(Q!, b, seqQ, T.mul(qt, BM), h, BM, heads)
              : rows(Q!, BM).sub(b, qt, h);
      const kvTile = ({ hk, b }: Work, x: TileView, kj: ExprLike): TileView =>
        seq
          ? rowsAt(x, D, T.add(seq.k0, T.mul(kj, BN)), hk, BN, kvHeads)
          : dyn
            ? seqRows(x, b, dyn.seqK, T.mul(kj, BN), hk, BN, kvHeads)
            : partK
              ? seqRows(x, b, seqK, T.mul(kj, BN), hk, BN, kvHeads)
              : rows(x, BN).sub(b, kj, hk);
      /** Ring position n's stage and the phase of its barriers (position n: the CTA's n-th KV block). */
      const ringAt = (n: ExprLike, name: string): [ExprLike, ExprLike] => [
        T.let_(`st${name}`, T.floormod(n, STAGES)),
        T.let_(`ph${name}`, T.floormod(T.floordiv(n, STAGES), 2)),
      ];
      T.if_(
        wg.eq(0),
        () => {
          T.ptx.setmaxnreg(false, producerRegs);
          T.if_(tid.eq(0), () => {
            // With `ctas`: the KV blocks of the CTA's units before this one (the ring runs on
            // across units: block j of this unit is ring position ring + j).
            const ring = plan ? T.local_scalar("int32", 0, { name: "ring" }) : undefined;
            eachUnit((w, turn) => {
              const loadQ = (): void => {
                // The consumers released the previous unit's Q (its qEmpty phase; the first
                // unit's wait, on the phase before the barrier's first, returns at once).
                if (qEmpty) {
                  T.ptx.mbarrier.try_wait(qEmpty.sub(0), T.sub(1, T.floormod(turn, 2)));
                }
                T.ptx.mbarrier.arrive.expect_tx(qFull.sub(0), BM * D * 2);
                T.tile.copy_async(blocked(sQ), cols(qTile(w)), { mbar: qFull.sub(0) });
              };
              // Without `ctas`, Q first; with it, the unit's first K block first (its stage is
              // free earlier: the consumers release it after the Q·Kᵀ of two blocks before,
              // while Q waits for their last Q·Kᵀ of the unit before), then Q.
              if (!ring) loadQ();
              for (const j of T.range(w.blocks)) {
                // KV block j's stage in the ring, and the phase of that stage's barriers.
                const [st, ph] = ringAt(ring ? T.add(ring, j) : j, "");
                T.ptx.mbarrier.try_wait(kEmpty.sub(st), T.sub(1, ph));
                T.ptx.mbarrier.arrive.expect_tx(kFull.sub(st), tileBytes);
                T.tile.copy_async(blocked(sK.sub(st)), cols(kvTile(w, K!, w.kvBlock(j))), {
                  mbar: kFull.sub(st),
                });
                if (ring) T.if_(j.eq(0), loadQ);
                T.ptx.mbarrier.try_wait(vEmpty.sub(st), T.sub(1, ph));
                T.ptx.mbarrier.arrive.expect_tx(vFull.sub(st), tileBytes);
                T.tile.copy_async(blocked(sV.sub(st)), cols(kvTile(w, V!, w.kvBlock(j))), {
                  mbar: vFull.sub(st),
                });
              }
              if (ring) {
                // A unit that sees no KV block still loads Q (the consumers wait for it).
                if (typeof w.blocks !== "number") T.if_(T.eq(w.blocks, 0), loadQ);
                ring.set(T.add(ring, w.blocks));
              }
            });
          });
        },
        () => {
          T.ptx.setmaxnreg(true, consumerRegs);
          // Consumer cw = wg - 1 ∈ {0, …, NC − 1} (spelled (wg + NC − 1) mod NC: bounds analysis
          // sees it ≥ 0).
          const cw = T.let_("cw", wg.add(NC - 1).floormod(NC));
          /**
           * `f(i)` run by consumer i for i < n (n ≤ NC) as a chain of ifs on cw (the last one
           * the else branch when n = NC): the named barriers' ids are immediates.
           */
          const byConsumer = (f: (i: number) => void, n = NC, i = 0): void => {
            if (i === n - 1) {
              if (n === NC) f(i);
              else T.if_(cw.eq(i), () => f(i));
            } else
              T.if_(
                cw.eq(i),
                () => f(i),
                () => byConsumer(f, n, i + 1),
              );
          };
          // S and O in the wgmma accumulator layout; P (16-bit) in the same layout, which is
          // also the register A operand's; per-row values replicated over each row's 4 lanes.
          const sl = T.layout.wgmma_tile_layout("D", 64, BN, "float32");
          const ol = T.layout.wgmma_tile_layout("D", 64, D, "float32");
          const rl = T.TileLayout(
            "S[(4, 2, 8) : (32@tid_in_wg, 1, 4@tid_in_wg)] + R[4 : 1@tid_in_wg]",
          );
          const S = T.alloc_local([64, BN], "float32", { name: "S", layout: sl });
          const P = T.alloc_local([64, BN], dt, { name: "P", layout: sl });
          const acc = T.alloc_local([64, D], "float32", { name: "acc", layout: ol });
          const out = T.alloc_local([64, D], dt, { name: "out", layout: ol });
          // m: the running max of the scaled logits (log2 domain); l: the running sum of
          // exp2(scaled logit − m); mNew, corr, rs: this block's max, rescale and row sum.
          const m = T.alloc_local([64, 1], "float32", { name: "m", layout: rl });
          const l = T.alloc_local([64, 1], "float32", { name: "l", layout: rl });
          const mNew = T.alloc_local([64, 1], "float32", { name: "mNew", layout: rl });
          const corr = T.alloc_local([64, 1], "float32", { name: "corr", layout: rl });
          const rs = T.alloc_local([64, 1], "float32", { name: "rs", layout: rl });
          const sQh = sQ.rearrange("k (w r) c -> w r k c", { r: 64 }).sub(cw);
          const first = T.floormod(tid, 128).eq(0);
          // This thread's first row and column in the accumulator layouts: rows mRow + 8·i,
          // columns 8·j + mCol + e (slot 4·j + 2·i + e; fragment.ts).
          // (Bound only where a block may be masked.)
          const maskAt = masked
            ? (() => {
                const mt = T.let_("mt", T.floormod(tid, 128));
                return { mRow: T.let_("mrow", fragRow(mt)), mCol: T.let_("mcol", fragCol(mt)) };
              })()
            : undefined;
          const Sf = S.flat();
          /**
           * Block S (queries q0 + r, keys k0 + c: this warpgroup's 64 × BN tile) masked to -inf
           * where an edge hides key k from query q: k > q + rightOff, k < q − leftOff, k ≥ lenK.
           * The block goes by column chunks of 64 (or BN): a chunk that every row of the
           * warpgroup sees is left alone, one that no row sees is filled with -inf, and the others
           * compare each element's constant column cc = 8·j + e (relative to the thread's first)
           * with a threshold per row: one setp against an immediate and one selp an element.
           * T.tile.wg.select with a function of (r, c) gives the same bits, but an add, a setp and
           * a selp an element over the whole block; on the H200 this is 2-4% faster at seq 1k
           * causal (hd 64 bf16 228.9 / 228.3 → 222.5 / 220.4 µs, hd 128 175.9 / 176.6 → 175.0 /
           * 172.8; bench/results/attention-mask-2026-12-04.md).
           */
          const maskBlock = (q0: ExprLike, k0: ExprLike): void => {
            const { mRow, mCol } = maskAt!;
            // Key k0 + mCol + cc against query q0 + mRow + 8·i: k − q = cc − (d + 8·i).
            const d = T.let_("md", T.sub(T.add(q0, mRow), T.add(k0, mCol)));
            const kq = T.let_("mkq", T.sub(k0, q0));
            const tR =
              rightOff === undefined
                ? undefined
                : [0, 1].map((i) => T.let_(`mtr${i}`, T.add(d, plus(rightOff, 8 * i))));
            const tL =
              leftOff === undefined
                ? undefined
                : [0, 1].map((i) => T.let_(`mtl${i}`, T.add(T.sub(d, leftOff), 8 * i)));
            const tK = lenK === undefined ? undefined : T.let_("mtk", T.sub(lenK, T.add(k0, mCol)));
            const hides = (i: number, cc: number): PrimExpr => {
              const ps: PrimExpr[] = [];
              if (tR) ps.push(tR[i]!.lt(cc));
              if (tL) ps.push(tL[i]!.gt(cc));
              if (tK) ps.push(tK.le(cc));
              return anyOf(ps);
            };
            const CW = BN % 64 === 0 ? 64 : BN;
            for (let c0 = 0; c0 < BN; c0 += CW) {
              // Keys k0 + c0 … k0 + c0 + CW − 1 against queries q0 … q0 + 63 (k − q = kq + c).
              const all: PrimExpr[] = [];
              const some: PrimExpr[] = [];
              if (rightOff !== undefined) {
                all.push(kq.gt(plus(rightOff, 63 - c0)));
                some.push(kq.gt(plus(rightOff, 1 - c0 - CW)));
              }
              if (leftOff !== undefined) {
                all.push(kq.lt(minus(1 - c0 - CW, leftOff)));
                some.push(kq.lt(minus(63 - c0, leftOff)));
              }
              if (lenK !== undefined) {
                all.push(T.add(k0, c0).ge(lenK));
                some.push(T.add(k0, c0 + CW).gt(lenK));
              }
              const slots = (f: (slot: number, i: number, cc: number) => void): void => {
                for (let j = c0 / 8; j < (c0 + CW) / 8; j++)
                  for (let i = 0; i < 2; i++)
                    for (let e = 0; e < 2; e++) f(4 * j + 2 * i + e, i, 8 * j + e);
              };
              T.if_(
                anyOf(all),
                () => slots((slot) => Sf.set([slot], HIDDEN)),
                () =>
                  T.if_(anyOf(some), () =>
                    slots((slot, i, cc) =>
                      Sf.set([slot], T.if_then_else(hides(i, cc), HIDDEN, Sf.get([slot]))),
                    ),
                  ),
              );
            }
          };
          /** Wait for K_j (stage st, phase ph) and issue S = Q·K_jᵀ (one wgmma group). */
          const issueS = (st: ExprLike, ph: ExprLike): void => {
            T.ptx.mbarrier.try_wait(kFull.sub(st), ph);
            T.tile.wg.gemm_async(S, sQh, blocked(sK.sub(st)), { transB: true, accum: false });
          };
          /**
           * P = S rounded to the 16-bit dtype by the tile cast, which converts a column pair at a
           * time into one 32-bit register (cvt.rn.{f16x2,bf16x2}.f32, the same rounding: core
           * tile/cast-pair.ts) and takes its halves: wgmma's register A operand takes those pairs.
           * ptxas keeps P in 32 registers (BN = 128) instead of a register per element until the
           * P·V wgmma packs them, which is what fits the overlapped schedules in 160 registers
           * with the larger tiles (`blockM` or `blockN` 192); with 128 × 128 tiles they replace
           * the element-wise cast's F2FP per element and the PRMTs that paired them (ncu: 7.8% of
           * the warps' samples at hd 64 causal seq 1k,
           * bench/results/attention-diagonal-2026-12-04.md). H200, bf16, seq 1k, same calls: hd
           * 128 275.5 / 276.0 → 263.9 / 263.0 µs, causal 185.9 / 186.8 → 182.7 / 182.4; hd 64
           * causal 256.2 / 256.4 → 251.9 / 251.2 (bench/results/attention-paircast-2026-12-04.md,
           * measured with the pairs written out here before the tile cast took them over).
           */
          const castP = (): void => T.tile.wg.cast(P, S);
          /** Wait for V_j (stage st, phase ph) and issue O += P·V_j (one wgmma group). */
          const issuePV = (st: ExprLike, ph: ExprLike): void => {
            T.ptx.mbarrier.try_wait(vFull.sub(st), ph);
            T.tile.wg.gemm_async(acc, P, blocked(sV.sub(st)), { accum: true });
          };
          // With `ctas`: the KV blocks of the CTA's units before this one (as the producer's).
          const ring = plan ? T.local_scalar("int32", 0, { name: "ring" }) : undefined;
          const ping = schedule === "pingpong";
          // With `ctas`, the ping-pong's turns run on across units (FlashAttention-3's
          // mma_init): the last consumer arrives at PING once before the first unit and every
          // consumer hands the turn on after each of its turns, so that consumer 0 issues the next
          // unit's first Q·Kᵀ while the last consumer finishes the unit before; consumer 0 takes
          // the turn left over after the last unit (each barrier's arrivals and waits match).
          if (ping && plan) T.if_(cw.eq(NC - 1), () => T.cuda.bar_arrive(PING, 256));
          eachUnit((w, turn) => {
            const { qt, h, b, blocks, kvBlock } = w;
            T.tile.wg.zero(acc);
            T.tile.wg.fill(m, -Infinity);
            T.tile.wg.zero(l);
            T.ptx.mbarrier.try_wait(qFull.sub(0), plan ? T.floormod(turn, 2) : 0);
            // Block n of the unit: the CTA's ring position ring + n (n without `ctas`).
            const at = (n: ExprLike): ExprLike => (ring ? T.add(ring, n) : n);
            /**
             * After the unit's n-th Q·Kᵀ completed: free K's stage st, and with `ctas` after the
             * unit's last one (n = blocks − 1) Q's slot (qEmpty).
             */
            const sDone = (st: ExprLike, n: ExprLike): void =>
              T.if_(first, () => {
                T.ptx.mbarrier.arrive(kEmpty.sub(st));
                if (qEmpty) {
                  const last =
                    typeof n === "number" && typeof blocks === "number"
                      ? n === blocks - 1
                      : T.eq(n, T.sub(blocks, 1));
                  if (last === true) T.ptx.mbarrier.arrive(qEmpty.sub(0));
                  else if (last !== false) T.if_(last, () => T.ptx.mbarrier.arrive(qEmpty.sub(0)));
                }
              });
            // A unit that sees no KV block issues no Q·Kᵀ: Q's slot is free once Q has landed.
            if (qEmpty && typeof blocks !== "number") {
              T.if_(first.and(T.eq(blocks, 0)), () => T.ptx.mbarrier.arrive(qEmpty.sub(0)));
            }
            /**
             * The mask and online softmax of the n-th block in S: m' = max(m, c · rowmax(S)),
             * corr = exp2(m − m'), S = exp2(c · S − m'), l = l · corr + rowsum(S). Touches
             * neither acc nor P, which a P·V wgmma of the block before may still read and write.
             */
            const softmax = (n: ExprLike): void => {
              if (masked) {
                // Blocks that cross a window edge of the query tile: key k = BN·kj + c is hidden
                // from this warpgroup's row r (query q = BM·qt + 64·cw + r) when k > q + rightOff
                // (past the right edge; causal: after it), k < q − leftOff, or (varlen, `dynamic`)
                // k ≥ lenK. Per block, does the tile cross the right edge, the left edge, the
                // sequence's end? Those blocks go through maskBlock.
                const kj = kvBlock(n);
                const q0 = T.let_("q0", T.add(T.mul(qt, BM), T.mul(cw, 64)));
                const k0 = T.mul(kj, BN);
                const tq = T.mul(qt, BM);
                const crosses: PrimExpr[] = [];
                if (rightOff !== undefined)
                  crosses.push(T.add(k0, BN - 1).gt(rightOff === 0 ? tq : T.add(tq, rightOff)));
                if (leftOff !== undefined) {
                  crosses.push(k0.lt(T.add(tq, minus(BM - 1, leftOff))));
                }
                if (lenK !== undefined) crosses.push(T.add(k0, BN).gt(lenK));
                T.if_(anyOf(crosses), () => maskBlock(q0, k0));
              }
              // m' = max(m, max_k c · S); corr = exp2(m − m'); P = exp2(c · S − m'). The largest
              // scaled logit is c · rowmax(S), or c · rowmin(S) for a negative scale (c's sign
              // is known at build time; rounding is monotonic, so it is also the largest of the
              // rounded c · S below).
              if (cConst >= 0) T.tile.wg.max(mNew, S, 1);
              else T.tile.wg.min(mNew, S, 1);
              T.tile.wg.mul(mNew, mNew, c);
              T.tile.wg.maximum(mNew, mNew, m);
              if (emptyRows) {
                // A row that has seen no key yet has m' = -inf, and exp2(-inf − (-inf)) is NaN:
                // m' = max(m', −FLT_MAX) instead (the same for every other row), so corr =
                // exp2(-inf) = 0 and P = exp2(-inf) = 0 there while l and O stay 0.
                T.tile.wg.maximum(mNew, mNew, -FLT_MAX);
              }
              T.tile.wg.sub(corr, m, mNew);
              T.tile.wg.exp2(corr, corr, { approx: true });
              T.tile.wg.maximum(m, m, mNew);
              // c·S rounded, then − m' (not one fma): m' is max(c·S) rounded the same way, so
              // the row's largest logit gives exactly exp2(0) = 1 and no logit gives more, even when
              // logits are huge (an fma would leave c·S's rounding error, up to 2^-25·|c·S|, in
              // the exponent).
              T.tile.wg.mul(S, S, c);
              T.tile.wg.sub(S, S, mNew);
              T.tile.wg.exp2(S, S, { approx: true });
              // l = l · corr + rowsum(P).
              T.tile.wg.sum(rs, S, 1);
              T.tile.wg.fma(l, l, corr, rs);
            };
            if (schedule === "serial") {
              // Per block: S = Q·K_jᵀ, wait, softmax, O = O · corr + P · V_j, wait.
              for (const j of T.range(blocks)) {
                const [st, ph] = ringAt(at(j), "");
                issueS(st, ph);
                T.ptx.wgmma.wait_group(0);
                sDone(st, j);
                softmax(j);
                T.tile.wg.mul(acc, acc, corr);
                castP();
                issuePV(st, ph);
                T.ptx.wgmma.wait_group(0);
                T.if_(first, () => T.ptx.mbarrier.arrive(vEmpty.sub(st)));
              }
            } else {
              // FlashAttention-3's intra-warpgroup overlap: block j's S = Q·K_jᵀ is issued with
              // block j − 1's O += P·V (two wgmma groups), and block j's softmax runs while the
              // P·V group does (wait_group 1: S is ready; then 0). With "pingpong" the consumers
              // also take turns to issue, a ring (named barrier PING + cw is cw's turn; 256
              // threads: the waiting warpgroup and the one before it, which arrives), so one's
              // softmax runs while the others' wgmmas do. Consumer 0 goes first (the last one
              // arrives at PING once before its first turn); each barrier completes once per turn.
              const myTurn = (): void => {
                if (ping) byConsumer((i) => T.cuda.bar_sync(PING + i, 256));
              };
              const yourTurn = (): void => {
                if (ping) byConsumer((i) => T.cuda.bar_arrive(PING + ((i + 1) % NC), 256));
              };
              const body = (): void => {
                if (ping && !plan) T.if_(cw.eq(NC - 1), () => T.cuda.bar_arrive(PING, 256));
                const [s0, p0] = ring ? ringAt(ring, "0") : [0, 0];
                myTurn();
                issueS(s0, p0);
                yourTurn();
                T.ptx.wgmma.wait_group(0);
                sDone(s0, 0);
                softmax(0);
                castP();
                for (const j of T.range(1, blocks)) {
                  const [st, ph] = ringAt(at(j), "");
                  const [sp, pp] = ringAt(at(T.sub(j, 1)), "p");
                  myTurn();
                  issueS(st, ph);
                  issuePV(sp, pp);
                  yourTurn();
                  T.ptx.wgmma.wait_group(1);
                  sDone(st, j);
                  softmax(j);
                  T.ptx.wgmma.wait_group(0);
                  T.if_(first, () => T.ptx.mbarrier.arrive(vEmpty.sub(sp)));
                  T.tile.wg.mul(acc, acc, corr);
                  castP();
                }
                const [sl_, pl] = ringAt(at(T.sub(blocks, 1)), "l");
                myTurn();
                issuePV(sl_, pl);
                // The last turn: without `ctas` the last consumer hands none back (each barrier
                // completes blocks + 1 times: PING + i + 1 once per turn of consumer i, PING at the
                // last consumer's first arrive and its turns but the last); with it, every one
                // does (the turns run on into the next unit).
                if (ping && plan) yourTurn();
                else if (ping) byConsumer((i) => T.cuda.bar_arrive(PING + i + 1, 256), NC - 1);
                T.ptx.wgmma.wait_group(0);
                T.if_(first, () => T.ptx.mbarrier.arrive(vEmpty.sub(sl_)));
              };
              // A tile that sees no KV block (a window or varlen can leave none) skips the loop:
              // both consumers alike (the block range is the CTA's).
              if (typeof blocks === "number") body();
              else T.if_(T.gt(blocks, 0), body);
            }
            // With varlen, `dynamic` or a partial static tile (192 rows not dividing seq_q), rows
            // past the sequence's end are not stored: each thread
            // stores its own rows of the wgmma accumulator layout (thread t of the warpgroup holds
            // rows 16·⌊t / 32⌋ + 8·i + ⌊(t mod 32) / 4⌋, i = 0, 1: slot i of a row tile (rl), slots
            // 4·n + 2·i + e of a 64 × D tile (ol), column 8·n + 2·(t mod 4) + e), each row under
            // its own guard: r < lenQ, and with `dynamic` b < batch too (it holds in every CTA of
            // the grid; from it the verifier proves O's and LSE's stores inside the tensors, TX2006,
            // for every batch and seq_q).
            const lenQ: ExprLike | undefined = lens ? lens.lenQ : partQ ? seqQ : undefined;
            const own =
              lenQ !== undefined
                ? (() => {
                    const t = T.let_("t", T.floormod(tid, 128));
                    const r0 = T.let_("r0", T.add(T.add(T.mul(qt, BM), T.mul(cw, 64)), fragRow(t)));
                    const inRow = (r: PrimExpr): PrimExpr =>
                      dyn ? r.lt(lenQ).and(T.lt(b, dyn.batch)) : r.lt(lenQ);
                    return { t, r0, inRow };
                  })()
                : undefined;
            if (LSE !== undefined) {
              // LSE = ln 2 · (m + log2 l) (m in the log2 domain); −inf where l = 0 (log2 0 = −inf,
              // and m is −inf or −FLT_MAX there). Each row's 4 replicas store the same value.
              T.tile.wg.log2(corr, l, { approx: true });
              T.tile.wg.add(corr, corr, m);
              T.tile.wg.mul(corr, corr, Math.LN2);
              if (own) {
                for (const i of T.unroll(2)) {
                  const r = T.add(own.r0, T.mul(i, 8));
                  T.if_(T.floormod(own.t, 4).eq(0).and(own.inRow(r)), () =>
                    LSE.set(seq ? [h, T.add(seq.q0, r)] : [b, h, r], corr.flat().get([i])),
                  );
                }
              } else {
                const lseRows = LSE.rearrange("b h (i r o) -> b h i r o", { r: 64, o: 1 });
                T.tile.wg.copy(lseRows.sub(b, h, T.add(T.mul(qt, NC), cw)), corr);
              }
            }
            // O = acc / l (l ≥ 1 where a row sees a key: its maximum's, exp2(0) = 1; a row that
            // sees none has l = 0 and acc = 0: 1 / max(l, FLT_MIN) is finite, so O = 0, not NaN).
            if (emptyRows) T.tile.wg.maximum(l, l, FLT_MIN);
            T.tile.wg.reciprocal(rs, l);
            T.tile.wg.mul(acc, acc, rs);
            T.tile.wg.cast(out, acc);
            /** Each thread's own rows of O under their guards (partial tiles, varlen). */
            const guarded = (): void => {
              if (own === undefined) return;
              // Column pairs as 32-bit stores (a vectorized pair), as T.tile.wg.copy makes them.
              const c0 = T.let_("c0", fragCol(own.t));
              const outSlots = out.flat();
              for (const i of T.unroll(2)) {
                const r = T.let_("r", T.add(own.r0, T.mul(i, 8)));
                T.if_(own.inRow(r), () => {
                  const oRow = seq ? O!.sub(T.add(seq.q0, r), h) : O!.sub(b, r, h);
                  for (const n of T.unroll(D / 8)) {
                    for (const e of T.vectorized(2)) {
                      oRow.set(
                        [T.add(T.add(T.mul(n, 8), c0), e)],
                        outSlots.get([T.add(T.add(T.mul(n, 4), T.mul(i, 2)), e)]),
                      );
                    }
                  }
                });
              }
            };
            /**
             * O's 64 × D rows of this consumer into shared memory, then one TMA store to `dst`
             * (an [64, D] view of O).
             */
            const staged = (dst: TileView): void => {
              // Into shared memory, then one TMA store per consumer (FlashAttention-3's
              // epilogue): a thread's 32-bit stores of column pairs went to O directly before,
              // and on the H200 the forward at seq 1k (head dim 128) ran 12-17% faster with
              // those stores left out (bench/results/attention-2026-12-03d.md). Its slot: sO's,
              // or its own rows of Q's tile (read by no wgmma after its last Q·Kᵀ).
              const slot = sO
                ? sO.sub(cw)
                : sQ.rearrange("k (w r) c -> w k r c", { r: 64 }).sub(cw);
              const epiSync = (): void => byConsumer((i) => T.cuda.bar_sync(EPI + i, 128));
              if (sO && plan) {
                // The unit before's store has read the slot (its issuing thread waits; the
                // warpgroup's barrier passes that on).
                T.if_(first, () => T.ptx.cp.async_.bulk.wait_group_read(0));
                epiSync();
              }
              fragmentStager(tid)(slot, out);
              // The TMA store reads the slot through the async proxy.
              T.ptx.fence.proxy_async();
              epiSync();
              T.if_(first, () => {
                T.tile.copy_async(cols(dst), blocked(slot));
                T.ptx.cp.async_.bulk.commit_group();
              });
            };
            if (own && tmaO) {
              // A block of 64 rows wholly inside the sequence (and the batch) takes the TMA
              // store (its box would write past a partial block's rows, into the next
              // sequence's); the others store their own rows under guards.
              const top = T.add(T.mul(qt, BM), T.mul(cw, 64));
              const inside = T.add(top, 64).le(lenQ!);
              const full = dyn ? inside.and(T.lt(b, dyn.batch)) : inside;
              T.if_(
                full,
                () => staged(seqRows(O!, b, dyn ? dyn.seqQ : seqQ, top, h, 64, heads)),
                guarded,
              );
            } else if (own) guarded();
            else if (tmaO) staged(rows(O!, 64).sub(b, T.add(T.mul(qt, NC), cw), h));
            else T.tile.wg.copy(rows(O!, 64).sub(b, T.add(T.mul(qt, NC), cw), h), out);
            if (ring) ring.set(T.add(ring, blocks));
          });
          // The turn the last consumer handed on after its last one.
          if (ping && plan) T.if_(cw.eq(0), () => T.cuda.bar_sync(PING, 256));
          // O's TMA stores are complete before the CTA exits.
          if (tmaO) T.if_(first, () => T.ptx.cp.async_.bulk.wait_group(0));
        },
      );
    };
    // With varlen, a CTA whose query tile starts past its sequence's end exits before its first
    // barrier (all its threads: the condition is the CTA's).
    if (seq) T.if_(T.cuda.block_idx("x").lt(qTiles), kernel);
    else kernel();
  });
}
