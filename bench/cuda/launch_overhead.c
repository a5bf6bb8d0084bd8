// Launch overhead of the CUDA driver API from C, the reference for bench/launch.ts: the same PTX
// entry (one .u64 tensor parameter), launched with cuLaunchKernel on the default stream.
// The driver is opened with dlopen("libcuda.so.1"), as koffi does for tirx-ts, so the program
// builds without the toolkit's link stub. Build: nvcc -O2 -o launch_overhead launch_overhead.c -ldl
// Usage: launch_overhead <file.ptx> <entry> <tensor bytes> <grid> <block> <iters>
// Prints one JSON line, after 8192 warm-up launches: queued_us (host time per cuLaunchKernel,
// launches in batches of 256 with a synchronize between batches, not timed; the median of 5
// rounds, as bench/launch.ts measures tirx-ts), launch_sync_us (cuLaunchKernel + cuCtxSynchronize,
// the median of 5 rounds of 1000), launch_sync_rounds (those 5 rounds), queued_ex_us (as
// queued_us, through cuLaunchKernelEx).
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

// Driver entry points, looked up by their exported (versioned) names.
static CUresult (*pInit)(unsigned);
static CUresult (*pDeviceGet)(CUdevice*, int);
static CUresult (*pPrimaryCtxRetain)(CUcontext*, CUdevice);
static CUresult (*pCtxSetCurrent)(CUcontext);
static CUresult (*pModuleLoadData)(CUmodule*, const void*);
static CUresult (*pModuleGetFunction)(CUfunction*, CUmodule, const char*);
static CUresult (*pMemAlloc)(CUdeviceptr*, size_t);
static CUresult (*pMemsetD8)(CUdeviceptr, unsigned char, size_t);
static CUresult (*pLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                 unsigned, unsigned, CUstream, void**, void**);
static CUresult (*pCtxSynchronize)(void);
static CUresult (*pLaunchKernelEx)(const CUlaunchConfig*, CUfunction, void**, void**);
static CUresult (*pGetErrorName)(CUresult, const char**);

static void* sym(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  if (!p) {
    fprintf(stderr, "libcuda.so.1 does not export %s\n", name);
    exit(1);
  }
  return p;
}

static void load_driver(void) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "cannot load libcuda.so.1: %s\n", dlerror());
    exit(1);
  }
  *(void**)&pInit = sym(lib, "cuInit");
  *(void**)&pDeviceGet = sym(lib, "cuDeviceGet");
  *(void**)&pPrimaryCtxRetain = sym(lib, "cuDevicePrimaryCtxRetain");
  *(void**)&pCtxSetCurrent = sym(lib, "cuCtxSetCurrent");
  *(void**)&pModuleLoadData = sym(lib, "cuModuleLoadData");
  *(void**)&pModuleGetFunction = sym(lib, "cuModuleGetFunction");
  *(void**)&pMemAlloc = sym(lib, "cuMemAlloc_v2");
  *(void**)&pMemsetD8 = sym(lib, "cuMemsetD8_v2");
  *(void**)&pLaunchKernel = sym(lib, "cuLaunchKernel");
  *(void**)&pCtxSynchronize = sym(lib, "cuCtxSynchronize");
  *(void**)&pLaunchKernelEx = sym(lib, "cuLaunchKernelEx");
  *(void**)&pGetErrorName = sym(lib, "cuGetErrorName");
}

#define CHECK(x)                                             \
  do {                                                       \
    CUresult r_ = (x);                                       \
    if (r_ != CUDA_SUCCESS) {                                \
      const char* n_ = 0;                                    \
      pGetErrorName(r_, &n_);                                \
      fprintf(stderr, "%s failed: %s\n", #x, n_ ? n_ : "?"); \
      exit(1);                                               \
    }                                                        \
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

// Launches before any timing, on both sides of the comparison (bench/launch.ts uses the same).
#define WARMUP 8192
// Launch + synchronize iterations per timed round (bench/launch.ts uses the same).
#define SYNC_ROUND 1000

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

// Host µs per queued launch: 5 rounds of iters/5 launches in batches of 256 (well under the
// launch queue depth), a synchronize between batches, not timed; the median round.
static double queued_median(CUfunction fn, unsigned grid, unsigned block, void** params, int iters,
                            int ex, CUlaunchConfig* cfg) {
  double rounds[5];
  int per = (iters + 4) / 5;
  for (int r = 0; r < 5; r++) {
    double queued = 0;
    int done = 0;
    while (done < per) {
      int n = per - done < 256 ? per - done : 256;
      double t0 = now_us();
      if (ex)
        for (int i = 0; i < n; i++) CHECK(pLaunchKernelEx(cfg, fn, params, 0));
      else
        for (int i = 0; i < n; i++)
          CHECK(pLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, 0, params, 0));
      queued += now_us() - t0;
      CHECK(pCtxSynchronize());
      done += n;
    }
    rounds[r] = queued / per;
  }
  qsort(rounds, 5, sizeof rounds[0], cmp_double);
  return rounds[2];
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
  load_driver();
  CHECK(pInit(0));
  CHECK(pDeviceGet(&dev, 0));
  CHECK(pPrimaryCtxRetain(&ctx, dev));
  CHECK(pCtxSetCurrent(ctx));
  CHECK(pModuleLoadData(&mod, read_file(argv[1])));
  CHECK(pModuleGetFunction(&fn, mod, argv[2]));
  CHECK(pMemAlloc(&a, bytes));
  CHECK(pMemsetD8(a, 0, bytes));
  void* params[] = {&a};
  // The same launch config through cuLaunchKernelEx (CUDA 12.0), one CUlaunchConfig.
  CUlaunchConfig cfg = {0};
  cfg.gridDimX = grid, cfg.gridDimY = 1, cfg.gridDimZ = 1;
  cfg.blockDimX = block, cfg.blockDimY = 1, cfg.blockDimZ = 1;
  // Warm-up, as bench/launch.ts does for tirx-ts: WARMUP launches in batches of 256.
  for (int done = 0; done < WARMUP; done += 256) {
    for (int i = 0; i < 256; i++) CHECK(pLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, 0, params, 0));
    CHECK(pCtxSynchronize());
  }
  double queued = queued_median(fn, grid, block, params, iters, 0, &cfg);
  double queued_ex = queued_median(fn, grid, block, params, iters, 1, &cfg);
  // Launch + synchronize: 5 rounds of SYNC_ROUND iterations, each round's µs per iteration; the
  // median is reported, and every round (bench/launch.ts pools the rounds of several runs).
  double sync_rounds[5], sorted[5];
  for (int r = 0; r < 5; r++) {
    double t0 = now_us();
    for (int i = 0; i < SYNC_ROUND; i++) {
      CHECK(pLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, 0, params, 0));
      CHECK(pCtxSynchronize());
    }
    sync_rounds[r] = sorted[r] = (now_us() - t0) / SYNC_ROUND;
  }
  qsort(sorted, 5, sizeof sorted[0], cmp_double);
  printf("{\"queued_us\": %.4f, \"launch_sync_us\": %.4f, \"queued_ex_us\": %.4f, "
         "\"launch_sync_rounds\": [%.4f, %.4f, %.4f, %.4f, %.4f]}\n",
         queued, sorted[2], queued_ex, sync_rounds[0], sync_rounds[1], sync_rounds[2],
         sync_rounds[3], sync_rounds[4]);
  return 0;
}
