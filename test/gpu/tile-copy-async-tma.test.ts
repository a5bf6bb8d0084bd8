// T.tile.copy_async's TMA and bulk paths on the GPU (sm_90a): every kernel of
// test/util/tile-tma-cases.ts (a 128B-swizzled box read back through its view, column blocks of
// a split box, a 512-row split with a TMA store, a bulk load and store, a 2-CTA multicast) equals
// the host copy and the simulator's output, byte for byte. Skipped without a CUDA driver.
import { describe, expect, it } from "vitest";
import { encodeHost } from "@tirx-ts/core";
import { cudaAvailable } from "@tirx-ts/runtime-cuda";
import { gpuCase as onGpu } from "../tma/gpu-run.js";
import { simCase } from "../tma/sim-run.js";
import { TILE_TMA_CASES } from "../util/tile-tma-cases.js";

const available = cudaAvailable();
if (!available.ok) console.log(`test/gpu/tile-copy-async-tma: skipped, ${available.reason}`);
const gpu = available.ok ? describe : describe.skip;

gpu("T.tile.copy_async TMA and bulk on the GPU", () => {
  for (const make of TILE_TMA_CASES) {
    const c = make();
    it(`${c.name}: GPU equals the host copy and the simulator, byte for byte`, () => {
      const got = onGpu(c);
      const host = encodeHost(c.expected(), c.out.dtype, c.expected().length);
      expect(Buffer.from(got).equals(Buffer.from(host))).toBe(true);
      const s = simCase(c);
      expect(s.reports).toEqual([]);
      expect(Buffer.from(got).equals(Buffer.from(s.bytes))).toBe(true);
    });
  }
});
