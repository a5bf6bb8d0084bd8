// Real-GPU run of the global proxy fence: threads store to global memory, each fences with
// fence.proxy.async.global, a cta_sync, then one thread bulk-loads the stores back into shared
// memory (PTX ISA, fence.proxy.async). The GPU's output must equal the simulator's (which checks
// the kernel is clean) and the expected values. Skipped (with the reason printed) where there is
// no driver.
import { describe, expect, it } from "vitest";
import { verify } from "@tirx-ts/core";
import { cuda, cudaAvailable, cudaTensor, cudaZeros } from "@tirx-ts/runtime-cuda";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { compile } from "tirx-ts";
import { globalThenBulk } from "../kernels/proxy.js";

const available = cudaAvailable();
if (!available.ok) console.log(`test/gpu/proxy-fence: skipped, ${available.reason}`);

describe.skipIf(!available.ok)("fence.proxy.async.global on the GPU", () => {
  it("stores, fence, cta_sync, bulk load: the GPU reads back the stores, as the simulator does", () => {
    const a = Float32Array.from({ length: 64 }, (_, i) => i * 0.25 - 3);
    const want = Float32Array.from({ length: 64 }, (_, i) => a[63 - i]! + 1);
    const s = [
      simTensor(a, { shape: [64], dtype: "float32" }),
      simZeros([64], "float32"),
      simZeros([64], "float32"),
    ];
    expect(runSim(verify(globalThenBulk), s).reports).toEqual([]);
    expect(s[2]!.toArray()).toEqual(want);
    const dev = cuda(0);
    const run = compile(globalThenBulk, { target: "cuda" });
    expect(run.ptx).toContain("fence.proxy.async.global;");
    using A = cudaTensor(a, { shape: [64], dtype: "float32", device: dev });
    using G = cudaZeros([64], "float32", dev);
    using B = cudaZeros([64], "float32", dev);
    run(A, G, B);
    expect(B.toArray()).toEqual(want);
  });
});
