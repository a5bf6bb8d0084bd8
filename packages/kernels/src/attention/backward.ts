// FlashAttention backward on Hopper with the tile layer: dQ, dK and dV of O = softmax(Q·Kᵀ ·
// scale) · V from Q, K, V, O, dO and the forward's LSE, in three kernels:
//   1. `preprocess`, a warp per query row: Δ_i = Σ_d dO_id · O_id (float32), the forward's LSE
//      in the log2 domain (LSE · log2 e; +inf for a row that saw no key, so exp2(s − LSE₂) = 0
//      there, not NaN) and the float32 dQ accumulator zeroed (blocked: [64 queries, 64 columns]
//      blocks, each contiguous);
//   2. `main`, a CTA per 128 keys of one (batch, KV head); 384 threads: warpgroup 0 produces,
//      warpgroups 1 and 2 consume 64 keys each (FlashAttention-3's split of the KV block):
//      - the producer thread loads the CTA's K and V rows once, then Q and dO blocks of 64 query
//        rows through a 2-deep ring by T.tile.copy_async (TMA, 128B swizzle), for each query
//        head of the KV head's group in turn;
//      - per query block a consumer recomputes S = Q·K_wᵀ and computes dP = dO·V_wᵀ (wgmma SS,
//        64 × 64 float32 each, both in flight together), then P = exp2(scale·log2e·S − LSE₂)
//        and dS = P ∘ (dP − Δ) with row vectors broadcast along the keys, and rounds P and dS
//        to the 16-bit dtype; it stores both to shared memory (32-bit stores, 128B swizzle),
//        and dV_w += Pᵀ·dO and dK_w += dSᵀ·Q read them as MN-major A operands (`transA`: P and
//        dS are row-major, so Pᵀ is read transposed), after a proxy fence and a barrier;
//      - dQ's partial sums of the block go through shared memory to the accumulator by one bulk
//        reduction per consumer (`cp.reduce.async.bulk .add.f32`, 16 KiB, the L2 adds): at head
//        dim 128 the consumers split dQ's columns, each computing dQ[:, 64·w ..] = dS · K[:,
//        64·w ..] over all 128 keys (SS, both consumers' dS from shared memory: a barrier of the
//        256 consumer threads), as FlashAttention-3; at head dim 64 each computes all 64 columns
//        over its own keys (RS: dS in registers is the A operand's layout). Per-element
//        red.global.add of the same sums measured 0.15–0.21× cuDNN on the H200
//        (bench/results/attention-hd128-bwd-2026-12-02.md): the L2's atomic units were the limit;
//      - the epilogue scales dK by the softmax scale and stores dK and dV (32-bit stores);
//   3. `postprocess`, a warp per query row: dQ = scale · dQ_accumulator, rounded to the dtype.
// Masks and heads as the forward (packages/kernels/src/attention/forward.ts): causal = window
// [-1, 0], `window: [left, right]` (a KV block loops over the query blocks that meet its keys'
// windows, masking those that cross an edge), `kvHeads` (a CTA sums the gradients of its KV
// head's query heads in registers: no atomics for dK, dV). Head dims 64 and 128 (256 would need
// 256 float32 registers per thread for dK and dV in this split); seq_q and seq_k multiples of
// 128.
import { T, type ExprLike, type TileView } from "@tirx-ts/dsl";
import { invariant, type DType, type PrimFunc } from "@tirx-ts/core";
import { checkHeadsAndWindow, configError } from "./options.js";
import type { FlashAttentionSizes } from "./forward.js";

/** Keys per CTA (two consumer warpgroups of 64). */
const BN = 128;
/** Query rows per step of a consumer's loop. */
const BM = 64;
const STAGES = 2;
/** Columns of one 128B-swizzle row of 16-bit elements: tiles are column blocks of 64. */
const W = 64;
/** Warps (query rows) per CTA of the pre- and postprocessing kernels. */
const ROWS = 8;

/**
 * Query row i of the blocked dQ accumulator [batch, heads, seqQ / 64, hd / 64, 64 · 64] of batch
 * b and head h, as its [hd / 64, 64] column blocks.
 */
function accRow(acc: TileView, b: ExprLike, h: ExprLike, i: ExprLike): TileView {
  return acc
    .rearrange("b h q k (r c) -> b h q r k c", { c: W })
    .sub(b, h, T.floordiv(i, BM), T.floormod(i, BM));
}

/** The three kernels of the backward pass, launched in this order. */
export interface FlashAttentionBackward {
  /**
   * (O, dO, LSE, Delta, LSE2, dQacc): O and dO [batch, seqQ, heads, hd] `dtype`, LSE [batch,
   * heads, seqQ] float32 (the forward's, natural log) → Delta and LSE2 [batch, heads, seqQ]
   * float32 (Δ = rowsum(dO ∘ O); LSE · log2 e, +inf where LSE = −inf), dQacc float32 zeroed
   * ([batch, heads, seqQ / 64, hd / 64, 64 · 64]: blocks of 64 queries × 64 columns).
   */
  readonly preprocess: PrimFunc;
  /**
   * (Q, K, V, dO, LSE2, Delta, dQacc, dK, dV): Q, dO [batch, seqQ, heads, hd], K, V, dK, dV
   * [batch, seqK, kvHeads, hd] `dtype`; dQacc (blocked, see `preprocess`) accumulates dQ /
   * scale.
   */
  readonly main: PrimFunc;
  /** (dQacc, dQ): dQ [batch, seqQ, heads, hd] `dtype` = scale · dQacc. */
  readonly postprocess: PrimFunc;
}

/**
 * The backward kernels for the forward of the same sizes and options (`makeFlashAttention`):
 * gradients dQ [batch, seqQ, heads, hd], dK and dV [batch, seqK, kvHeads, hd] (`dtype`) of O
 * from dO, given O and the forward's LSE (its `lse: true` output). `lse` is ignored. Float32
 * accumulation; P and dS are rounded to the 16-bit dtype before their products (as the forward
 * rounds P).
 * @throws TirxError TX9001 (kernels/config) for a head dim other than 64 or 128, sequence lengths
 *   that are not positive multiples of 128, a causal mask with seq_q ≠ seq_k, a `kvHeads` that is
 *   not a positive integer dividing `heads`, or a `window` that is not two integers or is given
 *   with `causal`.
 */
export function makeFlashAttentionBackward(s: FlashAttentionSizes): FlashAttentionBackward {
  const { batch, heads, seqQ, seqK, headDim: D, dtype: dt } = s;
  if (D !== 64 && D !== 128) {
    throw configError(
      `flash_attention backward: head_dim is 64 or 128, got ${D} (256 needs a split of dK and dV over the head dim, not written)`,
    );
  }
  if (seqQ <= 0 || seqK <= 0 || seqQ % BN || seqK % BN) {
    throw configError(`flash_attention backward needs seq_q and seq_k positive multiples of ${BN}`);
  }
  const causal = s.causal ?? false;
  if (causal && seqQ !== seqK) {
    throw configError(
      "flash_attention backward: a causal mask needs seq_q = seq_k (not written otherwise)",
    );
  }
  const kvHeads = checkHeadsAndWindow(s, "flash_attention backward");
  const [left, right] = s.window ?? (causal ? [-1, 0] : [-1, -1]);
  const scale = s.scale ?? 1 / Math.sqrt(D);
  const rowTensors = {
    rowF32: () => T.Tensor([batch, heads, seqQ], "float32"),
    // dQ's float32 accumulator, blocked: [batch, heads, seqQ / 64, D / 64, 64 · 64], each
    // [64 queries, 64 columns] block row-major and contiguous (16 KiB), the unit one bulk
    // reduction adds.
    qF32: () => T.Tensor([batch, heads, seqQ / BM, D / W, BM * W], "float32"),
  };

  // One query row per warp, [hd] or as its 64-column blocks [hd / 64, 64]: lane l holds columns
  // 2l and 2l + 1 of each block.
  const rowLayout = T.TileLayout(T.S([D / W, 32, 2], ["2@m", "1@laneid", "1@m"]));
  const oneLayout = T.TileLayout(T.S([1]), T.R([32], ["1@laneid"]));
  const rowLaunch = () =>
    T.device_entry({
      launch: T.cuda.LaunchConfig({ grid: [seqQ / ROWS, heads, batch], block: 32 * ROWS }),
    });
  /** The warp's query row: i = ROWS · blockIdx.x + warp, head blockIdx.y, batch blockIdx.z. */
  const rowIndex = () => ({
    i: T.let_("i", T.add(T.mul(T.cuda.block_idx("x"), ROWS), T.cuda.thread_idx("x").floordiv(32))),
    h: T.cuda.block_idx("y"),
    b: T.cuda.block_idx("z"),
  });

  const preprocess = T.function(
    "flash_attention_bwd_pre",
    {
      O: T.Tensor([batch, seqQ, heads, D], dt),
      dO: T.Tensor([batch, seqQ, heads, D], dt),
      LSE: rowTensors.rowF32(),
      Delta: rowTensors.rowF32(),
      LSE2: rowTensors.rowF32(),
      dQacc: rowTensors.qF32(),
    },
    ({ O, dO, LSE, Delta, LSE2, dQacc }) => {
      rowLaunch();
      const { i, h, b } = rowIndex();
      const o = T.alloc_local([D], dt, { name: "o", layout: rowLayout });
      const g = T.alloc_local([D], dt, { name: "g", layout: rowLayout });
      const of = T.alloc_local([D], "float32", { name: "of", layout: rowLayout });
      const gf = T.alloc_local([D], "float32", { name: "gf", layout: rowLayout });
      const z = T.alloc_local([D / W, W], "float32", { name: "z", layout: rowLayout });
      const delta = T.alloc_local([1], "float32", { name: "delta", layout: oneLayout });
      T.tile.warp.copy(o, O.sub(b, i, h));
      T.tile.warp.copy(g, dO.sub(b, i, h));
      T.tile.warp.cast(of, o);
      T.tile.warp.cast(gf, g);
      T.tile.warp.mul(of, of, gf);
      T.tile.warp.sum(delta, of, 0);
      T.tile.warp.copy(Delta.sub(b, h).rearrange("(s o) -> s o", { o: 1 }).sub(i), delta);
      T.tile.warp.zero(z);
      T.tile.warp.copy(accRow(dQacc, b, h, i), z);
      T.if_(T.floormod(T.cuda.thread_idx("x"), 32).eq(0), () => {
        const l = T.let_("l", LSE.get([b, h, i]));
        LSE2.set([b, h, i], T.if_then_else(l.eq(-Infinity), Infinity, l.mul(Math.LOG2E)));
      });
    },
  );

  const postprocess = T.function(
    "flash_attention_bwd_post",
    { dQacc: rowTensors.qF32(), dQ: T.Tensor([batch, seqQ, heads, D], dt) },
    ({ dQacc, dQ }) => {
      rowLaunch();
      const { i, h, b } = rowIndex();
      const a = T.alloc_local([D / W, W], "float32", { name: "a", layout: rowLayout });
      const q = T.alloc_local([D / W, W], dt, { name: "q", layout: rowLayout });
      T.tile.warp.copy(a, accRow(dQacc, b, h, i));
      T.tile.warp.mul(a, a, scale);
      T.tile.warp.cast(q, a);
      T.tile.warp.copy(dQ.sub(b, i, h).rearrange("(k c) -> k c", { c: W }), q);
    },
  );

  const group = heads / kvHeads;
  const qBlocks = seqQ / BM;
  // exp(x · scale) = exp2(x · scale · log2 e).
  const c = scale * Math.LOG2E;
  const kvBytes = BN * D * 2;
  const qBytes = BM * D * 2;
  const masked = left !== -1 || right !== -1;
  // hd 128: the consumers split dQ's columns (each reads both consumers' dS); hd 64: each
  // consumer's dQ covers all 64 columns over its own keys (a split would give wgmma N = 32 of a
  // 128B-swizzled MN-major K, which no canonical layout holds).
  const splitD = D === 128;
  const main = T.function(
    "flash_attention_bwd",
    {
      Q: T.Tensor([batch, seqQ, heads, D], dt),
      K: T.Tensor([batch, seqK, kvHeads, D], dt),
      V: T.Tensor([batch, seqK, kvHeads, D], dt),
      dO: T.Tensor([batch, seqQ, heads, D], dt),
      LSE2: rowTensors.rowF32(),
      Delta: rowTensors.rowF32(),
      dQacc: rowTensors.qF32(),
      dK: T.Tensor([batch, seqK, kvHeads, D], dt),
      dV: T.Tensor([batch, seqK, kvHeads, D], dt),
    },
    ({ Q, K, V, dO, LSE2, Delta, dQacc, dK, dV }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({
          grid: [seqK / BN, kvHeads, batch],
          block: 384,
          dynamic_shared_bytes:
            (2 * BN + 2 * STAGES * BM) * D * 2 + STAGES * 2 * 2 * BM * 64 * 2 + 2 * BM * W * 4,
        }),
      });
      const tid = T.cuda.thread_idx("x");
      const kb = T.cuda.block_idx("x");
      const hk = T.cuda.block_idx("y");
      const b = T.cuda.block_idx("z");
      const wg = T.let_("wg", tid.floordiv(128));
      // Query blocks i0 ≤ i < i0 + blocks meet some key's window: query q sees key k when
      // k − right ≤ q ≤ k + left; the keys are kb·BN .. kb·BN + BN − 1.
      const i0 =
        right === -1
          ? 0
          : T.let_("i0", T.floordiv(T.max(T.sub(T.mul(kb, BN), right), 0), BM).min(qBlocks));
      const blocks =
        left === -1
          ? right === -1
            ? qBlocks
            : T.let_("blocks", T.sub(qBlocks, i0))
          : T.let_(
              "blocks",
              T.max(
                T.sub(
                  T.min(
                    T.floordiv(T.max(T.add(T.mul(kb, BN), BN - 1 + left + BM), 0), BM),
                    qBlocks,
                  ),
                  i0,
                ),
                0,
              ),
            );
      // The steps of a KV block: for each query head hk·group + g of the KV head's group, the
      // query blocks i0 + r (r < blocks); step n = g · blocks + r picks the ring stage.
      const forSteps = (body: (n: ExprLike, h: ExprLike, i: ExprLike) => void) => {
        const inner = (g: ExprLike, h: ExprLike) => {
          for (const r of T.range(blocks)) {
            const n = group === 1 ? r : T.let_("n", T.add(T.mul(g, blocks), r));
            // i0 + r < qBlocks always (blocks ≤ qBlocks − i0); the min states it for the
            // verifier's bounds analysis, which does not relate i0 to blocks.
            body(n, h, right === -1 ? r : T.let_("i", T.min(T.add(i0, r), qBlocks - 1)));
          }
        };
        if (group === 1) inner(0, hk);
        else {
          for (const g of T.range(group)) inner(g, T.let_("h", T.add(T.mul(hk, group), g)));
        }
      };
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
      const sP = shared([STAGES, 2, BM, 64], "sP");
      const sdS = shared([STAGES, 2, BM, 64], "sdS");
      // Each consumer's [64 queries, 64 columns] float32 block of dQ, row-major as the blocked
      // accumulator holds it: the source of its bulk reduction.
      const sdQ = T.alloc_shared([2, BM * W], "float32", {
        name: "sdQ",
        align: 128,
        dynamic: true,
      });
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
      // Row blocks of a [batch, seq, heads, D] tensor, as the forward: rows(X, r).sub(b, i, h)
      // is [r, D]; cols() its 64-wide column blocks; blocked() a shared [D / 64, r, 64] tile.
      const rows = (x: typeof Q, r: number) => x.rearrange("b (i r) h d -> b i h r d", { r });
      const cols = (x: ReturnType<typeof rows>) => x.rearrange("r (k c) -> r k c", { c: W });
      const blocked = (t: typeof sK) => t.rearrange("k r c -> r k c");
      T.if_(
        wg.eq(0),
        () => {
          T.ptx.setmaxnreg(false, 24);
          T.if_(tid.eq(0), () => {
            T.ptx.mbarrier.arrive.expect_tx(kvFull.sub(0), 2 * kvBytes);
            T.tile.copy_async(blocked(sK), cols(rows(K, BN).sub(b, kb, hk)), {
              mbar: kvFull.sub(0),
            });
            T.tile.copy_async(blocked(sV), cols(rows(V, BN).sub(b, kb, hk)), {
              mbar: kvFull.sub(0),
            });
            forSteps((n, h, i) => {
              const st = T.let_("st", T.floormod(n, STAGES));
              const ph = T.let_("ph", T.floormod(T.floordiv(n, STAGES), 2));
              // The stage's Q and dO are freed together (the consumers' last reads of both
              // are the same wgmma group).
              T.ptx.mbarrier.try_wait(qEmpty.sub(st), T.sub(1, ph));
              T.ptx.mbarrier.arrive.expect_tx(qFull.sub(st), qBytes);
              T.tile.copy_async(blocked(sQ.sub(st)), cols(rows(Q, BM).sub(b, i, h)), {
                mbar: qFull.sub(st),
              });
              T.ptx.mbarrier.arrive.expect_tx(oFull.sub(st), qBytes);
              T.tile.copy_async(blocked(sdO.sub(st)), cols(rows(dO, BM).sub(b, i, h)), {
                mbar: oFull.sub(st),
              });
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
          const lse = T.alloc_local([64, 1], "float32", { name: "lse", layout: rl });
          const dl = T.alloc_local([64, 1], "float32", { name: "dl", layout: rl });
          T.tile.wg.zero(dKa);
          T.tile.wg.zero(dVa);
          // This consumer's 64 keys of K and V: [64, D / 64, 64] column-blocked views.
          const keys = (t: typeof sK) => t.rearrange("k (w r) c -> w r k c", { r: 64 }).sub(cw);
          const sKw = keys(sK);
          const sVw = keys(sV);
          const sdQw = sdQ.sub(cw);
          // The warpgroup's named barrier 5 + cw (ids 1..15 are free; a warp-uniform branch
          // picks the immediate).
          const wgBarrier = () =>
            T.if_(
              cw.eq(0),
              () => T.cuda.bar_sync(5, 128),
              () => T.cuda.bar_sync(6, 128),
            );
          T.ptx.mbarrier.try_wait(kvFull.sub(0), 0);
          forSteps((n, h, i) => {
            const st = T.let_("st", T.floormod(n, STAGES));
            const ph = T.let_("ph", T.floormod(T.floordiv(n, STAGES), 2));
            const sPw = sP.sub(st, cw);
            const sdSw = sdS.sub(st, cw);
            // S = Q·K_wᵀ and dP = dO·V_wᵀ, both in flight.
            T.ptx.mbarrier.try_wait(qFull.sub(st), ph);
            T.tile.wg.gemm_async(S, blocked(sQ.sub(st)), sKw, { transB: true, accum: false });
            T.ptx.mbarrier.try_wait(oFull.sub(st), ph);
            T.tile.wg.gemm_async(dP, blocked(sdO.sub(st)), sVw, { transB: true, accum: false });
            // The block's LSE₂ and Δ rows, one per query row.
            const rowVec = (x: typeof LSE2) =>
              x.rearrange("b h (i r o) -> b h i r o", { r: 64, o: 1 }).sub(b, h, i);
            T.tile.wg.copy(lse, rowVec(LSE2));
            T.tile.wg.copy(dl, rowVec(Delta));
            T.ptx.wgmma.wait_group(0);
            if (masked) {
              // Key k = kb·BN + 64·cw + c is hidden from query q = 64·i + r when k > q + right
              // or k < q − left (the forward's test).
              const k0 = T.let_("k0", T.add(T.mul(kb, BN), T.mul(cw, 64)));
              const q0 = T.mul(i, BM);
              const edges = (pr: ExprLike, pl: ExprLike) =>
                left === -1 ? pr : right === -1 ? pl : T.or(pr, pl);
              // The block crosses an edge when its corner keys are hidden from a corner query.
              const crossRight = T.add(k0, 63).gt(right === 0 ? q0 : T.add(q0, right));
              const crossLeft = k0.lt(T.add(q0, BM - 1 - left));
              const hidden = (r: ExprLike, cc: ExprLike) => {
                const k = T.add(k0, cc);
                const q = T.add(q0, r);
                return edges(k.gt(right === 0 ? q : T.add(q, right)), k.lt(T.sub(q, left)));
              };
              T.if_(edges(crossRight, crossLeft), () =>
                T.tile.wg.select(S, ([r, cc]) => hidden(r!, cc!), -Infinity, S),
              );
            }
            // P = exp2(c·S − LSE₂) (the forward's normalised probabilities).
            T.tile.wg.mul(S, S, c);
            T.tile.wg.sub(S, S, lse);
            T.tile.wg.exp2(S, S, { approx: true });
            // dS = P ∘ (dP − Δ).
            T.tile.wg.sub(dP, dP, dl);
            T.tile.wg.mul(dP, dP, S);
            T.tile.wg.cast(P16, S);
            T.tile.wg.cast(dS16, dP);
            if (!splitD) {
              // dQ_partial = dS · K_w (RS), issued first: it needs no shared P or dS.
              T.tile.wg.gemm_async(dQa, dS16, sKw, { accum: false });
            }
            T.tile.wg.copy(sPw, P16);
            T.tile.wg.copy(sdSw, dS16);
            // The generic-proxy stores of P and dS, before the wgmma reads them: at hd 128 both
            // consumers' (dQ reads all 128 keys' dS), else the warpgroup's.
            T.ptx.fence.proxy_async("shared::cta");
            if (splitD) T.cuda.bar_sync(7, 256);
            else wgBarrier();
            // dV_w += Pᵀ·dO, dK_w += dSᵀ·Q: P and dS [64 queries, 64 keys] read as [K, M].
            T.tile.wg.gemm_async(dVa, sPw, blocked(sdO.sub(st)), { transA: true, accum: true });
            T.tile.wg.gemm_async(dKa, sdSw, blocked(sQ.sub(st)), { transA: true, accum: true });
            if (splitD) {
              // dQ[:, 64·cw ..] = dS [64, 128 keys] · K[128 keys, 64·cw ..].
              T.tile.wg.gemm_async(dQa, blocked(sdS.sub(st)), sK.sub(cw), { accum: false });
            }
            T.ptx.wgmma.wait_group(0);
            T.if_(T.floormod(tid, 128).eq(0), () => T.ptx.mbarrier.arrive(qEmpty.sub(st)));
            // dQ's block into the accumulator: the previous step's bulk reduction has read the
            // staging block (wait_group.read by its issuing thread, then the warpgroup's
            // barrier), the warpgroup stores the block, fences, meets again, and one thread
            // issues the reduction.
            const leader = T.floormod(tid, 128).eq(0);
            T.if_(leader, () => T.ptx.cp.async_.bulk.wait_group_read(0));
            wgBarrier();
            T.tile.wg.copy(sdQw.rearrange("(r c) -> r c", { c: W }), dQa);
            T.ptx.fence.proxy_async("shared::cta");
            wgBarrier();
            T.if_(leader, () => {
              T.cuda.tile.apply(
                T.ptx["cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32"],
                dQacc.sub(b, h, i, splitD ? cw : 0),
                sdQw,
                { chunk_bytes: BM * W * 4 },
              );
              T.ptx.cp.async_.bulk.commit_group();
            });
          });
          // The last reduction completes before the CTA exits.
          T.if_(T.floormod(tid, 128).eq(0), () => T.ptx.cp.async_.bulk.wait_group(0));
          // dK = scale · Σ dSᵀ·Q (dS is the gradient of the scaled logits); dV = Σ Pᵀ·dO.
          const kRows = (x: typeof dK) => rows(x, 64).sub(b, T.add(T.mul(kb, 2), cw), hk);
          T.tile.wg.mul(dKa, dKa, scale);
          T.tile.wg.cast(out, dKa);
          T.tile.wg.copy(kRows(dK), out);
          T.tile.wg.cast(out, dVa);
          T.tile.wg.copy(kRows(dV), out);
        },
      );
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
 * [batch, heads, seqQ / 64, hd / 64, 64 · 64]. Allocate them with these shapes (contents are
 * written by `preprocess`) and pass them to the three kernels.
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
