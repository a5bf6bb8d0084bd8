// Copies move bits on the GPU and on the simulated device alike: a kernel that copies float
// elements global → shared → global (a Store of a bare load of its own dtype, so ld / st and no
// arithmetic) must leave NaN payloads, signaling NaNs, -0 and denormals as they were, bit for bit,
// on both. Skipped, with the reason printed, where no CUDA driver loads.
import { describe, expect, it } from "vitest";
import { compile, cuda, cudaAvailable, sim, tensor } from "tirx-ts";
import { specialBytes, stagedCopy } from "../kernels/staged-copy.js";

const probe = cudaAvailable();
if (!probe.ok) console.log(`test/gpu/copy-bits: skipped, no CUDA driver (${probe.reason})`);

describe.skipIf(!probe.ok)("copies move bits: GPU and simulator", () => {
  it.each(["float64", "float32", "float16", "bfloat16"] as const)("%s", (dtype) => {
    const n = 1024;
    const bytes = specialBytes(dtype, n);
    const fn = stagedCopy(dtype, n);
    const out: Uint8Array[] = [];
    for (const dev of [cuda(0), sim()]) {
      const a = tensor(bytes, { shape: [n], dtype, device: dev });
      const b = tensor.zeros([n], dtype, dev);
      compile(fn, { target: "cuda" })(a, b);
      out.push(b.toBytes());
      a.dispose();
      b.dispose();
    }
    const [gpu, simulated] = out;
    const same = (x: Uint8Array): number => x.reduce((c, v, i) => c + (v === bytes[i] ? 1 : 0), 0);
    console.log(
      `copy_bits ${dtype} on ${cuda(0).name}: ${same(gpu!)}/${bytes.length} bytes kept on the GPU, ${same(simulated!)} on the simulator`,
    );
    expect(Buffer.from(gpu!).equals(Buffer.from(bytes))).toBe(true);
    expect(Buffer.from(simulated!).equals(Buffer.from(bytes))).toBe(true);
  });
});
