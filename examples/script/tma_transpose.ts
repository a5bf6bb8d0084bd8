// tma_transpose in script mode (examples/tma_transpose.ts is the builder-mode twin): B = Aᵀ
// through a TMA load into a 128B-swizzled tile, a shared transpose and a TMA tensor store.
// Run: npx tsx examples/script/tma_transpose.ts (its check is examples/tma_transpose.ts's runExample).
import {
  device,
  isMain,
  runAsMain,
  script as T,
  type Tensor,
  type DeviceLike,
  type ExampleResult,
} from "tirx-ts";
import { runExample as check } from "../tma_transpose.js";

const ROWS = 96;
const COLS = 200;
const TILE = 32;

export const tma_transpose = T.prim_func(function tma_transpose(
  A: Tensor<[96, 200], "float32">,
  B: Tensor<[200, 96], "float32">,
) {
  T.device_entry({
    launch: T.cuda.LaunchConfig({
      grid: [Math.ceil(COLS / TILE), Math.ceil(ROWS / TILE)],
      block: 256,
    }),
  });
  const tid = T.cuda.thread_idx("x");
  const bx = T.cuda.block_idx("x");
  const by = T.cuda.block_idx("y");
  const mapA = T.tensormap_encode_tiled(A, { box: [TILE, TILE], swizzle: "128B" });
  const mapB = T.tensormap_encode_tiled(B, { box: [TILE, TILE] });
  const tileA = T.alloc_shared([TILE, TILE], "float32", {
    name: "tileA",
    layout: T.swizzle_mode("128B"),
  });
  const tileB = T.alloc_shared([TILE, TILE], "float32", { name: "tileB", align: 128 });
  const bar = T.alloc_shared([1], "uint64", { name: "bar" });
  const leader = tid === 0;
  if (leader) {
    T.ptx.mbarrier.init(bar.sub(0), 1);
    T.ptx.fence.mbarrier_init();
  }
  T.cuda.cta_sync();
  if (leader) {
    T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), TILE * TILE * 4);
    T.cuda.tile.apply(
      T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"],
      tileA,
      A,
      { tensor_map: mapA, coords: [by * TILE, bx * TILE], mbar: bar.sub(0) },
    );
  }
  T.ptx.mbarrier.try_wait(bar.sub(0), 0);
  for (const k of T.range((TILE * TILE) / 256)) {
    const e = k * 256 + tid;
    const i = T.floordiv(e, TILE);
    const j = T.floormod(e, TILE);
    tileB[i]![j] = tileA[j]![i]!;
  }
  T.ptx.fence.proxy_async();
  T.cuda.cta_sync();
  if (leader) {
    T.cuda.tile.apply(
      T.ptx["cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"],
      B,
      tileB,
      { tensor_map: mapB, coords: [bx * TILE, by * TILE] },
    );
    T.ptx.cp.async_.bulk.commit_group();
    T.ptx.cp.async_.bulk.wait_group(0);
  }
});

/**
 * Run this script-mode kernel on `dev` with the check of its builder twin, examples/tma_transpose.ts.
 */
export function runExample(dev: DeviceLike = device()): ExampleResult {
  return check(dev, tma_transpose);
}

if (isMain(import.meta.url)) runAsMain("tma_transpose (script mode)", runExample);
