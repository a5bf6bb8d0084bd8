// Vector add of any length: C = A + B for n float32 elements, where n is a scalar argument and the
// tensors' dim. Each thread adds four neighbours with 16-byte loads and stores (T.vectorized);
// the last thread's partial group takes a scalar tail, each element under the guard `i < n`,
// which is also what lets the verifier prove every access in bounds. The grid covers n with
// 256-thread CTAs of 1024 elements (T.ceildiv(n, 1024), evaluated at launch).
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
  type PrimFunc,
} from "tirx-ts";

/** Threads per CTA, and float32 elements per thread (one 16-byte vector). */
const BLOCK = 256;
const VEC = 4;

export const vector_add = T.function(
  "vector_add",
  {
    A: T.Tensor(["n"], "float32"),
    B: T.Tensor(["n"], "float32"),
    C: T.Tensor(["n"], "float32"),
    n: T.int32,
  },
  ({ A, B, C, n }) => {
    T.device_entry({
      launch: T.cuda.LaunchConfig({ grid: [T.ceildiv(n, BLOCK * VEC)], block: BLOCK }),
    });
    const i = T.let_("i", T.cuda.block_idx("x").mul(BLOCK).add(T.cuda.thread_idx("x")).mul(VEC));
    T.if_(
      i.add(VEC - 1).lt(n),
      () => {
        for (const v of T.vectorized(VEC))
          C.set([i.add(v)], A.get([i.add(v)]).add(B.get([i.add(v)])));
      },
      () => {
        for (const v of T.unroll(VEC)) {
          const j = i.add(v);
          T.if_(j.lt(n), () => C.set([j], A.get([j]).add(B.get([j]))));
        }
      },
    );
  },
);

/** The benchmark's kernel (bench/compute-kernels.ts): the same function, n as its scalar. */
export function makeBenchKernel(sizes: { n: number }): {
  fn: typeof vector_add;
  scalars: number[];
  grid: [number, number, number];
} {
  return {
    fn: vector_add,
    scalars: [sizes.n],
    grid: [Math.ceil(sizes.n / (BLOCK * VEC)), 1, 1],
  };
}

/**
 * Run on `dev` with `n` elements and check C against a CPU sum (float32, exact).
 * `kernel` (default: this file's) is what runs; examples/script/vector_add.ts passes its
 * script-mode twin.
 */
export function runExample(
  dev: DeviceLike = device(),
  n = 1003,
  kernel: PrimFunc = vector_add,
): ExampleResult {
  const run = compile(kernel, { target: "cuda" });
  const x = Float32Array.from({ length: n }, (_, i) => ((i * 37) % 1001) / 8 - 60);
  const y = Float32Array.from({ length: n }, (_, i) => ((i * 91) % 777) / 4);
  const want = Float32Array.from({ length: n }, (_, i) => x[i]! + y[i]!);
  const a = tensor(x, { shape: [n], dtype: "float32", device: dev });
  const b = tensor(y, { shape: [n], dtype: "float32", device: dev });
  const c = tensor.zeros([n], "float32", dev);
  run(a, b, c, n);
  return checkOutput(c, want, [a, b]);
}

if (isMain(import.meta.url)) runAsMain("vector_add", runExample);
