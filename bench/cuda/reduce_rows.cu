// Hand-written CUDA C++ baseline for bench/compute.ts: y[r] = sum over c of x[r, c], for an
// R×C float32 matrix x (row-major) into R float32 outputs. One warp per row, 8 warps (256
// threads) per CTA, grid ceil(R / 8).
// Built by bench/compute.ts with: nvcc -O3 -arch=sm_90 -cubin
//
// Design (the one a tirx-ts kernel should match): lane l reads the row's 16-byte float4 vectors
// l, l + 32, l + 64, ... (each warp access covers 512 contiguous bytes), UNROLL vectors in flight
// per lane, into one float4 of partial sums; the four partials are added, then the 32 lanes'
// sums are combined by a butterfly of __shfl_xor_sync (offsets 16, 8, 4, 2, 1; PTX
// shfl.sync.bfly.b32) and lane 0 stores. When C is not a multiple of 4 the rows are not 16-byte
// aligned and the warp falls back to scalar loads.
// Traffic per call: 4·R·C bytes read + 4·R bytes written.

constexpr int WARPS = 8;
constexpr int UNROLL = 4;

extern "C" __global__ void __launch_bounds__(WARPS * 32)
    reduce_rows(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
  const int lane = threadIdx.x & 31;
  const int r = blockIdx.x * WARPS + (threadIdx.x >> 5);
  if (r >= rows) return;
  const float* __restrict__ row = x + static_cast<size_t>(r) * cols;
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  if ((cols & 3) == 0) {
    const float4* __restrict__ row4 = reinterpret_cast<const float4*>(row);
    const int n4 = cols >> 2;
    int i = lane;
    for (; i + 32 * (UNROLL - 1) < n4; i += 32 * UNROLL) {
      float4 v[UNROLL];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) v[u] = row4[i + 32 * u];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        acc.x += v[u].x;
        acc.y += v[u].y;
        acc.z += v[u].z;
        acc.w += v[u].w;
      }
    }
    for (; i < n4; i += 32) {
      const float4 v = row4[i];
      acc.x += v.x;
      acc.y += v.y;
      acc.z += v.z;
      acc.w += v.w;
    }
  } else {
    for (int i = lane; i < cols; i += 32) acc.x += row[i];
  }
  float s = (acc.x + acc.y) + (acc.z + acc.w);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (lane == 0) y[r] = s;
}
