// Vendor ceiling for bench/compute.ts's GEMM: times cublasGemmEx with float16 A (M×K) and B (K×N),
// both row-major, float32 C (M×N, row-major) and float32 compute (CUBLAS_COMPUTE_32F, tensor cores
// allowed: CUBLAS_GEMM_DEFAULT), on seeded random inputs in [-1, 1).
// Build: nvcc -O3 -arch=sm_90 -o cublas_gemm cublas_gemm.cu -lcublas
// Usage: cublas_gemm M N K [iters=50]
// Prints one JSON line: {"m","n","k","iters","median_us","min_us","tflops","max_rel_err","checked"}
// where the times are CUDA-event medians over `iters` calls after 5 warm-ups, tflops counts
// 2·M·N·K per call, and max_rel_err compares 64 sampled entries of C with a float64 host dot
// product (relative to the sum of |a·b| terms). Exit status 1 on any CUDA or cuBLAS error.
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK_CUDA(x)                                                                  \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)
#define CHECK_CUBLAS(x)                                                                      \
  do {                                                                                       \
    cublasStatus_t s_ = (x);                                                                 \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                       \
      std::fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #x, (int)s_); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

static uint32_t rng_state = 0x9e3779b9u;
static uint32_t next_u32() {  // xorshift32
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s M N K [iters]\n", argv[0]);
    return 2;
  }
  const int M = std::atoi(argv[1]), N = std::atoi(argv[2]), K = std::atoi(argv[3]);
  const int iters = argc > 4 ? std::atoi(argv[4]) : 50;
  if (M <= 0 || N <= 0 || K <= 0 || iters <= 0) {
    std::fprintf(stderr, "M, N, K and iters must be positive\n");
    return 2;
  }
  // Values k/256 with k in [-256, 256): exact in float16.
  std::vector<__half> a(static_cast<size_t>(M) * K), b(static_cast<size_t>(K) * N);
  std::vector<float> af(a.size()), bf(b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    af[i] = (static_cast<int>(next_u32() % 512) - 256) / 256.0f;
    a[i] = __float2half(af[i]);
  }
  for (size_t i = 0; i < b.size(); ++i) {
    bf[i] = (static_cast<int>(next_u32() % 512) - 256) / 256.0f;
    b[i] = __float2half(bf[i]);
  }
  __half *dA, *dB;
  float* dC;
  CHECK_CUDA(cudaMalloc(&dA, a.size() * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&dB, b.size() * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&dC, static_cast<size_t>(M) * N * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(dA, a.data(), a.size() * sizeof(__half), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dB, b.data(), b.size() * sizeof(__half), cudaMemcpyHostToDevice));
  cublasHandle_t h;
  CHECK_CUBLAS(cublasCreate(&h));
  const float alpha = 1.f, beta = 0.f;
  // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: pass B first, with the dimensions swapped.
  auto gemm = [&]() {
    CHECK_CUBLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, dB, CUDA_R_16F, N, dA, CUDA_R_16F,
                              K, &beta, dC, CUDA_R_32F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  };
  for (int i = 0; i < 5; ++i) gemm();
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<cudaEvent_t> ev(2 * iters);
  for (auto& e : ev) CHECK_CUDA(cudaEventCreate(&e));
  for (int i = 0; i < iters; ++i) {
    CHECK_CUDA(cudaEventRecord(ev[2 * i]));
    gemm();
    CHECK_CUDA(cudaEventRecord(ev[2 * i + 1]));
  }
  CHECK_CUDA(cudaEventSynchronize(ev[2 * iters - 1]));
  std::vector<double> us(iters);
  for (int i = 0; i < iters; ++i) {
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
    us[i] = ms * 1000.0;
  }
  std::sort(us.begin(), us.end());
  const double med = iters % 2 ? us[iters / 2] : 0.5 * (us[iters / 2 - 1] + us[iters / 2]);

  std::vector<float> c(static_cast<size_t>(M) * N);
  CHECK_CUDA(cudaMemcpy(c.data(), dC, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
  double worst = 0;
  const int checked = 64;
  for (int s = 0; s < checked; ++s) {
    const int i = next_u32() % M, j = next_u32() % N;
    double ref = 0, mag = 0;
    for (int k = 0; k < K; ++k) {
      const double t = static_cast<double>(af[static_cast<size_t>(i) * K + k]) * bf[static_cast<size_t>(k) * N + j];
      ref += t;
      mag += std::fabs(t);
    }
    const double err = std::fabs(c[static_cast<size_t>(i) * N + j] - ref) / (mag > 0 ? mag : 1);
    worst = std::max(worst, err);
  }
  const double tflops = 2.0 * M * N * K / (med * 1e-6) / 1e12;
  std::printf(
      "{\"m\":%d,\"n\":%d,\"k\":%d,\"iters\":%d,\"median_us\":%.3f,\"min_us\":%.3f,\"tflops\":%.3f,"
      "\"max_rel_err\":%.3e,\"checked\":%d}\n",
      M, N, K, iters, med, us[0], tflops, worst, checked);
  for (auto& e : ev) CHECK_CUDA(cudaEventDestroy(e));
  CHECK_CUBLAS(cublasDestroy(h));
  CHECK_CUDA(cudaFree(dA));
  CHECK_CUDA(cudaFree(dB));
  CHECK_CUDA(cudaFree(dC));
  return 0;
}
