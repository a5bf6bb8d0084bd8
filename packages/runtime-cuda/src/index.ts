/**
 * @tirx-ts/runtime-cuda: run tirx-ts kernels on NVIDIA GPUs from Node.js through the CUDA driver
 * API (libcuda.so.1, bound with koffi; nothing to compile at install).
 *
 * - `cuda(ordinal)` gives a `CudaDevice` (primary context retained and current).
 * - `cudaTensor` / `cudaEmpty` / `cudaZeros` allocate `CudaTensor`s (sizes in bytes, shapes in elements).
 * - `compileCuda(fn)` verifies a PrimFunc, emits PTX and returns a callable that launches it.
 * - `loadModule(device, ptx).getKernel(name).launch(params, args, launch)` is the lower level.
 * - `timeLaunches(fn, { warmup, iters })` times queued work with CUDA events (µs).
 * - Several GPUs from one process: `SymmetricTensor` (one address range of per-GPU slices),
 *   `launchPes` (one launch per GPU of a T.nvshmem kernel, its PE state written per module),
 *   `NcclComm` (NCCL's collectives).
 *
 * Driver failures throw `CudaError` (driver error name, code, call; JIT log for bad PTX); a
 * machine without libcuda.so.1 throws `CudaUnavailableError`; `cudaAvailable()` never throws.
 * `TIRX_LIBCUDA` overrides the library path.
 */
export { CudaError, CudaUnavailableError, CU_RESULT_NAMES, cuResultName } from "./errors.js";
export {
  CudaDriver,
  CU_DEVICE_ATTRIBUTE,
  CU_FUNC_ATTRIBUTE,
  CU_JIT,
  JIT_LOG_BYTES,
  LIBCUDA,
  CUDA_ERROR_NOT_READY,
  cudaAvailable,
  driver,
  libraryPath,
  type CuHandle,
} from "./driver.js";
export { CudaDevice, cuda } from "./device.js";
export { CudaTensor, cudaTensor, cudaEmpty, cudaZeros, type CudaTensorOptions } from "./tensor.js";
export { CudaModule, loadModule, loadedModuleCount, moduleLoadStats, ptxHash } from "./module.js";
export {
  binaryCacheDir,
  binaryKey,
  ensureDir,
  forgetBinary,
  readBinary,
  readOwnFile,
  writeBinary,
  writeFileAtomically,
} from "./disk-cache.js";
export { ARG_SLOT_BYTES, argLayout, packArgs, ptxParamType, type ArgSlot } from "./args.js";
export {
  CudaKernel,
  DEFAULT_SHARED_BYTES,
  median,
  timeLaunches,
  type BoundLaunch,
  type LaunchTimes,
  type LoadedModule,
  type TimeOptions,
} from "./launch.js";
export {
  compileCuda,
  type CompiledLaunch,
  type CudaCompileOptions,
  type CudaCompiled,
} from "./compile.js";
export { launchShim, type LaunchShim } from "./launch-shim.js";
export { findPtxas, ptxasTag } from "./ptxas.js";
export { CudaStream, CudaEvent, currentStream } from "./stream.js";
export { CudaGraph, captureGraph } from "./graph.js";
export { archForDevice } from "./arch.js";
export { boundsReport, takeBoundsReport } from "./bounds.js";
export {
  ExtendedLauncher,
  TENSOR_MAP_BYTES,
  encodeTensorMap,
  tensorMapArgs,
  type TensorMapArgs,
} from "./tma.js";
export {
  MULTI_GPU_ENV,
  NCCL_DTYPE,
  NCCL_OP,
  NcclComm,
  nccl,
  ncclEnvironment,
  ncclLibraryPath,
  ncclUniqueId,
  ncclVersion,
  type NcclOp,
} from "./nccl.js";
export { SymmetricTensor, symmetricGranularity, writePeState } from "./symmetric.js";
export { SYMMETRIC_GRANULARITY, symmetricShard } from "@tirx-ts/core";
export { isSymmetricParam, peArgs, peDevices, type PeArg } from "./pe-args.js";
export { launchPes, type PePlan } from "./pe-launch.js";
export { peBarrier, residentCtas, type PeBarrier } from "./pe-barrier.js";
export type { TensorOwner } from "./tensor.js";
