// A stand-in for libcuda.so.1 that does no work, for measuring the JavaScript side of a launch
// without a GPU (bench/launch-cpu.ts): every entry point the binding resolves returns
// CUDA_SUCCESS at once, writing plausible values to its outputs (one device, sm_90, non-zero
// handles). Nothing is launched, copied or allocated on a device; allocations are only recorded
// (stub_live_bytes), for tests of the binding's device-memory accounting. STUB_CUDA_DEVICES
// (default 1) sets the device count, each with its own context handle; launches and host-to-device
// copies are logged with the context current when they were made (stub_launch_at, stub_htod_at),
// for tests of launches on several GPUs; the virtual memory API maps nothing (granularity 2 MiB).
// For tests of runtime-cuda's launch stub (src/launch-shim-source.ts): stub_set_launch_result and
// stub_set_sync_result make the launches and cuCtxSynchronize return a CUresult of the test's
// choosing; stub_counted_entries gives a cuLaunchKernelEx and a cuCtxSynchronize that count their
// calls (stub_counted_calls) before doing what the plain ones do, to put in the stub's driver
// table; stub_last_ex_args is the last cuLaunchKernelEx's four arguments.
// Build: gcc -O2 -shared -fPIC -o stub_libcuda.so stub_libcuda.c
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
static uint64_t next_handle = 0x1000;
static uint64_t handle(void) { return next_handle += 0x100; }

CUresult cuInit(unsigned f) { (void)f; return 0; }
CUresult cuDeviceGetCount(int *n) {
  const char *e = getenv("STUB_CUDA_DEVICES");
  *n = e && *e ? atoi(e) : 1;
  return 0;
}
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
// Device d's primary context is 0xc0 + 0x10·d; the current one is recorded.
static uint64_t current_ctx;
CUresult cuDevicePrimaryCtxRetain(uint64_t *ctx, int d) { *ctx = 0xc0 + 0x10 * (uint64_t)d; return 0; }
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
CUresult cuCtxSetCurrent(void *c) { current_ctx = (uint64_t)c; return 0; }
// What the launches and cuCtxSynchronize return (CUDA_SUCCESS unless a test sets another).
static CUresult launch_result, sync_result;
static int sync_n;
void stub_set_launch_result(int code) { launch_result = code; }
void stub_set_sync_result(int code) { sync_result = code; }
/** Calls of cuCtxSynchronize, counted ones included. */
int stub_sync_count(void) { return sync_n; }
CUresult cuCtxSynchronize(void) { sync_n++; return sync_result; }
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
// The last 256 host-to-device copies: context, destination, bytes, their first 24 bytes.
#define LOG_MAX 256
static uint64_t htod[LOG_MAX][6];
static int htod_n;
int stub_htod_count(void) { return htod_n; }
void stub_htod_at(int i, uint64_t out[6]) { memcpy(out, htod[i % LOG_MAX], sizeof htod[0]); }
CUresult cuMemcpyHtoD_v2(uint64_t d, const void *s, size_t n) {
  uint64_t *r = htod[htod_n++ % LOG_MAX];
  memset(r, 0, sizeof htod[0]);
  r[0] = current_ctx;
  r[1] = d;
  r[2] = n;
  memcpy(&r[3], s, n < 24 ? n : 24);
  return 0;
}
CUresult cuMemcpyDtoH_v2(void *d, uint64_t s, size_t n) { (void)s; memset(d, 0, n); return 0; }
CUresult cuMemcpyDtoD_v2(uint64_t d, uint64_t s, size_t n) { (void)d; (void)s; (void)n; return 0; }
CUresult cuMemsetD8_v2(uint64_t d, unsigned char v, size_t n) { (void)d; (void)v; (void)n; return 0; }
// The last launch, for tests of the launch path: count, function, grid x/y/z, block x/y/z,
// shared bytes, stream, the first 8 bytes of the first kernel parameter, and which entry point.
static uint64_t last[12];
void stub_last_launch(uint64_t out[12]) { memcpy(out, last, sizeof last); }
// Every launch (the last 256): context, function, stream, and the first 8 bytes of each of the
// first stub_set_param_count(n) kernel parameters (at most 8; 0 by default).
static uint64_t launches[LOG_MAX][11];
static int launch_n, param_count;
void stub_set_param_count(int n) { param_count = n < 8 ? n : 8; }
int stub_launch_count(void) { return launch_n; }
void stub_launch_at(int i, uint64_t out[11]) { memcpy(out, launches[i % LOG_MAX], sizeof launches[0]); }
static void record(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shmem, void *stream, void **params, uint64_t ex) {
  uint64_t *r = launches[launch_n++ % LOG_MAX];
  memset(r, 0, sizeof launches[0]);
  r[0] = current_ctx;
  r[1] = (uint64_t)f;
  r[2] = (uint64_t)stream;
  for (int i = 0; i < param_count && params; i++) r[3 + i] = *(uint64_t *)params[i];
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
  if (launch_result) return launch_result;
  record(f, gx, gy, gz, bx, by, bz, shmem, stream, params, 0);
  return 0;
}
typedef struct {
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  void *hStream;
  void *attrs;
  unsigned numAttrs;
} CUlaunchConfig;
static uint64_t last_ex[4];
void stub_last_ex_args(uint64_t out[4]) { memcpy(out, last_ex, sizeof last_ex); }
CUresult cuLaunchKernelEx(const CUlaunchConfig *c, void *f, void **params, void **extra) {
  last_ex[0] = (uint64_t)c;
  last_ex[1] = (uint64_t)f;
  last_ex[2] = (uint64_t)params;
  last_ex[3] = (uint64_t)extra;
  if (launch_result) return launch_result;
  if (c->attrs || c->numAttrs) return 1; // CUDA_ERROR_INVALID_VALUE: none are passed
  record(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ,
         c->sharedMemBytes, c->hStream, params, 1);
  return 0;
}
static int counted[2];
static CUresult counted_launch_ex(const CUlaunchConfig *c, void *f, void **params, void **extra) {
  counted[0]++;
  return cuLaunchKernelEx(c, f, params, extra);
}
static CUresult counted_ctx_synchronize(void) {
  counted[1]++;
  return cuCtxSynchronize();
}
/** The counting cuLaunchKernelEx and cuCtxSynchronize, in the order of the launch stub's driver table. */
void stub_counted_entries(void *out[2]) {
  out[0] = (void *)counted_launch_ex;
  out[1] = (void *)counted_ctx_synchronize;
}
/** Calls of the counting cuLaunchKernelEx and cuCtxSynchronize. */
void stub_counted_calls(int out[2]) { memcpy(out, counted, sizeof counted); }
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
CUresult cuStreamWaitEvent(void *s, void *e, unsigned f) { (void)s; (void)e; (void)f; return 0; }
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
// The virtual memory API (symmetric tensors): reservations are distinct addresses, nothing maps.
CUresult cuMemGetAllocationGranularity(size_t *g, const void *prop, int option) {
  (void)prop; (void)option; *g = (size_t)2 << 20; return 0;
}
CUresult cuMemCreate(uint64_t *h, size_t n, const void *prop, uint64_t flags) {
  (void)n; (void)prop; (void)flags; *h = handle(); return 0;
}
CUresult cuMemAddressReserve(uint64_t *p, size_t n, size_t align, uint64_t addr, uint64_t flags) {
  (void)n; (void)align; (void)addr; (void)flags; *p = handle() << 24; return 0;
}
CUresult cuMemMap(uint64_t p, size_t n, size_t off, uint64_t h, uint64_t flags) {
  (void)p; (void)n; (void)off; (void)h; (void)flags; return 0;
}
CUresult cuMemSetAccess(uint64_t p, size_t n, const void *desc, size_t count) {
  (void)p; (void)n; (void)desc; (void)count; return 0;
}
CUresult cuMemUnmap(uint64_t p, size_t n) { (void)p; (void)n; return 0; }
CUresult cuMemRelease(uint64_t h) { (void)h; return 0; }
CUresult cuMemAddressFree(uint64_t p, size_t n) { (void)p; (void)n; return 0; }
// One CTA per SM of any kernel (132 SMs: 132 resident CTAs).
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *f, int block, size_t shared) {
  (void)f; (void)block; (void)shared; *n = 1; return 0;
}
CUresult cuGetErrorName(int c, const char **s) { (void)c; *s = "CUDA_ERROR_STUB"; return 0; }
CUresult cuGetErrorString(int c, const char **s) { (void)c; *s = "stub"; return 0; }
