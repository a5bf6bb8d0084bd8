// softmax with the tile layer in script mode (examples/tile/softmax.ts is the builder-mode twin,
// at its example size 32 × 2048 with 256 threads): one CTA per float16 row held in a register
// tile whose TileLayout gives each thread 8-element vectors; T.tile.cta primitives do the
// vector loads, the warp butterflies, the per-warp partials in shared memory and ex2.approx.
// Run: npx tsx examples/script/tile/softmax.ts (its check is examples/tile/softmax.ts's runExample).
import {
  device,
  isMain,
  runAsMain,
  script as T,
  type Tensor,
  type DeviceLike,
  type ExampleResult,
} from "tirx-ts";
import { runExample as check } from "../../tile/softmax.js";

const LOG2E = Math.fround(Math.LOG2E);
const ROWS = 32;
const THREADS = 256;

export const softmax = T.prim_func(function softmax(
  X: Tensor<[32, 2048], "float16">,
  Y: Tensor<[32, 2048], "float16">,
) {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: ROWS, block: THREADS }) });
  const row = T.cuda.block_idx("x");
  const h = T.alloc_local([2048], "float16", {
    layout: T.TileLayout("S[(1, 256, 8) : (8, 1@tid, 1)]"),
  });
  const f = T.alloc_local([2048], "float32", {
    layout: T.TileLayout("S[(1, 256, 8) : (8, 1@tid, 1)]"),
  });
  const mx = T.alloc_local([1], "float32", { layout: T.TileLayout("S[1] + R[256 : 1@tid]") });
  const sum = T.alloc_local([1], "float32", { layout: T.TileLayout("S[1] + R[256 : 1@tid]") });
  T.tile.cta.copy(h, X.sub(row));
  T.tile.cta.cast(f, h);
  T.tile.cta.max(mx, f, 0);
  const nb = T.let_("nb", mx[0]! * LOG2E * -1);
  T.tile.cta.fma(f, f, LOG2E, nb);
  T.tile.cta.exp2(f, f, { approx: true });
  T.tile.cta.sum(sum, f, 0);
  T.tile.cta.mul(f, f, T.float32(1) / sum[0]!);
  T.tile.cta.cast(h, f);
  T.tile.cta.copy(Y.sub(row), h);
});

/**
 * Run this script-mode kernel on `dev` with the check of its builder twin,
 * examples/tile/softmax.ts (bit for bit against examples/softmax.ts).
 */
export function runExample(dev: DeviceLike = device()): ExampleResult {
  return check(dev, softmax);
}

if (isMain(import.meta.url)) runAsMain("softmax (script mode)", runExample);
