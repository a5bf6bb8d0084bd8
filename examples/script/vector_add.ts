// vector_add in script mode (examples/vector_add.ts is the builder-mode twin): C = A + B over n
// float32, four per thread, with vector loads where the whole vector is in bounds.
// Run: npx tsx examples/script/vector_add.ts (its check is examples/vector_add.ts's runExample).
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
import { runExample as check } from "../vector_add.js";

const BLOCK = 256;
const VEC = 4;

export const vector_add = T.prim_func(function vector_add(
  A: Tensor<["n"], "float32">,
  B: Tensor<["n"], "float32">,
  C: Tensor<["n"], "float32">,
  n: int32,
) {
  T.device_entry({
    launch: T.cuda.LaunchConfig({ grid: [T.ceildiv(n, BLOCK * VEC)], block: BLOCK }),
  });
  const i = T.let_("i", (T.cuda.block_idx("x") * BLOCK + T.cuda.thread_idx("x")) * VEC);
  if (i + (VEC - 1) < n) {
    for (const v of T.vectorized(VEC)) C[i + v] = A[i + v]! + B[i + v]!;
  } else {
    for (const v of T.unroll(VEC)) {
      const j = i + v;
      if (j < n) C[j] = A[j]! + B[j]!;
    }
  }
});

/**
 * Run this script-mode kernel on `dev` with the check of its builder twin, examples/vector_add.ts.
 */
export function runExample(dev: DeviceLike = device()): ExampleResult {
  return check(dev, undefined, vector_add);
}

if (isMain(import.meta.url)) runAsMain("vector_add (script mode)", runExample);
