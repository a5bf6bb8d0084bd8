// Row softmax: Y[r, :] = softmax(X[r, :]) for a rows × cols float16 matrix, with float32 math.
// The design of bench/cuda/softmax_rows.cu: one CTA of 256 threads (or 128, 512) per row; each thread reads its
// slice of the row as 16-byte vectors (eight halves, T.vectorized) into registers, so the row is
// read once and written once. The row maximum and the sum of exponentials are each a warp
// butterfly (T.cuda.warp_max / warp_sum: shfl.sync.bfly), one partial per warp in shared memory,
// one CTA barrier, and every thread combines the eight partials. exp(x - max) is
// ex2.approx(fma(x, log2 e, -max · log2 e)) (T.exp2 with { approx: true }: CUDA's __expf);
// 1 / sum is a correctly rounded division.
// Run: npx tsx examples/softmax.ts
import {
  T,
  compile,
  device,
  isMain,
  runAsMain,
  tensor,
  type DeviceLike,
  type ExampleResult,
} from "tirx-ts";
import type { PrimFunc } from "@tirx-ts/core";

const LOG2E = Math.fround(Math.LOG2E);

/**
 * The kernel for a rows × cols float16 matrix with `threads` threads per row (a multiple of 32,
 * default 256): cols a multiple of 8 · threads.
 * @throws Error for other sizes.
 */
export function makeSoftmax(rows: number, cols: number, threads = 256): PrimFunc {
  const THREADS = threads;
  const WARPS = THREADS / 32;
  if (THREADS % 32 !== 0 || cols % (8 * THREADS) !== 0) {
    throw new Error(`softmax needs threads % 32 == 0 and cols % (8 · threads) == 0`);
  }
  const vectors = cols / (8 * THREADS);
  const per = 8 * vectors;
  return T.function(
    "softmax",
    { X: T.Tensor([rows, cols], "float16"), Y: T.Tensor([rows, cols], "float16") },
    ({ X, Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: rows, block: THREADS }) });
      const tid = T.cuda.thread_idx("x");
      const lane = T.let_("lane", tid.floormod(32));
      const warp = T.let_("warp", tid.floordiv(32));
      const row = T.cuda.block_idx("x");
      const partMax = T.alloc_shared([WARPS], "float32", { name: "warp_max" });
      const partSum = T.alloc_shared([WARPS], "float32", { name: "warp_sum" });
      const h = T.alloc_local([per], "float16", { name: "h" });
      const f = T.alloc_local([per], "float32", { name: "f" });
      // Vector j of this thread covers columns (j · 256 + tid) · 8 .. + 8.
      for (const j of T.unroll(vectors)) {
        const col = T.let_("col", j.mul(THREADS).add(tid).mul(8));
        for (const e of T.vectorized(8)) h.set([j.mul(8).add(e)], X.get([row, col.add(e)]));
      }
      for (const i of T.unroll(per)) f.set([i], h.get([i]).cast("float32"));

      const m = T.local_scalar("float32", f.get([0]), { name: "m" });
      for (const i of T.unroll(1, per)) m.set(T.max(m, f.get([i])));
      const wm = T.cuda.warp_max(m);
      T.if_(lane.eq(0), () => partMax.set([warp], wm));
      T.cuda.cta_sync();
      m.set(partMax.get([0]));
      for (const w of T.unroll(1, WARPS)) m.set(T.max(m, partMax.get([w])));

      const mb = T.let_("mb", m.mul(LOG2E));
      const s0 = T.local_scalar("float32", 0, { name: "s0" });
      const s1 = T.local_scalar("float32", 0, { name: "s1" });
      for (const i of T.unroll(per / 2)) {
        for (const p of T.unroll(2)) {
          const k = i.mul(2).add(p);
          f.set([k], T.exp2(T.fma(f.get([k]), LOG2E, mb.mul(-1)), { approx: true }));
        }
        s0.set(s0.add(f.get([i.mul(2)])));
        s1.set(s1.add(f.get([i.mul(2).add(1)])));
      }
      const ws = T.cuda.warp_sum(s0.add(s1));
      T.if_(lane.eq(0), () => partSum.set([warp], ws));
      T.cuda.cta_sync();
      const s = T.local_scalar("float32", partSum.get([0]), { name: "s" });
      for (const w of T.unroll(1, WARPS)) s.set(s.add(partSum.get([w])));
      const inv = T.let_("inv", T.float32(1).div(s));

      for (const j of T.unroll(vectors)) {
        const col = T.let_("col_out", j.mul(THREADS).add(tid).mul(8));
        for (const e of T.vectorized(8)) {
          Y.set(
            [row, col.add(e)],
            f
              .get([j.mul(8).add(e)])
              .mul(inv)
              .cast("float16"),
          );
        }
      }
    },
  );
}

/** The example's size. */
export const softmax = makeSoftmax(32, 2048);

/** The benchmark's kernel (bench/compute-kernels.ts). */
export function makeBenchKernel(sizes: { rows: number; cols: number }): { fn: PrimFunc } {
  return { fn: makeSoftmax(sizes.rows, sizes.cols, BENCH_THREADS) };
}

/** Threads per row in the benchmark (the fastest of 128, 256 and 512 on an H200). */
export const BENCH_THREADS = 512;

/**
 * Run at 32 × 2048 on `dev` and compare with a float64 softmax of the same float16 inputs: every
 * output within 2^-10 relative (float16 rounding plus ex2.approx) or 1e-6 absolute.
 * `kernel` (default: this file's) is what runs; examples/script/softmax.ts passes its
 * script-mode twin.
 */
export function runExample(dev: DeviceLike = device(), kernel: PrimFunc = softmax): ExampleResult {
  const [rows, cols] = [32, 2048];
  const run = compile(kernel, { target: "cuda" });
  let seed = 5;
  const rnd = (): number =>
    ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) * 8 - 4;
  const xt = tensor(Float32Array.from({ length: rows * cols }, rnd), {
    shape: [rows, cols],
    dtype: "float16",
    device: dev,
  });
  const y = tensor.zeros([rows, cols], "float16", dev);
  run(xt, y);
  const x = xt.toArray() as Float32Array;
  const got = y.toArray() as Float32Array;
  let good = 0;
  for (let r = 0; r < rows; r++) {
    let mx = -Infinity;
    for (let c = 0; c < cols; c++) mx = Math.max(mx, x[r * cols + c]!);
    let sum = 0;
    for (let c = 0; c < cols; c++) sum += Math.exp(x[r * cols + c]! - mx);
    for (let c = 0; c < cols; c++) {
      const want = Math.exp(x[r * cols + c]! - mx) / sum;
      const g = got[r * cols + c]!;
      if (Math.abs(g - want) <= Math.max(2 ** -10 * want, 1e-6)) good++;
    }
  }
  const bytes = y.toBytes();
  xt.dispose();
  y.dispose();
  return {
    ok: good === rows * cols,
    outputs: [bytes],
    summary: `${good} of ${rows * cols} outputs within 2^-10 relative of a float64 softmax`,
    approximate:
      "exp2 { approx: true } is ex2.approx.ftz.f32, whose bits the simulator does not reproduce (it rounds the exact value)",
  };
}

if (isMain(import.meta.url)) runAsMain("softmax", runExample);
