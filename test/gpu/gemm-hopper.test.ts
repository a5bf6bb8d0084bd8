// examples/gemm_hopper.ts on the H200 (sm_90a: TMA, wgmma, setmaxnreg), against a float64
// reference within the example's stated bound (2^-20 · Σ|a·b| + half an ulp of the 16-bit
// output), float16 and bfloat16: every element at 512 × 512 × 256 (multi-tile, several turns
// of the persistent grid; also with 2-CTA clusters and multicast), 8 sampled rows at 4096³.
// Skipped without a CUDA driver.
import { describe, expect, it } from "vitest";
import { cuda, cudaAvailable } from "@tirx-ts/runtime-cuda";
import { checkGemmHopper, makeGemmHopper } from "../../examples/gemm_hopper.js";

const available = cudaAvailable();
if (!available.ok) console.log(`test/gpu/gemm-hopper: skipped, ${available.reason}`);
const gpu = available.ok ? describe : describe.skip;

gpu("gemm_hopper on the GPU", () => {
  for (const dtype of ["float16", "bfloat16"] as const) {
    it(`${dtype} 512 × 512 × 256 on 3 CTAs (every element)`, () => {
      const sizes = { m: 512, n: 512, k: 256, dtype };
      const r = checkGemmHopper(cuda(0), makeGemmHopper({ ...sizes, ctas: 3 }), sizes);
      console.log(`gemm_hopper ${dtype} 512×512×256: ${r.summary}`);
      expect(r.ok, r.summary).toBe(true);
    });
    it(`${dtype} 512 × 512 × 256, 2-CTA clusters with multicast, on 4 CTAs (every element)`, () => {
      const sizes = { m: 512, n: 512, k: 256, dtype };
      const fn = makeGemmHopper({ ...sizes, ctas: 4, cluster: 2 });
      const r = checkGemmHopper(cuda(0), fn, sizes);
      console.log(`gemm_hopper ${dtype} 512×512×256 cluster 2: ${r.summary}`);
      expect(r.ok, r.summary).toBe(true);
    });
    it(`${dtype} 4096³ on 132 CTAs (8 rows)`, () => {
      const sizes = { m: 4096, n: 4096, k: 4096, dtype };
      const r = checkGemmHopper(cuda(0), makeGemmHopper({ ...sizes, ctas: 132 }), sizes, 8);
      console.log(`gemm_hopper ${dtype} 4096³: ${r.summary}`);
      expect(r.ok, r.summary).toBe(true);
    }, 120_000);
  }
});
