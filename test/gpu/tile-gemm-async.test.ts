// T.tile.wg.gemm_async compiled for sm_90a and run on the GPU and on the simulated device
// (test/util/gemm-async-kernels.ts): SS with each swizzle, K-major and MN-major A and B, M = 128 (two
// row blocks), RS, accum false, and FlashAttention's head dim 128 operands as two 64-wide column
// blocks loaded by TMA (S = Q·Kᵀ SS K-major, O += P·V RS with V MN-major); each output within
// wgmma's bound 2^-20 · Σ|a·b| of a float64 product on both. Skipped, with the reason printed,
// where no CUDA driver loads.
import { describe, expect, it } from "vitest";
import { cuda, cudaAvailable, sim } from "tirx-ts";
import { gemmAsyncKernel, runGemmAsync, type GemmAsyncCase } from "../util/gemm-async-kernels.js";

const probe = cudaAvailable();
if (!probe.ok) console.log(`test/gpu/tile-gemm-async: skipped, no CUDA driver (${probe.reason})`);

const CASES: readonly GemmAsyncCase[] = [
  { name: "gpu_ga_ss_f16_128", M: 64, N: 256, K: 64, dtype: "float16", swizzle: "128B" },
  { name: "gpu_ga_ss_bf16_64", M: 64, N: 128, K: 32, dtype: "bfloat16", swizzle: "64B" },
  {
    name: "gpu_ga_ss_f16_32",
    M: 64,
    N: 64,
    K: 16,
    dtype: "float16",
    swizzle: "32B",
    overwrite: true,
  },
  {
    name: "gpu_ga_ss_f16_mn",
    M: 64,
    N: 64,
    K: 64,
    dtype: "float16",
    swizzle: "128B",
    bKMajor: false,
  },
  {
    name: "gpu_ga_ss_f16_mn_a",
    M: 64,
    N: 128,
    K: 64,
    dtype: "float16",
    swizzle: "128B",
    aMNMajor: true,
  },
  { name: "gpu_ga_ss_bf16_m128", M: 128, N: 128, K: 64, dtype: "bfloat16", swizzle: "128B" },
  { name: "gpu_ga_rs_f16_128", M: 64, N: 256, K: 64, dtype: "float16", swizzle: "128B", rs: true },
  {
    name: "gpu_ga_rs_bf16_64",
    M: 64,
    N: 64,
    K: 32,
    dtype: "bfloat16",
    swizzle: "64B",
    rs: true,
    overwrite: true,
  },
  {
    name: "gpu_ga_ss_f16_hd128",
    M: 64,
    N: 64,
    K: 128,
    dtype: "float16",
    swizzle: "128B",
    blocked: true,
  },
  {
    name: "gpu_ga_rs_bf16_pv128",
    M: 64,
    N: 128,
    K: 64,
    dtype: "bfloat16",
    swizzle: "128B",
    rs: true,
    bKMajor: false,
    blocked: true,
  },
  {
    name: "gpu_ga_ss_bf16_hd256",
    M: 64,
    N: 16,
    K: 256,
    dtype: "bfloat16",
    swizzle: "128B",
    blocked: true,
  },
  {
    name: "gpu_ga_rs_f16_pv256",
    M: 64,
    N: 256,
    K: 64,
    dtype: "float16",
    swizzle: "128B",
    rs: true,
    bKMajor: false,
    blocked: true,
  },
  {
    name: "gpu_ga_ss_f16_mn_a_blocks",
    M: 128,
    N: 64,
    K: 64,
    dtype: "float16",
    swizzle: "128B",
    aMNMajor: true,
    blocked: true,
  },
];

describe.skipIf(!probe.ok)("T.tile.wg.gemm_async: GPU (sm_90a) and simulator", () => {
  it.each(CASES.map((c) => [c.name, c] as const))("%s within 2^-20·Σ|a·b|", (_, c) => {
    const fn = gemmAsyncKernel(c);
    const gpu = runGemmAsync(c, cuda(0), fn);
    const simulated = runGemmAsync(c, sim(), fn);
    console.log(
      `${c.name} on ${cuda(0).name}: worst ${gpu.toFixed(3)} of the bound (simulator ${simulated.toFixed(3)})`,
    );
    expect(gpu).toBeLessThanOrEqual(1);
    expect(simulated).toBeLessThanOrEqual(1);
  });
});
