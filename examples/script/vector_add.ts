// vector_add in script mode (examples/vector_add.ts is the builder-mode twin): C = A + B over n
// float32, four per thread, with vector loads where the whole vector is in bounds.
import { script as T, type Tensor, type int32 } from "tirx-ts";

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
    for (const v of T.vectorized(VEC)) C[i + v] = A[i + v] + B[i + v];
  } else {
    for (const v of T.unroll(VEC)) {
      const j = i + v;
      if (j < n) C[j] = A[j] + B[j];
    }
  }
});
