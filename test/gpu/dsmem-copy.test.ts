// The shared::cta → shared::cluster bulk copy on a GPU: the ring kernels of test/kernels/dsmem.ts
// (each CTA of a cluster copies its shared tile into the next CTA's, completing on that CTA's
// mbarrier) must give the simulator's output (which checks the kernel is clean) and the JS
// model's, bit for bit. Skipped (with the reason printed) where no CUDA driver loads.
import { describe, expect, it } from "vitest";
import { verify } from "@tirx-ts/core";
import { cuda, cudaAvailable, cudaTensor, cudaZeros } from "@tirx-ts/runtime-cuda";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { compile } from "tirx-ts";
import { dsmemRing, dsmemRingExpected } from "../kernels/dsmem.js";

const available = cudaAvailable();
if (!available.ok) console.log(`test/gpu/dsmem-copy: skipped, ${available.reason}`);

describe.skipIf(!available.ok)("cp.async.bulk.shared::cluster.shared::cta on the GPU", () => {
  it.each([
    [2, 1],
    [4, 4],
    [8, 2],
  ])("a ring of %i CTAs (%i float32 per thread): GPU = simulator = model", (ctas, per) => {
    const n = ctas * 64 * per;
    const x = Float32Array.from({ length: n }, (_, i) => Math.fround(Math.sin(i) * 1000));
    const want = dsmemRingExpected(x, ctas, per);
    const fn = dsmemRing(ctas, per);
    const sx = simTensor(x, { shape: [n], dtype: "float32" });
    const sy = simZeros([n], "float32");
    expect(runSim(verify(fn), [sx, sy]).reports).toEqual([]);
    expect(sy.toArray()).toEqual(want);
    const dev = cuda(0);
    const run = compile(fn, { target: "cuda" });
    expect(run.ptx).toContain(
      "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes",
    );
    using X = cudaTensor(x, { shape: [n], dtype: "float32", device: dev });
    using Y = cudaZeros([n], "float32", dev);
    run(X, Y);
    expect(Y.toArray()).toEqual(want);
  });
});
