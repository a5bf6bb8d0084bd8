// The seed's copy_async kernel in script mode (examples/copy_async.ts is the builder-mode twin):
// the function below is never run; T.prim_func parses its source and builds the same IR.
// Run: npx tsx examples/script/copy_async.ts (its check is examples/copy_async.ts's runExample).
// Build: npx tirx build examples/script/copy_async.ts
import {
  device,
  isMain,
  runAsMain,
  script as T,
  type Tensor,
  type DeviceLike,
  type ExampleResult,
} from "tirx-ts";
import { runExample as check } from "../copy_async.js";

export const copy_async = T.prim_func(function copy_async(
  A: Tensor<[128, 32], "float16">,
  B: Tensor<[128, 32], "float16">,
) {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
  const tid = T.cuda.thread_idx("x");
  const shared = T.alloc_shared([128, 32], "float16", { layout: "default", name: "shared" });
  const src = A.rearrange("(w t) (r v) -> w t r v", { w: 4, t: 32, v: 8 });
  const dst = shared.rearrange("(w t) (r v) -> w t r v", { w: 4, t: 32, v: 8 });
  T.cuda.tile.apply(T.ptx["cp.async.cg.shared.global"], dst, src, {
    chunk_bytes: 16,
    scope: "cta",
  });
  T.ptx.cp.async_.commit_group();
  T.ptx.cp.async_.wait_group(0);
  T.cuda.cta_sync();
  for (let j = 0; j < 32; j++) B[tid]![j] = shared[tid]![j]!;
});

/**
 * Run this script-mode kernel on `dev` with the check of its builder twin, examples/copy_async.ts.
 */
export function runExample(dev: DeviceLike = device()): ExampleResult {
  return check(dev, copy_async);
}

if (isMain(import.meta.url)) runAsMain("copy_async (script mode)", runExample);
