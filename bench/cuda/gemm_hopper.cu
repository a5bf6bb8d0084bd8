// Hand-written Hopper GEMM (the design examples/gemm_hopper.ts mirrors), with cuBLAS in the same run.
//
// C[M][N] = A[M][K] · B[N][K]ᵀ: A and B both K-major (row-major M×K and N×K), C row-major, float16 or
// bfloat16 in and out, float32 accumulation. Design (facts from the PTX ISA and CUTLASS's sm90
// warp-specialised kernels; the code is our own):
//  - TMA (`cp.async.bulk.tensor.2d`) loads BK=64-wide tiles (128 bytes per row) into 128B-swizzled
//    shared tiles, completing on a "full" mbarrier per stage (`mbarrier.expect_tx`);
//  - a STAGES-deep ring of full/empty mbarriers; warpgroup 0 is the producer (`setmaxnreg.dec` to 40
//    registers, one elected thread issues the copies), warpgroups 1 and 2 are consumers
//    (`setmaxnreg.inc` to 232) that each own MI×64 rows of the BM×BN tile;
//  - consumers issue `wgmma.mma_async.sync.aligned.m64nBNk16.f32.T.T` from shared-memory matrix
//    descriptors (K-major, 128B swizzle: LBO unused, SBO = 1024 B between 8-row core-matrix groups,
//    the k16 step advances the start address by 32 B inside the swizzle atom), float32 accumulators
//    in registers, `wgmma.fence` / `commit_group` / `wait_group`;
//  - optional 2-CTA clusters along M: the two CTAs share B's tile, each loads half of it and
//    multicasts it (`.multicast::cluster`) to both; consumers release a stage on the empty barriers
//    of every CTA in the cluster (`mapa` + remote `mbarrier.arrive`);
//  - a persistent grid (one CTA per SM) walks output tiles in a grouped order, so that the producer
//    loads the next tile while the consumers store the last one;
//  - epilogue: registers → float16/bfloat16 pairs → global memory.
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o gemm_hopper gemm_hopper.cu -lcublas -lcuda
// Usage: gemm_hopper [sizes=4096,8192] [iters=20]
// Prints one JSON line per (dtype, size, variant): {"dtype","m","n","k","variant","median_us","tflops",
// "max_rel_err","vs_cublas"}; times are CUDA-event medians over `iters` calls after 3 warm-ups;
// max_rel_err compares 128 sampled entries of C with a float64 host dot product relative to Σ|a·b|.
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <type_traits>
#include <string>
#include <vector>

#define CHECK_CUDA(x)                                                                           \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)
#define CHECK_CU(x)                                                                  \
  do {                                                                               \
    CUresult r_ = (x);                                                               \
    if (r_ != CUDA_SUCCESS) {                                                        \
      std::fprintf(stderr, "%s:%d: %s: CUresult %d\n", __FILE__, __LINE__, #x, (int)r_); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)
#define CHECK_CUBLAS(x)                                                                      \
  do {                                                                                       \
    cublasStatus_t s_ = (x);                                                                 \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                       \
      std::fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #x, (int)s_); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

// ---- wgmma wrappers (operand lists written out; generated once, checked in) ----
__device__ __forceinline__ void wgmma_m64n128k16_f16(float* d, uint64_t da, uint64_t db) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(da), "l"(db));
}

__device__ __forceinline__ void wgmma_m64n128k16_bf16(float* d, uint64_t da, uint64_t db) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(da), "l"(db));
}

__device__ __forceinline__ void wgmma_m64n256k16_f16(float* d, uint64_t da, uint64_t db) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(da), "l"(db));
}

__device__ __forceinline__ void wgmma_m64n256k16_bf16(float* d, uint64_t da, uint64_t db) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(da), "l"(db));
}

template <typename T>
__device__ __forceinline__ void wgmma_tile(float* d, uint64_t da, uint64_t db);
template <int BN, typename T>
__device__ __forceinline__ void wgmma_bn(float* d, uint64_t da, uint64_t db) {
  if constexpr (BN == 256) {
    if constexpr (std::is_same_v<T, __half>) wgmma_m64n256k16_f16(d, da, db);
    else wgmma_m64n256k16_bf16(d, da, db);
  } else {
    static_assert(BN == 128, "BN is 128 or 256");
    if constexpr (std::is_same_v<T, __half>) wgmma_m64n128k16_f16(d, da, db);
    else wgmma_m64n128k16_bf16(d, da, db);
  }
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// K-major, 128B-swizzled matrix descriptor (PTX ISA, "Matrix Descriptor Format"): start address
// >> 4 in bits 0–13, leading byte offset (unused for swizzled K-major; 1) in 16–29, stride byte
// offset 1024 >> 4 in 32–45, swizzle mode 1 (128B) in 62–63.
__device__ __forceinline__ uint64_t make_desc(uint32_t smem_addr) {
  return (uint64_t)((smem_addr & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)(1024 >> 4) << 32) |
         ((uint64_t)1 << 62);
}

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred P1;\nWAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
      "@!P1 bra WAIT_%=;\n}\n" ::"r"(smem_u32(bar)),
      "r"(parity)
      : "memory");
}
// Arrive on the barrier at the same shared offset in CTA `cta` of this cluster. Default (.release.cta)
// semantics: `.release.cluster` here compiles to MEMBAR.ALL.GPU per arrive and cost 25–30% (first sweep);
// the consumer's reads of the stage are complete at wgmma.wait_group, so nothing needs ordering.
__device__ __forceinline__ void mbar_arrive_cluster(uint64_t* bar, uint32_t cta) {
  asm volatile(
      "{\n.reg .b32 remAddr32;\n"
      "mapa.shared::cluster.u32 remAddr32, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remAddr32];\n}\n" ::"r"(smem_u32(bar)),
      "r"(cta)
      : "memory");
}
__device__ __forceinline__ void mbar_arrive_local(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}
// A consumer warpgroup frees a stage: thread r < CLUSTER arrives on the empty barrier of CTA r.
template <int CLUSTER>
__device__ __forceinline__ void release(uint64_t* bar, int tid) {
  if constexpr (CLUSTER == 1) {
    if (tid == 0) mbar_arrive_local(bar);
  } else {
    if (tid < CLUSTER) mbar_arrive_cluster(bar, tid);
  }
}
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(
          smem_u32(dst)),
      "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1)
      : "memory");
}
__device__ __forceinline__ void tma_load_2d_mc(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1,
                                               uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, "
      "%4}], [%2], %5;\n" ::"r"(smem_u32(dst)),
      "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "h"(mask)
      : "memory");
}
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
template <int R>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
}
template <int R>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
}

template <typename T>
__device__ __forceinline__ uint32_t pack2(float a, float b);
template <>
__device__ __forceinline__ uint32_t pack2<__half>(float a, float b) {
  __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<uint32_t*>(&h);
}
template <>
__device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float a, float b) {
  __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<uint32_t*>(&h);
}

constexpr int BK = 64;  // 64 × 2 bytes = one 128-byte swizzle row

template <int BN, int MI, int STAGES, int CLUSTER>
struct Cfg {
  static constexpr int BM = 2 * 64 * MI;  // two consumer warpgroups, MI m64 blocks each
  static constexpr int A_ELEMS = BM * BK, B_ELEMS = BN * BK;
  static constexpr int STAGE_BYTES = (A_ELEMS + B_ELEMS) * 2;
  static constexpr int SMEM = STAGES * STAGE_BYTES + 1024 /* alignment */ + 2 * STAGES * 8;
};

// Tile u of the cluster-level schedule → (m block of the cluster's first CTA, n block).
__device__ __forceinline__ void tile_coords(int u, int mTiles, int nTiles, int group, int& mb, int& nb) {
  const int per_group = group * nTiles;
  const int g = u / per_group;
  const int first = g * group;
  const int gm = min(mTiles - first, group);
  const int r = u % per_group;
  mb = first + r % gm;
  nb = r / gm;
}

template <typename T, int BN, int MI, int STAGES, int CLUSTER, bool WAIT1>
__global__ void __launch_bounds__(384, 1)
    gemm_hopper(const __grid_constant__ CUtensorMap mapA, const __grid_constant__ CUtensorMap mapB, T* __restrict__ C,
                int M, int N, int K, int group) {
  using Cf = Cfg<BN, MI, STAGES, CLUSTER>;
  constexpr int BM = Cf::BM;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  unsigned char* smem = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  T* sA = reinterpret_cast<T*>(smem);
  T* sB = sA + STAGES * Cf::A_ELEMS;
  uint64_t* full = reinterpret_cast<uint64_t*>(sB + STAGES * Cf::B_ELEMS);
  uint64_t* empty = full + STAGES;

  const int wg = threadIdx.x / 128;
  const int tid = threadIdx.x % 128;
  const uint32_t rank = CLUSTER > 1 ? cluster_ctarank() : 0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 2 * CLUSTER);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  if constexpr (CLUSTER > 1) cluster_sync();
  else __syncthreads();

  const int mTiles = M / (BM * CLUSTER), nTiles = N / BN;  // cluster-level m tiles
  const int units = mTiles * nTiles;
  const int kBlocks = K / BK;
  const int cluster_id = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;

  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (tid == 0) {
      int it = 0;
      for (int u = cluster_id; u < units; u += clusters) {
        int mb, nb;
        tile_coords(u, mTiles, nTiles, group, mb, nb);
        const int m0 = (mb * CLUSTER + rank) * BM, n0 = nb * BN;
        for (int kb = 0; kb < kBlocks; ++kb, ++it) {
          const int s = it % STAGES;
          const uint32_t ph = (it / STAGES) & 1;
          mbar_wait(&empty[s], ph ^ 1);
          mbar_expect_tx(&full[s], Cf::STAGE_BYTES);
          tma_load_2d(sA + s * Cf::A_ELEMS, &mapA, &full[s], kb * BK, m0);
          if constexpr (CLUSTER == 1) {
            tma_load_2d(sB + s * Cf::B_ELEMS, &mapB, &full[s], kb * BK, n0);
          } else {
            constexpr int part = BN / CLUSTER;
            tma_load_2d_mc(sB + s * Cf::B_ELEMS + rank * part * BK, &mapB, &full[s], kb * BK, n0 + rank * part,
                           (uint16_t)((1u << CLUSTER) - 1));
          }
        }
      }
    }
  } else {
    setmaxnreg_inc<232>();
    const int cw = wg - 1;  // consumer index: rows [cw·64·MI, (cw+1)·64·MI) of the tile
    float acc[MI][BN / 2];
    int it = 0;
    for (int u = cluster_id; u < units; u += clusters) {
      int mb, nb;
      tile_coords(u, mTiles, nTiles, group, mb, nb);
      const int m0 = (mb * CLUSTER + rank) * BM, n0 = nb * BN;
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < BN / 2; ++j) acc[i][j] = 0.f;
      int prev_s = -1;
      for (int kb = 0; kb < kBlocks; ++kb, ++it) {
        const int s = it % STAGES;
        const uint32_t ph = (it / STAGES) & 1;
        mbar_wait(&full[s], ph);
        const uint32_t a_base = smem_u32(sA + s * Cf::A_ELEMS + cw * 64 * MI * BK);
        const uint32_t b_base = smem_u32(sB + s * Cf::B_ELEMS);
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < BK / 16; ++k) {
#pragma unroll
          for (int i = 0; i < MI; ++i) {
            wgmma_bn<BN, T>(acc[i], make_desc(a_base + i * 64 * BK * 2 + k * 32), make_desc(b_base + k * 32));
          }
        }
        wgmma_commit();
        if constexpr (WAIT1) {
          wgmma_wait<1>();
          if (prev_s >= 0) release<CLUSTER>(&empty[prev_s], tid);
          prev_s = s;
        } else {
          wgmma_wait<0>();
          release<CLUSTER>(&empty[s], tid);
        }
      }
      if constexpr (WAIT1) {
        wgmma_wait<0>();
        if (prev_s >= 0) release<CLUSTER>(&empty[prev_s], tid);
      }
      // Epilogue: accumulator fragment of m64nBN (PTX ISA, wgmma D layout): warp w, lane l, n8 block j
      // holds rows 16w + l/4 (+8) and columns 8j + 2(l%4) (+1).
      const int warp = tid / 32, lane = tid % 32;
#pragma unroll
      for (int i = 0; i < MI; ++i) {
        const int row = m0 + cw * 64 * MI + i * 64 + warp * 16 + lane / 4;
        T* c0 = C + (size_t)row * N + n0 + 2 * (lane % 4);
        T* c1 = c0 + (size_t)8 * N;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          *reinterpret_cast<uint32_t*>(c0 + 8 * j) = pack2<T>(acc[i][4 * j], acc[i][4 * j + 1]);
          *reinterpret_cast<uint32_t*>(c1 + 8 * j) = pack2<T>(acc[i][4 * j + 2], acc[i][4 * j + 3]);
        }
      }
    }
  }
  if constexpr (CLUSTER > 1) cluster_sync();  // no CTA leaves while a peer may still signal its barriers
}

// Sweep: V(tag, BN, MI, STAGES, CLUSTER, WAIT1, persistent, group)
#ifndef HOPPER_VARIANTS
#define HOPPER_VARIANTS                               \
  V("a", 256, 1, 4, 1, false, true, 8)                \
  V("b", 256, 1, 4, 1, true, true, 8)                 \
  V("c", 256, 1, 4, 2, false, true, 8)                \
  V("d", 256, 1, 4, 2, true, true, 8)                 \
  V("e", 256, 1, 4, 2, true, true, 16)                \
  V("f", 256, 1, 4, 2, true, false, 8)                \
  V("g", 256, 1, 3, 2, true, true, 8)                 \
  V("h", 128, 2, 4, 2, true, true, 8)                 \
  V("i", 128, 2, 4, 1, true, true, 8)                 \
  V("j", 256, 1, 4, 1, true, false, 8)                \
  V("k", 256, 1, 4, 2, true, true, 4)                 \
  V("l", 256, 1, 4, 2, true, true, 32)                \
  V("m", 256, 1, 4, 1, true, true, 16)
#endif

// ---- host ----
static uint32_t rng_state = 0x9e3779b9u;
static uint32_t next_u32() {  // xorshift32
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}

// 2-D tensor map over a row-major rows×cols (K-major) matrix, box = box_rows × 64 columns, 128B swizzle.
template <typename T>
static CUtensorMap make_map(const T* base, int rows, int cols, int box_rows) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
  const cuuint64_t strides[1] = {(cuuint64_t)cols * sizeof(T)};
  const cuuint32_t box[2] = {(cuuint32_t)BK, (cuuint32_t)box_rows};
  const cuuint32_t estr[2] = {1, 1};
  CHECK_CU(cuTensorMapEncodeTiled(&map, std::is_same_v<T, __half> ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                                   : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                                  2, (void*)base, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                  CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

struct Problem {
  int M, N, K;
  std::vector<float> af, bf;  // the exact values stored in A and B, as float
};

template <typename T>
static double time_us(int iters, const std::function<void()>& fn) {
  for (int i = 0; i < 3; ++i) fn();
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<cudaEvent_t> ev(2 * iters);
  for (auto& e : ev) CHECK_CUDA(cudaEventCreate(&e));
  for (int i = 0; i < iters; ++i) {
    CHECK_CUDA(cudaEventRecord(ev[2 * i]));
    fn();
    CHECK_CUDA(cudaEventRecord(ev[2 * i + 1]));
  }
  CHECK_CUDA(cudaEventSynchronize(ev[2 * iters - 1]));
  CHECK_CUDA(cudaGetLastError());
  std::vector<double> us(iters);
  for (int i = 0; i < iters; ++i) {
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
    us[i] = ms * 1000.0;
  }
  for (auto& e : ev) CHECK_CUDA(cudaEventDestroy(e));
  std::sort(us.begin(), us.end());
  return iters % 2 ? us[iters / 2] : 0.5 * (us[iters / 2 - 1] + us[iters / 2]);
}

template <typename T>
static double check(const Problem& p, T* dC) {
  std::vector<T> c((size_t)p.M * p.N);
  CHECK_CUDA(cudaMemcpy(c.data(), dC, c.size() * sizeof(T), cudaMemcpyDeviceToHost));
  uint32_t st = 12345;
  double worst = 0;
  for (int s = 0; s < 128; ++s) {
    st = st * 1664525u + 1013904223u;
    const int i = (st >> 8) % p.M;
    st = st * 1664525u + 1013904223u;
    const int j = (st >> 8) % p.N;
    double ref = 0, mag = 0;
    for (int k = 0; k < p.K; ++k) {
      const double t = (double)p.af[(size_t)i * p.K + k] * p.bf[(size_t)j * p.K + k];
      ref += t;
      mag += std::fabs(t);
    }
    const double got = (double)(float)c[(size_t)i * p.N + j];
    worst = std::max(worst, std::fabs(got - ref) / (mag > 0 ? mag : 1));
  }
  return worst;
}

static const char* dtype_name(bool bf) { return bf ? "bf16" : "f16"; }

template <typename T, int BN, int MI, int STAGES, int CLUSTER, bool WAIT1>
static void run_variant(const Problem& p, const T* dA, const T* dB, T* dC, int iters, int sms, bool persistent,
                        int group, double cublas_us) {
  using Cf = Cfg<BN, MI, STAGES, CLUSTER>;
  if (p.M % (Cf::BM * CLUSTER) || p.N % BN || p.K % BK) return;
  auto kern = gemm_hopper<T, BN, MI, STAGES, CLUSTER, WAIT1>;
  CHECK_CUDA(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, Cf::SMEM));
  const CUtensorMap mA = make_map(dA, p.M, p.K, Cf::BM);
  const CUtensorMap mB = make_map(dB, p.N, p.K, BN / CLUSTER);
  const int units = (p.M / (Cf::BM * CLUSTER)) * (p.N / BN);
  int clusters = persistent ? std::min(units, sms / CLUSTER) : units;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(clusters * CLUSTER);
  cfg.blockDim = dim3(384);
  cfg.dynamicSmemBytes = Cf::SMEM;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = CLUSTER;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CHECK_CUDA(cudaMemset(dC, 0, (size_t)p.M * p.N * sizeof(T)));
  auto launch = [&]() { CHECK_CUDA(cudaLaunchKernelEx(&cfg, kern, mA, mB, dC, p.M, p.N, p.K, group)); };
  const double us = time_us<T>(iters, launch);
  const double err = check(p, dC);
  const double tf = 2.0 * p.M * p.N * p.K / (us * 1e-6) / 1e12;
  char name[128];
  std::snprintf(name, sizeof name, "bn%d_bm%d_st%d_cl%d_%s_%s_g%d", BN, Cf::BM, STAGES, CLUSTER, WAIT1 ? "w1" : "w0",
                persistent ? "pers" : "grid", group);
  std::printf(
      "{\"dtype\":\"%s\",\"m\":%d,\"n\":%d,\"k\":%d,\"variant\":\"%s\",\"median_us\":%.2f,\"tflops\":%.1f,"
      "\"max_rel_err\":%.2e,\"vs_cublas\":%.3f}\n",
      dtype_name(std::is_same_v<T, __nv_bfloat16>), p.M, p.N, p.K, name, us, tf, err, cublas_us / us);
  std::fflush(stdout);
}

template <typename T>
static void run_dtype(int S, int iters, int sms, cublasHandle_t h, const std::vector<std::string>& only) {
  Problem p{S, S, S, {}, {}};
  std::vector<T> a((size_t)S * S), b((size_t)S * S);
  p.af.resize(a.size());
  p.bf.resize(b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = T((int)(next_u32() % 2001 - 1000) / 1000.0f);
    p.af[i] = (float)a[i];
  }
  for (size_t i = 0; i < b.size(); ++i) {
    b[i] = T((int)(next_u32() % 2001 - 1000) / 1000.0f);
    p.bf[i] = (float)b[i];
  }
  T *dA, *dB, *dC;
  CHECK_CUDA(cudaMalloc(&dA, a.size() * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&dB, b.size() * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&dC, (size_t)S * S * sizeof(T)));
  CHECK_CUDA(cudaMemcpy(dA, a.data(), a.size() * sizeof(T), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dB, b.data(), b.size() * sizeof(T), cudaMemcpyHostToDevice));
  const bool bf = std::is_same_v<T, __nv_bfloat16>;
  const cudaDataType dt = bf ? CUDA_R_16BF : CUDA_R_16F;
  const float alpha = 1.f, beta = 0.f;
  // Row-major C = A·Bᵀ is column-major Cᵀ = B·Aᵀ, with B (N×K row-major) read transposed.
  auto gemm = [&]() {
    CHECK_CUBLAS(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, S, S, S, &alpha, dB, dt, S, dA, dt, S, &beta, dC, dt, S,
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  };
  const double cu = time_us<T>(iters, gemm);
  const double cerr = check(p, dC);
  std::printf(
      "{\"dtype\":\"%s\",\"m\":%d,\"n\":%d,\"k\":%d,\"variant\":\"cublas\",\"median_us\":%.2f,\"tflops\":%.1f,"
      "\"max_rel_err\":%.2e,\"vs_cublas\":1.000}\n",
      dtype_name(bf), S, S, S, cu, 2.0 * S * S * S / (cu * 1e-6) / 1e12, cerr);
  std::fflush(stdout);
  auto want = [&](const char* tag) {
    if (only.empty()) return true;
    for (auto& o : only)
      if (o == tag) return true;
    return false;
  };
#define V(tag, BN_, MI_, ST_, CL_, W1_, PERS_, G_) \
  if (want(tag)) run_variant<T, BN_, MI_, ST_, CL_, W1_>(p, dA, dB, dC, iters, sms, PERS_, G_, cu);
  HOPPER_VARIANTS
#undef V
  CHECK_CUDA(cudaFree(dA));
  CHECK_CUDA(cudaFree(dB));
  CHECK_CUDA(cudaFree(dC));
}

int main(int argc, char** argv) {
  std::vector<int> sizes = {4096, 8192};
  if (argc > 1) {
    sizes.clear();
    for (char* s = argv[1]; *s;) {
      sizes.push_back((int)std::strtol(s, &s, 10));
      if (*s == ',') ++s;
    }
  }
  const int iters = argc > 2 ? std::atoi(argv[2]) : 20;
  std::vector<std::string> only;  // variant tags to run (all when empty)
  for (int i = 3; i < argc; ++i) only.push_back(argv[i]);
  int sms = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cublasHandle_t h;
  CHECK_CUBLAS(cublasCreate(&h));
  for (int S : sizes) {
    run_dtype<__half>(S, iters, sms, h, only);
    run_dtype<__nv_bfloat16>(S, iters, sms, h, only);
  }
  CHECK_CUBLAS(cublasDestroy(h));
  return 0;
}
