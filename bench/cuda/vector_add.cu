// Hand-written CUDA C++ baselines for bench/compute.ts: c = a + b over n float32 elements.
// Built by bench/compute.ts with: nvcc -O3 -arch=sm_90 -cubin
//
//   vector_add        one element per thread, bounds-guarded (the plainest design)
//   vector_add_f4     one 16-byte float4 per thread, then a scalar tail of n % 4 elements
//   vector_add_f4x4   four float4 per thread (all loads issued before the adds), scalar tail
//
// Block: 256 threads. Grid: ceil(n / 256), ceil((n / 4) / 256), ceil((n / 4) / 1024) CTAs.
// The float4 variants need a, b, c 16-byte aligned (cuMemAlloc gives 256); the tail elements
// [4·floor(n/4), n) are added one each by the first n % 4 threads of the grid.
// Traffic per call: 12·n bytes (two arrays read, one written).

constexpr int THREADS = 256;

extern "C" __global__ void __launch_bounds__(THREADS)
    vector_add(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  const int i = blockIdx.x * THREADS + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__device__ __forceinline__ float4 add4(float4 x, float4 y) {
  return make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
}

// VPT float4 vectors per thread. Vector j of a thread is CTA·THREADS·VPT + j·THREADS + tid, so
// each of the VPT accesses of a warp covers 512 contiguous bytes.
template <int VPT>
__device__ __forceinline__ void add_vec(const float* __restrict__ a, const float* __restrict__ b,
                                        float* __restrict__ c, int n) {
  const int n4 = n >> 2;
  const float4* __restrict__ a4 = reinterpret_cast<const float4*>(a);
  const float4* __restrict__ b4 = reinterpret_cast<const float4*>(b);
  float4* __restrict__ c4 = reinterpret_cast<float4*>(c);
  const int base = blockIdx.x * (THREADS * VPT) + threadIdx.x;
  float4 x[VPT], y[VPT];
#pragma unroll
  for (int j = 0; j < VPT; ++j) {
    const int v = base + j * THREADS;
    if (v < n4) {
      x[j] = a4[v];
      y[j] = b4[v];
    }
  }
#pragma unroll
  for (int j = 0; j < VPT; ++j) {
    const int v = base + j * THREADS;
    if (v < n4) c4[v] = add4(x[j], y[j]);
  }
  const int t = blockIdx.x * THREADS + threadIdx.x;
  if (t < (n & 3)) {
    const int i = (n4 << 2) + t;
    c[i] = a[i] + b[i];
  }
}

extern "C" __global__ void __launch_bounds__(THREADS)
    vector_add_f4(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  add_vec<1>(a, b, c, n);
}

extern "C" __global__ void __launch_bounds__(THREADS)
    vector_add_f4x4(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  add_vec<4>(a, b, c, n);
}
