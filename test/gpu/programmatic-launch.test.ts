// Programmatic dependent launch on a real GPU (PTX ISA, griddepcontrol; CUDA Programming Guide,
// "Programmatic Dependent Launch and Synchronization"): a producer writes Y = 2·X and executes
// griddepcontrol.launch_dependents; a consumer launched right after it on the same stream with
// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (CudaKernel.launcher's
// `programmaticDependent`) executes griddepcontrol.wait before it reads Y, and writes Z = Y + 1.
// Z must be 2·X + 1 exactly, launch pair after launch pair, as on the simulator (where both
// instructions are no-ops). Skipped (with the reason printed) where there is no driver.
import { describe, expect, it } from "vitest";
import { verify, type PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import {
  compileCuda,
  cuda,
  cudaAvailable,
  cudaTensor,
  cudaZeros,
  CudaStream,
} from "@tirx-ts/runtime-cuda";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";

// 256 KiB per tensor: Y and Z are zeroed (cudaZeros) just before each pair on a non-blocking
// stream, so a memset still in flight on the default stream would show (this test failed on the
// H200 with other GPU processes beside it, before CudaTensor.zero waited for its memset).
const N = 1 << 16;
const BLOCK = 256;

const producer: PrimFunc = T.function(
  "pdl_producer",
  { X: T.Tensor([N], "int32"), Y: T.Tensor([N], "int32") },
  ({ X, Y }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: N / BLOCK, block: BLOCK }) });
    const i = T.let_("i", T.cuda.block_idx("x").mul(BLOCK).add(T.cuda.thread_idx("x")));
    Y.set([i], X.get([i]).mul(2));
    T.ptx.griddepcontrol.launch_dependents();
  },
);

const consumer: PrimFunc = T.function(
  "pdl_consumer",
  { Y: T.Tensor([N], "int32"), Z: T.Tensor([N], "int32") },
  ({ Y, Z }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: N / BLOCK, block: BLOCK }) });
    T.ptx.griddepcontrol.wait();
    const i = T.let_("i", T.cuda.block_idx("x").mul(BLOCK).add(T.cuda.thread_idx("x")));
    Z.set([i], Y.get([i]).add(1));
  },
);

const available = cudaAvailable();
if (!available.ok) console.log(`test/gpu/programmatic-launch: skipped, ${available.reason}`);

describe.skipIf(!available.ok)("programmatic dependent launch on the GPU", () => {
  it("the dependent consumer waits for the producer's writes: Z = 2·X + 1, 20 times", () => {
    const dev = cuda(0);
    const prod = compileCuda(producer, { arch: "sm_90" });
    const cons = compileCuda(consumer, { arch: "sm_90" });
    expect(prod.ptx).toContain("griddepcontrol.launch_dependents;");
    expect(cons.ptx).toContain("griddepcontrol.wait;");
    const launch = { ...cons.module.launch, dynamicSharedBytes: cons.module.dynamicSharedBytes };
    const dependent = cons.kernel(dev).launcher(cons.module.params, launch, {
      programmaticDependent: true,
    });
    const s = new CudaStream(dev);
    for (let round = 0; round < 20; round++) {
      const x = Int32Array.from(
        { length: N },
        (_, i) => ((i * 7919 + round * 104729) % 200001) - 100000,
      );
      using X = cudaTensor(x, { shape: [N], dtype: "int32", device: dev });
      using Y = cudaZeros([N], "int32", dev);
      using Z = cudaZeros([N], "int32", dev);
      prod.launchOn(s, X, Y);
      dependent([Y, Z], s);
      s.synchronize();
      // The first wrong element (a toEqual of 64 Ki elements is slow to build on failure).
      const z = Z.toArray() as Int32Array;
      const bad = z.findIndex((v, i) => v !== 2 * x[i]! + 1);
      expect(
        bad < 0 ? "ok" : `round ${round}: Z[${bad}] = ${z[bad]}, want ${2 * x[bad]! + 1}`,
      ).toBe("ok");
    }
    s.dispose();
  });

  it("on the simulator both instructions are no-ops: the same Z, no report", () => {
    const x = Int32Array.from({ length: N }, (_, i) => (i % 1000) - 500);
    const y = simZeros([N], "int32");
    const z = simZeros([N], "int32");
    expect(
      runSim(verify(producer), [simTensor(x, { shape: [N], dtype: "int32" }), y]).reports,
    ).toEqual([]);
    expect(runSim(verify(consumer), [y, z]).reports).toEqual([]);
    expect(z.toArray()).toEqual(Int32Array.from(x, (v) => 2 * v + 1));
  });
});
