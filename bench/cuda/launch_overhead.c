// Launch overhead of the CUDA driver API from C, the reference for bench/launch.ts: the same PTX
// entry (one .u64 tensor parameter), launched with cuLaunchKernel on the default stream.
// Build: nvcc -O2 -o launch_overhead launch_overhead.c -lcuda
// Usage: launch_overhead <file.ptx> <entry> <tensor bytes> <grid> <block> <iters>
// Prints one JSON line: queued_us (host time per cuLaunchKernel, launches in batches of 256 with
// a synchronize between batches, not timed), launch_sync_us (cuLaunchKernel + cuCtxSynchronize).
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(x)                                                              \
  do {                                                                        \
    CUresult r_ = (x);                                                        \
    if (r_ != CUDA_SUCCESS) {                                                 \
      const char* n_ = 0;                                                     \
      cuGetErrorName(r_, &n_);                                                \
      fprintf(stderr, "%s failed: %s\n", #x, n_ ? n_ : "?");                  \
      exit(1);                                                                \
    }                                                                         \
  } while (0)

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static char* read_file(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) { perror(path); exit(1); }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* s = malloc(n + 1);
  if (fread(s, 1, n, f) != (size_t)n) { perror(path); exit(1); }
  s[n] = 0;
  fclose(f);
  return s;
}

int main(int argc, char** argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: %s <file.ptx> <entry> <bytes> <grid> <block> <iters>\n", argv[0]);
    return 2;
  }
  size_t bytes = strtoull(argv[3], 0, 10);
  unsigned grid = atoi(argv[4]), block = atoi(argv[5]);
  int iters = atoi(argv[6]);
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUfunction fn;
  CUdeviceptr a;
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&dev, 0));
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  CHECK(cuModuleLoadData(&mod, read_file(argv[1])));
  CHECK(cuModuleGetFunction(&fn, mod, argv[2]));
  CHECK(cuMemAlloc(&a, bytes));
  CHECK(cuMemsetD8(a, 0, bytes));
  void* params[] = {&a};
  for (int i = 0; i < 100; i++)
    CHECK(cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, 0, params, 0));
  CHECK(cuCtxSynchronize());
  // Queued launches: batches of 256 (well under the launch queue depth), timed per batch.
  double queued = 0;
  int done = 0;
  while (done < iters) {
    int n = iters - done < 256 ? iters - done : 256;
    double t0 = now_us();
    for (int i = 0; i < n; i++)
      CHECK(cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, 0, params, 0));
    queued += now_us() - t0;
    CHECK(cuCtxSynchronize());
    done += n;
  }
  double t0 = now_us();
  int sync_iters = iters < 2000 ? iters : 2000;
  for (int i = 0; i < sync_iters; i++) {
    CHECK(cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, 0, params, 0));
    CHECK(cuCtxSynchronize());
  }
  double sync_us = (now_us() - t0) / sync_iters;
  printf("{\"queued_us\": %.4f, \"launch_sync_us\": %.4f}\n", queued / iters, sync_us);
  return 0;
}
