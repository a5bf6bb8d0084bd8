// TMA on the GPU (sm_90a): every case of test/tma/cases.ts (2-D and 3-D tiled loads with
// out-of-bounds edges, 32B/64B/128B swizzles read back through the buffer's layout, a tensor
// store that clips, a 2-CTA cluster multicast) equals the JS model and, where the simulator can
// run it, the simulator's output bit for bit. Skipped without a CUDA driver.
import { describe, expect, it } from "vitest";
import { encodeHost } from "@tirx-ts/core";
import { cudaAvailable } from "@tirx-ts/runtime-cuda";
import { TMA_CASES } from "../tma/cases.js";
import { gpuCase as onGpu } from "../tma/gpu-run.js";
import { simCase } from "../tma/sim-run.js";

const available = cudaAvailable();
if (!available.ok) console.log(`test/gpu/tma: skipped, ${available.reason}`);
const gpu = available.ok ? describe : describe.skip;

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
