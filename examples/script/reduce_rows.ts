// reduce_rows in script mode (examples/reduce_rows.ts is the builder-mode twin, at its example
// size 64 × 1024): one warp per row, vector loads into registers, a running sum in a local
// scalar, then a warp-wide sum.
// Run: npx tsx examples/script/reduce_rows.ts (its check is examples/reduce_rows.ts's runExample).
import {
  device,
  isMain,
  runAsMain,
  script as T,
  type Tensor,
  type DeviceLike,
  type ExampleResult,
} from "tirx-ts";
import { runExample as check } from "../reduce_rows.js";

const ROWS = 64;
const COLS = 1024;
const WARPS = 8;
const VEC = 4;
const UNROLL = 4;
const STEP = 32 * VEC * UNROLL;

export const reduce_rows = T.prim_func(function reduce_rows(
  X: Tensor<[64, 1024], "float32">,
  Y: Tensor<[64], "float32">,
) {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: ROWS / WARPS, block: 32 * WARPS }) });
  const tid = T.cuda.thread_idx("x");
  const lane = T.let_("lane", T.floormod(tid, 32));
  const row = T.let_("row", T.cuda.block_idx("x") * WARPS + T.floordiv(tid, 32));
  const x = T.alloc_local([UNROLL * VEC], "float32");
  let acc = T.local_scalar("float32", 0, { name: "acc" });
  for (const step of T.range(COLS / STEP)) {
    for (const u of T.unroll(UNROLL)) {
      const col = T.let_("col", step * STEP + u * (32 * VEC) + lane * VEC);
      for (const v of T.vectorized(VEC)) x[u * VEC + v] = X[row]![col + v]!;
    }
    for (const k of T.unroll(UNROLL * VEC)) acc += x[k]!;
  }
  const total = T.cuda.warp_sum(acc);
  if (lane === 0) Y[row] = total;
});

/**
 * Run this script-mode kernel on `dev` with the check of its builder twin, examples/reduce_rows.ts.
 */
export function runExample(dev: DeviceLike = device()): ExampleResult {
  return check(dev, reduce_rows);
}

if (isMain(import.meta.url)) runAsMain("reduce_rows (script mode)", runExample);
