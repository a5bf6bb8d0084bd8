// Vector add of any length: C = A + B for n float32 elements, where n is a scalar argument and the
// tensors' dim. The grid covers n with 256-thread CTAs (T.ceildiv(n, 256), evaluated at launch);
// the last CTA's threads past the end are masked by the tail guard `i < n`, which is also what
// lets the verifier prove every access in bounds.
// Run: npx tsx examples/vector_add.ts
import {
  T,
  checkOutput,
  compile,
  device,
  isMain,
  runAsMain,
  tensor,
  type DeviceLike,
  type ExampleResult,
} from "tirx-ts";

export const vector_add = T.function(
  "vector_add",
  {
    n: T.int32,
    A: T.Tensor(["n"], "float32"),
    B: T.Tensor(["n"], "float32"),
    C: T.Tensor(["n"], "float32"),
  },
  ({ n, A, B, C }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [T.ceildiv(n, 256)], block: 256 }) });
    const i = T.cuda.block_idx("x").mul(256).add(T.cuda.thread_idx("x"));
    T.if_(i.lt(n), () => C.set([i], A.get([i]).add(B.get([i]))));
  },
);

/** Run on `dev` with `n` elements and check C against a CPU sum (float32, exact). */
export function runExample(dev: DeviceLike = device(), n = 1000): ExampleResult {
  const run = compile(vector_add, { target: "cuda" });
  const x = Float32Array.from({ length: n }, (_, i) => ((i * 37) % 1001) / 8 - 60);
  const y = Float32Array.from({ length: n }, (_, i) => ((i * 91) % 777) / 4);
  const want = Float32Array.from({ length: n }, (_, i) => x[i]! + y[i]!);
  const a = tensor(x, { shape: [n], dtype: "float32", device: dev });
  const b = tensor(y, { shape: [n], dtype: "float32", device: dev });
  const c = tensor.zeros([n], "float32", dev);
  run(n, a, b, c);
  return checkOutput(c, want, [a, b]);
}

if (isMain(import.meta.url)) runAsMain("vector_add", runExample);
