import { createRequire } from "node:module";
import { TirxError } from "@tirx-ts/core";
import { CONTEXT_LOST_CODES, CudaError, CudaUnavailableError, cuResultName } from "./errors.js";

/** Called when a call returns a context-losing code; returns text added to the error's message. */
let contextLostHook: ((code: number) => string | undefined) | undefined;

/** @internal device.ts marks the current device lost and explains what to do. */
export function onContextLost(hook: (code: number) => string | undefined): void {
  contextLostHook = hook;
}

export { CudaError, CudaUnavailableError, cuResultName, CU_RESULT_NAMES } from "./errors.js";

/**
 * Thin koffi binding of the CUDA driver API (libcuda.so.1), in the manner of tinygrad's
 * ops_cuda.py: one koffi signature per driver function, one check that turns a CUresult into a
 * `CudaError`. Handles (CUcontext, CUmodule, CUfunction, CUevent) and device pointers
 * (CUdeviceptr) are bigints; 0n is NULL. Output parameters are one-element typed arrays.
 * The library is loaded on first use; `TIRX_LIBCUDA` overrides its path.
 */

type Koffi = typeof import("koffi");
type Fn = (...args: unknown[]) => number;

/** A driver handle (CUcontext, CUmodule, CUfunction, CUevent, CUstream) or a CUdeviceptr; 0n is NULL. */
export type CuHandle = bigint;

/** CUdevice_attribute values used here (cuda.h). */
export const CU_DEVICE_ATTRIBUTE = {
  MAX_SHARED_MEMORY_PER_BLOCK: 8,
  MULTIPROCESSOR_COUNT: 16,
  COMPUTE_CAPABILITY_MAJOR: 75,
  COMPUTE_CAPABILITY_MINOR: 76,
  MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: 97,
} as const;

/** CUfunction_attribute values used here (cuda.h). */
export const CU_FUNC_ATTRIBUTE = { MAX_DYNAMIC_SHARED_SIZE_BYTES: 8 } as const;

/** CUjit_option values used here (cuda.h). Size options carry the integer in the pointer slot. */
export const CU_JIT = {
  INFO_LOG_BUFFER: 3,
  INFO_LOG_BUFFER_SIZE_BYTES: 4,
  ERROR_LOG_BUFFER: 5,
  ERROR_LOG_BUFFER_SIZE_BYTES: 6,
  LOG_VERBOSE: 12,
  /** CU_JIT_TARGET: the CUjit_target to compile for, in the pointer slot. */
  TARGET: 9,
} as const;

/** Bytes of each JIT log buffer handed to cuModuleLoadDataEx. */
export const JIT_LOG_BYTES = 16 * 1024;

/** The default library name; `process.env.TIRX_LIBCUDA` replaces it. */
export const LIBCUDA = "libcuda.so.1";

/**
 * Each entry: the JS name, the exported names to try in order (`_v2` first where cuda.h maps
 * the API name to it), and the koffi argument types (the result is always CUresult = int).
 */
const SIGNATURES = {
  cuInit: [["cuInit"], ["uint32_t"]],
  cuDeviceGetCount: [["cuDeviceGetCount"], ["void *"]],
  cuDeviceGet: [["cuDeviceGet"], ["void *", "int"]],
  cuDeviceGetName: [["cuDeviceGetName"], ["void *", "int", "int"]],
  cuDeviceGetAttribute: [["cuDeviceGetAttribute"], ["void *", "int", "int"]],
  cuDevicePrimaryCtxRetain: [["cuDevicePrimaryCtxRetain"], ["void *", "int"]],
  cuDevicePrimaryCtxRelease: [
    ["cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"],
    ["int"],
  ],
  cuDevicePrimaryCtxReset: [["cuDevicePrimaryCtxReset_v2", "cuDevicePrimaryCtxReset"], ["int"]],
  cuCtxSetCurrent: [["cuCtxSetCurrent"], ["void *"]],
  cuCtxSynchronize: [["cuCtxSynchronize"], []],
  cuModuleLoadDataEx: [
    ["cuModuleLoadDataEx"],
    ["void *", "void *", "uint32_t", "void *", "void *"],
  ],
  cuModuleUnload: [["cuModuleUnload"], ["void *"]],
  cuModuleGetFunction: [["cuModuleGetFunction"], ["void *", "void *", "const char *"]],
  cuFuncSetAttribute: [["cuFuncSetAttribute"], ["void *", "int", "int"]],
  cuModuleGetGlobal: [
    ["cuModuleGetGlobal_v2", "cuModuleGetGlobal"],
    ["void *", "void *", "void *", "const char *"],
  ],
  cuMemAlloc: [["cuMemAlloc_v2"], ["void *", "size_t"]],
  cuMemFree: [["cuMemFree_v2"], ["uint64_t"]],
  cuMemcpyHtoD: [["cuMemcpyHtoD_v2"], ["uint64_t", "void *", "size_t"]],
  cuMemcpyDtoH: [["cuMemcpyDtoH_v2"], ["void *", "uint64_t", "size_t"]],
  cuMemcpyDtoD: [["cuMemcpyDtoD_v2"], ["uint64_t", "uint64_t", "size_t"]],
  cuMemsetD8: [["cuMemsetD8_v2"], ["uint64_t", "uint8_t", "size_t"]],
  cuLaunchKernel: [
    ["cuLaunchKernel"],
    [
      "void *",
      "uint32_t",
      "uint32_t",
      "uint32_t",
      "uint32_t",
      "uint32_t",
      "uint32_t",
      "uint32_t",
      "void *",
      "void *",
      "void *",
    ],
  ],
  cuEventCreate: [["cuEventCreate"], ["void *", "uint32_t"]],
  cuEventRecord: [["cuEventRecord"], ["void *", "void *"]],
  cuEventSynchronize: [["cuEventSynchronize"], ["void *"]],
  cuEventElapsedTime: [
    ["cuEventElapsedTime_v2", "cuEventElapsedTime"],
    ["void *", "void *", "void *"],
  ],
  cuEventDestroy: [["cuEventDestroy_v2", "cuEventDestroy"], ["void *"]],
  cuEventQuery: [["cuEventQuery"], ["void *"]],
  cuStreamCreate: [["cuStreamCreate"], ["void *", "uint32_t"]],
  cuStreamDestroy: [["cuStreamDestroy_v2", "cuStreamDestroy"], ["void *"]],
  cuStreamSynchronize: [["cuStreamSynchronize"], ["void *"]],
  cuStreamQuery: [["cuStreamQuery"], ["void *"]],
  cuStreamWaitEvent: [["cuStreamWaitEvent"], ["void *", "void *", "uint32_t"]],
  cuStreamBeginCapture: [
    ["cuStreamBeginCapture_v2", "cuStreamBeginCapture"],
    ["void *", "int"],
  ],
  cuStreamEndCapture: [["cuStreamEndCapture"], ["void *", "void *"]],
  cuGraphInstantiateWithFlags: [["cuGraphInstantiateWithFlags"], ["void *", "void *", "uint64_t"]],
  cuGraphLaunch: [["cuGraphLaunch"], ["void *", "void *"]],
  cuGraphGetNodes: [["cuGraphGetNodes"], ["void *", "void *", "void *"]],
  cuGraphExecDestroy: [["cuGraphExecDestroy"], ["void *"]],
  cuGraphDestroy: [["cuGraphDestroy"], ["void *"]],
  cuMemGetInfo: [["cuMemGetInfo_v2"], ["void *", "void *"]],
  cuDriverGetVersion: [["cuDriverGetVersion"], ["void *"]],
  cuLinkCreate: [
    ["cuLinkCreate_v2", "cuLinkCreate"],
    ["uint32_t", "void *", "void *", "void *"],
  ],
  cuLinkAddData: [
    ["cuLinkAddData_v2", "cuLinkAddData"],
    ["void *", "int", "void *", "size_t", "const char *", "uint32_t", "void *", "void *"],
  ],
  cuLinkComplete: [["cuLinkComplete"], ["void *", "void *", "void *"]],
  cuLinkDestroy: [["cuLinkDestroy"], ["void *"]],
  cuGetErrorName: [["cuGetErrorName"], ["int", "void *"]],
  cuGetErrorString: [["cuGetErrorString"], ["int", "void *"]],
} as const satisfies Record<string, readonly [readonly string[], readonly string[]]>;

type RawName = keyof typeof SIGNATURES;
type Raw = Record<RawName, Fn>;

let koffiModule: Koffi | undefined;

function loadKoffi(library: string): Koffi {
  if (koffiModule) return koffiModule;
  try {
    koffiModule = createRequire(import.meta.url)("koffi") as Koffi;
    return koffiModule;
  } catch (e) {
    throw new CudaUnavailableError(
      library,
      `the koffi FFI module failed to load (${(e as Error).message})`,
    );
  }
}

/** The koffi module (loaded lazily, as the binding needs it). */
export function koffi(): Koffi {
  return loadKoffi(libraryPath());
}

/** The library path the binding loads: `TIRX_LIBCUDA` when set, else libcuda.so.1. */
export function libraryPath(): string {
  const p = process.env["TIRX_LIBCUDA"];
  return p && p.length > 0 ? p : LIBCUDA;
}

/**
 * The checked driver API. Every method throws `CudaError` (driver name, code, call) when the
 * driver returns anything but CUDA_SUCCESS. Sizes are bytes; times milliseconds (as the driver).
 */
export class CudaDriver {
  readonly library: string;
  readonly #k: Koffi;
  readonly #raw: Raw;
  readonly #i32 = new Int32Array(1);
  readonly #u64 = new BigUint64Array(1);
  readonly #f32 = new Float32Array(1);
  readonly #launchEx: Fn | undefined;

  /** @internal use `driver()`. */
  constructor(library: string, k: Koffi, raw: Raw, launchEx?: Fn) {
    this.library = library;
    this.#k = k;
    this.#raw = raw;
    this.#launchEx = launchEx;
  }

  /**
   * The koffi function of cuLaunchKernelEx (CUDA 12.0), unchecked: (const CUlaunchConfig *,
   * CUfunction, kernelParams, extra) → CUresult; undefined when the driver does not export it.
   * Four arguments instead of cuLaunchKernel's eleven: the grid, block, shared bytes and stream
   * live in a CUlaunchConfig the caller keeps (see `CudaKernel.launcher`).
   */
  get cuLaunchKernelEx(): Fn | undefined {
    return this.#launchEx;
  }

  /** Throw a CudaError for `code` from `call` unless it is CUDA_SUCCESS. */
  check(call: string, code: number, opts: { log?: string; context?: string } = {}): void {
    if (code === 0) return;
    const lost = CONTEXT_LOST_CODES.has(code) ? contextLostHook?.(code) : undefined;
    const description = this.errorString(code);
    throw new CudaError(
      call,
      code,
      this.errorName(code),
      lost ? `${description ?? ""}. ${lost}` : description,
      opts,
    );
  }

  /** The driver's name for a CUresult (cuGetErrorName), falling back to cuda.h's table. */
  errorName(code: number): string {
    const out = new BigUint64Array(1);
    if (this.#raw.cuGetErrorName(code, out) === 0 && out[0] !== 0n)
      return this.#k.decode.string(out[0]!);
    return cuResultName(code);
  }

  /** The driver's description of a CUresult (cuGetErrorString), or undefined. */
  errorString(code: number): string | undefined {
    const out = new BigUint64Array(1);
    if (this.#raw.cuGetErrorString(code, out) === 0 && out[0] !== 0n)
      return this.#k.decode.string(out[0]!);
    return undefined;
  }

  init(): void {
    this.check("cuInit", this.#raw.cuInit(0));
  }

  deviceCount(): number {
    this.check("cuDeviceGetCount", this.#raw.cuDeviceGetCount(this.#i32));
    return this.#i32[0]!;
  }

  /** CUdevice (an int) of `ordinal`. */
  deviceGet(ordinal: number): number {
    this.check("cuDeviceGet", this.#raw.cuDeviceGet(this.#i32, ordinal));
    return this.#i32[0]!;
  }

  deviceName(dev: number): string {
    const buf = new Uint8Array(256);
    this.check("cuDeviceGetName", this.#raw.cuDeviceGetName(buf, buf.length, dev));
    const end = buf.indexOf(0);
    return new TextDecoder().decode(buf.subarray(0, end < 0 ? buf.length : end));
  }

  deviceAttribute(attr: number, dev: number): number {
    this.check("cuDeviceGetAttribute", this.#raw.cuDeviceGetAttribute(this.#i32, attr, dev));
    return this.#i32[0]!;
  }

  primaryCtxRetain(dev: number): CuHandle {
    this.check("cuDevicePrimaryCtxRetain", this.#raw.cuDevicePrimaryCtxRetain(this.#u64, dev));
    return this.#u64[0]!;
  }

  primaryCtxRelease(dev: number): void {
    this.check("cuDevicePrimaryCtxRelease", this.#raw.cuDevicePrimaryCtxRelease(dev));
  }

  /** Destroy every allocation and module of the device's primary context and reset its state. */
  primaryCtxReset(dev: number): void {
    this.check("cuDevicePrimaryCtxReset", this.#raw.cuDevicePrimaryCtxReset(dev));
  }

  ctxSetCurrent(ctx: CuHandle): void {
    this.check("cuCtxSetCurrent", this.#raw.cuCtxSetCurrent(ctx));
  }

  /** cuCtxSynchronize; allocates nothing when it succeeds (launch + synchronize is timed in bench/launch.ts). */
  ctxSynchronize(context?: string): void {
    const code = this.#raw.cuCtxSynchronize();
    if (code !== 0) this.check("cuCtxSynchronize", code, context ? { context } : {});
  }

  /**
   * Load a module image (cuModuleLoadDataEx): PTX text (JIT-compiled) or cubin/fatbin bytes with INFO and ERROR log buffers of
   * `JIT_LOG_BYTES` each. The image is passed NUL-terminated. On failure the CudaError's
   * message and `log` hold the JIT error log (falling back to the info log).
   */
  moduleLoadData(
    ptx: string | Uint8Array,
    jitTarget?: number,
  ): { module: CuHandle; infoLog: string } {
    const k = this.#k;
    // PTX text must end with NUL; a cubin or fatbin (bytes) is passed as it is.
    const image = typeof ptx === "string" ? Buffer.from(ptx + "\0", "utf8") : ptx;
    const info = k.alloc("uint8_t", JIT_LOG_BYTES) as bigint;
    const error = k.alloc("uint8_t", JIT_LOG_BYTES) as bigint;
    try {
      new Uint8Array(k.view(info, JIT_LOG_BYTES)).fill(0);
      new Uint8Array(k.view(error, JIT_LOG_BYTES)).fill(0);
      const target = typeof ptx === "string" && jitTarget !== undefined;
      const options = new Int32Array([
        CU_JIT.INFO_LOG_BUFFER,
        CU_JIT.INFO_LOG_BUFFER_SIZE_BYTES,
        CU_JIT.ERROR_LOG_BUFFER,
        CU_JIT.ERROR_LOG_BUFFER_SIZE_BYTES,
        ...(target ? [CU_JIT.TARGET] : []),
      ]);
      // Size options carry the integer itself in the pointer slot; the driver writes back the bytes used.
      const values = new BigUint64Array([
        info,
        BigInt(JIT_LOG_BYTES),
        error,
        BigInt(JIT_LOG_BYTES),
        ...(target ? [BigInt(jitTarget)] : []),
      ]);
      const out = new BigUint64Array(1);
      const code = this.#raw.cuModuleLoadDataEx(out, image, options.length, options, values);
      const infoLog = readLog(k, info, values[1]!);
      if (code !== 0) {
        const errorLog = readLog(k, error, values[3]!);
        const log = errorLog || infoLog;
        this.check("cuModuleLoadDataEx", code, log ? { log } : {});
      }
      return { module: out[0]!, infoLog };
    } finally {
      k.free(info);
      k.free(error);
    }
  }

  moduleUnload(mod: CuHandle): void {
    this.check("cuModuleUnload", this.#raw.cuModuleUnload(mod));
  }

  moduleGetFunction(mod: CuHandle, name: string): CuHandle {
    this.check("cuModuleGetFunction", this.#raw.cuModuleGetFunction(this.#u64, mod, name), {
      context: `entry "${name}"`,
    });
    return this.#u64[0]!;
  }

  /** Address and size in bytes of module-scope variable `name` (cuModuleGetGlobal). */
  moduleGetGlobal(mod: CuHandle, name: string): { ptr: CuHandle; bytes: number } {
    const size = new BigUint64Array(1);
    this.check("cuModuleGetGlobal_v2", this.#raw.cuModuleGetGlobal(this.#u64, size, mod, name), {
      context: `global "${name}"`,
    });
    return { ptr: this.#u64[0]!, bytes: Number(size[0]!) };
  }

  funcSetAttribute(fn: CuHandle, attr: number, value: number): void {
    this.check("cuFuncSetAttribute", this.#raw.cuFuncSetAttribute(fn, attr, value));
  }

  /** Allocate `bytes` (> 0) of device memory. */
  memAlloc(bytes: number): CuHandle {
    this.check("cuMemAlloc_v2", this.#raw.cuMemAlloc(this.#u64, bytes));
    return this.#u64[0]!;
  }

  memFree(ptr: CuHandle): void {
    this.check("cuMemFree_v2", this.#raw.cuMemFree(ptr));
  }

  /** Synchronous host → device copy of all of `src`. */
  memcpyHtoD(dst: CuHandle, src: Uint8Array): void {
    this.check("cuMemcpyHtoD_v2", this.#raw.cuMemcpyHtoD(dst, src, src.byteLength));
  }

  /** Synchronous device → host copy filling all of `dst`. */
  memcpyDtoH(dst: Uint8Array, src: CuHandle): void {
    this.check("cuMemcpyDtoH_v2", this.#raw.cuMemcpyDtoH(dst, src, dst.byteLength));
  }

  memcpyDtoD(dst: CuHandle, src: CuHandle, bytes: number): void {
    this.check("cuMemcpyDtoD_v2", this.#raw.cuMemcpyDtoD(dst, src, bytes));
  }

  memsetD8(dst: CuHandle, value: number, bytes: number): void {
    this.check("cuMemsetD8_v2", this.#raw.cuMemsetD8(dst, value, bytes));
  }

  /**
   * Wait for the legacy default stream (stream 0), where cuMemsetD8 and cuMemcpyHtoD are queued.
   * Both may return before the device memory holds their bytes (CUDA Driver API, "API
   * synchronization behavior": a memset is asynchronous with respect to the host, and a copy from
   * pageable memory returns once the bytes are staged), and a non-blocking stream does not wait
   * for stream 0: a kernel queued there next could read the memory before they land (seen on the
   * H200: test/gpu/programmatic-launch.test.ts read a zeroed tensor's old bytes).
   */
  settleDefaultStream(): void {
    this.check("cuStreamSynchronize", this.#raw.cuStreamSynchronize(0n));
  }

  /**
   * cuLaunchKernel on `stream` (0n: the default stream). `kernelParams` is the address of an
   * array of pointers, one per kernel parameter, each to that argument's value (0n when the
   * kernel takes no parameters).
   */
  /**
   * The koffi function of cuLaunchKernel itself, unchecked: (CUfunction, gridX, gridY, gridZ,
   * blockX, blockY, blockZ, sharedBytes, CUstream, kernelParams, extra) → CUresult, handles and
   * pointers as bigint (0n for NULL). For launch fast paths, which check the result themselves.
   */
  get cuLaunchKernel(): Fn {
    return this.#raw.cuLaunchKernel;
  }

  launchKernel(
    fn: CuHandle,
    grid: readonly [number, number, number],
    block: readonly [number, number, number],
    sharedBytes: number,
    stream: CuHandle,
    kernelParams: CuHandle,
    context?: string,
  ): void {
    const code = this.#raw.cuLaunchKernel(
      fn,
      grid[0],
      grid[1],
      grid[2],
      block[0],
      block[1],
      block[2],
      sharedBytes,
      stream,
      kernelParams,
      0n,
    );
    if (code !== 0) this.check("cuLaunchKernel", code, context ? { context } : {});
  }

  /** A new event (flags 0: timing enabled). */
  eventCreate(flags = 0): CuHandle {
    this.check("cuEventCreate", this.#raw.cuEventCreate(this.#u64, flags));
    return this.#u64[0]!;
  }

  eventRecord(ev: CuHandle, stream: CuHandle = 0n): void {
    this.check("cuEventRecord", this.#raw.cuEventRecord(ev, stream));
  }

  eventSynchronize(ev: CuHandle): void {
    this.check("cuEventSynchronize", this.#raw.cuEventSynchronize(ev));
  }

  /** Milliseconds between two recorded, completed events. */
  eventElapsedMs(start: CuHandle, end: CuHandle): number {
    this.check("cuEventElapsedTime", this.#raw.cuEventElapsedTime(this.#f32, start, end));
    return this.#f32[0]!;
  }

  eventDestroy(ev: CuHandle): void {
    this.check("cuEventDestroy", this.#raw.cuEventDestroy(ev));
  }

  /** Whether all work captured by the event has completed (cuEventQuery; CUDA_ERROR_NOT_READY is false). */
  eventQuery(ev: CuHandle): boolean {
    const code = this.#raw.cuEventQuery(ev);
    if (code === CUDA_ERROR_NOT_READY) return false;
    this.check("cuEventQuery", code);
    return true;
  }

  /** A new stream (cuStreamCreate); flags 1 = CU_STREAM_NON_BLOCKING (no implicit sync with stream 0). */
  streamCreate(flags = 0): CuHandle {
    this.check("cuStreamCreate", this.#raw.cuStreamCreate(this.#u64, flags));
    return this.#u64[0]!;
  }

  streamDestroy(stream: CuHandle): void {
    this.check("cuStreamDestroy", this.#raw.cuStreamDestroy(stream));
  }

  /** Work queued on `stream` after this waits for `ev`'s recorded work (cuStreamWaitEvent). */
  streamWaitEvent(stream: CuHandle, ev: CuHandle): void {
    this.check("cuStreamWaitEvent", this.#raw.cuStreamWaitEvent(stream, ev, 0));
  }

  streamSynchronize(stream: CuHandle, context?: string): void {
    this.check(
      "cuStreamSynchronize",
      this.#raw.cuStreamSynchronize(stream),
      context ? { context } : {},
    );
  }

  /** Whether all work queued on the stream has completed (CUDA_ERROR_NOT_READY is false). */
  streamQuery(stream: CuHandle): boolean {
    const code = this.#raw.cuStreamQuery(stream);
    if (code === CUDA_ERROR_NOT_READY) return false;
    this.check("cuStreamQuery", code);
    return true;
  }

  /** Start capturing `stream` into a graph (mode: CU_STREAM_CAPTURE_MODE_*, default 1 = thread-local). */
  streamBeginCapture(stream: CuHandle, mode = 1): void {
    this.check("cuStreamBeginCapture", this.#raw.cuStreamBeginCapture(stream, mode));
  }

  /** End capture; the captured CUgraph. */
  streamEndCapture(stream: CuHandle): CuHandle {
    this.check("cuStreamEndCapture", this.#raw.cuStreamEndCapture(stream, this.#u64));
    return this.#u64[0]!;
  }

  /** An executable graph (CUgraphExec) of `graph` (cuGraphInstantiateWithFlags, flags 0). */
  graphInstantiate(graph: CuHandle): CuHandle {
    this.check(
      "cuGraphInstantiateWithFlags",
      this.#raw.cuGraphInstantiateWithFlags(this.#u64, graph, 0n),
    );
    return this.#u64[0]!;
  }

  graphLaunch(exec: CuHandle, stream: CuHandle): void {
    const code = this.#raw.cuGraphLaunch(exec, stream);
    if (code !== 0) this.check("cuGraphLaunch", code);
  }

  /** Number of nodes of a graph (cuGraphGetNodes with a NULL node array). */
  graphNodeCount(graph: CuHandle): number {
    const n = new BigUint64Array(1);
    this.check("cuGraphGetNodes", this.#raw.cuGraphGetNodes(graph, null, n));
    return Number(n[0]!);
  }

  graphExecDestroy(exec: CuHandle): void {
    this.check("cuGraphExecDestroy", this.#raw.cuGraphExecDestroy(exec));
  }

  graphDestroy(graph: CuHandle): void {
    this.check("cuGraphDestroy", this.#raw.cuGraphDestroy(graph));
  }

  /**
   * Compile PTX text to a cubin for the current context's device with the driver's linker
   * (cuLinkCreate, cuLinkAddData with CU_JIT_INPUT_PTX, cuLinkComplete), returning a copy of the
   * cubin bytes (the linker owns its output until cuLinkDestroy). `jitTarget` (a CUjit_target,
   * `jitTargetOf`) is passed as CU_JIT_TARGET; without it the linker targets the context's device.
   */
  linkPtxToCubin(ptx: string, name = "tirx.ptx", jitTarget?: number): Uint8Array {
    const state = new BigUint64Array(1);
    const options = jitTarget === undefined ? null : new Int32Array([CU_JIT.TARGET]);
    const values = jitTarget === undefined ? null : new BigUint64Array([BigInt(jitTarget)]);
    this.check(
      "cuLinkCreate",
      this.#raw.cuLinkCreate(options ? options.length : 0, options, values, state),
    );
    const link = state[0]!;
    try {
      const image = Buffer.from(ptx + "\0", "utf8");
      this.check(
        "cuLinkAddData",
        this.#raw.cuLinkAddData(
          link,
          CU_JIT_INPUT_PTX,
          image,
          image.byteLength,
          name,
          0,
          null,
          null,
        ),
      );
      const out = new BigUint64Array(1);
      const size = new BigUint64Array(1);
      this.check("cuLinkComplete", this.#raw.cuLinkComplete(link, out, size));
      const n = Number(size[0]!);
      return new Uint8Array(this.#k.view(out[0]!, n)).slice(0, n);
    } finally {
      this.#raw.cuLinkDestroy(link);
    }
  }

  /** Free and total device memory of the current context's device, bytes (cuMemGetInfo). */
  memGetInfo(): { free: number; total: number } {
    const f = new BigUint64Array(1);
    const t = new BigUint64Array(1);
    this.check("cuMemGetInfo", this.#raw.cuMemGetInfo(f, t));
    return { free: Number(f[0]!), total: Number(t[0]!) };
  }

  /** The driver's CUDA version as major * 1000 + minor * 10 (cuDriverGetVersion), e.g. 13000. */
  driverVersion(): number {
    this.check("cuDriverGetVersion", this.#raw.cuDriverGetVersion(this.#i32));
    return this.#i32[0]!;
  }
}

/** CUjitInputType CU_JIT_INPUT_PTX (cuda.h). */
const CU_JIT_INPUT_PTX = 1;

/** CUresult CUDA_ERROR_NOT_READY: queued work has not completed yet (cuda.h). */
export const CUDA_ERROR_NOT_READY = 600;

/** The text of a JIT log buffer: at most `used` bytes (as the driver reported), up to the first NUL. */
function readLog(k: Koffi, ptr: bigint, used: bigint): string {
  const n = Math.min(Number(BigInt.asUintN(32, used)), JIT_LOG_BYTES);
  const bytes = new Uint8Array(k.view(ptr, JIT_LOG_BYTES)).slice(0, n > 0 ? n : JIT_LOG_BYTES);
  const end = bytes.indexOf(0);
  return new TextDecoder().decode(end < 0 ? bytes : bytes.subarray(0, end)).trim();
}

const drivers = new Map<string, CudaDriver>();

/** CUDA_ERROR_NO_DEVICE (cuda.h): the driver loaded but finds no CUDA-capable device. */
const CU_NO_DEVICE = 100;

/**
 * The driver binding for `libraryPath()`, loaded and cuInit'ed on first use.
 * @throws CudaUnavailableError (TirxError TX5010) when the library or one of its symbols cannot be
 *   loaded, or cuInit reports CUDA_ERROR_NO_DEVICE.
 * @throws CudaError when cuInit fails otherwise.
 */
export function driver(): CudaDriver {
  const library = libraryPath();
  const cached = drivers.get(library);
  if (cached) return cached;
  const k = loadKoffi(library);
  let lib: ReturnType<Koffi["load"]>;
  try {
    lib = k.load(library);
  } catch (e) {
    throw new CudaUnavailableError(library, (e as Error).message);
  }
  const raw = {} as Raw;
  for (const [name, [symbols, args]] of Object.entries(SIGNATURES) as [
    RawName,
    readonly [readonly string[], readonly string[]],
  ][]) {
    raw[name] = bindFirst(lib, library, symbols, args);
  }
  let launchEx: Fn | undefined;
  try {
    launchEx = lib.func("cuLaunchKernelEx", "int", ["void *", "void *", "void *", "void *"]) as Fn;
  } catch {
    launchEx = undefined; // a driver before CUDA 12.0
  }
  const d = new CudaDriver(library, k, raw, launchEx);
  try {
    d.init();
  } catch (e) {
    // A driver without a GPU (a container with libcuda but no device): no GPU to run on.
    if (e instanceof CudaError && e.code === CU_NO_DEVICE) {
      throw new CudaUnavailableError(library, `${e.call} reports no CUDA device (${e.errorName})`);
    }
    throw e;
  }
  drivers.set(library, d);
  return d;
}

function bindFirst(
  lib: ReturnType<Koffi["load"]>,
  library: string,
  symbols: readonly string[],
  args: readonly string[],
): Fn {
  for (const s of symbols) {
    try {
      return lib.func(s, "int", [...args]) as Fn;
    } catch {
      // try the next exported name
    }
  }
  throw new CudaUnavailableError(
    library,
    `the library does not export ${symbols.join(" or ")} (driver too old?)`,
  );
}

/**
 * Whether a CUDA driver and at least one device are usable here. Never throws: the reason
 * names the library and the loader's or driver's message.
 */
export function cudaAvailable(): { ok: true } | { ok: false; reason: string } {
  try {
    const d = driver();
    const n = d.deviceCount();
    if (n < 1) return { ok: false, reason: `${d.library} loaded, but it reports no CUDA devices` };
    return { ok: true };
  } catch (e) {
    const reason = e instanceof TirxError ? e.text : e instanceof Error ? e.message : String(e);
    return { ok: false, reason };
  }
}
