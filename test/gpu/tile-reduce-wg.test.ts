// T.tile.wg.sum / max / min across a warpgroup's warps (shared scratch per warpgroup and its named
// barrier bar.sync 1 + wgid, 128) on the GPU and on the simulated device: two warpgroups reduce
// different integer-valued data, once and in a loop; both must equal the exact host results.
// Skipped, with the reason printed, where no CUDA driver loads.
import { describe, expect, it } from "vitest";
import { compile, cuda, cudaAvailable, sim, tensor } from "tirx-ts";
import { COLS, ints, ROWS, wgReduce, wgReduceReference } from "../util/wg-reduce-kernels.js";

const probe = cudaAvailable();
if (!probe.ok) console.log(`test/gpu/tile-reduce-wg: skipped, no CUDA driver (${probe.reason})`);

function runOn(dev: ReturnType<typeof sim> | ReturnType<typeof cuda>, iters: number): number[] {
  const fn = wgReduce(`gpu_wg_reduce_${iters}`, iters, -1);
  const x = ints(iters * 2 * ROWS * COLS, 7 + iters);
  const X = tensor(x, { shape: [iters, 2, ROWS, COLS], dtype: "float32", device: dev });
  const R = tensor.zeros([iters, 2, 3, ROWS], "float32", dev);
  compile(fn, { target: "cuda" })(X, R);
  const out = Array.from(R.toArray() as Float32Array);
  X.dispose();
  R.dispose();
  return out;
}

describe.skipIf(!probe.ok)("wg reductions with named barriers: GPU, simulator, exact", () => {
  it.each([1, 4])("%i round(s)", (iters) => {
    const want = wgReduceReference(ints(iters * 2 * ROWS * COLS, 7 + iters), iters);
    expect(runOn(cuda(0), iters)).toEqual(want);
    expect(runOn(sim(), iters)).toEqual(want);
  });
});
