// zero_fill_rows in script mode (examples/zero_fill_rows.ts is the builder-mode twin): rows at or
// past valid_rows are zero-filled by cp.async's src-size operand instead of being read.
// Run: npx tsx examples/script/zero_fill_rows.ts (its check is examples/zero_fill_rows.ts's runExample).
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
import { runExample as check } from "../zero_fill_rows.js";

const ROWS = 64;

export const zero_fill_rows = T.prim_func(function zero_fill_rows(
  A: Tensor<[64, 16], "uint8">,
  B: Tensor<[64, 16], "uint8">,
  valid_rows: int32,
) {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: ROWS }) });
  const tid = T.cuda.thread_idx("x");
  const shared = T.alloc_shared([ROWS, 16], "uint8", { name: "shared" });
  T.cuda.tile.apply(
    T.ptx["cp.async.cg.shared.global.L2::128B"],
    shared.sub(tid, ":"),
    A.sub(tid, ":"),
    { chunk_bytes: 16, src_size: tid < valid_rows ? T.uint32(16) : T.uint32(0) },
  );
  T.ptx.cp.async_.commit_group();
  T.ptx.cp.async_.wait_group(0);
  // Each thread reads back only its own row: its wait_group made it visible to itself.
  for (const j of T.range(16)) B[tid]![j] = shared[tid]![j]!;
});

/**
 * Run this script-mode kernel on `dev` with the check of its builder twin, examples/zero_fill_rows.ts.
 */
export function runExample(dev: DeviceLike = device()): ExampleResult {
  return check(dev, undefined, zero_fill_rows);
}

if (isMain(import.meta.url)) runAsMain("zero_fill_rows (script mode)", runExample);
