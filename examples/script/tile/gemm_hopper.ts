// gemm_hopper with the tile layer in script mode (examples/tile/gemm_hopper.ts is the
// builder-mode twin, at its example size 256 × 256 × 128 on one CTA): C = A · Bᵀ, float16 in
// and out, float32 accumulation. One producer thread arms a stage's mbarrier and
// T.tile.copy_async issues the TMA loads of A's and B's K-tiles (tensor maps planned from the
// views, 128B swizzle); two consumer warpgroups run T.tile.wg.gemm_async (four
// wgmma.mma_async.m64n256k16 per K-tile, descriptors from the swizzled views), wait, free the
// stage, and store their 64 × 256 rows with T.tile.wg.cast and T.tile.wg.copy.
// Run: npx tsx examples/script/tile/gemm_hopper.ts (its check is examples/gemm_hopper.ts's).
import {
  device,
  isMain,
  runAsMain,
  script as T,
  type Tensor,
  type Tile,
  type int32,
  type DeviceLike,
  type ExampleResult,
} from "tirx-ts";
import { runExample as check } from "../../tile/gemm_hopper.js";

const BM = 128;
const BN = 256;
const BK = 64;
const STAGES = 4;
const GROUP = 8;
const M_TILES = 2;
const UNITS = 2;
const CTAS = 1;
const TURNS = 2;
const K_TILES = 2;
const STAGE_BYTES = (BM + BN) * BK * 2;
const SMEM = STAGES * STAGE_BYTES;

export const gemm_hopper = T.prim_func(function gemm_hopper(
  A: Tensor<[256, 128], "float16">,
  B: Tensor<[256, 128], "float16">,
  C: Tensor<[256, 256], "float16">,
) {
  T.device_entry({
    launch: T.cuda.LaunchConfig({ grid: CTAS, block: 384, dynamic_shared_bytes: SMEM }),
  });
  const tid = T.cuda.thread_idx("x");
  const wg = T.let_("wg", T.floordiv(tid, 128));
  const sA = T.alloc_shared([STAGES, BM, BK], "float16", {
    name: "sA",
    align: 1024,
    layout: T.swizzle_mode("128B"),
    dynamic: true,
  });
  const sB = T.alloc_shared([STAGES, BN, BK], "float16", {
    name: "sB",
    align: 1024,
    layout: T.swizzle_mode("128B"),
    dynamic: true,
  });
  const full = T.alloc_shared([STAGES], "uint64", { name: "full" });
  const empty = T.alloc_shared([STAGES], "uint64", { name: "empty" });
  if (tid === 0) {
    for (const st of T.unroll(STAGES)) {
      T.ptx.mbarrier.init(full.sub(st), 1);
      T.ptx.mbarrier.init(empty.sub(st), 2);
    }
    T.ptx.fence.mbarrier_init();
  }
  T.cuda.cta_sync();
  // x (rows × cols) as a grid of r × c tiles: tiles(x, r, c).sub(i, j) is tile (i, j).
  const tiles = (x: Tile, r: number, c: number): Tile =>
    x.rearrange("(i r) (j c) -> i j r c", { r, c });
  // Work unit u in the grouped order (GROUP tile rows at a time) → its tile row and column.
  const rowsOf = (u: int32): int32 => T.min(T.int32(M_TILES) - T.floordiv(u, GROUP) * GROUP, GROUP);
  const mtOf = (u: int32): int32 =>
    T.floordiv(u, GROUP) * GROUP + T.floormod(T.floormod(u, GROUP), rowsOf(u));
  const ntOf = (u: int32): int32 => T.floordiv(T.floormod(u, GROUP), rowsOf(u));
  // K-tile kt of turn `turn` is the ring's iteration i: stage i mod STAGES, phase ⌊i / STAGES⌋ mod 2.
  const phase = (i: int32): int32 => T.floormod(T.floordiv(i, STAGES), 2);
  if (wg === 0) {
    T.ptx.setmaxnreg(false, 40);
    if (tid === 0) {
      for (let turn = 0; turn < TURNS; turn++) {
        const u = T.let_("u", T.cuda.block_idx("x") + turn * CTAS);
        if (u < UNITS) {
          for (let kt = 0; kt < K_TILES; kt++) {
            const st = T.let_("st", T.floormod(turn * K_TILES + kt, STAGES));
            T.ptx.mbarrier.try_wait(empty.sub(st), T.int32(1) - phase(turn * K_TILES + kt));
            T.ptx.mbarrier.arrive.expect_tx(full.sub(st), STAGE_BYTES);
            const bar = full.sub(st);
            T.tile.copy_async(sA.sub(st), tiles(A, BM, BK).sub(mtOf(u), kt), { mbar: bar });
            T.tile.copy_async(sB.sub(st), tiles(B, BN, BK).sub(ntOf(u), kt), { mbar: bar });
          }
        }
      }
    }
  } else {
    T.ptx.setmaxnreg(true, 232);
    const cw = T.let_("cw", T.floormod(wg + 1, 2));
    const D = T.layout.wgmma_tile_layout("D", 64, BN, "float32");
    const acc = T.alloc_local([64, BN], "float32", { name: "acc", layout: D });
    const out = T.alloc_local([64, BN], "float16", { name: "out", layout: D });
    for (let turn = 0; turn < TURNS; turn++) {
      const u = T.let_("u", T.cuda.block_idx("x") + turn * CTAS);
      if (u < UNITS) {
        T.tile.wg.zero(acc);
        for (let kt = 0; kt < K_TILES; kt++) {
          const st = T.let_("st", T.floormod(turn * K_TILES + kt, STAGES));
          T.ptx.mbarrier.try_wait(full.sub(st), phase(turn * K_TILES + kt));
          const rowsA = sA.sub(st).rearrange("(w r) c -> w r c", { r: 64 }).sub(cw);
          T.tile.wg.gemm_async(acc, rowsA, sB.sub(st), { transB: true });
          T.ptx.wgmma.wait_group(0);
          if (T.floormod(tid, 128) === 0) T.ptx.mbarrier.arrive(empty.sub(st));
        }
        T.tile.wg.cast(out, acc);
        T.tile.wg.copy(tiles(C, 64, BN).sub(mtOf(u) * 2 + cw, ntOf(u)), out);
      }
    }
  }
});

/**
 * Run this script-mode kernel on `dev` with the check of its builder twin,
 * examples/tile/gemm_hopper.ts (examples/gemm_hopper.ts's bound against float64).
 */
export function runExample(dev: DeviceLike = device()): ExampleResult {
  return check(dev, gemm_hopper);
}

if (isMain(import.meta.url)) runAsMain("gemm_hopper (script mode)", runExample);
