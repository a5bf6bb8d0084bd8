// A stand-in for libcuda.so.1 that does no work, for measuring the JavaScript side of a launch
// without a GPU (bench/launch-cpu.ts): every entry point the binding resolves returns
// CUDA_SUCCESS at once, writing plausible values to its outputs (one device, sm_90, non-zero
// handles). Nothing is launched, copied or allocated on a device; allocations are only recorded
// (stub_live_bytes), for tests of the binding's device-memory accounting.
// Build: gcc -O2 -shared -fPIC -o stub_libcuda.so stub_libcuda.c
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
static uint64_t next_handle = 0x1000;
static uint64_t handle(void) { return next_handle += 0x100; }

CUresult cuInit(unsigned f) { (void)f; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(int *d, int o) { *d = o; return 0; }
CUresult cuDeviceGetName(char *name, int len, int d) { (void)d; strncpy(name, "stub GPU", (size_t)len); return 0; }
CUresult cuDeviceGetAttribute(int *v, int attr, int d) {
  (void)d;
  switch (attr) {
    case 75: *v = 9; break;          // compute capability major
    case 76: *v = 0; break;          // minor
    case 8: *v = 49152; break;       // shared per block
    case 97: *v = 232448; break;     // shared per block, opt-in
    case 16: *v = 132; break;        // SMs
    default: *v = 1;
  }
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(uint64_t *ctx, int d) { (void)d; *ctx = 0xc0; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { (void)d; return 0; }
// Live allocations (pointer, bytes): at most MAX_LIVE; the next cuMemAlloc is out of memory.
#define MAX_LIVE 4096
static uint64_t live_ptr[MAX_LIVE];
static size_t live_size[MAX_LIVE];
static int live_n;
static uint64_t live_bytes;
/** Bytes allocated by cuMemAlloc and not freed by cuMemFree or a context reset. */
uint64_t stub_live_bytes(void) { return live_bytes; }
CUresult cuDevicePrimaryCtxReset_v2(int d) { (void)d; live_n = 0; live_bytes = 0; return 0; }
CUresult cuCtxSetCurrent(void *c) { (void)c; return 0; }
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuModuleLoadDataEx(uint64_t *m, const void *img, unsigned n, void *o, void *v) {
  (void)img; (void)n; (void)o; (void)v; *m = handle(); return 0;
}
CUresult cuModuleLoadData(uint64_t *m, const void *img) { (void)img; *m = handle(); return 0; }
CUresult cuModuleUnload(void *m) { (void)m; return 0; }
CUresult cuModuleGetFunction(uint64_t *f, void *m, const char *name) { (void)m; (void)name; *f = handle(); return 0; }
CUresult cuModuleGetGlobal_v2(uint64_t *p, size_t *b, void *m, const char *name) {
  (void)m; (void)name; *p = handle(); if (b) *b = 40; return 0;
}
CUresult cuFuncSetAttribute(void *f, int a, int v) { (void)f; (void)a; (void)v; return 0; }
CUresult cuMemAlloc_v2(uint64_t *p, size_t bytes) {
  if (live_n == MAX_LIVE) return 2; // CUDA_ERROR_OUT_OF_MEMORY
  *p = handle() << 20;
  live_ptr[live_n] = *p;
  live_size[live_n++] = bytes;
  live_bytes += bytes;
  return 0;
}
CUresult cuMemFree_v2(uint64_t p) {
  for (int i = 0; i < live_n; i++) {
    if (live_ptr[i] != p) continue;
    live_bytes -= live_size[i];
    live_n--;
    live_ptr[i] = live_ptr[live_n];
    live_size[i] = live_size[live_n];
    return 0;
  }
  return 1; // CUDA_ERROR_INVALID_VALUE: not an allocation
}
CUresult cuMemcpyHtoD_v2(uint64_t d, const void *s, size_t n) { (void)d; (void)s; (void)n; return 0; }
CUresult cuMemcpyDtoH_v2(void *d, uint64_t s, size_t n) { (void)s; memset(d, 0, n); return 0; }
CUresult cuMemcpyDtoD_v2(uint64_t d, uint64_t s, size_t n) { (void)d; (void)s; (void)n; return 0; }
CUresult cuMemsetD8_v2(uint64_t d, unsigned char v, size_t n) { (void)d; (void)v; (void)n; return 0; }
// The last launch, for tests of the launch path: count, function, grid x/y/z, block x/y/z,
// shared bytes, stream, the first 8 bytes of the first kernel parameter, and which entry point.
static uint64_t last[12];
void stub_last_launch(uint64_t out[12]) { memcpy(out, last, sizeof last); }
static void record(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shmem, void *stream, void **params, uint64_t ex) {
  last[0]++;
  last[1] = (uint64_t)f;
  last[2] = gx; last[3] = gy; last[4] = gz; last[5] = bx; last[6] = by; last[7] = bz;
  last[8] = shmem;
  last[9] = (uint64_t)stream;
  last[10] = params ? *(uint64_t *)params[0] : 0;
  last[11] = ex;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shmem, void *stream, void **params, void **extra) {
  (void)extra;
  record(f, gx, gy, gz, bx, by, bz, shmem, stream, params, 0);
  return 0;
}
typedef struct {
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  void *hStream;
  void *attrs;
  unsigned numAttrs;
} CUlaunchConfig;
CUresult cuLaunchKernelEx(const CUlaunchConfig *c, void *f, void **params, void **extra) {
  (void)extra;
  if (c->attrs || c->numAttrs) return 1; // CUDA_ERROR_INVALID_VALUE: none are passed
  record(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ,
         c->sharedMemBytes, c->hStream, params, 1);
  return 0;
}
CUresult cuEventCreate(uint64_t *e, unsigned f) { (void)f; *e = handle(); return 0; }
CUresult cuEventRecord(void *e, void *s) { (void)e; (void)s; return 0; }
CUresult cuEventSynchronize(void *e) { (void)e; return 0; }
CUresult cuEventElapsedTime_v2(float *ms, void *a, void *b) { (void)a; (void)b; *ms = 0.001f; return 0; }
CUresult cuEventDestroy_v2(void *e) { (void)e; return 0; }
CUresult cuEventQuery(void *e) { (void)e; return 0; }
CUresult cuStreamCreate(uint64_t *s, unsigned f) { (void)f; *s = handle(); return 0; }
CUresult cuStreamDestroy_v2(void *s) { (void)s; return 0; }
CUresult cuStreamSynchronize(void *s) { (void)s; return 0; }
CUresult cuStreamQuery(void *s) { (void)s; return 0; }
CUresult cuStreamBeginCapture_v2(void *s, int m) { (void)s; (void)m; return 0; }
CUresult cuStreamEndCapture(void *s, uint64_t *g) { (void)s; *g = handle(); return 0; }
CUresult cuGraphInstantiateWithFlags(uint64_t *e, void *g, uint64_t f) { (void)g; (void)f; *e = handle(); return 0; }
CUresult cuGraphLaunch(void *e, void *s) { (void)e; (void)s; return 0; }
CUresult cuGraphGetNodes(void *g, void *nodes, size_t *n) { (void)g; (void)nodes; *n = 0; return 0; }
CUresult cuGraphExecDestroy(void *e) { (void)e; return 0; }
CUresult cuGraphDestroy(void *g) { (void)g; return 0; }
CUresult cuMemGetInfo_v2(size_t *f, size_t *t) { *f = (size_t)1 << 37; *t = (size_t)1 << 37; return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuLinkCreate_v2(unsigned n, void *o, void *v, uint64_t *s) { (void)n; (void)o; (void)v; *s = handle(); return 0; }
CUresult cuLinkAddData_v2(void *s, int t, void *d, size_t n, const char *name, unsigned k, void *o, void *v) {
  (void)s; (void)t; (void)d; (void)n; (void)name; (void)k; (void)o; (void)v; return 0;
}
static char cubin[16];
CUresult cuLinkComplete(void *s, void **out, size_t *n) { (void)s; *out = cubin; *n = sizeof cubin; return 0; }
CUresult cuLinkDestroy(void *s) { (void)s; return 0; }
CUresult cuGetErrorName(int c, const char **s) { (void)c; *s = "CUDA_ERROR_STUB"; return 0; }
CUresult cuGetErrorString(int c, const char **s) { (void)c; *s = "stub"; return 0; }
