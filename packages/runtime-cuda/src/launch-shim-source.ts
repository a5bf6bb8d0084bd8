/**
 * The C source of the launch stub that launch-shim.ts builds and loads: `tirx_shim_init`,
 * `tirx_launch` and `tirx_launch_sync` (CUDA Driver API: cuLaunchKernelEx, cuCtxSynchronize).
 * A string, not a .c file, so that it is built into dist/ with the package and an edit of it
 * rebuilds the package; its hash is part of the built library's name. It declares the little of
 * cuda.h it uses, so that no CUDA toolkit is needed.
 */
export const LAUNCH_SHIM_C = `// runtime-cuda's launch stub (launch-shim.ts builds and loads it): one FFI call from JavaScript per
// queued launch, and one per launch + synchronize, where calling the driver through koffi takes
// one call per driver function. Compiled at first use with the host C compiler and cached on disk,
// as Triton compiles its launcher stub. It needs no CUDA toolkit: it declares the little of
// cuda.h's ABI it uses (CUDA Driver API, CUDA 12.0) and finds the driver's functions with dlsym in
// the library the koffi binding loaded.
#include <dlfcn.h>
#include <stddef.h>

typedef int CUresult; // CUDA_SUCCESS is 0; every CUresult is below 1 << 20

// cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
typedef CUresult (*launch_ex_fn)(const void *, void *, void **, void **);
// cuCtxSynchronize(void)
typedef CUresult (*ctx_synchronize_fn)(void);

// The driver's entry points, filled by tirx_shim_init (16 bytes, in memory the caller owns).
typedef struct {
  launch_ex_fn launch_ex;
  ctx_synchronize_fn ctx_synchronize;
} tirx_driver;

// One bound launch (32 bytes, written by CudaKernel.launcher in memory that never moves).
typedef struct {
  const tirx_driver *driver;
  const void *config; // const CUlaunchConfig *: grid, block, shared bytes, stream, attributes
  void *fn;           // CUfunction
  void **params;      // kernelParams: one pointer per parameter, each to its value
} tirx_launch_record;

// Added to the CUresult of a failed cuCtxSynchronize by tirx_launch_sync.
#define TIRX_SYNC_FAILED (1 << 20)

// Open library (the path the koffi binding loaded: dlopen returns the library already loaded)
// and fill out with its cuLaunchKernelEx and cuCtxSynchronize. 0 on success; 1 when the
// library does not open, 2 when it lacks cuLaunchKernelEx (a driver before CUDA 12.0) or
// cuCtxSynchronize. The library stays open for the life of the process.
int tirx_shim_init(const char *library, tirx_driver *out) {
  void *lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return 1;
  *(void **)&out->launch_ex = dlsym(lib, "cuLaunchKernelEx");
  *(void **)&out->ctx_synchronize = dlsym(lib, "cuCtxSynchronize");
  return out->launch_ex && out->ctx_synchronize ? 0 : 2;
}

// cuLaunchKernelEx(config, fn, params, NULL): the CUresult.
int tirx_launch(const tirx_launch_record *r) {
  return r->driver->launch_ex(r->config, r->fn, r->params, NULL);
}

// cuLaunchKernelEx as tirx_launch, then, when it succeeded, cuCtxSynchronize: 0 when both
// succeeded, the launch's CUresult when it failed (no synchronize then), the synchronize's
// CUresult + TIRX_SYNC_FAILED when that failed.
int tirx_launch_sync(const tirx_launch_record *r) {
  CUresult code = r->driver->launch_ex(r->config, r->fn, r->params, NULL);
  if (code != 0) return code;
  code = r->driver->ctx_synchronize();
  return code == 0 ? 0 : code | TIRX_SYNC_FAILED;
}
`;
