// bulk_pipeline in script mode (examples/bulk_pipeline.ts is the builder-mode twin, at its
// example size: 4 MiB through 32 CTAs × 3 stages of 8 KiB): bulk loads completing on mbarriers,
// bulk stores, and a stage refilled once the store that read it is done.
// Run: npx tsx examples/script/bulk_pipeline.ts (its check is examples/bulk_pipeline.ts's runExample).
import {
  device,
  isMain,
  runAsMain,
  script as T,
  type Tensor,
  type int32,
  type DeviceLike,
  type ExampleResult,
} from "tirx-ts";
import { runExample as check } from "../bulk_pipeline.js";

const TILE_BYTES = 8192;
const STAGES = 3;
const GRID = 32;
const TILE_ELEMS = TILE_BYTES / 4;
const TILES = (1 << 20) / TILE_ELEMS;
const PER_CTA = TILES / GRID;

export const bulk_pipeline = T.prim_func(function bulk_pipeline(
  A: Tensor<[512, 2048], "float32">,
  B: Tensor<[512, 2048], "float32">,
) {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: GRID, block: 32 }) });
  const tid = T.cuda.thread_idx("x");
  const cta = T.cuda.block_idx("x");
  const buf = T.alloc_shared([STAGES, TILE_ELEMS], "float32", { name: "buf" });
  const bars = T.alloc_shared([STAGES], "uint64", { name: "bars" });
  const load = T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"];
  const store = T.ptx["cp.async.bulk.global.shared::cta.bulk_group"];
  // Tile k of this CTA is row cta + k * GRID of A and B.
  const loadTile = (k: int32, s: int32): void => {
    T.ptx.mbarrier.arrive.expect_tx(bars.sub(s), TILE_BYTES);
    T.cuda.tile.apply(load, buf.sub(s, ":"), A.sub(cta + k * GRID, ":"), {
      chunk_bytes: TILE_BYTES,
      mbar: bars.sub(s),
    });
  };
  if (tid === 0) {
    for (const s of T.range(STAGES)) T.ptx.mbarrier.init(bars.sub(s), 1);
    T.ptx.fence.mbarrier_init();
    for (const k of T.range(Math.min(STAGES, PER_CTA))) loadTile(k, k);
    for (const k of T.range(PER_CTA)) {
      const s = T.let_("stage", T.floormod(k, STAGES));
      T.ptx.mbarrier.try_wait(bars.sub(s), T.floormod(T.floordiv(k, STAGES), 2));
      T.cuda.tile.apply(store, B.sub(cta + k * GRID, ":"), buf.sub(s, ":"), {
        chunk_bytes: TILE_BYTES,
      });
      T.ptx.cp.async_.bulk.commit_group();
      // Refill the stage of tile k - 1 once its store has read it (all but the newest group).
      const refill = k >= 1 && k + (STAGES - 1) < PER_CTA;
      if (refill) {
        T.ptx.cp.async_.bulk.wait_group_read(1);
        loadTile(k + (STAGES - 1), T.floormod(k + (STAGES - 1), STAGES));
      }
    }
    T.ptx.cp.async_.bulk.wait_group(0);
  }
});

/**
 * Run this script-mode kernel on `dev` with the check of its builder twin, examples/bulk_pipeline.ts.
 */
export function runExample(dev: DeviceLike = device()): ExampleResult {
  return check(dev, undefined, bulk_pipeline);
}

if (isMain(import.meta.url)) runAsMain("bulk_pipeline (script mode)", runExample);
