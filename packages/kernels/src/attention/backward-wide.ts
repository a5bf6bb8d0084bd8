// The main kernel of the FlashAttention backward at head dim 256 (makeFlashAttentionBackward in
// backward.ts builds the pre- and postprocessing kernels, the same at every head dim, and takes
// this main kernel for D = 256). backward.ts's design keeps each consumer's dK and dV (64 keys ×
// hd float32) in registers: 256 registers a thread at hd 256, more than setmaxnreg's 240. Here,
// as in FlashAttention-3's hd 256 backward (its dKV_swapAB: the head dim is the wgmma M), a
// consumer accumulates dKᵀ and dVᵀ for half of the head dim over all of the CTA's keys:
//   - a CTA per 64 keys (BN = 64) of one (batch, KV head); 384 threads: warpgroup 0 produces
//     (setmaxnreg 24), warpgroups 1 and 2 are the consumers cw = 0, 1 (setmaxnreg 240);
//   - the producer thread loads the CTA's K and V rows once, then per step (the query blocks of
//     64 rows that meet the KV block's windows, for each query head of the KV head's group) Q
//     through a 2-deep ring and dO through one stage, by T.tile.copy_async (TMA, 128B swizzle,
//     64-wide column blocks as backward.ts);
//   - per step a consumer recomputes S_w = Q·K_wᵀ and computes dP_w = dO·V_wᵀ for its 32 keys
//     kb·64 + 32·cw … (wgmma SS m64n32, K = 256, both in flight), masks S_w as backward.ts, makes
//     P = exp2(scale·log2e·S − LSE₂) and dS = P ∘ (dP − Δ), rounds both to the dtype and stores
//     them into its 32 columns of the shared [64 queries, 64 keys] P and dS (a barrier of both
//     consumers follows: each needs both halves);
//   - dVᵀ[64·(2cw + j) …, keys] += dO[:, 64·(2cw + j) …]ᵀ · P and dKᵀ likewise += Qᵀ · dS for
//     j = 0, 1 (M = 64 head-dim columns, N = 64 keys, K = 64 queries; A the column block of dO or
//     Q read transposed, `transA`, B = P or dS MN-major): four float32 [64, 64] accumulators, 128
//     registers a thread;
//   - dQ's two 64-column blocks of the consumer, dQ[:, 64·(2cw + j) …] = dS · K[:, 64·(2cw + j)
//     …] over the CTA's 64 keys (SS: dS K-major, K's column block MN-major), one after the other
//     through the consumer's 16 KiB float32 staging block into the accumulator's block (b, h, i,
//     2cw + j) by one `cp.reduce.async.bulk .add.f32` each, as backward.ts (block 2cw + 1's
//     wgmma runs under block 2cw's reduction);
//   - the epilogue scales dKᵀ by the softmax scale; dense, the consumers write dK's and dV's
//     [64 keys, 256] tiles transposed from the accumulators into the two stages of sQ (free
//     then; 16-bit stores, which the 128B swizzle spreads over the banks) and one thread stores
//     each by TMA; with varlen each thread stores its own elements of the keys < lenK to
//     global memory (16-bit stores under a guard per key).
// Shared memory (dynamic, 128B swizzle, 16-bit tiles as [hd / 64, rows, 64] column blocks):
// sK, sV [4, 64, 64] 32 KiB each (loaded once), sQ [2, 4, 64, 64] 64 KiB (ring), sdO [4, 64, 64]
// 32 KiB (one stage, as FlashAttention-3 at hd 256), sP and sdS [64, 64] 8 KiB each (one buffer
// each), dQ staging float32 [2, 64 · 64] 32 KiB: 208 KiB of the 227 KiB a CTA may have.
// Registers of a consumer thread: 128 for the dKᵀ and dVᵀ accumulators, 32 for dQ's block (live
// after S and dP: 16 each), 8 + 8 for P and dS in the dtype, 2 + 2 for LSE₂ and Δ; ptxas -v
// assembles it without spills (test/flash-attention-backward-256.test.ts).
// Hazards of the single buffers: step n + 1 writes sP and sdS only after every warp of both
// consumers has waited for step n's wgmmas that read them (dVᵀ, dKᵀ, dQ): barrier 8 of the 256
// consumer threads before the stores; barrier 7 after the stores and their proxy fence orders
// them before any wgmma reads them. sdO is refilled after both consumers' dVᵀ wgmmas of the step
// completed (oEmpty, one arrival per consumer), a Q stage after their dKᵀ wgmmas (qEmpty). The
// dense epilogue's staging in sQ waits at barrier 8 for both consumers' last wgmmas, and its
// TMA stores read it after a proxy fence and barrier 7. Named barriers 5 and 6 are each
// consumer's own (128 threads: its dQ staging block).
// Masks, heads and varlen as backward.ts (its header): causal = window [-1, 0], `window`, GQA
// (`kvHeads`: a CTA sums its KV head's query heads in registers), varlen with the grid
// ⌈maxSeqK / 64⌉ key tiles per (sequence, KV head), keys ≥ lenK masked and their rows not stored.
// Sources: FlashAttention-3 (Shah et al. 2024) and its hd 256 backward configuration
// (hopper/flash_bwd_launch_template.h: 64 × 64 tiles, one dO and one dS stage, dKV_swapAB, two
// MMA warpgroups splitting S's keys); PTX ISA, wgmma.mma_async (m64nNk16, the matrix
// descriptors' K- and MN-major layouts), cp.reduce.async.bulk, cp.async.bulk.tensor, setmaxnreg.
import { T, type ExprLike, type ParamType, type PrimExpr, type TileView } from "@tirx-ts/dsl";
import type { PrimFunc } from "@tirx-ts/core";
import { launchScaleSign, windowOffsets } from "./options.js";
import { backwardKeyTile } from "./order.js";
import { W, blocked, cols, rows, rowsAt } from "./views.js";
import { fragCol, fragRow, storeFragmentBlock } from "../fragment.js";
import type { FlashAttentionSizes } from "./forward.js";
import {
  BM,
  keyTileSteps,
  logitGradients,
  maskBlock,
  probabilities,
  sequenceRows,
  windowShift,
} from "./backward-steps.js";

/** Head dim of this kernel. */
const D = 256;
/** Keys per CTA (two consumer warpgroups of 32 for S and dP). */
const BN = 64;
/** Keys of one consumer's S and dP. */
const KW = 32;
/** Q ring stages. */
const STAGES = 2;
/** Column blocks of the head dim, and those of one consumer's dKᵀ, dVᵀ and dQ. */
const BLOCKS = D / W;
const MINE = BLOCKS / 2;
/** Dynamic shared bytes: sK, sV, 2 stages of sQ, sdO (16-bit), sP, sdS, 2 float32 dQ blocks. */
const SHARED = (2 * BN + STAGES * BM + BM) * D * 2 + 2 * BM * BN * 2 + 2 * BM * W * 4;

/**
 * The main kernel of the backward at head dim 256 for sizes `s` (headDim 256): parameters and
 * results as FlashAttentionBackward's `main` (backward.ts: Q, K, V, dO, LSE2, Delta, dQacc, dK,
 * dV, then with `varlen` cuSeqlensQ and cuSeqlensK), the scratch tensors as its `preprocess`
 * declares them. makeFlashAttentionBackward calls it after checking `s` (head dim,
 * sequence multiples of 128 or packed totals ≥ 128, varlen, kvHeads, window); it checks nothing
 * itself. Grid [seqK / 64 (⌈maxSeqK / 64⌉ with varlen), kvHeads, batch], 384 threads, 208 KiB
 * of dynamic shared memory.
 * @example
 *   const main = makeFlashAttentionBackwardWide({ batch: 2, heads: 8, seqQ: 1024, seqK: 1024,
 *     headDim: 256, dtype: "bfloat16", causal: true });
 */
export function makeFlashAttentionBackwardWide(s: FlashAttentionSizes): PrimFunc {
  const { batch, heads, seqQ, seqK, dtype: dt } = s;
  const varlen = s.varlen;
  const kvHeads = s.kvHeads ?? heads;
  const causal = s.causal ?? false;
  const [left, right] = s.window ?? (causal ? [-1, 0] : [-1, -1]);
  // The softmax scale: a constant, or (scaleAtLaunch) the launch's float32 `scale` and
  // `scaleLog2` = scale · log2 e (of the build's sign), the last parameters; with a launch scale,
  // scaleConst is a stand-in of its sign (all the build reads of it).
  const atLaunch = s.scaleAtLaunch === true;
  const scaleConst = atLaunch ? launchScaleSign(s) : (s.scale ?? 1 / Math.sqrt(D));
  // The parameters as backward.ts's main declares them (the scratch tensors as its preprocess:
  // with varlen in the padded row space of 64 · (⌈totalQ / 64⌉ + batch − 1) rows).
  const padQ = BM * (Math.ceil(seqQ / BM) + batch - 1);
  const rowF32 = () => T.Tensor(varlen ? [heads, padQ] : [batch, heads, seqQ], "float32");
  const qF32 = () =>
    T.Tensor(
      varlen ? [heads, padQ / BM, BLOCKS, BM * W] : [batch, heads, seqQ / BM, BLOCKS, BM * W],
      "float32",
    );
  const qRowsT = () => T.Tensor(varlen ? [seqQ, heads, D] : [batch, seqQ, heads, D], dt);
  const kRowsT = () => T.Tensor(varlen ? [seqK, kvHeads, D] : [batch, seqK, kvHeads, D], dt);
  const offsetsT = () => T.Tensor([batch + 1], "int32");
  const group = heads / kvHeads;
  const qBlocksDense = seqQ / BM;
  // exp(x · scale) = exp2(x · scale · log2 e).
  const cConst = scaleConst * Math.LOG2E;
  const kvBytes = BN * D * 2;
  const qBytes = BM * D * 2;
  // With varlen, keys past the sequence's end are masked in its last key tile.
  const masked = varlen !== undefined || left !== -1 || right !== -1;
  return T.function(
    "flash_attention_bwd_hd256",
    {
      Q: qRowsT(),
      K: kRowsT(),
      V: kRowsT(),
      dO: qRowsT(),
      LSE2: rowF32(),
      Delta: rowF32(),
      dQacc: qF32(),
      dK: kRowsT(),
      dV: kRowsT(),
      ...(varlen ? { cuSeqlensQ: offsetsT(), cuSeqlensK: offsetsT() } : {}),
      ...(atLaunch ? { scale: T.float32, scaleLog2: T.float32 } : {}),
    } as Record<string, ParamType>,
    (args) => {
      const { Q, K, V, dO, LSE2, Delta, dQacc, dK, dV, cuSeqlensQ, cuSeqlensK } =
        args as unknown as Record<string, TileView>;
      const launched = args as unknown as { scale: PrimExpr; scaleLog2: PrimExpr };
      const scale: ExprLike = atLaunch ? launched.scale : scaleConst;
      const c: ExprLike = atLaunch ? launched.scaleLog2 : cConst;
      T.device_entry({
        launch: T.cuda.LaunchConfig({
          // With varlen, ⌈maxSeqK / 64⌉ key tiles per sequence (maxSeqK checked by the caller).
          grid: [varlen ? Math.ceil(varlen.maxSeqK! / BN) : seqK / BN, kvHeads, batch],
          block: 384,
          dynamic_shared_bytes: SHARED,
        }),
        // sm_90a: the 16-bit P, dS and dK/dV staging tiles go to shared memory by stmatrix
        // (T.tile.wg.copy picks it for a 16-bit wgmma accumulator tile where the target has it).
        arch: "sm_90a",
      });
      const tid = T.cuda.thread_idx("x");
      // Causal: the CTAs dealt longest first (order.ts).
      const { kb, hk, b } = backwardKeyTile(s, BN);
      // With varlen: sequence b's first query row and length, the first 64-row block of its
      // rows in the scratch tensors' padded row space (⌊q0 / 64⌋ + b), its first key row and
      // key count; the window as offsets (backward-steps.ts).
      const seq = varlen ? sequenceRows(cuSeqlensQ!, cuSeqlensK!, b) : undefined;
      const { rightOff, leftOff } = windowOffsets(left, right, windowShift(seq, seqK - seqQ));
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
        const sK = shared([BLOCKS, BN, W], "sK");
        const sV = shared([BLOCKS, BN, W], "sV");
        const sQ = shared([STAGES, BLOCKS, BM, W], "sQ");
        const sdO = shared([BLOCKS, BM, W], "sdO");
        // P and dS [64 queries, 64 keys], consumer cw's keys in columns 32·cw ..: one buffer each
        // (barrier 8 below orders a step's stores after the previous step's reads).
        const sP = shared([BM, BN], "sP");
        const sdS = shared([BM, BN], "sdS");
        // Each consumer's [64 queries, 64 columns] float32 block of dQ, in the wgmma fragment
        // order the blocked accumulator holds it in (fragment.ts FRAG_BLOCK: 16-byte stores, no
        // bank conflicts): the source of its bulk reductions.
        const sdQ = T.alloc_shared([2, BM * W], "float32", {
          name: "sdQ",
          align: 128,
          dynamic: true,
        });
        const kvFull = T.alloc_shared([1], "uint64", { name: "kvFull" });
        const qFull = T.alloc_shared([STAGES], "uint64", { name: "qFull" });
        const qEmpty = T.alloc_shared([STAGES], "uint64", { name: "qEmpty" });
        const oFull = T.alloc_shared([1], "uint64", { name: "oFull" });
        const oEmpty = T.alloc_shared([1], "uint64", { name: "oEmpty" });
        T.if_(tid.eq(0), () => {
          T.ptx.mbarrier.init(kvFull.sub(0), 1);
          for (const st of T.unroll(STAGES)) {
            T.ptx.mbarrier.init(qFull.sub(st), 1);
            T.ptx.mbarrier.init(qEmpty.sub(st), 2);
          }
          T.ptx.mbarrier.init(oFull.sub(0), 1);
          T.ptx.mbarrier.init(oEmpty.sub(0), 2);
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
        // The phase of step n's Q stage (a 2-deep ring) and of the one dO stage.
        const qPhase = (n: ExprLike) => T.let_("ph", T.floormod(T.floordiv(n, STAGES), 2));
        const oPhase = (n: ExprLike) => T.let_("po", T.floormod(n, 2));
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
                // Q's stage, freed by both consumers' dKᵀ wgmmas of step n − 2.
                T.ptx.mbarrier.try_wait(qEmpty.sub(st), T.sub(1, qPhase(n)));
                T.ptx.mbarrier.arrive.expect_tx(qFull.sub(st), qBytes);
                T.tile.copy_async(blocked(sQ.sub(st)), cols(qTile(Q!, i, h)), {
                  mbar: qFull.sub(st),
                });
                // dO's one stage, freed by both consumers' dVᵀ wgmmas of step n − 1.
                T.ptx.mbarrier.try_wait(oEmpty.sub(0), T.sub(1, oPhase(n)));
                T.ptx.mbarrier.arrive.expect_tx(oFull.sub(0), qBytes);
                T.tile.copy_async(blocked(sdO), cols(qTile(dO!, i, h)), { mbar: oFull.sub(0) });
              });
            });
          },
          () => {
            T.ptx.setmaxnreg(true, 240);
            // Consumer cw = wg − 1 ∈ {0, 1}: S and dP of keys kb·64 + 32·cw .. + 31; dKᵀ, dVᵀ
            // and dQ of the head-dim column blocks 2·cw and 2·cw + 1.
            const cw = T.let_("cw", wg.add(1).floormod(2));
            const sl = T.layout.wgmma_tile_layout("D", 64, KW, "float32");
            const al = T.layout.wgmma_tile_layout("D", 64, W, "float32");
            const rl = T.TileLayout(
              "S[(4, 2, 8) : (32@tid_in_wg, 1, 4@tid_in_wg)] + R[4 : 1@tid_in_wg]",
            );
            const S = T.alloc_local([64, KW], "float32", { name: "S", layout: sl });
            const dP = T.alloc_local([64, KW], "float32", { name: "dP", layout: sl });
            const P16 = T.alloc_local([64, KW], dt, { name: "P16", layout: sl });
            const dS16 = T.alloc_local([64, KW], dt, { name: "dS16", layout: sl });
            // dKᵀ and dVᵀ of column block 2·cw + j: [64 head-dim columns, 64 keys].
            const dKt = [0, 1].map((j) =>
              T.alloc_local([W, BN], "float32", { name: `dKt${j}`, layout: al }),
            );
            const dVt = [0, 1].map((j) =>
              T.alloc_local([W, BN], "float32", { name: `dVt${j}`, layout: al }),
            );
            const dQa = T.alloc_local([BM, W], "float32", { name: "dQa", layout: al });
            const out = T.alloc_local([W, BN], dt, { name: "out", layout: al });
            const lse = T.alloc_local([64, 1], "float32", { name: "lse", layout: rl });
            const dl = T.alloc_local([64, 1], "float32", { name: "dl", layout: rl });
            for (const x of [...dKt, ...dVt]) T.tile.wg.zero(x);
            // This consumer's 32 keys of K and V: [32, 4, 64] column-blocked views.
            const keys = (t: TileView) => t.rearrange("k (w r) c -> w r k c", { r: KW }).sub(cw);
            const sKw = keys(sK);
            const sVw = keys(sV);
            // Its 32 columns of P and dS.
            const half = (t: TileView) => t.rearrange("r (w c) -> w r c", { c: KW }).sub(cw);
            const sPw = half(sP);
            const sdSw = half(sdS);
            // Head-dim column block 2·cw + j.
            const hb = (j: number) => T.let_(`hb${j}`, T.add(T.mul(cw, MINE), j));
            const hbs = [hb(0), hb(1)];
            const sdQw = sdQ.sub(cw);
            // The warpgroup's named barrier 5 + cw (ids 1..15 are free; a warp-uniform branch
            // picks the immediate).
            const wgBarrier = () =>
              T.if_(
                cw.eq(0),
                () => T.cuda.bar_sync(5, 128),
                () => T.cuda.bar_sync(6, 128),
              );
            const leader = T.floormod(tid, 128).eq(0);
            // dQ's block j of this step into the accumulator from dQa: the previous reduction
            // has read the staging block (wait_group.read by its issuing thread, then the
            // warpgroup's barrier), the warpgroup stores the block (then `then`, e.g. the next
            // wgmma into dQa), fences, meets again, and one thread issues the reduction.
            const reduceDq = (
              j: number,
              blockOf: (j: number) => TileView,
              then: () => void = () => {},
            ) => {
              T.if_(leader, () => T.ptx.cp.async_.bulk.wait_group_read(0));
              wgBarrier();
              storeFragmentBlock(sdQw, dQa, tid);
              then();
              T.ptx.fence.proxy_async("shared::cta");
              wgBarrier();
              T.if_(leader, () => {
                T.cuda.tile.apply(
                  T.ptx["cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32"],
                  blockOf(j),
                  sdQw,
                  { chunk_bytes: BM * W * 4 },
                );
                T.ptx.cp.async_.bulk.commit_group();
              });
            };
            T.ptx.mbarrier.try_wait(kvFull.sub(0), 0);
            forSteps((n, h, i) => {
              const st = T.let_("st", T.floormod(n, STAGES));
              // S_w = Q·K_wᵀ and dP_w = dO·V_wᵀ (m64n32, K = 256), both in flight.
              T.ptx.mbarrier.try_wait(qFull.sub(st), qPhase(n));
              T.tile.wg.gemm_async(S, blocked(sQ.sub(st)), sKw, { transB: true, accum: false });
              T.ptx.mbarrier.try_wait(oFull.sub(0), oPhase(n));
              T.tile.wg.gemm_async(dP, blocked(sdO), sVw, { transB: true, accum: false });
              // The block's LSE₂ and Δ rows, one per query row (with varlen, the block's rows in
              // the padded row space: rows past the sequence's end have LSE₂ = +inf, Δ = 0).
              const rowVec = (x: TileView) =>
                seq
                  ? x.rearrange("h (i r o) -> h i r o", { r: 64, o: 1 }).sub(h, T.add(seq.blk, i))
                  : x.rearrange("b h (i r o) -> b h i r o", { r: 64, o: 1 }).sub(b, h, i);
              T.tile.wg.copy(lse, rowVec(LSE2!));
              T.tile.wg.copy(dl, rowVec(Delta!));
              T.ptx.wgmma.wait_group(0);
              if (masked) {
                // Key k = kb·64 + 32·cw + c against query q = 64·i + r.
                maskBlock(S, {
                  k0: T.let_("k0", T.add(T.mul(kb, BN), T.mul(cw, KW))),
                  i,
                  width: KW,
                  rightOff,
                  leftOff,
                  ...(seq ? { lenK: seq.lenK } : {}),
                  negativeScale: cConst < 0,
                });
              }
              // P = exp2(c·S − LSE₂) (the forward's normalised probabilities); dS = P ∘ (dP − Δ).
              probabilities(S, lse, c);
              logitGradients(dP, S, dl);
              T.tile.wg.cast(P16, S);
              T.tile.wg.cast(dS16, dP);
              // Barrier 8 (both consumers, 256 threads): every warp has passed step n − 1's
              // wgmma.wait_group 0, after the last wgmmas that read sP and sdS (dVᵀ, dKᵀ, dQ).
              T.cuda.bar_sync(8, 256);
              T.tile.wg.copy(sPw, P16);
              T.tile.wg.copy(sdSw, dS16);
              // The generic-proxy stores of P and dS before the wgmmas read them (async proxy);
              // barrier 7: both consumers' halves are written (each wgmma reads all 64 keys).
              T.ptx.fence.proxy_async("shared::cta");
              T.cuda.bar_sync(7, 256);
              // dVᵀ_j += dO[:, block]ᵀ · P, dKᵀ_j += Q[:, block]ᵀ · dS: A [64 queries, 64
              // columns] read as [K, M] (transA), B [64 queries, 64 keys] MN-major; one commit
              // group for dVᵀ (the last reads of dO), one for dKᵀ (the last of Q's stage).
              for (const j of [0, 1]) {
                T.tile.wg.gemm_async(dVt[j]!, sdO.sub(hbs[j]!), sP, {
                  transA: true,
                  accum: true,
                });
              }
              for (const j of [0, 1]) {
                T.tile.wg.gemm_async(dKt[j]!, sQ.sub(st, hbs[j]!), sdS, {
                  transA: true,
                  accum: true,
                });
              }
              // dQ[:, block 2·cw] = dS [64 queries, 64 keys] · K [64 keys, that block].
              T.tile.wg.gemm_async(dQa, sdS, sK.sub(hbs[0]!), { accum: false });
              // Five wgmma groups, one a call: dVᵀ_0, dVᵀ_1, dKᵀ_0, dKᵀ_1, dQ's. dO is free once
              // the first two completed (3 pending at most), Q's stage once the first four.
              T.ptx.wgmma.wait_group(3);
              T.if_(leader, () => T.ptx.mbarrier.arrive(oEmpty.sub(0)));
              T.ptx.wgmma.wait_group(1);
              T.if_(leader, () => T.ptx.mbarrier.arrive(qEmpty.sub(st)));
              T.ptx.wgmma.wait_group(0);
              const blockOf = (j: number): TileView =>
                seq ? dQacc!.sub(h, T.add(seq.blk, i), hbs[j]!) : dQacc!.sub(b, h, i, hbs[j]!);
              // Block 2·cw through the staging block; dQ's block 2·cw + 1 is issued into dQa
              // once the staging copy has read it, and runs under the reduction.
              reduceDq(0, blockOf, () =>
                T.tile.wg.gemm_async(dQa, sdS, sK.sub(hbs[1]!), { accum: false }),
              );
              T.ptx.wgmma.wait_group(0);
              reduceDq(1, blockOf);
            });
            // dK = scale · Σ dSᵀ·Q (dS is the gradient of the scaled logits); dV = Σ Pᵀ·dO; the
            // accumulators hold them transposed, [64 head-dim columns, 64 keys].
            for (const j of [0, 1]) T.tile.wg.mul(dKt[j]!, dKt[j]!, scale);
            if (seq) {
              // With varlen, keys past the sequence's end are not stored (the rows after them
              // are the next sequence's): thread t of the warpgroup holds rows (head-dim
              // columns) 16·⌊t / 32⌋ + 8·ii + ⌊(t mod 32) / 4⌋, ii = 0, 1, and columns (keys)
              // 8·nn + 2·(t mod 4) + e at slot 4·nn + 2·ii + e of the wgmma accumulator layout;
              // each key under its own guard, 16-bit stores.
              const t = T.let_("t", T.floormod(tid, 128));
              const key0 = T.let_("key0", T.add(T.mul(kb, BN), fragCol(t)));
              const slots = out.flat();
              const store = (x: TileView, acc: TileView, j: number) => {
                T.tile.wg.cast(out, acc);
                const r0 = T.let_("r0", T.add(T.mul(hbs[j]!, W), fragRow(t)));
                for (const nn of T.unroll(BN / 8)) {
                  for (const e of T.unroll(2)) {
                    const key = T.let_("key", T.add(key0, T.add(T.mul(nn, 8), e)));
                    T.if_(key.lt(seq.lenK), () => {
                      const row = x.sub(T.add(seq.k0, key), hk);
                      for (const ii of T.unroll(2)) {
                        row.set(
                          [T.add(r0, T.mul(ii, 8))],
                          slots.get([T.add(T.add(T.mul(nn, 4), T.mul(ii, 2)), e)]),
                        );
                      }
                    });
                  }
                }
              };
              for (const j of [0, 1]) store(dK!, dKt[j]!, j);
              for (const j of [0, 1]) store(dV!, dVt[j]!, j);
              // The last reductions complete before the CTA exits.
              T.if_(leader, () => T.ptx.cp.async_.bulk.wait_group(0));
            } else {
              // Dense: dK's and dV's [64 keys, 256] tiles staged in the two stages of sQ (the
              // layout of a Q stage, [4, 64 keys, 64] column blocks, 128B swizzle), then each
              // stored by one TMA. Barrier 8: both consumers' last wgmmas that read sQ have
              // completed (every Q load completed before its step), so sQ is free.
              T.cuda.bar_sync(8, 256);
              const stage = (x: number, j: number) => sQ.sub(x, hbs[j]!).rearrange("k d -> d k");
              for (const j of [0, 1]) {
                T.tile.wg.cast(out, dKt[j]!);
                T.tile.wg.copy(stage(0, j), out);
                T.tile.wg.cast(out, dVt[j]!);
                T.tile.wg.copy(stage(1, j), out);
              }
              // The generic-proxy stores before the TMA reads them; barrier 7: both consumers'
              // column blocks are written.
              T.ptx.fence.proxy_async("shared::cta");
              T.cuda.bar_sync(7, 256);
              T.if_(T.floormod(tid, 256).eq(128), () => {
                const kRows = (x: TileView) => cols(rows(x, BN).sub(b, kb, hk));
                T.tile.copy_async(kRows(dK!), blocked(sQ.sub(0)));
                T.tile.copy_async(kRows(dV!), blocked(sQ.sub(1)));
                T.ptx.cp.async_.bulk.commit_group();
              });
              // The stores (and the last reductions) complete before the CTA exits.
              T.if_(leader, () => T.ptx.cp.async_.bulk.wait_group(0));
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
}
