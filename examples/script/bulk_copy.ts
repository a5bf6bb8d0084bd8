// bulk_copy in script mode (examples/bulk_copy.ts is the builder-mode twin): one bulk copy
// global → shared completing on an mbarrier, then one bulk store per row back to global.
// Run: npx tsx examples/script/bulk_copy.ts (its check is examples/bulk_copy.ts's runExample).
import {
  device,
  isMain,
  runAsMain,
  script as T,
  type Tensor,
  type DeviceLike,
  type ExampleResult,
} from "tirx-ts";
import { runExample as check } from "../bulk_copy.js";

const ROWS = 64;
const COLS = 64;
const TILE_BYTES = ROWS * COLS * 4;

export const bulk_copy = T.prim_func(function bulk_copy(
  A: Tensor<[64, 64], "float32">,
  B: Tensor<[64, 64], "float32">,
) {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
  const tid = T.cuda.thread_idx("x");
  const tile = T.alloc_shared([ROWS, COLS], "float32", { name: "tile" });
  const bar = T.alloc_shared([1], "uint64", { name: "bar" });
  const leader = tid === 0;
  if (leader) {
    T.ptx.mbarrier.init(bar.sub(0), 1);
    T.ptx.fence.mbarrier_init();
  }
  T.cuda.cta_sync();
  const load = T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"];
  if (leader) {
    T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), TILE_BYTES);
    T.cuda.tile.apply(load, tile.rearrange("r c -> (r c)"), A.rearrange("r c -> (r c)"), {
      chunk_bytes: TILE_BYTES,
      mbar: bar.sub(0),
    });
  }
  T.ptx.mbarrier.try_wait(bar.sub(0), 0);
  const store = T.ptx["cp.async.bulk.global.shared::cta.bulk_group"];
  if (leader) {
    // One bulk store per row: 64 repeats of 256 bytes.
    T.cuda.tile.apply(store, B, tile, { chunk_bytes: COLS * 4 });
    T.ptx.cp.async_.bulk.commit_group();
    T.ptx.cp.async_.bulk.wait_group(0);
  }
});

/**
 * Run this script-mode kernel on `dev` with the check of its builder twin, examples/bulk_copy.ts.
 */
export function runExample(dev: DeviceLike = device()): ExampleResult {
  return check(dev, bulk_copy);
}

if (isMain(import.meta.url)) runAsMain("bulk_copy (script mode)", runExample);
