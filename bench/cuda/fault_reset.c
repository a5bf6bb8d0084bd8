// Can a process recover from a sticky fault (CUDA_ERROR_ILLEGAL_ADDRESS) without restarting?
// Tries, in one process: release + cuDevicePrimaryCtxReset + retain, then a fresh cuCtxCreate.
// Build: gcc -O2 -I/usr/local/cuda/include -o fault_reset fault_reset.c -l:libcuda.so.1
// Result on the H200 (driver 580.159.04): neither recovers (bench/results/gpu-runs.md).
#include <cuda.h>
#include <stdio.h>
#include <string.h>
static const char *ptx =
".version 8.0\n.target sm_90\n.address_size 64\n"
".visible .entry bad(.param .u64 p){ .reg .b64 %rd<3>; .reg .b32 %r<2>;\n"
" ld.param.u64 %rd1, [p]; mov.b32 %r1, 7; st.global.u32 [%rd1], %r1; ret; }\n"
".visible .entry good(.param .u64 p){ .reg .b64 %rd<3>; .reg .b32 %r<2>;\n"
" ld.param.u64 %rd1, [p]; mov.b32 %r1, 42; st.global.u32 [%rd1], %r1; ret; }\n";
#define P(x) do { CUresult r_ = (x); const char *s_=0; cuGetErrorName(r_, &s_); printf("%-60s -> %d %s\n", #x, (int)r_, s_?s_:"?"); } while(0)
static int try_good(const char *tag) {
  CUmodule m; CUfunction f; CUdeviceptr d = 0; unsigned v = 0; CUresult r;
  r = cuModuleLoadData(&m, ptx); if (r) { printf("[%s] load %d\n", tag, r); return 1; }
  r = cuModuleGetFunction(&f, m, "good"); if (r) { printf("[%s] getfn %d\n", tag, r); return 1; }
  r = cuMemAlloc(&d, 4); if (r) { printf("[%s] alloc %d\n", tag, r); return 1; }
  void *args[] = { &d };
  r = cuLaunchKernel(f, 1,1,1, 1,1,1, 0, 0, args, 0); if (r) { printf("[%s] launch %d\n", tag, r); return 1; }
  r = cuCtxSynchronize(); if (r) { printf("[%s] sync %d\n", tag, r); return 1; }
  r = cuMemcpyDtoH(&v, d, 4); printf("[%s] good kernel wrote %u (copy rc %d)\n", tag, v, r);
  return v != 42;
}
int main(void) {
  CUdevice dev; CUcontext ctx; CUmodule m; CUfunction f;
  P(cuInit(0)); P(cuDeviceGet(&dev, 0)); P(cuDevicePrimaryCtxRetain(&ctx, dev)); P(cuCtxSetCurrent(ctx));
  try_good("before");
  P(cuModuleLoadData(&m, ptx)); P(cuModuleGetFunction(&f, m, "bad"));
  CUdeviceptr bad = 0x10; void *args[] = { &bad };
  P(cuLaunchKernel(f, 1,1,1, 1,1,1, 0, 0, args, 0)); P(cuCtxSynchronize());
  try_good("after-fault");
  // strategy 1: primary release + reset + retain
  P(cuDevicePrimaryCtxRelease(dev)); P(cuDevicePrimaryCtxReset(dev));
  CUcontext c2 = 0; P(cuDevicePrimaryCtxRetain(&c2, dev)); P(cuCtxSetCurrent(c2));
  if (!try_good("primary-reset")) { printf("RECOVERED via primary reset\n"); return 0; }
  // strategy 2: a fresh non-primary context
  CUcontext c3 = 0; P(cuCtxCreate(&c3, NULL, 0, dev)); P(cuCtxSetCurrent(c3));
  if (!try_good("new-context")) { printf("RECOVERED via new context\n"); return 0; }
  printf("NOT RECOVERED\n");
  return 0;
}
