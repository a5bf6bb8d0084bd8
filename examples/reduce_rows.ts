// Row sums: Y[r] = X[r, 0] + ... + X[r, cols - 1] for a rows × cols float32 matrix. One warp per
// row: each lane reads 16-byte vectors (four in flight per step, T.vectorized into a register
// array), adds them into a register, and the warp combines its 32 partial sums with a butterfly
// of shfl.sync.bfly (T.cuda.warp_sum). Eight warps (256 threads) per CTA, rows / 8 CTAs.
// Run: npx tsx examples/reduce_rows.ts
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

const WARPS = 8;
/** float32 per 16-byte vector, and vectors in flight per lane per step. */
const VEC = 4;
const UNROLL = 4;
/** Columns one warp covers per step. */
const STEP = 32 * VEC * UNROLL;

/**
 * The kernel for a rows × cols float32 matrix: rows a multiple of 8, cols a multiple of 512.
 * @throws Error for other sizes.
 */
export function makeReduceRows(rows: number, cols: number): PrimFunc {
  if (rows % WARPS !== 0 || cols % STEP !== 0) {
    throw new Error(`reduce_rows needs rows % ${WARPS} == 0 and cols % ${STEP} == 0`);
  }
  return T.function(
    "reduce_rows",
    { X: T.Tensor([rows, cols], "float32"), Y: T.Tensor([rows], "float32") },
    ({ X, Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: rows / WARPS, block: 32 * WARPS }) });
      const tid = T.cuda.thread_idx("x");
      const lane = T.let_("lane", tid.floormod(32));
      const row = T.let_("row", T.cuda.block_idx("x").mul(WARPS).add(tid.floordiv(32)));
      const x = T.alloc_local([UNROLL * VEC], "float32");
      const acc = T.local_scalar("float32", 0, { name: "acc" });
      for (const step of T.range(cols / STEP)) {
        for (const u of T.unroll(UNROLL)) {
          const col = T.let_(
            "col",
            step
              .mul(STEP)
              .add(u.mul(32 * VEC))
              .add(lane.mul(VEC)),
          );
          for (const v of T.vectorized(VEC)) x.set([u.mul(VEC).add(v)], X.get([row, col.add(v)]));
        }
        for (const k of T.unroll(UNROLL * VEC)) acc.set(acc.add(x.get([k])));
      }
      const total = T.cuda.warp_sum(acc);
      T.if_(lane.eq(0), () => Y.set([row], total));
    },
  );
}

/** The example's size (any multiple of 8 × 512 works). */
export const reduce_rows = makeReduceRows(64, 1024);

/** The benchmark's kernel (bench/compute-kernels.ts). */
export function makeBenchKernel(sizes: { rows: number; cols: number }): { fn: PrimFunc } {
  return { fn: makeReduceRows(sizes.rows, sizes.cols) };
}

/**
 * Run on `dev` and compare with float64 row sums (relative to the sum of |x|: float32 rounding).
 * `kernel` (default: this file's) is what runs; examples/script/reduce_rows.ts passes its
 * script-mode twin.
 */
export function runExample(
  dev: DeviceLike = device(),
  kernel: PrimFunc = reduce_rows,
): ExampleResult {
  const rows = 64;
  const cols = 1024;
  const run = compile(kernel, { target: "cuda" });
  let seed = 7;
  const rnd = (): number =>
    ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  const x = Float32Array.from({ length: rows * cols }, rnd);
  const a = tensor(x, { shape: [rows, cols], dtype: "float32", device: dev });
  const y = tensor.zeros([rows], "float32", dev);
  run(a, y);
  const got = y.toArray() as Float32Array;
  let good = 0;
  for (let r = 0; r < rows; r++) {
    let s = 0;
    let mag = 0;
    for (let c = 0; c < cols; c++) {
      s += x[r * cols + c]!;
      mag += Math.abs(x[r * cols + c]!);
    }
    if (Math.abs(got[r]! - s) <= 1e-6 * mag) good++;
  }
  const bytes = y.toBytes();
  a.dispose();
  y.dispose();
  return {
    ok: good === rows,
    outputs: [bytes],
    summary: `${good} of ${rows} row sums within 1e-6 · sum|x| of the float64 sums`,
  };
}

if (isMain(import.meta.url)) runAsMain("reduce_rows", runExample);
