// Hand-written CUDA C++ counterpart of examples/bulk_pipeline.ts, same design: each CTA walks
// tiles cta, cta + grid, ... through STAGES shared-memory stages with one mbarrier each; thread 0
// keeps STAGES global -> shared bulk loads in flight (complete_tx on the stage's mbarrier),
// stores each tile with a shared -> global bulk copy, and refills a stage once its store has read
// it. Built by bench/bulk-copy.ts with: nvcc -O3 -arch=sm_90 -cubin
// The tile size and stage count are template parameters; the launcher picks the instance by name.
#include <cstdint>

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count));
}

__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra WAIT;\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}

__device__ __forceinline__ void bulk_load(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
          smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(smem_addr(bar))
      : "memory");
}

__device__ __forceinline__ void bulk_store(void* dst, const void* src, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(smem_addr(src)),
               "r"(bytes)
               : "memory");
}

template <int TILE_BYTES, int STAGES>
__device__ void pipeline(const float* __restrict__ a, float* __restrict__ b, int per_cta) {
  constexpr int TILE = TILE_BYTES / 4;
  __shared__ alignas(128) float buf[STAGES][TILE];
  __shared__ alignas(8) uint64_t bars[STAGES];
  if (threadIdx.x != 0) return;
  const int cta = blockIdx.x;
  const int grid = gridDim.x;
  for (int s = 0; s < STAGES; ++s) mbar_init(&bars[s], 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  for (int k = 0; k < STAGES && k < per_cta; ++k) {
    mbar_expect_tx(&bars[k], TILE_BYTES);
    bulk_load(buf[k], a + static_cast<size_t>(cta + k * grid) * TILE, TILE_BYTES, &bars[k]);
  }
  for (int k = 0; k < per_cta; ++k) {
    const int s = k % STAGES;
    mbar_wait(&bars[s], (k / STAGES) & 1);
    bulk_store(b + static_cast<size_t>(cta + k * grid) * TILE, buf[s], TILE_BYTES);
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    if (k >= 1 && k + STAGES - 1 < per_cta) {
      asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
      const int n = k + STAGES - 1;
      const int t = n % STAGES;
      mbar_expect_tx(&bars[t], TILE_BYTES);
      bulk_load(buf[t], a + static_cast<size_t>(cta + n * grid) * TILE, TILE_BYTES, &bars[t]);
    }
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

#define INSTANCE(TB, ST)                                                                      \
  extern "C" __global__ void __launch_bounds__(32)                                            \
      bulk_pipeline_##TB##_##ST(const float* __restrict__ a, float* __restrict__ b, int per_cta) { \
    pipeline<TB, ST>(a, b, per_cta);                                                          \
  }

INSTANCE(4096, 8)
INSTANCE(8192, 2)
INSTANCE(8192, 3)
INSTANCE(8192, 4)
INSTANCE(8192, 5)
INSTANCE(16384, 2)
