// flash_attention in script mode (examples/flash_attention.ts is the builder-mode twin, at its
// example size: one batch and head, 128 queries, 256 keys, head dim 64, float16): O =
// softmax(Q·Kᵀ / 8) · V. A producer thread loads Q once and K, V blocks of 128 rows through a
// 2-deep ring by TMA (T.tile.copy_async); two consumer warpgroups compute S = Q·Kᵀ (wgmma SS),
// the online softmax in registers (row max and sum, exp2 with the scale folded in, broadcast
// along rows), and O += P·V with P in registers (wgmma RS); each consumer writes its rows of O
// into shared memory and one of its threads stores them by TMA.
// Run: npx tsx examples/script/flash_attention.ts (its check is examples/flash_attention.ts's).
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
import { runExample as check } from "../flash_attention.js";

const BM = 128;
const BN = 128;
const D = 64;
const STAGES = 2;
const KV_BLOCKS = 2;
const TILE_BYTES = BN * D * 2;
/** Q, the K/V ring, and O's staging slot (one 64-row block per consumer). */
const SMEM = (BM + 2 * STAGES * BN) * D * 2 + BM * D * 2;
/** The softmax scale 1/√64 times log2(e): exp(x / 8) = exp2(x · C). */
const C = 0.18033688011112042;

export const flash_attention = T.prim_func(function flash_attention(
  Q: Tensor<[1, 128, 1, 64], "float16">,
  K: Tensor<[1, 256, 1, 64], "float16">,
  V: Tensor<[1, 256, 1, 64], "float16">,
  O: Tensor<[1, 128, 1, 64], "float16">,
) {
  T.device_entry({
    launch: T.cuda.LaunchConfig({ grid: [1, 1, 1], block: 384, dynamic_shared_bytes: SMEM }),
  });
  const tid = T.cuda.thread_idx("x");
  const qt = T.cuda.block_idx("x");
  const h = T.cuda.block_idx("y");
  const b = T.cuda.block_idx("z");
  // The warpgroup index from lane 0: warp-uniform, so ptxas keeps what derives from it in uniform
  // registers (the builder twin says why).
  const wg = T.let_("wg", T.cuda.__shfl_sync(0xffffffff, T.floordiv(tid, 128), 0));
  const sQ = T.alloc_shared([1, BM, D], "float16", {
    name: "sQ",
    align: 1024,
    layout: T.swizzle_mode("128B"),
    dynamic: true,
  });
  const sK = T.alloc_shared([STAGES, 1, BN, D], "float16", {
    name: "sK",
    align: 1024,
    layout: T.swizzle_mode("128B"),
    dynamic: true,
  });
  const sV = T.alloc_shared([STAGES, 1, BN, D], "float16", {
    name: "sV",
    align: 1024,
    layout: T.swizzle_mode("128B"),
    dynamic: true,
  });
  const sO = T.alloc_shared([2, 1, 64, D], "float16", {
    name: "sO",
    align: 1024,
    layout: T.swizzle_mode("128B"),
    dynamic: true,
  });
  const qFull = T.alloc_shared([1], "uint64", { name: "qFull" });
  const kFull = T.alloc_shared([STAGES], "uint64", { name: "kFull" });
  const vFull = T.alloc_shared([STAGES], "uint64", { name: "vFull" });
  const kEmpty = T.alloc_shared([STAGES], "uint64", { name: "kEmpty" });
  const vEmpty = T.alloc_shared([STAGES], "uint64", { name: "vEmpty" });
  if (tid === 0) {
    T.ptx.mbarrier.init(qFull.sub(0), 1);
    for (const st of T.unroll(STAGES)) {
      T.ptx.mbarrier.init(kFull.sub(st), 1);
      T.ptx.mbarrier.init(vFull.sub(st), 1);
      T.ptx.mbarrier.init(kEmpty.sub(st), 2);
      T.ptx.mbarrier.init(vEmpty.sub(st), 2);
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
    T.ptx.setmaxnreg(false, 40);
    if (tid === 0) {
      T.ptx.mbarrier.arrive.expect_tx(qFull.sub(0), BM * D * 2);
      T.tile.copy_async(blocked(sQ), cols(rows(Q, BM).sub(b, qt, h)), { mbar: qFull.sub(0) });
      for (let j = 0; j < KV_BLOCKS; j++) {
        const st = T.let_("st", T.floormod(j, STAGES));
        const ph = T.let_("ph", T.floormod(T.floordiv(j, STAGES), 2));
        T.ptx.mbarrier.try_wait(kEmpty.sub(st), T.int32(1) - ph);
        T.ptx.mbarrier.arrive.expect_tx(kFull.sub(st), TILE_BYTES);
        T.tile.copy_async(blocked(sK.sub(st)), cols(rows(K, BN).sub(b, j, h)), {
          mbar: kFull.sub(st),
        });
        T.ptx.mbarrier.try_wait(vEmpty.sub(st), T.int32(1) - ph);
        T.ptx.mbarrier.arrive.expect_tx(vFull.sub(st), TILE_BYTES);
        T.tile.copy_async(blocked(sV.sub(st)), cols(rows(V, BN).sub(b, j, h)), {
          mbar: vFull.sub(st),
        });
      }
    }
  } else {
    T.ptx.setmaxnreg(true, 232);
    const cw = T.let_("cw", T.floormod(wg + 1, 2));
    const sl = T.layout.wgmma_tile_layout("D", 64, BN, "float32");
    const ol = T.layout.wgmma_tile_layout("D", 64, D, "float32");
    const rl = T.TileLayout("S[(4, 2, 8) : (32@tid_in_wg, 1, 4@tid_in_wg)] + R[4 : 1@tid_in_wg]");
    const S = T.alloc_local([64, BN], "float32", { name: "S", layout: sl });
    const P = T.alloc_local([64, BN], "float16", { name: "P", layout: sl });
    const acc = T.alloc_local([64, D], "float32", { name: "acc", layout: ol });
    const out = T.alloc_local([64, D], "float16", { name: "out", layout: ol });
    const m = T.alloc_local([64, 1], "float32", { name: "m", layout: rl });
    const l = T.alloc_local([64, 1], "float32", { name: "l", layout: rl });
    const mNew = T.alloc_local([64, 1], "float32", { name: "mNew", layout: rl });
    const corr = T.alloc_local([64, 1], "float32", { name: "corr", layout: rl });
    const rs = T.alloc_local([64, 1], "float32", { name: "rs", layout: rl });
    T.tile.wg.zero(acc);
    T.tile.wg.fill(m, -Infinity);
    T.tile.wg.zero(l);
    T.ptx.mbarrier.try_wait(qFull.sub(0), 0);
    const sQh = sQ.rearrange("k (w r) c -> w r k c", { r: 64 }).sub(cw);
    for (let j = 0; j < KV_BLOCKS; j++) {
      const st = T.let_("st", T.floormod(j, STAGES));
      const ph = T.let_("ph", T.floormod(T.floordiv(j, STAGES), 2));
      T.ptx.mbarrier.try_wait(kFull.sub(st), ph);
      T.tile.wg.gemm_async(S, sQh, blocked(sK.sub(st)), { transB: true, accum: false });
      T.ptx.wgmma.wait_group(0);
      if (T.floormod(tid, 128) === 0) T.ptx.mbarrier.arrive(kEmpty.sub(st));
      T.tile.wg.max(mNew, S, 1);
      T.tile.wg.mul(mNew, mNew, C);
      T.tile.wg.maximum(mNew, mNew, m);
      T.tile.wg.sub(corr, m, mNew);
      T.tile.wg.exp2(corr, corr, { approx: true });
      T.tile.wg.maximum(m, m, mNew);
      T.tile.wg.mul(S, S, C);
      T.tile.wg.sub(S, S, mNew);
      T.tile.wg.exp2(S, S, { approx: true });
      T.tile.wg.sum(rs, S, 1);
      T.tile.wg.fma(l, l, corr, rs);
      T.tile.wg.mul(acc, acc, corr);
      // P = S rounded to float16; the tile cast converts a column pair at a time
      // (cvt.rn.f16x2.f32): a thread's slots 2i and 2i + 1 are adjacent columns of one row, a
      // pair of wgmma's register A operand.
      T.tile.wg.cast(P, S);
      T.ptx.mbarrier.try_wait(vFull.sub(st), ph);
      T.tile.wg.gemm_async(acc, P, blocked(sV.sub(st)), { accum: true });
      T.ptx.wgmma.wait_group(0);
      if (T.floormod(tid, 128) === 0) T.ptx.mbarrier.arrive(vEmpty.sub(st));
    }
    T.tile.wg.reciprocal(rs, l);
    T.tile.wg.mul(acc, acc, rs);
    T.tile.wg.cast(out, acc);
    // O into this consumer's slot (thread t holds rows 16·⌊t / 32⌋ + ⌊(t mod 32) / 4⌋ + 8·i and
    // column pairs 8·n + 2·(t mod 4): the wgmma accumulator layout), then one TMA store.
    const slot = sO.sub(cw);
    const to = T.let_("to", T.floormod(tid, 128));
    const r0 = T.let_("or0", T.floordiv(to, 32) * 16 + T.floordiv(T.floormod(to, 32), 4));
    const c0 = T.let_("oc0", T.floormod(to, 4) * 2);
    const outSlots = out.flat();
    for (const i of T.unroll(2)) {
      for (const n of T.unroll(D / 8)) {
        for (const e of T.vectorized(2)) {
          sO[cw]![T.floordiv(n, 8)]![r0 + i * 8]![T.floormod(n, 8) * 8 + c0 + e] =
            outSlots[n * 4 + i * 2 + e]!;
        }
      }
    }
    T.ptx.fence.proxy_async();
    if (cw === 0) T.cuda.bar_sync(4, 128);
    else T.cuda.bar_sync(5, 128);
    if (T.floormod(tid, 128) === 0) {
      T.tile.copy_async(cols(rows(O, 64).sub(b, qt * 2 + cw, h)), blocked(slot));
      T.ptx.cp.async_.bulk.commit_group();
    }
    if (T.floormod(tid, 128) === 0) T.ptx.cp.async_.bulk.wait_group(0);
  }
});

/**
 * Run this script-mode kernel on `dev` with the check of its builder twin,
 * examples/flash_attention.ts (float64 reference, the bound stated there).
 */
export function runExample(dev: DeviceLike = device()): ExampleResult {
  return check(dev, flash_attention);
}

if (isMain(import.meta.url)) runAsMain("flash_attention (script mode)", runExample);
