/**
 * The C source of the launch stub that launch-shim.ts builds and loads: `tirx_shim_init`,
 * `tirx_launch` and `tirx_launch_sync` (CUDA Driver API: cuLaunchKernelEx, cuCtxSynchronize).
 * A string, not a .c file, so that it is built into dist/ with the package and an edit of it
 * rebuilds the package; its hash is part of the built library's name. It declares the little of
 * cuda.h it uses, so that no CUDA toolkit is needed. The three functions are marked
 * `visibility("default")`, so that a `CC` with `-fvisibility=hidden` still exports them (GCC and
 * Clang, "Function Attributes").
 */
export const LAUNCH_SHIM_C = `// runtime-cuda's launch stub (launch-shim.ts builds and loads it): one FFI call from JavaScript per
// queued launch, and one per launch + synchronize, where calling the driver through koffi takes
// one call per driver function. Compiled at first use with the host C compiler and cached on disk,
// as Triton compiles its launcher stub. It needs no CUDA toolkit: it declares the little of
// cuda.h's ABI it uses (CUDA Driver API, CUDA 12.0) and finds the driver's functions with dlsym in
// the library the koffi binding loaded.
#include <dlfcn.h>
#include <stddef.h>

// Exported whatever -fvisibility the compiler was given (GCC and Clang).
#define TIRX_EXPORT __attribute__((visibility("default")))

typedef int CUresult; // CUDA_SUCCESS is 0; any other value of the int is an error

// cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
typedef CUresult (*launch_ex_fn)(const void *, void *, void **, void **);
// cuCtxSynchronize(void)
typedef CUresult (*ctx_synchronize_fn)(void);

// The driver's entry points, filled by tirx_shim_init (16 bytes, in memory the caller owns).
typedef struct {
  launch_ex_fn launch_ex;
  ctx_synchronize_fn ctx_synchronize;
} tirx_driver;

// One bound launch (40 bytes, written by CudaKernel.launcher in memory that never moves).
typedef struct {
  const tirx_driver *driver; // at 0
  const void *config;        // at 8: const CUlaunchConfig *: grid, block, shared bytes, stream, attributes
  void *fn;                  // at 16: CUfunction
  void **params;             // at 24: kernelParams: one pointer per parameter, each to its value
  CUresult result;           // at 32: the failed call's CUresult, written by tirx_launch_sync
  int unused;                // at 36
} tirx_launch_record;

// What tirx_launch_sync returns besides 0: which call failed (its CUresult is in the record).
#define TIRX_LAUNCH_FAILED 1
#define TIRX_SYNC_FAILED 2

// Open library (the path the koffi binding loaded: dlopen returns the library already loaded)
// and fill out with its cuLaunchKernelEx and cuCtxSynchronize. 0 on success; 1 when the
// library does not open, 2 when it lacks cuLaunchKernelEx (a driver before CUDA 12.0) or
// cuCtxSynchronize. The library stays open for the life of the process.
TIRX_EXPORT int tirx_shim_init(const char *library, tirx_driver *out) {
  void *lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return 1;
  *(void **)&out->launch_ex = dlsym(lib, "cuLaunchKernelEx");
  *(void **)&out->ctx_synchronize = dlsym(lib, "cuCtxSynchronize");
  return out->launch_ex && out->ctx_synchronize ? 0 : 2;
}

// cuLaunchKernelEx(config, fn, params, NULL): the CUresult.
TIRX_EXPORT int tirx_launch(const tirx_launch_record *r) {
  return r->driver->launch_ex(r->config, r->fn, r->params, NULL);
}

// cuLaunchKernelEx as tirx_launch, then, when it succeeded, cuCtxSynchronize: 0 when both
// succeeded; TIRX_LAUNCH_FAILED when the launch failed (no synchronize then), TIRX_SYNC_FAILED
// when the synchronize failed, with that call's CUresult in r->result (any int, exactly).
TIRX_EXPORT int tirx_launch_sync(tirx_launch_record *r) {
  CUresult code = r->driver->launch_ex(r->config, r->fn, r->params, NULL);
  if (code != 0) {
    r->result = code;
    return TIRX_LAUNCH_FAILED;
  }
  code = r->driver->ctx_synchronize();
  if (code != 0) {
    r->result = code;
    return TIRX_SYNC_FAILED;
  }
  return 0;
}
`;
