// The C side of bench/launch.ts's in-process comparison: loaded into the Node process with koffi,
// it launches the very CUfunction that tirx-ts loaded, in the same context, on the same thread,
// so the two sides differ only in what runs on the host between driver calls. The driver is
// reached with dlopen("libcuda.so.1"), which returns the library koffi already loaded.
// Build: nvcc -O2 -shared -Xcompiler -fPIC -o liblaunch_loop.so launch_loop.c -ldl
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <time.h>

static CUresult (*pLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                 unsigned, unsigned, CUstream, void**, void**);
static CUresult (*pCtxSynchronize)(void);
static CUresult (*pLaunchKernelEx)(const CUlaunchConfig*, CUfunction, void**, void**);

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int load(void) {
  if (pLaunchKernel) return 0;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!lib) return -1;
  *(void**)&pLaunchKernel = dlsym(lib, "cuLaunchKernel");
  *(void**)&pCtxSynchronize = dlsym(lib, "cuCtxSynchronize");
  *(void**)&pLaunchKernelEx = dlsym(lib, "cuLaunchKernelEx");
  return pLaunchKernel && pCtxSynchronize ? 0 : -1;
}

// µs per (cuLaunchKernel + cuCtxSynchronize) of `fn` with one pointer argument `a`, over `iters`
// iterations; sync = 0 times queued launches only (a cuCtxSynchronize after the loop, not timed).
// Returns a negative CUresult (or -1000 when the driver cannot be opened) on failure.
double tirx_c_launch_loop(uint64_t fn, unsigned grid, unsigned block, uint64_t a, int iters,
                          int sync) {
  if (load() != 0) return -1000;
  CUdeviceptr ptr = (CUdeviceptr)a;
  void* params[] = {&ptr};
  double t0 = now_us();
  for (int i = 0; i < iters; i++) {
    CUresult r = pLaunchKernel((CUfunction)(uintptr_t)fn, grid, 1, 1, block, 1, 1, 0, 0, params, 0);
    if (r != CUDA_SUCCESS) return -(double)r;
    if (sync && (r = pCtxSynchronize()) != CUDA_SUCCESS) return -(double)r;
  }
  double us = (now_us() - t0) / iters;
  if (!sync) {
    CUresult r = pCtxSynchronize();
    if (r != CUDA_SUCCESS) return -(double)r;
  }
  return us;
}

// As tirx_c_launch_loop with sync = 1, through cuLaunchKernelEx (the entry point tirx-ts uses).
double tirx_c_launch_loop_ex(uint64_t fn, unsigned grid, unsigned block, uint64_t a, int iters) {
  if (load() != 0 || !pLaunchKernelEx) return -1000;
  CUdeviceptr ptr = (CUdeviceptr)a;
  void* params[] = {&ptr};
  CUlaunchConfig cfg = {0};
  cfg.gridDimX = grid, cfg.gridDimY = 1, cfg.gridDimZ = 1;
  cfg.blockDimX = block, cfg.blockDimY = 1, cfg.blockDimZ = 1;
  double t0 = now_us();
  for (int i = 0; i < iters; i++) {
    CUresult r = pLaunchKernelEx(&cfg, (CUfunction)(uintptr_t)fn, params, 0);
    if (r != CUDA_SUCCESS) return -(double)r;
    if ((r = pCtxSynchronize()) != CUDA_SUCCESS) return -(double)r;
  }
  return (now_us() - t0) / iters;
}

// One cuLaunchKernel of `fn` (one pointer argument); a CUresult. Called from JavaScript once per
// iteration, to measure what a Node.js loop around the driver calls costs by itself.
int tirx_c_launch_once(uint64_t fn, unsigned grid, unsigned block, uint64_t a) {
  if (load() != 0) return 999;
  CUdeviceptr ptr = (CUdeviceptr)a;
  void* params[] = {&ptr};
  return pLaunchKernel((CUfunction)(uintptr_t)fn, grid, 1, 1, block, 1, 1, 0, 0, params, 0);
}

// One cuCtxSynchronize; a CUresult.
int tirx_c_sync_once(void) { return load() != 0 ? 999 : pCtxSynchronize(); }
