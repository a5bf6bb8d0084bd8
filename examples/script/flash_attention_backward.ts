// flash_attention backward in script mode (examples/flash_attention_backward.ts is the builder-mode
// twin, at its example size: one batch, two heads, 128 queries and keys, head dim 64, float16,
// causal): dQ, dK and dV of O = softmax(Q·Kᵀ / 8) · V, in three kernels launched in order.
// flash_attention_bwd_pre, a CTA of 256 threads per 64-row query block (each warp its 8 rows as
// an [8, 64] tile of 16-byte vectors): Δ = rowsum(dO ∘ O), LSE₂ = LSE · log2 e (+inf for a row
// that saw no key; one thread a row) and the block of the blocked float32 dQ accumulator zeroed by
// 16-byte stores. flash_attention_bwd, a CTA per (128 keys, head): a producer thread loads K and V
// once and the Q and dO blocks of 64 rows through a 2-deep ring by TMA (T.tile.copy_async); two
// consumer warpgroups of 64 keys each recompute S = Q·Kᵀ and dP = dO·Vᵀ (wgmma SS), mask the
// blocks that cross the diagonal, form P = exp2(S · C − LSE₂) while dP runs and store it for
// dV += Pᵀ·dO (transposed A), which runs while dS = P ∘ (dP − Δ) is formed; then dQ's partial
// sums dS·K (wgmma RS) and dK += dSᵀ·Q, and dQ's block is staged (in the wgmma fragment order, the
// accumulator's) while dK runs; its bulk reduction (cp.reduce.async.bulk .add.f32) is issued in
// the next step, right after P's barrier, and the last one after the loop. dK and dV go into the
// consumer's rows of sK and sV and out by one TMA store each.
// flash_attention_bwd_post, a warpgroup per accumulator block: the block read as the wgmma
// accumulator tile it was stored from (16-byte loads), dQ = accumulator / 8 rounded to float16,
// through shared memory by stmatrix (128B swizzle) and one TMA store.
// Run: npx tsx examples/script/flash_attention_backward.ts (its check is
// examples/flash_attention_backward.ts's).
import {
  device,
  isMain,
  runAsMain,
  script as T,
  type Tensor,
  type Tile,
  type DeviceLike,
  type ExampleResult,
} from "tirx-ts";
import { runExample as check } from "../flash_attention_backward.js";

/** Keys per CTA of the main kernel (two consumer warpgroups of 64). */
const BN = 128;
/** Query rows per step of a consumer's loop. */
const BM = 64;
const D = 64;
const STAGES = 2;
/** Query blocks of 64 rows: 128 queries. */
const Q_BLOCKS = 2;
/** The softmax scale 1/√64. */
const SCALE = 0.125;
/** The softmax scale times log2(e): exp(x / 8) = exp2(x · C). */
const C = 0.18033688011112042;
const KV_BYTES = BN * D * 2;
const Q_BYTES = BM * D * 2;
/** Bytes of a query block's LSE₂ or Δ (64 float32): one bulk copy. */
const ROW_BYTES = 64 * 4;
/**
 * K, V, the Q and dO rings, the P and dS rings of both consumers, their dQ staging blocks, the
 * LSE₂ and Δ rings.
 */
const SMEM =
  (2 * BN + 2 * STAGES * BM) * D * 2 +
  STAGES * 2 * 2 * BM * 64 * 2 +
  2 * BM * D * 4 +
  STAGES * 2 * ROW_BYTES;

export const flash_attention_bwd_pre = T.prim_func(function flash_attention_bwd_pre(
  O: Tensor<[1, 128, 2, 64], "float16">,
  dO: Tensor<[1, 128, 2, 64], "float16">,
  LSE: Tensor<[1, 2, 128], "float32">,
  Delta: Tensor<[1, 2, 128], "float32">,
  LSE2: Tensor<[1, 2, 128], "float32">,
  dQacc: Tensor<[1, 2, 2, 1, 4096], "float32">,
) {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [Q_BLOCKS, 2, 1], block: 256 }) });
  const tid = T.cuda.thread_idx("x");
  // Query block x, head h, batch b; warp w holds the block's rows 8w .. 8w + 7.
  const x = T.cuda.block_idx("x");
  const h = T.cuda.block_idx("y");
  const b = T.cuda.block_idx("z");
  const warp = T.let_("warp", T.floordiv(tid, 32));
  // A warp's [8, 64] tile as 16-byte vectors: lane l holds row ⌊l / 8⌋ + 4a (a = 0, 1), columns
  // 8·(l mod 8) .. + 7; its row sums [8, 1] likewise, replicated over a row's 8 lanes.
  const tileLayout = T.TileLayout(T.S([2, 4, 8, 8], ["8@m", "8@laneid", "1@laneid", "1@m"]));
  const rowLayout = T.TileLayout(
    T.S([2, 4, 1], ["1@m", "8@laneid", "1@m"]),
    T.R([8], ["1@laneid"]),
  );
  const o = T.alloc_local([8, D], "float16", { name: "o", layout: tileLayout });
  const g = T.alloc_local([8, D], "float16", { name: "g", layout: tileLayout });
  const of = T.alloc_local([8, D], "float32", { name: "of", layout: tileLayout });
  const gf = T.alloc_local([8, D], "float32", { name: "gf", layout: tileLayout });
  const delta = T.alloc_local([8, 1], "float32", { name: "delta", layout: rowLayout });
  // The warp's 8 rows of a [batch, seq, heads, D] tensor: [8, D].
  const warpRows = (t: Tile): Tile =>
    t
      .rearrange("b (i r) h d -> b i h r d", { r: BM })
      .sub(b, x, h)
      .rearrange("(w r) d -> w r d", { r: 8 })
      .sub(warp);
  T.tile.warp.copy(o, warpRows(O));
  T.tile.warp.copy(g, warpRows(dO));
  // The block's accumulator (64 · 64 float32, contiguous), zeroed while the loads fly (16-byte
  // stores shared by the CTA's threads).
  T.tile.cta.memset(dQacc.sub(b, h, x), 0);
  // LSE₂ of the block's row tid.
  if (tid < BM) {
    const i = T.let_("i", x * BM + tid);
    const l = T.let_("l", LSE[b]![h]![i]!);
    LSE2[b]![h]![i] = l === -Infinity ? Infinity : l * Math.LOG2E;
  }
  T.tile.warp.cast(of, o);
  T.tile.warp.cast(gf, g);
  T.tile.warp.mul(of, of, gf);
  T.tile.warp.sum(delta, of, 1);
  T.tile.warp.copy(
    Delta.sub(b, h).rearrange("(x w r o) -> x w r o", { w: 8, r: 8, o: 1 }).sub(x, warp),
    delta,
  );
});

export const flash_attention_bwd_main = T.prim_func(function flash_attention_bwd(
  Q: Tensor<[1, 128, 2, 64], "float16">,
  K: Tensor<[1, 128, 2, 64], "float16">,
  V: Tensor<[1, 128, 2, 64], "float16">,
  dO: Tensor<[1, 128, 2, 64], "float16">,
  LSE2: Tensor<[1, 2, 128], "float32">,
  Delta: Tensor<[1, 2, 128], "float32">,
  dQacc: Tensor<[1, 2, 2, 1, 4096], "float32">,
  dK: Tensor<[1, 128, 2, 64], "float16">,
  dV: Tensor<[1, 128, 2, 64], "float16">,
) {
  T.device_entry({
    launch: T.cuda.LaunchConfig({ grid: [1, 2, 1], block: 384, dynamic_shared_bytes: SMEM }),
    // sm_90a: P and dS go to shared memory by stmatrix.
    arch: "sm_90a",
  });
  const tid = T.cuda.thread_idx("x");
  const kb = T.cuda.block_idx("x");
  const h = T.cuda.block_idx("y");
  const b = T.cuda.block_idx("z");
  const wg = T.let_("wg", T.floordiv(tid, 128));
  // Causal: the query blocks i0 ≤ i < Q_BLOCKS meet the CTA's keys kb·128 .. kb·128 + 127.
  const i0 = T.let_("i0", T.min(T.floordiv(T.max(kb * BN, 0), BM), Q_BLOCKS));
  const blocks = T.let_("blocks", Q_BLOCKS - i0);
  const shared = T.swizzle_mode("128B");
  const sK = T.alloc_shared([1, BN, 64], "float16", {
    name: "sK",
    align: 1024,
    layout: shared,
    dynamic: true,
  });
  const sV = T.alloc_shared([1, BN, 64], "float16", {
    name: "sV",
    align: 1024,
    layout: shared,
    dynamic: true,
  });
  const sQ = T.alloc_shared([STAGES, 1, BM, 64], "float16", {
    name: "sQ",
    align: 1024,
    layout: shared,
    dynamic: true,
  });
  const sdO = T.alloc_shared([STAGES, 1, BM, 64], "float16", {
    name: "sdO",
    align: 1024,
    layout: shared,
    dynamic: true,
  });
  // P and dS of each consumer, one buffer per ring stage.
  const sP = T.alloc_shared([STAGES, 2, BM, 64], "float16", {
    name: "sP",
    align: 1024,
    layout: shared,
    dynamic: true,
  });
  const sdS = T.alloc_shared([STAGES, 2, BM, 64], "float16", {
    name: "sdS",
    align: 1024,
    layout: shared,
    dynamic: true,
  });
  // Each consumer's [64 queries, 64 columns] float32 block of dQ: its bulk reduction's source.
  const sdQ = T.alloc_shared([2, BM * D], "float32", { name: "sdQ", align: 128, dynamic: true });
  // The query block's LSE₂ and Δ per ring stage, loaded by the producer with Q and dO.
  const sLse = T.alloc_shared([STAGES, BM], "float32", { name: "sLse", align: 128, dynamic: true });
  const sDl = T.alloc_shared([STAGES, BM], "float32", { name: "sDl", align: 128, dynamic: true });
  const kvFull = T.alloc_shared([1], "uint64", { name: "kvFull" });
  const qFull = T.alloc_shared([STAGES], "uint64", { name: "qFull" });
  const oFull = T.alloc_shared([STAGES], "uint64", { name: "oFull" });
  const qEmpty = T.alloc_shared([STAGES], "uint64", { name: "qEmpty" });
  if (tid === 0) {
    T.ptx.mbarrier.init(kvFull.sub(0), 1);
    for (const st of T.unroll(STAGES)) {
      T.ptx.mbarrier.init(qFull.sub(st), 1);
      T.ptx.mbarrier.init(oFull.sub(st), 1);
      T.ptx.mbarrier.init(qEmpty.sub(st), 2);
    }
    T.ptx.fence.mbarrier_init();
  }
  T.cuda.cta_sync();
  // Row blocks of a [batch, seq, heads, D] tensor: rows(X, r).sub(b, i, h) is [r, D].
  const rows = (x: Tile, r: number): Tile => x.rearrange("b (i r) h d -> b i h r d", { r });
  // A [r, 64] view as one 64-wide column block [r, 1, 64], and a shared [1, r, 64] tile alike.
  const cols = (v: Tile): Tile => v.rearrange("r (k c) -> r k c", { c: 64 });
  const blocked = (t: Tile): Tile => t.rearrange("k r c -> r k c");
  if (wg === 0) {
    T.ptx.setmaxnreg(false, 24);
    if (tid === 0) {
      T.ptx.mbarrier.arrive.expect_tx(kvFull.sub(0), 2 * KV_BYTES);
      T.tile.copy_async(blocked(sK), cols(rows(K, BN).sub(b, kb, h)), { mbar: kvFull.sub(0) });
      T.tile.copy_async(blocked(sV), cols(rows(V, BN).sub(b, kb, h)), { mbar: kvFull.sub(0) });
      for (const r of T.range(blocks)) {
        const i = T.let_("i", T.min(i0 + r, Q_BLOCKS - 1));
        const st = T.let_("st", T.floormod(r, STAGES));
        const ph = T.let_("ph", T.floormod(T.floordiv(r, STAGES), 2));
        // The stage's Q and dO are freed together.
        T.ptx.mbarrier.try_wait(qEmpty.sub(st), 1 - ph);
        T.ptx.mbarrier.arrive.expect_tx(qFull.sub(st), Q_BYTES + ROW_BYTES);
        T.tile.copy_async(blocked(sQ.sub(st)), cols(rows(Q, BM).sub(b, i, h)), {
          mbar: qFull.sub(st),
        });
        T.cuda.tile.apply(
          T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"],
          sLse.sub(st),
          LSE2.rearrange("b h (i r) -> b h i r", { r: BM }).sub(b, h, i),
          { chunk_bytes: ROW_BYTES, mbar: qFull.sub(st) },
        );
        T.ptx.mbarrier.arrive.expect_tx(oFull.sub(st), Q_BYTES + ROW_BYTES);
        T.tile.copy_async(blocked(sdO.sub(st)), cols(rows(dO, BM).sub(b, i, h)), {
          mbar: oFull.sub(st),
        });
        T.cuda.tile.apply(
          T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"],
          sDl.sub(st),
          Delta.rearrange("b h (i r) -> b h i r", { r: BM }).sub(b, h, i),
          { chunk_bytes: ROW_BYTES, mbar: oFull.sub(st) },
        );
      }
    }
  } else {
    T.ptx.setmaxnreg(true, 240);
    // Consumer cw owns keys kb·128 + 64·cw .. + 63.
    const cw = T.let_("cw", T.floormod(wg + 1, 2));
    const sl = T.layout.wgmma_tile_layout("D", 64, 64, "float32");
    const rl = T.TileLayout("S[(4, 2, 8) : (32@tid_in_wg, 1, 4@tid_in_wg)] + R[4 : 1@tid_in_wg]");
    const S = T.alloc_local([64, 64], "float32", { name: "S", layout: sl });
    const dP = T.alloc_local([64, 64], "float32", { name: "dP", layout: sl });
    const P16 = T.alloc_local([64, 64], "float16", { name: "P16", layout: sl });
    const dS16 = T.alloc_local([64, 64], "float16", { name: "dS16", layout: sl });
    const dKa = T.alloc_local([64, D], "float32", { name: "dKa", layout: sl });
    const dVa = T.alloc_local([64, D], "float32", { name: "dVa", layout: sl });
    const dQa = T.alloc_local([64, D], "float32", { name: "dQa", layout: sl });
    const out = T.alloc_local([64, D], "float16", { name: "out", layout: sl });
    const lse = T.alloc_local([64, 1], "float32", { name: "lse", layout: rl });
    const dl = T.alloc_local([64, 1], "float32", { name: "dl", layout: rl });
    T.tile.wg.zero(dKa);
    T.tile.wg.zero(dVa);
    // This consumer's 64 keys of K and V: [64, 1, 64] column-blocked views.
    const sKw = sK.rearrange("k (w r) c -> w r k c", { r: 64 }).sub(cw);
    const sVw = sV.rearrange("k (w r) c -> w r k c", { r: 64 }).sub(cw);
    const sdQw = sdQ.sub(cw);
    // The warpgroup's named barrier 5 + cw.
    const wgBarrier = () => {
      if (cw === 0) T.cuda.bar_sync(5, 128);
      else T.cuda.bar_sync(6, 128);
    };
    T.ptx.mbarrier.try_wait(kvFull.sub(0), 0);
    // Step n's dQ block is staged in sdQw at the end of step n and its reduction issued in step
    // n + 1, right after P's barrier (whose fence covers the staging stores), so that no warp
    // waits for its staging stores to land; `pend` keeps its head and query block (h = −1: none).
    const pend = T.alloc_local([2], "int32", { name: "pend" });
    pend[0] = -1;
    // One thread's bulk reduction of the staged block into the accumulator.
    const flushDQ = () => {
      if (pend[0]! >= 0) {
        if (T.floormod(tid, 128) === 0) {
          T.cuda.tile.apply(
            T.ptx["cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32"],
            dQacc.sub(b, pend[0]!, pend[1]!, 0),
            sdQw,
            { chunk_bytes: BM * D * 4 },
          );
          T.ptx.cp.async_.bulk.commit_group();
        }
      }
    };
    for (const r of T.range(blocks)) {
      const i = T.let_("i", T.min(i0 + r, Q_BLOCKS - 1));
      const st = T.let_("st", T.floormod(r, STAGES));
      const ph = T.let_("ph", T.floormod(T.floordiv(r, STAGES), 2));
      const sPw = sP.sub(st, cw);
      const sdSw = sdS.sub(st, cw);
      // S = Q·K_wᵀ and dP = dO·V_wᵀ, both in flight.
      T.ptx.mbarrier.try_wait(qFull.sub(st), ph);
      T.tile.wg.gemm_async(S, blocked(sQ.sub(st)), sKw, { transB: true, accum: false });
      T.ptx.mbarrier.try_wait(oFull.sub(st), ph);
      T.tile.wg.gemm_async(dP, blocked(sdO.sub(st)), sVw, { transB: true, accum: false });
      // The block's LSE₂ and Δ, one per query row, from the stage's shared copies.
      T.tile.wg.copy(lse, sLse.sub(st).rearrange("(r o) -> r o", { o: 1 }));
      T.tile.wg.copy(dl, sDl.sub(st).rearrange("(r o) -> r o", { o: 1 }));
      // S done (dP may still run).
      T.ptx.wgmma.wait_group(1);
      // Key k0 + c is hidden from query 64·i + r when it is greater; a block crosses the
      // diagonal when its last key is hidden from its first query.
      const k0 = T.let_("k0", kb * BN + cw * 64);
      if (k0 + 63 > i * BM) {
        T.tile.wg.select(S, ([row, col]) => k0 + col! > i * BM + row!, -Infinity, S);
      }
      // P = exp2(C·S − LSE₂), to shared memory; then dV_w += Pᵀ·dO (P read as [K, M]) runs
      // while dS is computed.
      T.tile.wg.mul(S, S, C);
      T.tile.wg.sub(S, S, lse);
      T.tile.wg.exp2(S, S, { approx: true });
      T.tile.wg.cast(P16, S);
      T.tile.wg.copy(sPw, P16);
      T.ptx.fence.proxy_async("shared::cta");
      wgBarrier();
      // The previous step's dQ block into the accumulator.
      flushDQ();
      T.tile.wg.gemm_async(dVa, sPw, blocked(sdO.sub(st)), { transA: true, accum: true });
      // dP done (dV may still run); dS = P ∘ (dP − Δ).
      T.ptx.wgmma.wait_group(1);
      T.tile.wg.sub(dP, dP, dl);
      T.tile.wg.mul(dP, dP, S);
      T.tile.wg.cast(dS16, dP);
      // dQ_partial = dS · K_w (RS): it needs no shared dS.
      T.tile.wg.gemm_async(dQa, dS16, sKw, { accum: false });
      T.tile.wg.copy(sdSw, dS16);
      // The generic-proxy stores of dS, before the wgmma reads them. The previous step's reduction
      // has read the staging block before this barrier, which every thread of the warpgroup
      // passes before staging the next (its issuer waits here, a step after issuing it).
      T.ptx.fence.proxy_async("shared::cta");
      if (T.floormod(tid, 128) === 0) T.ptx.cp.async_.bulk.wait_group_read(0);
      wgBarrier();
      // dK_w += dSᵀ·Q, last: the dQ block is staged while it runs.
      T.tile.wg.gemm_async(dKa, sdSw, blocked(sQ.sub(st)), { transA: true, accum: true });
      T.ptx.wgmma.wait_group(1);
      // dQ's block staged in the wgmma fragment order (thread t's slots 4n .. 4n + 3 at 512n + 4t:
      // 16-byte stores); its reduction is issued in the next step.
      const t = T.let_("tf", T.floormod(tid, 128));
      const slots = dQa.flat();
      for (const n of T.unroll(8)) {
        for (const e of T.vectorized(4)) {
          sdQ[cw]![n * 512 + t * 4 + e] = slots[n * 4 + e]!;
        }
      }
      pend[0] = h;
      pend[1] = i;
      T.ptx.wgmma.wait_group(0);
      if (T.floormod(tid, 128) === 0) T.ptx.mbarrier.arrive(qEmpty.sub(st));
    }
    // The last step's dQ block: fenced, the warpgroup meets, then its reduction.
    T.ptx.fence.proxy_async("shared::cta");
    wgBarrier();
    flushDQ();
    // dK = Σ dSᵀ·Q / 8; dV = Σ Pᵀ·dO, each into this consumer's rows of sK and sV (its last
    // wgmmas that read them are complete: the warpgroup meets first; thread t holds rows
    // 16·⌊t / 32⌋ + ⌊(t mod 32) / 4⌋ + 8·i and column pairs 8·n + 2·(t mod 4)), then one TMA
    // store each.
    T.tile.wg.mul(dKa, dKa, SCALE);
    T.tile.wg.cast(out, dKa);
    wgBarrier();
    const to = T.let_("to", T.floormod(tid, 128));
    const r0 = T.let_("or0", T.floordiv(to, 32) * 16 + T.floordiv(T.floormod(to, 32), 4));
    const c0 = T.let_("oc0", T.floormod(to, 4) * 2);
    const outSlots = out.flat();
    for (const i of T.unroll(2)) {
      for (const n of T.unroll(D / 8)) {
        for (const e of T.vectorized(2)) {
          sK[T.floordiv(n, 8)]![cw * 64 + (r0 + i * 8)]![T.floormod(n, 8) * 8 + c0 + e] =
            outSlots[n * 4 + i * 2 + e]!;
        }
      }
    }
    T.tile.wg.cast(out, dVa);
    for (const i of T.unroll(2)) {
      for (const n of T.unroll(D / 8)) {
        for (const e of T.vectorized(2)) {
          sV[T.floordiv(n, 8)]![cw * 64 + (r0 + i * 8)]![T.floormod(n, 8) * 8 + c0 + e] =
            outSlots[n * 4 + i * 2 + e]!;
        }
      }
    }
    T.ptx.fence.proxy_async();
    wgBarrier();
    if (T.floormod(tid, 128) === 0) {
      const slotK = sK.rearrange("k (w r) c -> w k r c", { r: 64 }).sub(cw);
      const slotV = sV.rearrange("k (w r) c -> w k r c", { r: 64 }).sub(cw);
      T.tile.copy_async(cols(rows(dK, 64).sub(b, kb * 2 + cw, h)), blocked(slotK));
      T.tile.copy_async(cols(rows(dV, 64).sub(b, kb * 2 + cw, h)), blocked(slotV));
      T.ptx.cp.async_.bulk.commit_group();
      // The last reduction and both stores complete before the CTA exits.
      T.ptx.cp.async_.bulk.wait_group(0);
    }
  }
});

export const flash_attention_bwd_post = T.prim_func(function flash_attention_bwd_post(
  dQacc: Tensor<[1, 2, 2, 1, 4096], "float32">,
  dQ: Tensor<[1, 128, 2, 64], "float16">,
) {
  T.device_entry({
    launch: T.cuda.LaunchConfig({
      grid: [Q_BLOCKS, 2, 1],
      block: 128,
      dynamic_shared_bytes: BM * 64 * 2,
    }),
    // sm_90a: the block goes to shared memory by stmatrix.
    arch: "sm_90a",
  });
  const tid = T.cuda.thread_idx("x");
  const x = T.cuda.block_idx("x");
  const h = T.cuda.block_idx("y");
  const b = T.cuda.block_idx("z");
  // Accumulator block x: query block qb, column block k (one at head dim 64).
  const qb = T.let_("qb", T.floordiv(x, D / 64));
  const k = T.let_("k", T.floormod(x, D / 64));
  const ql = T.layout.wgmma_tile_layout("D", 64, 64, "float32");
  const a = T.alloc_local([64, 64], "float32", { name: "a", layout: ql });
  const q = T.alloc_local([64, 64], "float16", { name: "q", layout: ql });
  // The block as the wgmma accumulator tile it was stored from (fragment order: thread t's slots
  // 4n .. 4n + 3 at 512n + 4t, 16-byte loads).
  const t = T.let_("tf", T.floormod(tid, 128));
  const slots = a.flat();
  for (const n of T.unroll(8)) {
    for (const e of T.vectorized(4)) {
      slots[n * 4 + e] = dQacc[b]![h]![qb]![k]![n * 512 + t * 4 + e]!;
    }
  }
  T.tile.wg.mul(a, a, SCALE);
  T.tile.wg.cast(q, a);
  // Through shared memory (stmatrix, 128B swizzle), then one TMA store of the block.
  const dst = dQ
    .rearrange("b (i r) h d -> b i h r d", { r: BM })
    .sub(b, qb, h)
    .rearrange("r (k c) -> k r c", { c: 64 })
    .sub(k);
  const sq = T.alloc_shared([BM, 64], "float16", {
    name: "sq",
    align: 1024,
    layout: T.swizzle_mode("128B"),
    dynamic: true,
  });
  T.tile.wg.copy(sq, q);
  T.ptx.fence.proxy_async("shared::cta");
  T.cuda.cta_sync();
  if (tid === 0) {
    T.tile.copy_async(dst, sq);
    T.ptx.cp.async_.bulk.commit_group();
    T.ptx.cp.async_.bulk.wait_group(0);
  }
});

/**
 * Run the script-mode main kernel on `dev` with the check of its builder twin,
 * examples/flash_attention_backward.ts (float64 reference, the bound stated there; the pre- and
 * postprocessing kernels there are structurally equal to this file's).
 */
export function runExample(dev: DeviceLike = device()): ExampleResult {
  return check(dev, flash_attention_bwd_main);
}

if (isMain(import.meta.url)) runAsMain("flash_attention_backward (script mode)", runExample);
