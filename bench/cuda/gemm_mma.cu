// Hand-written CUDA C++ baseline for bench/compute.ts: C = A·B with A float16 M×K and B float16
// K×N (both row-major), C float32 M×N (row-major), on tensor cores (inline PTX ldmatrix and
// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32). The design of examples/gemm_mma.ts:
//   - CTA tile 128×128 of C, K-tile 32, 256 threads (8 warps as 2×4, warp tile 64×32: 4 m16 ×
//     4 n8 mma tiles, 64 float32 accumulators per lane), grid (N/128, M/128).
//   - Per K-tile, A's 128×32 and B's 32×128 tiles go to shared memory with two 16-byte
//     cp.async.cg per thread each; STAGES = 3: one commit per iteration, cp.async.wait_group
//     STAGES-2, one CTA barrier per iteration.
//   - Shared tiles are XOR-swizzled, not padded (the swizzles of examples/gemm_mma.ts): byte x of
//     a stage of A (64-byte rows) lives at x ^ ((x >> 3) & 0x30) (Swizzle<2,4,3>), of B (256-byte
//     rows) at x ^ ((x >> 4) & 0x70) (Swizzle<3,4,4>).
//   - Per k16 step: A fragments by ldmatrix.x4 (lane l: row l%16, columns 8·(l/16)), B fragments
//     by ldmatrix.x4.trans from the K×N tile (two n8 tiles each), 16 mma.sync.
//   - C stored as float32 pairs from the accumulator layout (rows g, g+8; columns 2t, 2t+1).
// Preconditions (checked by the host): M % 128 == 0, N % 128 == 0, K % 32 == 0 (the benchmark's
// sizes; the tail path of examples/gemm_mma.ts is not needed there).
// Built by bench/compute.ts with: nvcc -O3 -arch=sm_90 -cubin
// FLOPs per call: 2·M·N·K.
#include <cuda_fp16.h>
#include <cstdint>

constexpr int BM = 128, BN = 128, BK = 32, THREADS = 256, STAGES = 3, WM = 64, WN = 32;

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
// Byte offset within a stage → swizzled byte offset.
__device__ __forceinline__ uint32_t swzA(uint32_t x) { return x ^ ((x >> 3) & 0x30); }
__device__ __forceinline__ uint32_t swzB(uint32_t x) { return x ^ ((x >> 4) & 0x70); }

extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_mma(const __half* __restrict__ A, const __half* __restrict__ B, float* __restrict__ C,
             int M, int N, int K) {
  __shared__ __align__(1024) __half As[STAGES][BM][BK];
  __shared__ __align__(2048) __half Bs[STAGES][BK][BN];
  const uint32_t as0 = smem_addr(As), bs0 = smem_addr(Bs);
  constexpr uint32_t A_STAGE = BM * BK * 2, B_STAGE = BK * BN * 2;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wm = (warp / (BN / WN)) * WM, wn = (warp % (BN / WN)) * WN;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int kTiles = K / BK;
  auto copyTile = [&](int kt, int stage) {
#pragma unroll
    for (int i = 0; i < 2; i++) {
      const int c = tid + i * THREADS;
      const int ar = c / (BK / 8), ac = c % (BK / 8);
      cp_async16(as0 + stage * A_STAGE + swzA(ar * BK * 2 + ac * 16),
                 A + (size_t)(m0 + ar) * K + kt * BK + ac * 8);
      const int br = c / (BN / 8), bc = c % (BN / 8);
      cp_async16(bs0 + stage * B_STAGE + swzB(br * BN * 2 + bc * 16),
                 B + (size_t)(kt * BK + br) * N + n0 + bc * 8);
    }
  };
  float acc[64];
#pragma unroll
  for (int e = 0; e < 64; e++) acc[e] = 0.f;
  uint32_t a[16], b[8];
#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < kTiles) copyTile(s, s);
    asm volatile("cp.async.commit_group;" ::: "memory");
  }
  for (int kt = 0; kt < kTiles; kt++) {
    asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 2) : "memory");
    __syncthreads();
    const int next = kt + STAGES - 1;
    if (next < kTiles) copyTile(next, next % STAGES);
    asm volatile("cp.async.commit_group;" ::: "memory");
    const int s = kt % STAGES;
#pragma unroll
    for (int kk = 0; kk < BK / 16; kk++) {
#pragma unroll
      for (int i = 0; i < WM / 16; i++) {
        const uint32_t p = as0 + s * A_STAGE +
                           swzA((wm + i * 16 + lane % 16) * BK * 2 + (kk * 16 + (lane / 16) * 8) * 2);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(a[4 * i]), "=r"(a[4 * i + 1]), "=r"(a[4 * i + 2]), "=r"(a[4 * i + 3])
                     : "r"(p));
      }
#pragma unroll
      for (int jj = 0; jj < WN / 16; jj++) {
        const uint32_t p = bs0 + s * B_STAGE +
                           swzB((kk * 16 + lane % 16) * BN * 2 + (wn + jj * 16 + (lane / 16) * 8) * 2);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(b[4 * jj]), "=r"(b[4 * jj + 1]), "=r"(b[4 * jj + 2]), "=r"(b[4 * jj + 3])
                     : "r"(p));
      }
#pragma unroll
      for (int i = 0; i < WM / 16; i++) {
#pragma unroll
        for (int j = 0; j < WN / 8; j++) {
          float* d = &acc[(i * (WN / 8) + j) * 4];
          asm volatile(
              "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
              "{%8, %9}, {%0, %1, %2, %3};"
              : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
              : "r"(a[4 * i]), "r"(a[4 * i + 1]), "r"(a[4 * i + 2]), "r"(a[4 * i + 3]),
                "r"(b[2 * j]), "r"(b[2 * j + 1]));
        }
      }
    }
  }
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int i = 0; i < WM / 16; i++) {
#pragma unroll
    for (int j = 0; j < WN / 8; j++) {
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const float* d = &acc[(i * (WN / 8) + j) * 4 + 2 * h];
        float2* out = reinterpret_cast<float2*>(
            C + (size_t)(m0 + wm + i * 16 + h * 8 + g) * N + n0 + wn + j * 8 + t * 2);
        *out = make_float2(d[0], d[1]);
      }
    }
  }
}
