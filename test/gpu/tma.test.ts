// TMA on the GPU (sm_90a): every case of test/tma/cases.ts (2-D and 3-D tiled loads with
// out-of-bounds edges, 32B/64B/128B swizzles read back through the buffer's layout, a tensor
// store that clips, a 2-CTA cluster multicast) equals the JS model and, where the simulator can
// run it, the simulator's output bit for bit. Skipped without a CUDA driver.
import { describe, expect, it } from "vitest";
import { encodeHost } from "@tirx-ts/core";
import { compileCuda, cudaAvailable, cudaTensor, cudaZeros } from "@tirx-ts/runtime-cuda";
import { TMA_CASES, type TmaCase } from "../tma/cases.js";
import { simCase } from "../tma/sim-run.js";

const available = cudaAvailable();
if (!available.ok) console.log(`test/gpu/tma: skipped, ${available.reason}`);
const gpu = available.ok ? describe : describe.skip;

/** Run a case on cuda(0) (sm_90a); the output's raw bytes. */
function onGpu(c: TmaCase): Uint8Array {
  const run = compileCuda(c.fn, { arch: "sm_90a" });
  const ts = c.inputs.map((i) => cudaTensor(i.data, { shape: i.shape, dtype: i.dtype }));
  const o = cudaZeros(c.out.shape, c.out.dtype);
  run(...ts, o);
  const bytes = o.toBytes();
  for (const t of [...ts, o]) t.dispose();
  return bytes;
}

gpu("TMA on the GPU", () => {
  for (const c of TMA_CASES) {
    it(`${c.name}: GPU equals the model${c.gpuOnly ? "" : " and the simulator, bit for bit"}`, () => {
      const got = onGpu(c);
      // The model's values in the output dtype, as bytes (the host encoder of every tensor).
      const model = encodeHost(c.expected(), c.out.dtype, c.expected().length);
      expect(Buffer.from(got).equals(Buffer.from(model))).toBe(true);
      if (c.gpuOnly) return;
      const s = simCase(c);
      expect(s.reports).toEqual([]);
      const sim = s.bytes;
      expect(Buffer.from(got).equals(Buffer.from(sim))).toBe(true);
    });
  }
});
