// gemm_mma with the tile layer in script mode (examples/tile/gemm_mma.ts is the builder-mode
// twin, at its example size 128 × 128 × 64, 3 stages): C = A · B, float16 inputs, float32
// accumulation. T.tile.cta.copy_async fills swizzled shared K-tiles with cp.async;
// T.tile.warp.copy loads mma.sync fragment tiles by ldmatrix (.trans for the row-major B);
// T.tile.warp.gemm issues mma.sync.m16n8k16; T.tile.warp.copy stores the accumulators.
// Run: npx tsx examples/script/tile/gemm_mma.ts (its check is examples/tile/gemm_mma.ts's
// runExample: bit for bit against examples/gemm_mma.ts).
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
import { runExample as check } from "../../tile/gemm_mma.js";

const M = 128;
const N = 128;
const K = 64;
const BM = 128;
const BN = 128;
const BK = 32;
const THREADS = 256;
const WM = 64;
const WN = 32;
const STAGES = 3;
const K_TILES = K / BK;

export const gemm_mma = T.prim_func(function gemm_mma(
  A: Tensor<[128, 64], "float16">,
  B: Tensor<[64, 128], "float16">,
  C: Tensor<[128, 128], "float32">,
) {
  T.device_entry({
    launch: T.cuda.LaunchConfig({ grid: [N / BN, M / BM], block: THREADS, min_ctas_per_sm: 2 }),
  });
  const warp = T.let_("warp", T.floordiv(T.cuda.thread_idx("x"), 32));
  const by = T.cuda.block_idx("y");
  const bx = T.cuda.block_idx("x");
  const As = T.alloc_shared([STAGES, BM, BK], "float16", {
    name: "As",
    layout: T.SwizzleLayout(3, 2, 3),
  });
  const Bs = T.alloc_shared([STAGES, BK, BN], "float16", {
    name: "Bs",
    layout: T.SwizzleLayout(3, 3, 4),
  });
  const acc = T.alloc_local([WM, WN], "float32", {
    name: "acc",
    layout: T.layout.mma_sync_tile_layout("C", "m16n8k16", "float32", WM, WN),
  });
  const a = T.alloc_local([WM, 16], "float16", {
    name: "a",
    layout: T.layout.mma_sync_tile_layout("A", "m16n8k16", "float16", WM, 16),
  });
  const b = T.alloc_local([16, WN], "float16", {
    name: "b",
    layout: T.layout.mma_sync_tile_layout("B", "m16n8k16", "float16", 16, WN),
  });
  // x (rows × cols) as a grid of r × c tiles: tiles(x, r, c).sub(i, j) is tile (i, j).
  const tiles = (x: Tile, r: number, c: number): Tile =>
    x.rearrange("(i r) (j c) -> i j r c", { r, c });
  const copyTile = (kt: int32, stage: int32): void => {
    T.tile.cta.copy_async(As.sub(stage), tiles(A, BM, BK).sub(by, kt));
    T.tile.cta.copy_async(Bs.sub(stage), tiles(B, BK, BN).sub(kt, bx));
  };
  T.tile.warp.zero(acc);
  copyTile(0, 0);
  T.ptx.cp.async_.commit_group();
  copyTile(1, 1);
  T.ptx.cp.async_.commit_group();
  for (const kt of T.range(K_TILES)) {
    T.ptx.cp.async_.wait_group(STAGES - 2);
    T.cuda.cta_sync();
    const next = T.let_("next", kt + (STAGES - 1));
    if (next < K_TILES) copyTile(next, T.floormod(next, STAGES));
    T.ptx.cp.async_.commit_group();
    const s = T.let_("s", T.floormod(kt, STAGES));
    for (const kk of T.unroll(BK / 16)) {
      T.tile.warp.copy(a, tiles(As.sub(s), WM, 16).sub(T.floordiv(warp, BN / WN), kk));
      T.tile.warp.copy(b, tiles(Bs.sub(s), 16, WN).sub(kk, T.floormod(warp, BN / WN)));
      T.tile.warp.gemm(acc, a, b);
    }
  }
  const wi = by * (BM / WM) + T.floordiv(warp, BN / WN);
  T.tile.warp.copy(tiles(C, WM, WN).sub(wi, bx * (BN / WN) + T.floormod(warp, BN / WN)), acc);
});

/**
 * Run this script-mode kernel on `dev` with the check of its builder twin,
 * examples/tile/gemm_mma.ts (bit for bit against examples/gemm_mma.ts).
 */
export function runExample(dev: DeviceLike = device()): ExampleResult {
  return check(dev, gemm_mma);
}

if (isMain(import.meta.url)) runAsMain("gemm_mma (script mode)", runExample);
