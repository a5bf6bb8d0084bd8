// FlashAttention backward on Hopper with the tile layer: dQ, dK and dV of O = softmax(Q·Kᵀ ·
// scale) · V from Q, K, V, O, dO and the forward's LSE, in three kernels:
//   1. `preprocess`, a CTA per 64-row query block (with varlen a warp per query row):
//      Δ_i = Σ_d dO_id · O_id (float32), the forward's LSE in the log2 domain (LSE · log2 e; +inf
//      for a row that saw no key, so exp2(s − LSE₂) = 0 there, not NaN) and the float32 dQ
//      accumulator zeroed (blocked: [64 queries, 64 columns] blocks, each contiguous and in the
//      wgmma accumulator's fragment order, fragment.ts FRAG_BLOCK: a thread's slots are 16-byte
//      vectors, so staging a block in shared memory has no bank conflicts; row-major, a warp's
//      8-byte stores of eight rows 256 bytes apart took eight ways);
//   2. `main`, a CTA per 128 keys of one (batch, KV head); 384 threads: warpgroup 0 produces,
//      warpgroups 1 and 2 consume 64 keys each (FlashAttention-3's split of the KV block);
//      causal, the CTAs are dealt longest first (key tile 0 of each pair of an L2 section, then
//      key tile 1, …: order.ts), so that the last to start are the shortest (H200, hd 128
//      bf16 causal: seq 4k 3.8% and 1k 1.7% faster than key tile fastest):
//      - the producer thread loads the CTA's K and V rows once, then Q and dO blocks of 64 query
//        rows through a 2-deep ring by T.tile.copy_async (TMA, 128B swizzle), with the block's
//        LSE₂ and Δ (one 256-byte bulk copy each, on the same barriers: the consumers read them
//        from shared memory, as FlashAttention-3), for each query head of the KV head's group
//        in turn;
//      - per query block a consumer recomputes S = Q·K_wᵀ and computes dP = dO·V_wᵀ (wgmma SS,
//        64 × 64 float32 each, both in flight), then, in FlashAttention-3's order so that the
//        tensor cores run while the warpgroups compute: P = exp2(scale·log2e·S − LSE₂) while dP
//        runs, rounded to the 16-bit dtype and stored to shared memory (stmatrix, 128B swizzle:
//        the target is sm_90a; the vector path's 16-bit stores measured 0.87× cuDNN at hd 128
//        seq 4k where removing them gave 1.39×); after a proxy fence and the warpgroup's
//        barrier, dV_w += Pᵀ·dO (P read as an MN-major A operand, `transA`: P is row-major, so
//        Pᵀ is read transposed) runs while dS = P ∘ (dP − Δ) is computed (row vectors broadcast
//        along the keys) and stored as P;
//        then dQ's product and dK_w += dSᵀ·Q, the dQ block staged while dK runs. Every wgmma
//        group is waited for within its step;
//      - dQ's partial sums of the block go through shared memory to the accumulator by one bulk
//        reduction per consumer (`cp.reduce.async.bulk .add.f32`, 16 KiB, the L2 adds; "ss"
//        stores the block at the end of a step and issues its reduction in the next, so that no
//        warp waits for its staging stores to land): at head
//        dim 128 the consumers split dQ's columns, each computing dQ[:, 64·w ..] = dS · K[:,
//        64·w ..] over all 128 keys (SS, both consumers' dS from shared memory: a barrier of the
//        256 consumer threads), as FlashAttention-3; at head dim 64 each computes all 64 columns
//        over its own keys (RS: dS in registers is the A operand's layout). Per-element
//        red.global.add of the same sums measured 0.15–0.21× cuDNN on the H200
//        (bench/results/attention-hd128-bwd-2026-12-02.md): the L2's atomic units were the limit;
//      - the epilogue scales dK by the softmax scale and stores dK and dV: dense, through the
//        CTA's K and V tiles in shared memory and one TMA store each per consumer; with varlen
//        each thread its own rows (32-bit stores under guards);
//   3. `postprocess`, a CTA per accumulator block (with varlen a warp per query row): dQ =
//      scale · dQ_accumulator, rounded to the dtype (dense: through shared memory by stmatrix,
//      then a TMA store).
// Masks and heads as the forward (packages/kernels/src/attention/forward.ts): causal = window
// [-1, 0], `window: [left, right]` (a KV block loops over the query blocks that meet its keys'
// windows, masking those that cross an edge), `kvHeads` (a CTA sums the gradients of its KV
// head's query heads in registers: no atomics for dK, dV). Head dims 64 and 128; at 256 (dK and
// dV would need 256 float32 registers a thread in this split) the main kernel is backward-wide.ts's
// (a CTA per 64 keys, dKᵀ and dVᵀ split over the head dim); seq_q and seq_k multiples of
// 128, or any packed lengths with varlen (totals ≥ 128).
// Variable-length batches (`varlen: { maxSeqQ, maxSeqK }`, the forward's cu_seqlens convention:
// Q, O, dO, dQ [totalQ, heads, hd], K, V, dK, dV [totalK, kvHeads, hd], LSE [heads, totalQ],
// cuSeqlensQ / cuSeqlensK int32 [batch + 1] as each kernel's last parameters):
//   - the scratch tensors live in a padded row space: sequence b's rows start at row
//     64 · (⌊cuSeqlensQ[b] / 64⌋ + b) (FlashAttention's padded offset, which never reaches into the
//     previous sequence's last 64-row block: the offsets differ by at least its length, and b by
//     one), so each of its 64-row blocks of dQacc is one contiguous 16 KiB block, 16-byte aligned,
//     as the bulk reduction adds it; Delta and LSE2 are [heads, padQ] and dQacc [heads, padQ / 64,
//     hd / 64, 64 · 64], padQ = 64 · (⌈totalQ / 64⌉ + batch − 1). The per-row kernels run
//     ⌈maxSeqQ / 64⌉ · 64 rows per (sequence, head): a row of the sequence as above, a padding row
//     of its last block gets Δ = 0, LSE₂ = +inf and a zero accumulator row (so P = 0 there), rows
//     past the block do nothing; dQ rows outside every sequence are not written;
//   - the main grid is ⌈maxSeqK / 128⌉ key tiles per (sequence, KV head); a CTA reads its
//     sequence's offsets and lengths, and one whose key tile starts past the sequence's end exits
//     before its first barrier (the whole CTA). K, V, Q and dO tiles are TMA views at a dynamic
//     row of the packed tensors (coordinates cuSeqlens[b] + 128·tile, + 64·block), as the
//     forward's: rows past the sequence's end load whatever follows (the next sequence, or zeros
//     past the tensor's end, which TMA fills). Keys ≥ lenK are masked to -inf in the last key
//     tile (P = 0, dS = 0: they add nothing to dQ) and their dK, dV rows are not stored (each
//     thread stores its own rows of the accumulator layout under a guard, as the forward stores
//     O); queries ≥ lenQ of the last query block have LSE₂ = +inf and Δ = 0, so P = dS = 0 and
//     they add nothing to dK, dV. Products with a probability of 0 are 0 only for finite values:
//     rows of Q, dO, K and V after the last sequence (up to the totals) must be finite, as the
//     forward's V rows there. Causal and `window` are bottom-right aligned per sequence (shift
//     lenK − lenQ, a runtime value in the block range and the mask); a sequence with no keys has
//     no CTA (its dQ rows are the accumulator's zeros), one with no queries runs no step (dK =
//     dV = 0).
import {
  T,
  type ExprLike,
  type ParamType,
  type PrimExpr,
  type Stride,
  type TileView,
} from "@tirx-ts/dsl";
import { invariant, showValue, type DType, type PrimFunc } from "@tirx-ts/core";
import { checkHeadsAndWindow, configError, launchScaleSign, windowOffsets } from "./options.js";
import { W, blocked, cols, rows, rowsAt } from "./views.js";
import {
  fragCol,
  fragRow,
  fragmentRow,
  fragmentStager,
  loadFragmentBlock,
  storeFragmentBlock,
} from "../fragment.js";
import type { FlashAttentionSizes } from "./forward.js";
import { makeFlashAttentionBackwardWide } from "./backward-wide.js";
import { backwardKeyTile } from "./order.js";
import {
  BM,
  keyTileSteps,
  logitGradients,
  maskBlock,
  probabilities,
  queryRowsOf,
  sequenceRows,
  windowShift,
} from "./backward-steps.js";

/** Bytes of a query block's LSE₂ or Δ (64 float32): one bulk copy. */
const ROW_BYTES = 64 * 4;
/** Keys per CTA (two consumer warpgroups of 64). */
const BN = 128;
const STAGES = 2;
/** Warps (query rows) per CTA of the varlen pre- and postprocessing kernels. */
const ROWS = 8;

/**
 * Padded row p of the varlen blocked dQ accumulator [heads, padQ / 64, hd / 64, 64 · 64] of head
 * h (each block in the wgmma fragment order: fragment.ts FRAG_BLOCK), as its [hd / 64, 8, 4, 2]
 * columns (column 64·k + 8·n + 2·p + e at [k, n, p, e]).
 */
function accRowPacked(acc: TileView, h: ExprLike, p: ExprLike): TileView {
  return fragmentRow(acc.sub(h, T.floordiv(p, BM)), T.floormod(p, BM));
}

/** The three kernels of the backward pass, launched in this order. */
export interface FlashAttentionBackward {
  /**
   * (O, dO, LSE, Delta, LSE2, dQacc): O and dO [batch, seqQ, heads, hd] `dtype`, LSE [batch,
   * heads, seqQ] float32 (the forward's, natural log) → Delta and LSE2 [batch, heads, seqQ]
   * float32 (Δ = rowsum(dO ∘ O); LSE · log2 e, +inf where LSE = −inf), dQacc float32 zeroed
   * ([batch, heads, seqQ / 64, hd / 64, 64 · 64]: blocks of 64 queries × 64 columns, each in
   * the wgmma fragment order, fragment.ts FRAG_BLOCK).
   * With `varlen`: (O, dO, LSE, Delta, LSE2, dQacc, cuSeqlensQ), O and dO [totalQ, heads, hd],
   * LSE [heads, totalQ], the scratch tensors in the padded row space (see
   * {@link backwardScratch}: each sequence's padding rows get Δ = 0, LSE₂ = +inf, dQacc 0),
   * cuSeqlensQ int32 [batch + 1].
   */
  readonly preprocess: PrimFunc;
  /**
   * (Q, K, V, dO, LSE2, Delta, dQacc, dK, dV): Q, dO [batch, seqQ, heads, hd], K, V, dK, dV
   * [batch, seqK, kvHeads, hd] `dtype`; dQacc (blocked, see `preprocess`) accumulates dQ /
   * scale. With `varlen`: (…, dK, dV, cuSeqlensQ, cuSeqlensK), Q, dO [totalQ, heads, hd], K, V,
   * dK, dV [totalK, kvHeads, hd]; dK and dV rows outside every sequence are not written.
   */
  readonly main: PrimFunc;
  /**
   * (dQacc, dQ): dQ [batch, seqQ, heads, hd] `dtype` = scale · dQacc. With `varlen`: (dQacc, dQ,
   * cuSeqlensQ), dQ [totalQ, heads, hd]; rows outside every sequence are not written.
   */
  readonly postprocess: PrimFunc;
}

/**
 * The backward kernels for the forward of the same sizes and options (`makeFlashAttention`):
 * gradients dQ [batch, seqQ, heads, hd], dK and dV [batch, seqK, kvHeads, hd] (`dtype`) of O
 * from dO, given O and the forward's LSE (its `lse: true` output). `lse` and `schedule` are
 * ignored. Float32 accumulation; P and dS are rounded to the 16-bit dtype before their products
 * (as the forward rounds P).
 *
 * With `varlen: { maxSeqQ, maxSeqK }` (a packed variable-length batch, FlashAttention's
 * cu_seqlens convention, as the forward's `varlen`; FlashAttention's varlen backward takes
 * max_seqlen_q and max_seqlen_k alike): dQ [totalQ, heads, hd], dK and dV [totalK, kvHeads, hd]
 * from Q, O, dO [totalQ, heads, hd], K, V [totalK, kvHeads, hd] and LSE [heads, totalQ], each
 * kernel taking cuSeqlensQ (and the main one cuSeqlensK) int32 [batch + 1] last. `maxSeqQ` sizes
 * the grids of the pre- and postprocessing kernels (⌈maxSeqQ / 64⌉ · 64 rows per sequence and
 * head), `maxSeqK` the main kernel's (⌈maxSeqK / 128⌉ key tiles per sequence and KV head):
 * each at least every sequence's rows (the kernels cannot check it; attentionBackward does).
 * Causal and `window` are bottom-right aligned per sequence; a sequence with no keys gets dQ = 0,
 * one with no queries dK = dV = 0; gradient rows outside every sequence are not written.
 * @example
 *   makeFlashAttentionBackward({ batch: 3, heads: 8, seqQ: 4096, seqK: 4096, headDim: 128,
 *     dtype: "bfloat16", causal: true, varlen: { maxSeqQ: 2048, maxSeqK: 2048 } })
 * @throws TirxError TX9001 (kernels/config) for a head dim other than 64, 128 or 256, lengths
 *   that are not positive multiples of 128 (with `varlen`: packed row counts under 128), a causal
 *   mask with seq_q ≠ seq_k (without `varlen`), a `varlen` that is not `{ maxSeqQ, maxSeqK }` with
 *   integers in 1 … seqQ and 1 … seqK, a `kvHeads` that is not a positive integer dividing
 *   `heads`, a `window` that is not two integers or is given with `causal`, a `backwardMma`
 *   other than "ss" or "rs", or a `scale` / `scaleAtLaunch` / `negativeScale` as the forward
 *   refuses them.
 */
export function makeFlashAttentionBackward(s: FlashAttentionSizes): FlashAttentionBackward {
  const { batch, heads, seqQ, seqK, headDim: D, dtype: dt } = s;
  if (D !== 64 && D !== 128 && D !== 256) {
    throw configError(`flash_attention backward: head_dim is 64, 128 or 256, got ${D}`);
  }
  const varlen = s.varlen;
  if (varlen !== undefined) {
    const v = (typeof varlen === "object" && varlen !== null ? varlen : {}) as {
      maxSeqQ?: unknown;
      maxSeqK?: unknown;
    };
    const within = (x: unknown, n: number) =>
      Number.isInteger(x) && (x as number) >= 1 && (x as number) <= n;
    if (!within(v.maxSeqQ, seqQ) || !within(v.maxSeqK, seqK)) {
      throw configError(
        `flash_attention backward: varlen is { maxSeqQ, maxSeqK }, the longest sequence's query and key rows, integers in 1 … seq_q (${seqQ}) and 1 … seq_k (${seqK}), got ${showValue(varlen)}`,
      );
    }
    // A TMA box of a tile's rows (64 queries, 128 keys) must fit in the tensor's rows; 128 for
    // both, as the forward.
    if (!Number.isInteger(seqQ) || !Number.isInteger(seqK) || seqQ < BN || seqK < BN) {
      throw configError(
        `flash_attention backward: with varlen, seq_q and seq_k are the packed row counts of Q and K, integers ≥ ${BN} (a tile's TMA box fits in the tensor: pad the packed tensors), got ${seqQ} and ${seqK}`,
      );
    }
  } else if (seqQ <= 0 || seqK <= 0 || seqQ % BN || seqK % BN) {
    throw configError(
      `flash_attention backward needs seq_q and seq_k positive multiples of ${BN}, got ${showValue(seqQ)} and ${showValue(seqK)} (the forward takes any lengths; give the batch packed, with varlen's offsets, which the backward takes at any lengths: keys padded into a dense batch would join the softmax)`,
    );
  }
  const causal = s.causal ?? false;
  if (causal && seqQ !== seqK && varlen === undefined) {
    throw configError(
      "flash_attention backward: causal needs seq_q = seq_k here; give window: [-1, 0] instead, the same bottom-right causal mask, which the backward takes with seq_q ≠ seq_k",
    );
  }
  const kvHeads = checkHeadsAndWindow(s, "flash_attention backward");
  const [left, right] = s.window ?? (causal ? [-1, 0] : [-1, -1]);
  // The softmax scale: a constant, or (scaleAtLaunch) the launch's float32 `scale` (of the
  // build's sign), the last parameter of the postprocessing kernel and, before `scaleLog2`, of
  // the main one; with a launch scale, scaleConst is a stand-in of its sign (all the build reads
  // of it).
  const atLaunch = s.scaleAtLaunch === true;
  const scaleConst = atLaunch ? launchScaleSign(s) : (s.scale ?? 1 / Math.sqrt(D));
  const scaleParam: Record<string, ParamType> = atLaunch ? { scale: T.float32 } : {};
  /** The scale a kernel body multiplies by: its `scale` parameter, or the constant. */
  const scaleOf = (args: object): ExprLike =>
    atLaunch ? (args as { scale: PrimExpr }).scale : scaleConst;
  // With varlen, the scratch tensors' padded row space: sequence b's rows start at row
  // 64 · (⌊cuSeqlensQ[b] / 64⌋ + b), which is past the previous sequence's last block, and the
  // last sequence's blocks end by block ⌈totalQ / 64⌉ + batch − 1.
  const padQ = BM * (Math.ceil(seqQ / BM) + batch - 1);
  const rowTensors = varlen
    ? {
        rowF32: () => T.Tensor([heads, padQ], "float32"),
        qF32: () => T.Tensor([heads, padQ / BM, D / W, BM * W], "float32"),
      }
    : {
        rowF32: () => T.Tensor([batch, heads, seqQ], "float32"),
        // dQ's float32 accumulator, blocked: [batch, heads, seqQ / 64, D / 64, 64 · 64], each
        // [64 queries, 64 columns] block contiguous in fragment order (16 KiB), the unit one bulk
        // reduction adds.
        qF32: () => T.Tensor([batch, heads, seqQ / BM, D / W, BM * W], "float32"),
      };
  const qRowsT = () => T.Tensor(varlen ? [seqQ, heads, D] : [batch, seqQ, heads, D], dt);
  const kRowsT = () => T.Tensor(varlen ? [seqK, kvHeads, D] : [batch, seqK, kvHeads, D], dt);
  const offsetsT = () => T.Tensor([batch + 1], "int32");

  // One query row per warp, [hd] or as its 64-column blocks [hd / 64, 64]: lane l holds columns
  // 2l and 2l + 1 of each block.
  const rowLayout = T.TileLayout(T.S([D / W, 32, 2], ["2@m", "1@laneid", "1@m"]));
  const oneLayout = T.TileLayout(T.S([1]), T.R([32], ["1@laneid"]));
  // A row of the dQ accumulator as [hd / 64, 8, 4, 2] (accRow): lane l holds columns 2l and
  // 2l + 1 of each 64-column block, as rowLayout.
  const accLayout = T.TileLayout(T.S([D / W, 8, 4, 2], ["2@m", "4@laneid", "1@laneid", "1@m"]));
  // ⌈maxSeqQ / 64⌉ blocks of 64 rows per sequence (their padding rows too).
  const rowLaunch = (vl: { maxSeqQ: number }) =>
    T.device_entry({
      launch: T.cuda.LaunchConfig({
        grid: [(BM / ROWS) * Math.ceil(vl.maxSeqQ / BM), heads, batch],
        block: 32 * ROWS,
      }),
    });
  /**
   * The warp's query row: i = ROWS · blockIdx.x + warp, head blockIdx.y, batch blockIdx.z (with
   * varlen: i is the row within sequence b).
   */
  const rowIndex = () => ({
    i: T.let_("i", T.add(T.mul(T.cuda.block_idx("x"), ROWS), T.cuda.thread_idx("x").floordiv(32))),
    h: T.cuda.block_idx("y"),
    b: T.cuda.block_idx("z"),
  });
  const lane0 = () => T.floormod(T.cuda.thread_idx("x"), 32).eq(0);

  // Dense: a CTA per 64-row query block (one dQ accumulator block), warp w its rows 8·w .. + 7
  // as an [8, hd] tile of 16-byte vectors (lane l: row ⌊l / L⌋ + 32 / L · a, columns 8·(l mod L)
  // .. + 7, L = hd / 8 lanes a row), so each thread has D / 16 loads of O and dO in flight;
  // the block's accumulator is zeroed by 16-byte stores of consecutive addresses, and its LSE₂
  // by one thread a row. (A warp a row with 4-byte vectors and the accumulator's rows in fragment
  // order reached 46% of the H200's DRAM bandwidth at hd 128: 113 µs where 251 MB move.)
  const blockPre = (): PrimFunc => {
    const L = D / 8;
    const lanesRows = 32 / L;
    const strides: Stride[] = [
      "8@m",
      ...(lanesRows > 1 ? [`${L}@laneid` as const] : []),
      "1@laneid",
      "1@m",
    ];
    const extents = [8 / lanesRows, ...(lanesRows > 1 ? [lanesRows] : []), L, 8];
    const tileLayout = T.TileLayout(T.S(extents, strides));
    const rowLayout8 = T.TileLayout(
      T.S(extents.slice(0, -2).concat([1]), ["1@m", ...strides.slice(1, -2), "1@m"]),
      T.R([L], ["1@laneid"]),
    );
    return T.function(
      "flash_attention_bwd_pre",
      {
        O: qRowsT(),
        dO: qRowsT(),
        LSE: T.Tensor([batch, heads, seqQ], "float32"),
        Delta: rowTensors.rowF32(),
        LSE2: rowTensors.rowF32(),
        dQacc: rowTensors.qF32(),
      },
      ({ O, dO, LSE, Delta, LSE2, dQacc }) => {
        T.device_entry({
          launch: T.cuda.LaunchConfig({ grid: [seqQ / BM, heads, batch], block: 256 }),
        });
        const tid = T.cuda.thread_idx("x");
        const x = T.cuda.block_idx("x");
        const h = T.cuda.block_idx("y");
        const b = T.cuda.block_idx("z");
        const warp = T.let_("warp", tid.floordiv(32));
        const o = T.alloc_local([8, D], dt, { name: "o", layout: tileLayout });
        const g = T.alloc_local([8, D], dt, { name: "g", layout: tileLayout });
        const of = T.alloc_local([8, D], "float32", { name: "of", layout: tileLayout });
        const gf = T.alloc_local([8, D], "float32", { name: "gf", layout: tileLayout });
        const delta = T.alloc_local([8, 1], "float32", { name: "delta", layout: rowLayout8 });
        const warpRows = (t: TileView) =>
          rows(t, BM).sub(b, x, h).rearrange("(w r) d -> w r d", { r: 8 }).sub(warp);
        T.tile.warp.copy(o, warpRows(O));
        T.tile.warp.copy(g, warpRows(dO));
        // The block's accumulator (64 · D float32, contiguous), zeroed while the loads fly
        // (16-byte stores shared by the CTA's threads).
        T.tile.cta.memset(dQacc.sub(b, h, x), 0);
        T.if_(tid.lt(BM), () => {
          const i = T.let_("i", T.add(T.mul(x, BM), tid));
          const l = T.let_("l", LSE.get([b, h, i]));
          LSE2.set([b, h, i], T.if_then_else(l.eq(-Infinity), Infinity, l.mul(Math.LOG2E)));
        });
        T.tile.warp.cast(of, o);
        T.tile.warp.cast(gf, g);
        T.tile.warp.mul(of, of, gf);
        T.tile.warp.sum(delta, of, 1);
        T.tile.warp.copy(
          Delta.sub(b, h).rearrange("(x w r o) -> x w r o", { w: 8, r: 8, o: 1 }).sub(x, warp),
          delta,
        );
      },
    );
  };

  const preprocess = varlen ? rowPre(varlen) : blockPre();

  // With varlen: a warp a query row (the rows of a sequence's last block past its end may lie
  // past the packed tensors' end, so each row is guarded).
  function rowPre(vl: NonNullable<FlashAttentionSizes["varlen"]>): PrimFunc {
    return T.function(
      "flash_attention_bwd_pre",
      {
        O: qRowsT(),
        dO: qRowsT(),
        LSE: T.Tensor([heads, seqQ], "float32"),
        Delta: rowTensors.rowF32(),
        LSE2: rowTensors.rowF32(),
        dQacc: rowTensors.qF32(),
        cuSeqlensQ: offsetsT(),
      },
      ({ O, dO, LSE, Delta, LSE2, dQacc, cuSeqlensQ }) => {
        rowLaunch(vl);
        const { i, h, b } = rowIndex();
        const sq = queryRowsOf(cuSeqlensQ, b);
        // The row's place in the scratch tensors' padded row space.
        const p = T.let_("p", T.add(T.mul(sq.blk, BM), i));
        const o = T.alloc_local([D], dt, { name: "o", layout: rowLayout });
        const g = T.alloc_local([D], dt, { name: "g", layout: rowLayout });
        const of = T.alloc_local([D], "float32", { name: "of", layout: rowLayout });
        const gf = T.alloc_local([D], "float32", { name: "gf", layout: rowLayout });
        const z = T.alloc_local([D / W, 8, 4, 2], "float32", { name: "z", layout: accLayout });
        const delta = T.alloc_local([1], "float32", { name: "delta", layout: oneLayout });
        const acc = () => accRowPacked(dQacc, h, p);
        const row = () => {
          const x = T.add(sq.q0, i);
          T.tile.warp.copy(o, O.sub(x, h));
          T.tile.warp.copy(g, dO.sub(x, h));
          T.tile.warp.cast(of, o);
          T.tile.warp.cast(gf, g);
          T.tile.warp.mul(of, of, gf);
          T.tile.warp.sum(delta, of, 0);
          T.tile.warp.copy(Delta.sub(h).rearrange("(s o) -> s o", { o: 1 }).sub(p), delta);
          T.tile.warp.zero(z);
          T.tile.warp.copy(acc(), z);
          T.if_(lane0(), () => {
            const l = T.let_("l", LSE.get([h, x]));
            LSE2.set([h, p], T.if_then_else(l.eq(-Infinity), Infinity, l.mul(Math.LOG2E)));
          });
        };
        // Rows of the sequence; then its padding rows up to its last 64-row block: Δ = 0 and
        // LSE₂ = +inf (P = exp2(c·S − LSE₂) = 0 there, so the main kernel's rows past the
        // sequence's end add nothing), dQacc zeroed; warps past the last block do nothing.
        T.if_(i.lt(sq.lenQ), row, () =>
          T.if_(i.lt(T.mul(T.ceildiv(sq.lenQ, BM), BM)), () => {
            T.tile.warp.zero(z);
            T.tile.warp.copy(acc(), z);
            T.if_(lane0(), () => {
              Delta.set([h, p], 0);
              LSE2.set([h, p], Infinity);
            });
          }),
        );
      },
    );
  }

  // With varlen: a warp a query row, the sequence's rows only (rows outside every sequence are
  // not written).
  function rowPost(vl: NonNullable<FlashAttentionSizes["varlen"]>): PrimFunc {
    return T.function(
      "flash_attention_bwd_post",
      { dQacc: rowTensors.qF32(), dQ: qRowsT(), cuSeqlensQ: offsetsT(), ...scaleParam },
      (args) => {
        const { dQacc, dQ, cuSeqlensQ } = args;
        const scale = scaleOf(args);
        rowLaunch(vl);
        const { i, h, b } = rowIndex();
        const sq = queryRowsOf(cuSeqlensQ, b);
        const a = T.alloc_local([D / W, 8, 4, 2], "float32", { name: "a", layout: accLayout });
        const q = T.alloc_local([D / W, 8, 4, 2], dt, { name: "q", layout: accLayout });
        T.if_(i.lt(sq.lenQ), () => {
          T.tile.warp.copy(a, accRowPacked(dQacc, h, T.add(T.mul(sq.blk, BM), i)));
          T.tile.warp.mul(a, a, scale);
          T.tile.warp.cast(q, a);
          T.tile.warp.copy(
            dQ.sub(T.add(sq.q0, i), h).rearrange("(k n p e) -> k n p e", { n: 8, p: 4, e: 2 }),
            q,
          );
        });
      },
    );
  }

  // Dense: a CTA (one warpgroup) per [64 queries, 64 columns] block of the accumulator, read as
  // the wgmma accumulator tile it was stored from (16-byte loads of consecutive addresses),
  // scaled, rounded, and stored through shared memory by one TMA store. (A warp a row read 8-byte
  // pieces of the fragment order: 57–72% of the H200's DRAM bandwidth; this, 80%.)
  const blockPost = (): PrimFunc =>
    T.function(
      "flash_attention_bwd_post",
      { dQacc: rowTensors.qF32(), dQ: qRowsT(), ...scaleParam },
      (args) => {
        const { dQacc, dQ } = args;
        const scale = scaleOf(args);
        T.device_entry({
          launch: T.cuda.LaunchConfig({
            grid: [(seqQ / BM) * (D / W), heads, batch],
            block: 128,
            dynamic_shared_bytes: BM * W * 2,
          }),
          arch: "sm_90a",
        });
        const tid = T.cuda.thread_idx("x");
        const x = T.cuda.block_idx("x");
        const h = T.cuda.block_idx("y");
        const b = T.cuda.block_idx("z");
        const qb = T.let_("qb", x.floordiv(D / W));
        const k = T.let_("k", x.floormod(D / W));
        const ql = T.layout.wgmma_tile_layout("D", 64, W, "float32");
        const a = T.alloc_local([64, W], "float32", { name: "a", layout: ql });
        const q = T.alloc_local([64, W], dt, { name: "q", layout: ql });
        loadFragmentBlock(a, dQacc.sub(b, h, qb, k), tid);
        T.tile.wg.mul(a, a, scale);
        T.tile.wg.cast(q, a);
        const dst = rows(dQ, BM).sub(b, qb, h).rearrange("r (k c) -> k r c", { c: W }).sub(k);
        // Through shared memory (stmatrix, 128B swizzle), then one TMA store of the block
        // (32-bit stores from the registers: 64% of the DRAM bandwidth, 59.6 µs at hd 128
        // seq 4k; this: 80%, 46 µs).
        const sq = T.alloc_shared([BM, W], dt, {
          name: "sq",
          align: 1024,
          layout: T.swizzle_mode("128B"),
          dynamic: true,
        });
        T.tile.wg.copy(sq, q);
        T.ptx.fence.proxy_async("shared::cta");
        T.cuda.cta_sync();
        T.if_(tid.eq(0), () => {
          T.tile.copy_async(dst, sq);
          T.ptx.cp.async_.bulk.commit_group();
          T.ptx.cp.async_.bulk.wait_group(0);
        });
      },
    );

  const postprocess = varlen ? rowPost(varlen) : blockPost();

  if (s.backwardMma !== undefined && s.backwardMma !== "ss" && s.backwardMma !== "rs") {
    throw configError(
      `flash_attention backward: backwardMma is "ss" or "rs", got ${showValue(s.backwardMma)}`,
    );
  }
  // Head dim 256: backward-wide.ts's main kernel (these pre- and postprocessing kernels; it has
  // one design: `backwardMma` does not apply).
  if (D === 256) return { preprocess, main: makeFlashAttentionBackwardWide(s), postprocess };
  const group = heads / kvHeads;
  const qBlocksDense = seqQ / BM;
  // exp(x · scale) = exp2(x · scale · log2 e): c, a constant or the launch's `scaleLog2`.
  const cConst = scaleConst * Math.LOG2E;
  const kvBytes = BN * D * 2;
  const qBytes = BM * D * 2;
  // With varlen, keys past the sequence's end are masked in its last key tile.
  const masked = varlen !== undefined || left !== -1 || right !== -1;
  // hd 128: the consumers split dQ's columns (each reads both consumers' dS); hd 64: each
  // consumer's dQ covers all 64 columns over its own keys (a split would give wgmma N = 32 of a
  // 128B-swizzled MN-major K, which no canonical layout holds).
  const splitD = D === 128;
  // "rs": Sᵀ and dPᵀ with the keys as M, Pᵀ and dSᵀ as dV's and dK's A operands from registers.
  const rs = (s.backwardMma ?? "ss") === "rs";
  const main = T.function(
    "flash_attention_bwd",
    {
      Q: qRowsT(),
      K: kRowsT(),
      V: kRowsT(),
      dO: qRowsT(),
      LSE2: rowTensors.rowF32(),
      Delta: rowTensors.rowF32(),
      dQacc: rowTensors.qF32(),
      dK: kRowsT(),
      dV: kRowsT(),
      ...(varlen ? { cuSeqlensQ: offsetsT(), cuSeqlensK: offsetsT() } : {}),
      ...(atLaunch ? { scale: T.float32, scaleLog2: T.float32 } : {}),
    } as Record<string, ParamType>,
    (args) => {
      const { Q, K, V, dO, LSE2, Delta, dQacc, dK, dV, cuSeqlensQ, cuSeqlensK } =
        args as unknown as Record<string, TileView>;
      const scale = scaleOf(args);
      const c: ExprLike = atLaunch ? (args as { scaleLog2: PrimExpr }).scaleLog2 : cConst;
      T.device_entry({
        launch: T.cuda.LaunchConfig({
          // With varlen, ⌈maxSeqK / 128⌉ key tiles per sequence (maxSeqK checked above).
          grid: [varlen ? Math.ceil(varlen.maxSeqK! / BN) : seqK / BN, kvHeads, batch],
          block: 384,
          dynamic_shared_bytes:
            (2 * BN + 2 * STAGES * BM) * D * 2 +
            STAGES * 2 * (rs ? 1 : 2) * BM * 64 * 2 +
            (rs ? STAGES : 1) * 2 * BM * W * 4 +
            STAGES * 2 * ROW_BYTES,
        }),
        // sm_90a: P and dS go to shared memory by stmatrix (T.tile.wg.copy picks it for a
        // 16-bit wgmma accumulator tile where the target has it).
        arch: "sm_90a",
      });
      const tid = T.cuda.thread_idx("x");
      // Causal: the CTAs dealt longest first (order.ts).
      const { kb, hk, b } = backwardKeyTile(s, BN);
      // With varlen: sequence b's query rows (and their first block in the padded row space of
      // the scratch tensors), its first key row and its key count.
      const seq = varlen ? sequenceRows(cuSeqlensQ!, cuSeqlensK!, b) : undefined;
      const { rightOff, leftOff } = windowOffsets(left, right, windowShift(seq, seqK - seqQ));
      // Query blocks of the sequence.
      const qBlocks: ExprLike = seq ? T.let_("qBlocks", T.ceildiv(seq.lenQ, BM)) : qBlocksDense;
      const kernel = (): void => {
        const wg = T.let_("wg", tid.floordiv(128));
        // The query blocks that meet the tile's keys' windows, for each head of the group.
        const { forSteps } = keyTileSteps({
          kb,
          bn: BN,
          hk,
          group,
          qBlocks,
          qBlocksDense,
          varlen: seq !== undefined,
          rightOff,
          leftOff,
        });
        const sw = T.swizzle_mode("128B");
        const shared = (shape: number[], name: string) =>
          T.alloc_shared(shape, dt, { name, align: 1024, layout: sw, dynamic: true });
        const sK = shared([D / W, BN, W], "sK");
        const sV = shared([D / W, BN, W], "sV");
        const sQ = shared([STAGES, D / W, BM, W], "sQ");
        const sdO = shared([STAGES, D / W, BM, W], "sdO");
        // P and dS of each consumer: [64 query rows, 64 keys], one swizzle row wide, one per ring
        // stage: step n + 1 writes the other buffer while a slower warp of the warpgroup may still
        // have step n's wgmma reading this one (the warpgroup's barrier of step n + 1 orders step
        // n + 2's writes after every warp's wait of step n).
        // ("rs" keeps P in registers: no sP.)
        const sP = rs ? undefined : shared([STAGES, 2, BM, 64], "sP");
        const sdS = shared([STAGES, 2, BM, 64], "sdS");
        // Each consumer's [64 queries, 64 columns] float32 block of dQ, in fragment order as the
        // blocked accumulator holds it: the source of its bulk reduction. "rs" (which has no sP) keeps
        // one per ring stage, so that a step never waits for the previous step's reduction to
        // read its block.
        const sdQ = T.alloc_shared(rs ? [STAGES, 2, BM * W] : [2, BM * W], "float32", {
          name: "sdQ",
          align: 128,
          dynamic: true,
        });
        // The query block's LSE₂ and Δ (64 float32 each) per ring stage, loaded by the producer
        // with Q and dO (one 256-byte bulk copy each, on the same barriers), as
        // FlashAttention-3: the consumers read them from shared memory, not global memory.
        const rowVec = (name: string) =>
          T.alloc_shared([STAGES, BM], "float32", { name, align: 128, dynamic: true });
        const sLse = rowVec("sLse");
        const sDl = rowVec("sDl");
        const kvFull = T.alloc_shared([1], "uint64", { name: "kvFull" });
        const qFull = T.alloc_shared([STAGES], "uint64", { name: "qFull" });
        const oFull = T.alloc_shared([STAGES], "uint64", { name: "oFull" });
        const qEmpty = T.alloc_shared([STAGES], "uint64", { name: "qEmpty" });
        T.if_(tid.eq(0), () => {
          T.ptx.mbarrier.init(kvFull.sub(0), 1);
          for (const st of T.unroll(STAGES)) {
            T.ptx.mbarrier.init(qFull.sub(st), 1);
            T.ptx.mbarrier.init(oFull.sub(st), 1);
            T.ptx.mbarrier.init(qEmpty.sub(st), 2);
          }
          T.ptx.fence.mbarrier_init();
        });
        T.cuda.cta_sync();
        // The CTA's K or V tile and query block i of head h of Q or dO ([r, D] views).
        const kvTile = (x: TileView): TileView =>
          seq
            ? rowsAt(x, D, T.add(seq.k0, T.mul(kb, BN)), hk, BN, kvHeads)
            : rows(x, BN).sub(b, kb, hk);
        const qTile = (x: TileView, i: ExprLike, h: ExprLike): TileView =>
          seq ? rowsAt(x, D, T.add(seq.q0, T.mul(i, BM)), h, BM, heads) : rows(x, BM).sub(b, i, h);
        // Query block i's 64 values of head h of a row tensor (LSE2 or Delta) into `dst` by one
        // bulk copy completing on `mbar` (with varlen, the block's rows in the padded row space).
        const loadRow = (
          dst: TileView,
          x: TileView,
          h: ExprLike,
          i: ExprLike,
          mbar: TileView,
        ): void => {
          const src = seq
            ? x.rearrange("h (i r) -> h i r", { r: BM }).sub(h, T.add(seq.blk, i))
            : x.rearrange("b h (i r) -> b h i r", { r: BM }).sub(b, h, i);
          T.cuda.tile.apply(
            T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"],
            dst,
            src,
            { chunk_bytes: ROW_BYTES, mbar },
          );
        };
        T.if_(
          wg.eq(0),
          () => {
            T.ptx.setmaxnreg(false, 24);
            T.if_(tid.eq(0), () => {
              T.ptx.mbarrier.arrive.expect_tx(kvFull.sub(0), 2 * kvBytes);
              T.tile.copy_async(blocked(sK), cols(kvTile(K!)), { mbar: kvFull.sub(0) });
              T.tile.copy_async(blocked(sV), cols(kvTile(V!)), { mbar: kvFull.sub(0) });
              forSteps((n, h, i) => {
                const st = T.let_("st", T.floormod(n, STAGES));
                const ph = T.let_("ph", T.floormod(T.floordiv(n, STAGES), 2));
                // The stage's Q and dO are freed together (the consumers' last reads of both
                // are the same wgmma group).
                T.ptx.mbarrier.try_wait(qEmpty.sub(st), T.sub(1, ph));
                T.ptx.mbarrier.arrive.expect_tx(qFull.sub(st), qBytes + ROW_BYTES);
                T.tile.copy_async(blocked(sQ.sub(st)), cols(qTile(Q!, i, h)), {
                  mbar: qFull.sub(st),
                });
                loadRow(sLse.sub(st), LSE2!, h, i, qFull.sub(st));
                T.ptx.mbarrier.arrive.expect_tx(oFull.sub(st), qBytes + ROW_BYTES);
                T.tile.copy_async(blocked(sdO.sub(st)), cols(qTile(dO!, i, h)), {
                  mbar: oFull.sub(st),
                });
                loadRow(sDl.sub(st), Delta!, h, i, oFull.sub(st));
              });
            });
          },
          () => {
            T.ptx.setmaxnreg(true, 240);
            // Consumer cw = wg − 1 ∈ {0, 1} owns keys kb·BN + 64·cw .. + 63.
            const cw = T.let_("cw", wg.add(1).floormod(2));
            const sl = T.layout.wgmma_tile_layout("D", 64, 64, "float32");
            const ol = T.layout.wgmma_tile_layout("D", 64, D, "float32");
            const rl = T.TileLayout(
              "S[(4, 2, 8) : (32@tid_in_wg, 1, 4@tid_in_wg)] + R[4 : 1@tid_in_wg]",
            );
            const S = T.alloc_local([64, 64], "float32", { name: "S", layout: sl });
            const dP = T.alloc_local([64, 64], "float32", { name: "dP", layout: sl });
            const P16 = T.alloc_local([64, 64], dt, { name: "P16", layout: sl });
            const dS16 = T.alloc_local([64, 64], dt, { name: "dS16", layout: sl });
            const dKa = T.alloc_local([64, D], "float32", { name: "dKa", layout: ol });
            const dVa = T.alloc_local([64, D], "float32", { name: "dVa", layout: ol });
            // dQ's block of this consumer: at hd 128 columns 64·cw .. + 63 of the CTA's 128 keys'
            // sum (FlashAttention-3's split of dQ = dS · K over the head dim, both consumers' dS
            // read from shared memory); at hd 64 all 64 columns over its own 64 keys (RS).
            const ql = T.layout.wgmma_tile_layout("D", 64, W, "float32");
            const dQa = T.alloc_local([64, W], "float32", { name: "dQa", layout: ql });
            const out = T.alloc_local([64, D], dt, { name: "out", layout: ol });
            // "rs": the query rows' LSE₂ and Δ along the columns of Sᵀ [64 keys, 64 queries]
            // (each thread holds the 16 columns of its accumulator slots, replicated over the
            // rows' threads).
            const cl = T.TileLayout(
              "S[(8, 4, 2) : (2, 1@tid_in_wg, 1)] + R[(4, 8) : (32@tid_in_wg, 4@tid_in_wg)]",
            );
            const vecShape = rs ? [1, 64] : [64, 1];
            const vecLayout = rs ? cl : rl;
            const lse = T.alloc_local(vecShape, "float32", { name: "lse", layout: vecLayout });
            const dl = T.alloc_local(vecShape, "float32", { name: "dl", layout: vecLayout });
            T.tile.wg.zero(dKa);
            T.tile.wg.zero(dVa);
            // This consumer's 64 keys of K and V: [64, D / 64, 64] column-blocked views.
            const keys = (t: typeof sK) => t.rearrange("k (w r) c -> w r k c", { r: 64 }).sub(cw);
            const sKw = keys(sK);
            const sVw = keys(sV);
            // The warpgroup's named barrier 5 + cw (ids 1..15 are free; a warp-uniform branch
            // picks the immediate).
            const wgBarrier = () =>
              T.if_(
                cw.eq(0),
                () => T.cuda.bar_sync(5, 128),
                () => T.cuda.bar_sync(6, 128),
              );
            // The warpgroup's first thread: it issues and waits for the bulk reductions and
            // arrives on the per-warpgroup mbarriers.
            const leader = () => T.floormod(tid, 128).eq(0);
            T.ptx.mbarrier.try_wait(kvFull.sub(0), 0);
            const stageOf = (n: ExprLike) => ({
              st: T.let_("st", T.floormod(n, STAGES)),
              ph: T.let_("ph", T.floormod(T.floordiv(n, STAGES), 2)),
            });
            // "ss": S = Q·K_wᵀ and dP = dO·V_wᵀ [64 queries, 64 keys]; "rs": Sᵀ = K_w·Qᵀ and
            // dPᵀ = V_w·dOᵀ [64 keys, 64 queries]. Each once its stage of Q (dO) is loaded.
            const issueAgainstKeys = (
              acc: TileView,
              full: TileView,
              rowsTile: TileView,
              keysTile: TileView,
              ph: ExprLike,
            ) => {
              T.ptx.mbarrier.try_wait(full, ph);
              const [a, b2] = rs ? [keysTile, rowsTile] : [rowsTile, keysTile];
              T.tile.wg.gemm_async(acc, a, b2, { transB: true, accum: false });
            };
            const issueS = (st: ExprLike, ph: ExprLike) =>
              issueAgainstKeys(S, qFull.sub(st), blocked(sQ.sub(st)), sKw, ph);
            const issueDP = (st: ExprLike, ph: ExprLike) =>
              issueAgainstKeys(dP, oFull.sub(st), blocked(sdO.sub(st)), sVw, ph);
            // The block's LSE₂ and Δ, one per query row, as a column ([64, 1]; "rs": a row
            // [1, 64]), from stage st's shared copies (the producer's bulk copies of the block's
            // rows; with varlen, in the padded row space: rows past the sequence's end have
            // LSE₂ = +inf, Δ = 0).
            const loadRowVectors = (st: ExprLike) => {
              const vec = (x: TileView) =>
                rs ? x.rearrange("(o r) -> o r", { o: 1 }) : x.rearrange("(r o) -> r o", { o: 1 });
              T.tile.wg.copy(lse, vec(sLse.sub(st)));
              T.tile.wg.copy(dl, vec(sDl.sub(st)));
            };
            // The mask of query block i on S (Sᵀ with "rs").
            const maskS = (i: ExprLike) => {
              if (!masked) return;
              maskBlock(S, {
                k0: T.let_("k0", T.add(T.mul(kb, BN), T.mul(cw, 64))),
                i,
                width: 64,
                rightOff,
                leftOff,
                ...(seq ? { lenK: seq.lenK } : {}),
                keysAsRows: rs,
                negativeScale: cConst < 0,
              });
            };
            // One thread's reduction of a staged dQ block `src` into the accumulator block of head
            // h, query block i (this consumer's columns at hd 128).
            const issueReduction = (src: TileView, h: ExprLike, i: ExprLike) => {
              T.cuda.tile.apply(
                T.ptx["cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32"],
                seq
                  ? dQacc!.sub(h, T.add(seq.blk, i), splitD ? cw : 0)
                  : dQacc!.sub(b, h, i, splitD ? cw : 0),
                src,
                { chunk_bytes: BM * W * 4 },
              );
              T.ptx.cp.async_.bulk.commit_group();
            };
            // "rs": dQ's block into the accumulator within its step: the warpgroup stores the
            // block (one staging block per stage), fences, meets, and one thread issues the
            // reduction, then waits until every reduction but that one has read its block; step
            // n − 2's, which read this step's block, so precedes this step's barrier after the dS
            // stores, which every thread of the warpgroup passed before storing.
            const reduceDQ = (st: ExprLike, h: ExprLike, i: ExprLike) => {
              const sdQw = sdQ.sub(st, cw);
              storeFragmentBlock(sdQw, dQa, tid);
              T.ptx.fence.proxy_async("shared::cta");
              wgBarrier();
              T.if_(leader(), () => {
                issueReduction(sdQw, h, i);
                T.ptx.cp.async_.bulk.wait_group_read(1);
              });
            };
            // The generic-proxy stores of P and dS, before the wgmma reads them: at hd 128 both
            // consumers' (dQ reads all 128 keys' dS), else the warpgroup's.
            const publishDS = () => {
              T.ptx.fence.proxy_async("shared::cta");
              // "ss": the previous step's reduction has read the staging block before this
              // barrier, which every thread of the warpgroup passes before storing the block
              // again (its issuer waits here, a step after issuing it: no extra barrier).
              if (!rs) T.if_(leader(), () => T.ptx.cp.async_.bulk.wait_group_read(0));
              if (splitD) T.cuda.bar_sync(7, 256);
              else wgBarrier();
            };
            const arriveEmpty = (st: ExprLike) =>
              T.if_(leader(), () => T.ptx.mbarrier.arrive(qEmpty.sub(st)));
            if (!rs) {
              // FlashAttention-3's order, so that the tensor cores run while the warpgroups
              // compute: dP runs while P is computed, dV = Pᵀ·dO (which needs only this
              // warpgroup's P) while dS is, and dK while the dQ block goes to the accumulator.
              // Every wgmma group is waited for within its step (a group in flight across the
              // loop's back edge made ptxas serialize them all: C7518).
              // Step n's dQ block is staged in sdQ at the end of step n and its reduction issued
              // in step n + 1 (its head and query block kept in `pend`; h = −1: none), so that no
              // warp waits for its staging stores to land (ncu: the proxy fence right after them
              // and the barrier after it held 10% of the stall samples at hd 128, seq 4k). Where
              // it is issued, as measured on the H200 (bench/results/attention-2026-12-03f.md): at
              // hd 128 after the next step's S and dP are issued, behind a proxy fence and the
              // warpgroup's barrier of its own (issued after P's barrier, its read held up the
              // 256-thread barrier of dS: 0.88× of this); at hd 64 after P's barrier, whose fence
              // covers the block's stores (0.93× the other way). One staging block: the
              // reduction has read it before publishDS's barrier of its step, which every thread
              // passes before staging the next.
              const flushEarly = D !== 64;
              const pend = T.alloc_local([2], "int32", { name: "pend" });
              pend.set([0], -1);
              const flushDQ = () =>
                T.if_(pend.get([0]).ge(0), () => {
                  T.if_(leader(), () => issueReduction(sdQ.sub(cw), pend.get([0]), pend.get([1])));
                });
              const publishStaged = () => {
                T.ptx.fence.proxy_async("shared::cta");
                wgBarrier();
                flushDQ();
              };
              forSteps((n, h, i) => {
                const { st, ph } = stageOf(n);
                const sPw = sP!.sub(st, cw);
                const sdSw = sdS.sub(st, cw);
                issueS(st, ph);
                issueDP(st, ph);
                loadRowVectors(st);
                if (flushEarly) publishStaged();
                // S done (dP may still run).
                T.ptx.wgmma.wait_group(1);
                maskS(i);
                probabilities(S, lse, c);
                T.tile.wg.cast(P16, S);
                T.tile.wg.copy(sPw, P16);
                T.ptx.fence.proxy_async("shared::cta");
                wgBarrier();
                if (!flushEarly) flushDQ();
                // dV_w += Pᵀ·dO: P [64 queries, 64 keys] read as [K, M].
                T.tile.wg.gemm_async(dVa, sPw, blocked(sdO.sub(st)), { transA: true, accum: true });
                // dP done (dV may still run).
                T.ptx.wgmma.wait_group(1);
                logitGradients(dP, S, dl);
                T.tile.wg.cast(dS16, dP);
                if (!splitD) {
                  // dQ_partial = dS · K_w (RS): it needs no shared dS.
                  T.tile.wg.gemm_async(dQa, dS16, sKw, { accum: false });
                }
                T.tile.wg.copy(sdSw, dS16);
                publishDS();
                if (splitD) {
                  // dQ[:, 64·cw ..] = dS [64, 128 keys] · K[128 keys, 64·cw ..].
                  T.tile.wg.gemm_async(dQa, blocked(sdS.sub(st)), sK.sub(cw), { accum: false });
                }
                // dK_w += dSᵀ·Q, last: the dQ block goes to the accumulator while it runs.
                T.tile.wg.gemm_async(dKa, sdSw, blocked(sQ.sub(st)), { transA: true, accum: true });
                T.ptx.wgmma.wait_group(1);
                storeFragmentBlock(sdQ.sub(cw), dQa, tid);
                pend.set([0], h);
                pend.set([1], i);
                T.ptx.wgmma.wait_group(0);
                arriveEmpty(st);
              });
              publishStaged();
            } else {
              // "rs", in the order of "ss": Pᵀ and dSᵀ in registers are dV's and dK's A operands;
              // dV runs while dS is computed, dK while the dQ block goes to the accumulator. Every
              // wgmma group is waited for within its step (issuing step n + 1's Sᵀ before step
              // n's reduction made ptxas serialize every wgmma: C7518).
              forSteps((n, h, i) => {
                const { st, ph } = stageOf(n);
                const sdSw = sdS.sub(st, cw);
                issueS(st, ph);
                issueDP(st, ph);
                loadRowVectors(st);
                // Sᵀ done (dPᵀ may still run).
                T.ptx.wgmma.wait_group(1);
                maskS(i);
                probabilities(S, lse, c);
                // dV_w += Pᵀ·dO, Pᵀ [64 keys, 64 queries] from registers.
                T.tile.wg.cast(P16, S);
                T.tile.wg.gemm_async(dVa, P16, blocked(sdO.sub(st)), { accum: true });
                // dPᵀ done (dV may still run).
                T.ptx.wgmma.wait_group(1);
                logitGradients(dP, S, dl);
                T.tile.wg.cast(dS16, dP);
                // dSᵀ [64 keys, 64 queries] to shared memory for dQ = dS·K, which reads it
                // transposed ([K, M]): at hd 128 columns 64·cw .. over both consumers' 128 keys,
                // at hd 64 all columns over its own.
                T.tile.wg.copy(sdSw, dS16);
                publishDS();
                if (splitD) {
                  T.tile.wg.gemm_async(dQa, sdS.sub(st).rearrange("w k q -> (w k) q"), sK.sub(cw), {
                    transA: true,
                    accum: false,
                  });
                } else {
                  T.tile.wg.gemm_async(dQa, sdSw, sKw, { transA: true, accum: false });
                }
                // dK_w += dSᵀ·Q from registers, last: the dQ block goes to the accumulator while
                // it runs.
                T.tile.wg.gemm_async(dKa, dS16, blocked(sQ.sub(st)), { accum: true });
                T.ptx.wgmma.wait_group(1);
                reduceDQ(st, h, i);
                T.ptx.wgmma.wait_group(0);
                arriveEmpty(st);
              });
            }
            // dK = scale · Σ dSᵀ·Q (dS is the gradient of the scaled logits); dV = Σ Pᵀ·dO.
            T.tile.wg.mul(dKa, dKa, scale);
            T.tile.wg.cast(out, dKa);
            if (seq) {
              // The last reduction completes before the CTA exits.
              T.if_(leader(), () => T.ptx.cp.async_.bulk.wait_group(0));
              // With varlen, keys past the sequence's end are not stored: each thread stores its
              // own rows of the wgmma accumulator layout (thread t of the warpgroup holds rows
              // 16·⌊t / 32⌋ + 8·i + ⌊(t mod 32) / 4⌋, i = 0, 1, slots 4·n + 2·i + e of a 64 × D
              // tile, column 8·n + 2·(t mod 4) + e), each row under its own guard, as the
              // forward stores O.
              const t = T.let_("t", T.floormod(tid, 128));
              const r0 = T.let_("r0", T.add(T.add(T.mul(kb, BN), T.mul(cw, 64)), fragRow(t)));
              const c0 = T.let_("c0", fragCol(t));
              const outSlots = out.flat();
              const store = (x: TileView) => {
                for (const ii of T.unroll(2)) {
                  const r = T.let_("r", T.add(r0, T.mul(ii, 8)));
                  T.if_(r.lt(seq.lenK), () => {
                    const xRow = x.sub(T.add(seq.k0, r), hk);
                    for (const n of T.unroll(D / 8)) {
                      for (const e of T.vectorized(2)) {
                        xRow.set(
                          [T.add(T.add(T.mul(n, 8), c0), e)],
                          outSlots.get([T.add(T.add(T.mul(n, 4), T.mul(ii, 2)), e)]),
                        );
                      }
                    }
                  });
                }
              };
              store(dK!);
              T.tile.wg.cast(out, dVa);
              store(dV!);
            } else {
              // Dense: this consumer's 64 rows of dK and dV into its rows of sK and sV, then one
              // TMA store each (FlashAttention-3's epilogue, as the forward stores O; H200 hd 128
              // bf16: seq 1k 7-9%, 4k 1-3.5% faster than 32-bit stores from the registers,
              // bench/results/attention-order-2026-12-04.md). Every wgmma that read sK and sV was
              // waited for within its step: after the warpgroup's barrier its own rows are free,
              // at hd 128 (dQ reads the other consumer's K rows too) after the barrier of both.
              if (splitD) T.cuda.bar_sync(7, 256);
              else wgBarrier();
              const kRows = (x: TileView) => rows(x, 64).sub(b, T.add(T.mul(kb, 2), cw), hk);
              const slot = (x: typeof sK) => x.rearrange("k (w r) c -> w k r c", { r: 64 }).sub(cw);
              // Into sK and sV ([D / 64, 128, 64]) at this consumer's rows 64·cw + r.
              const stage = fragmentStager(tid, T.mul(cw, 64));
              stage(sK, out);
              T.tile.wg.cast(out, dVa);
              stage(sV, out);
              // The TMA stores read the slots through the async proxy.
              T.ptx.fence.proxy_async();
              wgBarrier();
              T.if_(leader(), () => {
                T.tile.copy_async(cols(kRows(dK!)), blocked(slot(sK)));
                T.tile.copy_async(cols(kRows(dV!)), blocked(slot(sV)));
                T.ptx.cp.async_.bulk.commit_group();
                // The last reduction and both stores complete before the CTA exits.
                T.ptx.cp.async_.bulk.wait_group(0);
              });
            }
          },
        );
      };
      // With varlen, a CTA whose key tile starts past its sequence's end exits before its first
      // barrier (all its threads: the condition is the CTA's). A sequence with no queries still
      // runs its key tiles: no steps, dK = dV = 0.
      if (seq) T.if_(kb.lt(T.let_("kTiles", T.ceildiv(seq.lenK, BN))), kernel);
      else kernel();
    },
  );
  return { preprocess, main, postprocess };
}

/** A scratch tensor of the backward kernels: its static shape and dtype. */
export interface ScratchTensor {
  readonly shape: readonly number[];
  readonly dtype: DType;
}

/**
 * The scratch tensors the backward kernels `k` pass between them, as `preprocess` declares them:
 * Delta and LSE2 [batch, heads, seqQ] float32, and dQacc, the blocked float32 dQ accumulator
 * [batch, heads, seqQ / 64, hd / 64, 64 · 64] (blocks of 64 queries × 64 columns, each in the
 * wgmma fragment order: fragment.ts FRAG_BLOCK). With `varlen`, in the padded row space of the
 * packed batch (sequence b's rows from row 64 · (⌊cuSeqlensQ[b] / 64⌋ + b), padQ = 64 ·
 * (⌈totalQ / 64⌉ + batch − 1)): Delta and LSE2 [heads, padQ], dQacc [heads, padQ / 64, hd / 64,
 * 64 · 64]. Allocate them with these shapes (contents are written by `preprocess`) and pass them
 * to the three kernels.
 * @example
 *   const { Delta, LSE2, dQacc } = backwardScratch(makeFlashAttentionBackward(sizes));
 *   const delta = tensor.empty(Delta.shape, Delta.dtype, dev);
 */
export function backwardScratch(k: FlashAttentionBackward): {
  readonly Delta: ScratchTensor;
  readonly LSE2: ScratchTensor;
  readonly dQacc: ScratchTensor;
} {
  const of = (name: string): ScratchTensor => {
    const p = k.preprocess.params.find((x) => x.name === name);
    invariant(p?.kind === "buffer", () => `kernel "${k.preprocess.name}" has no buffer ${name}`);
    const shape = p.buffer.shape.map((d) => {
      invariant(typeof d === "number", () => `backward scratch ${name} has a symbolic shape`);
      return d;
    });
    return { shape, dtype: p.buffer.dtype };
  };
  return { Delta: of("Delta"), LSE2: of("LSE2"), dQacc: of("dQacc") };
}
