// Hand-written CUDA C++ baseline for bench/compute.ts: C = A·B with A float16 M×K and B float16
// K×N (both row-major), C float32 M×N (row-major), float32 accumulation with plain FFMA (no tensor
// cores). Preconditions (checked by the host): M % 64 == 0, N % 64 == 0, K % 32 == 0.
// Built by bench/compute.ts with: nvcc -O3 -arch=sm_90 -cubin
//
// Design (the issue's SIMT GEMM, the one a tirx-ts kernel should match):
//   - CTA tile 64×64 of C, K-tile 32, 256 threads, grid (N/64, M/64).
//   - Per K-tile, A's 64×32 tile (4 KiB) and B's 32×64 tile (4 KiB) go to shared memory with one
//     16-byte cp.async.cg.shared.global per thread each (inline PTX, as our code generator emits);
//     thread t copies A row t/4, halves 8·(t%4).. and B row t/8, halves 8·(t%8)..
//   - Two stages: tile kt+1 is in flight while tile kt is multiplied. Every iteration commits a
//     group (empty on the last) and waits with cp.async.wait_group 1, then a CTA barrier; a second
//     barrier after the multiply frees the stage for the next load.
//   - Thread (ty, tx) = (t/16, t%16) accumulates the 4×4 float32 tile C[ty + 16·i][4·tx + j] in
//     registers. Per 8 k-steps it reads A[ty + 16·i][k..k+8) as four 16-byte shared loads (the two
//     rows of a warp are 64 bytes apart: no bank conflict), and per k-step B[k][4·tx..4·tx+4) as
//     one 8-byte load (the 16 distinct addresses of a warp are contiguous); halves are widened to
//     float32 (cvt.f32.f16) and multiplied with fma.rn.f32.
//   - C is stored as four 16-byte vectors per thread.
// FLOPs per call: 2·M·N·K.
#include <cuda_fp16.h>
#include <cstdint>

constexpr int BM = 64, BN = 64, BK = 32, THREADS = 256;

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_addr(dst)), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
__device__ __forceinline__ void cp_async_wait1() { asm volatile("cp.async.wait_group 1;" ::: "memory"); }

extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_cp_async(const __half* __restrict__ A, const __half* __restrict__ B, float* __restrict__ C, int M,
                  int N, int K) {
  __shared__ alignas(16) __half As[2][BM][BK];
  __shared__ alignas(16) __half Bs[2][BK][BN];
  const int tid = threadIdx.x;
  const int tx = tid & 15;
  const int ty = tid >> 4;
  const int m0 = blockIdx.y * BM;
  const int n0 = blockIdx.x * BN;
  const int a_row = tid >> 2, a_col = (tid & 3) * 8;
  const int b_row = tid >> 3, b_col = (tid & 7) * 8;
  const __half* a_src = A + static_cast<size_t>(m0 + a_row) * K + a_col;
  const __half* b_src = B + static_cast<size_t>(b_row) * N + n0 + b_col;
  const size_t b_step = static_cast<size_t>(BK) * N;

  float acc[4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.f;

  const int KT = K / BK;
  cp_async16(&As[0][a_row][a_col], a_src);
  cp_async16(&Bs[0][b_row][b_col], b_src);
  cp_async_commit();
  for (int kt = 0; kt < KT; ++kt) {
    if (kt + 1 < KT) {
      const int s = (kt + 1) & 1;
      cp_async16(&As[s][a_row][a_col], a_src + (kt + 1) * BK);
      cp_async16(&Bs[s][b_row][b_col], b_src + (kt + 1) * b_step);
    }
    cp_async_commit();
    cp_async_wait1();
    __syncthreads();
    const int s = kt & 1;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 8) {
      uint4 a[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = *reinterpret_cast<const uint4*>(&As[s][ty + 16 * i][kk]);
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        float av[4], bv[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) av[i] = __half2float(reinterpret_cast<const __half*>(&a[i])[k]);
        const uint2 braw = *reinterpret_cast<const uint2*>(&Bs[s][kk + k][4 * tx]);
        const float2 b01 = __half22float2(*reinterpret_cast<const __half2*>(&braw.x));
        const float2 b23 = __half22float2(*reinterpret_cast<const __half2*>(&braw.y));
        bv[0] = b01.x;
        bv[1] = b01.y;
        bv[2] = b23.x;
        bv[3] = b23.y;
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float4* dst = reinterpret_cast<float4*>(C + static_cast<size_t>(m0 + ty + 16 * i) * N + n0 + 4 * tx);
    *dst = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
  }
}
