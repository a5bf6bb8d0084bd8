/**
 * Errors of the CUDA runtime. `CudaError` carries the driver's CUresult (name and code) and the
 * driver call that returned it; `CudaUnavailableError` says why libcuda.so.1 cannot be used.
 */
import { TirxError, callSite } from "@tirx-ts/core";

/** CUresult names from cuda.h (CUDA_VERSION 13000), for messages when the driver cannot name a code itself. */
export const CU_RESULT_NAMES: Readonly<Record<number, string>> = {
  0: "CUDA_SUCCESS",
  1: "CUDA_ERROR_INVALID_VALUE",
  2: "CUDA_ERROR_OUT_OF_MEMORY",
  3: "CUDA_ERROR_NOT_INITIALIZED",
  4: "CUDA_ERROR_DEINITIALIZED",
  5: "CUDA_ERROR_PROFILER_DISABLED",
  6: "CUDA_ERROR_PROFILER_NOT_INITIALIZED",
  7: "CUDA_ERROR_PROFILER_ALREADY_STARTED",
  8: "CUDA_ERROR_PROFILER_ALREADY_STOPPED",
  34: "CUDA_ERROR_STUB_LIBRARY",
  36: "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER",
  46: "CUDA_ERROR_DEVICE_UNAVAILABLE",
  100: "CUDA_ERROR_NO_DEVICE",
  101: "CUDA_ERROR_INVALID_DEVICE",
  102: "CUDA_ERROR_DEVICE_NOT_LICENSED",
  200: "CUDA_ERROR_INVALID_IMAGE",
  201: "CUDA_ERROR_INVALID_CONTEXT",
  202: "CUDA_ERROR_CONTEXT_ALREADY_CURRENT",
  205: "CUDA_ERROR_MAP_FAILED",
  206: "CUDA_ERROR_UNMAP_FAILED",
  207: "CUDA_ERROR_ARRAY_IS_MAPPED",
  208: "CUDA_ERROR_ALREADY_MAPPED",
  209: "CUDA_ERROR_NO_BINARY_FOR_GPU",
  210: "CUDA_ERROR_ALREADY_ACQUIRED",
  211: "CUDA_ERROR_NOT_MAPPED",
  212: "CUDA_ERROR_NOT_MAPPED_AS_ARRAY",
  213: "CUDA_ERROR_NOT_MAPPED_AS_POINTER",
  214: "CUDA_ERROR_ECC_UNCORRECTABLE",
  215: "CUDA_ERROR_UNSUPPORTED_LIMIT",
  216: "CUDA_ERROR_CONTEXT_ALREADY_IN_USE",
  217: "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
  218: "CUDA_ERROR_INVALID_PTX",
  219: "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT",
  220: "CUDA_ERROR_NVLINK_UNCORRECTABLE",
  221: "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
  222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
  223: "CUDA_ERROR_JIT_COMPILATION_DISABLED",
  224: "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY",
  225: "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC",
  226: "CUDA_ERROR_CONTAINED",
  300: "CUDA_ERROR_INVALID_SOURCE",
  301: "CUDA_ERROR_FILE_NOT_FOUND",
  302: "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND",
  303: "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED",
  304: "CUDA_ERROR_OPERATING_SYSTEM",
  400: "CUDA_ERROR_INVALID_HANDLE",
  401: "CUDA_ERROR_ILLEGAL_STATE",
  402: "CUDA_ERROR_LOSSY_QUERY",
  500: "CUDA_ERROR_NOT_FOUND",
  600: "CUDA_ERROR_NOT_READY",
  700: "CUDA_ERROR_ILLEGAL_ADDRESS",
  701: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
  702: "CUDA_ERROR_LAUNCH_TIMEOUT",
  703: "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING",
  704: "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
  705: "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED",
  708: "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE",
  709: "CUDA_ERROR_CONTEXT_IS_DESTROYED",
  710: "CUDA_ERROR_ASSERT",
  711: "CUDA_ERROR_TOO_MANY_PEERS",
  712: "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
  713: "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
  714: "CUDA_ERROR_HARDWARE_STACK_ERROR",
  715: "CUDA_ERROR_ILLEGAL_INSTRUCTION",
  716: "CUDA_ERROR_MISALIGNED_ADDRESS",
  717: "CUDA_ERROR_INVALID_ADDRESS_SPACE",
  718: "CUDA_ERROR_INVALID_PC",
  719: "CUDA_ERROR_LAUNCH_FAILED",
  720: "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
  721: "CUDA_ERROR_TENSOR_MEMORY_LEAK",
  800: "CUDA_ERROR_NOT_PERMITTED",
  801: "CUDA_ERROR_NOT_SUPPORTED",
  802: "CUDA_ERROR_SYSTEM_NOT_READY",
  803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
  804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
  805: "CUDA_ERROR_MPS_CONNECTION_FAILED",
  806: "CUDA_ERROR_MPS_RPC_FAILURE",
  807: "CUDA_ERROR_MPS_SERVER_NOT_READY",
  808: "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED",
  809: "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED",
  810: "CUDA_ERROR_MPS_CLIENT_TERMINATED",
  811: "CUDA_ERROR_CDP_NOT_SUPPORTED",
  812: "CUDA_ERROR_CDP_VERSION_MISMATCH",
  900: "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
  901: "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
  902: "CUDA_ERROR_STREAM_CAPTURE_MERGE",
  903: "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED",
  904: "CUDA_ERROR_STREAM_CAPTURE_UNJOINED",
  905: "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
  906: "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
  907: "CUDA_ERROR_CAPTURED_EVENT",
  908: "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD",
  909: "CUDA_ERROR_TIMEOUT",
  910: "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE",
  911: "CUDA_ERROR_EXTERNAL_DEVICE",
  912: "CUDA_ERROR_INVALID_CLUSTER_SIZE",
  913: "CUDA_ERROR_FUNCTION_NOT_LOADED",
  914: "CUDA_ERROR_INVALID_RESOURCE_TYPE",
  915: "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION",
  916: "CUDA_ERROR_KEY_ROTATION",
  999: "CUDA_ERROR_UNKNOWN",
};

/** The CUresult name of `code` from cuda.h's table, e.g. 218 → "CUDA_ERROR_INVALID_PTX"; unknown codes → "CUDA_ERROR_<code>". */
export function cuResultName(code: number): string {
  return CU_RESULT_NAMES[code] ?? `CUDA_ERROR_${code}`;
}

/**
 * A CUDA driver call returned something other than CUDA_SUCCESS. `errorName` is the driver's
 * name for `code` (e.g. "CUDA_ERROR_INVALID_PTX"), `call` the driver function
 * (e.g. "cuModuleLoadDataEx"), `log` the JIT error log where there is one (also in the message).
 */
export class CudaError extends Error {
  readonly code: number;
  readonly errorName: string;
  readonly call: string;
  readonly log: string | undefined;

  constructor(
    call: string,
    code: number,
    errorName: string,
    description?: string,
    opts: { log?: string; context?: string } = {},
  ) {
    const what = opts.context ? ` (${opts.context})` : "";
    const desc = description ? `: ${description}` : "";
    const log = opts.log ? `\n${opts.log}` : "";
    super(`${call} failed with ${errorName} (${code})${what}${desc}${log}`);
    this.name = "CudaError";
    this.code = code;
    this.errorName = errorName;
    this.call = call;
    this.log = opts.log;
  }
}

/**
 * CUresults after which the context is unusable ("sticky" errors: a kernel faulted, CUDA C
 * Programming Guide, "Error Checking"; cuda.h): every later call in the process returns the same
 * code until the primary context is reset.
 */
export const CONTEXT_LOST_CODES: ReadonlySet<number> = new Set([
  700, // CUDA_ERROR_ILLEGAL_ADDRESS
  714, // CUDA_ERROR_HARDWARE_STACK_ERROR
  715, // CUDA_ERROR_ILLEGAL_INSTRUCTION
  716, // CUDA_ERROR_MISALIGNED_ADDRESS
  717, // CUDA_ERROR_INVALID_ADDRESS_SPACE
  718, // CUDA_ERROR_INVALID_PC
  719, // CUDA_ERROR_LAUNCH_FAILED
]);

/**
 * libcuda.so.1 (or a symbol it must export) could not be loaded, or the driver reports no GPU: a
 * TirxError TX5010 at the caller's line that asked for the GPU (core's callSite), with a note on
 * using the simulated device instead, so that an uncaught one prints as a diagnostic.
 */
export class CudaUnavailableError extends TirxError {
  /** The library path that was tried. */
  readonly library: string;
  /** The loader's own reason. */
  readonly reason: string;

  constructor(library: string, reason: string) {
    super(
      "TX5010",
      `CUDA is unavailable: cannot load the NVIDIA driver library ${library}: ${reason}`,
      callSite(),
      [
        {
          message:
            "without a GPU, run on the simulated device: tensors made with sim() or device() (which picks it when no CUDA driver loads); TIRX_DEVICE=sim forces it",
        },
      ],
    );
    this.name = "CudaUnavailableError";
    this.library = library;
    this.reason = reason;
  }
}
