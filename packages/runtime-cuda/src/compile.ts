import { TirxError, checkArgs, type KernelArg, type PrimFunc } from "@tirx-ts/core";
import { compileToPtx, type PtxModule } from "@tirx-ts/codegen-ptx";
import { cuda, CudaDevice } from "./device.js";
import type { CudaKernel } from "./launch.js";
import { loadModule } from "./module.js";
import { currentStream, type CudaStream } from "./stream.js";
import { ExtendedLauncher } from "./tma.js";

/** Options of `compileCuda`. */
export interface CudaCompileOptions {
  /**
   * PTX target, e.g. "sm_80" (the default) or "sm_90" (needed for bulk copies). The driver JITs
   * the PTX for the actual GPU, so a target at or below the device's own architecture works.
   */
  readonly arch?: string;
  /** The device the kernel runs on; default: the device of the tensor arguments, else `cuda(0)`. */
  readonly device?: CudaDevice;
  /** An already generated module for `fn` (skips verification and code generation). */
  readonly module?: PtxModule;
}

/**
 * A kernel compiled for CUDA: call it with its arguments (tensors and scalars, in parameter
 * order) to launch it and wait for it.
 */
export interface CudaCompiled {
  /**
   * Check the arguments, launch on the default stream, then synchronize so that a kernel fault
   * is thrown here as a CudaError naming the kernel.
   * @throws TirxError TX5001–TX5005 for wrong arguments; CudaError from the driver.
   */
  (...args: KernelArg[]): void;
  readonly fn: PrimFunc;
  /** The PTX module text. */
  readonly ptx: string;
  /** Everything the code generator produced (entry name, version, target, shared bytes, launch, params). */
  readonly module: PtxModule;
  /** Check the arguments and queue the launch without waiting (for `timeLaunches`). */
  launchAsync(...args: KernelArg[]): void;
  /** Queue one launch on `stream` (null: the default stream) without waiting. */
  launchOn(stream: CudaStream | null, ...args: KernelArg[]): void;
  /**
   * @internal Queue one launch on `device` and the current stream, with arguments the caller
   * has already checked (core's `checkArgs`): the fast path of tirx-ts's `compile`.
   */
  enqueueChecked(device: CudaDevice, args: readonly KernelArg[]): void;
  /** The loaded kernel on `device` (loading the module on first use). */
  kernel(device?: CudaDevice): CudaKernel;
}

/**
 * Verify `fn` and emit PTX (`compileToPtx` of @tirx-ts/codegen-ptx) now; JIT-load the module on
 * the first call, once per device (modules are cached by the hash of their text).
 * @example
 *   const run = compileCuda(copy_async);
 *   run(a, b); // a, b: CudaTensor on cuda(0)
 * @throws TirxError from the verifier (any code) at compile time.
 */
export function compileCuda(fn: PrimFunc, opts: CudaCompileOptions = {}): CudaCompiled {
  const mod = opts.module ?? compileToPtx(fn, { arch: opts.arch ?? "sm_80" });
  const kernels = new Map<CudaDevice, CudaKernel>();
  // The module's dynamic shared bytes cover both the launch's request and dyn buffers it declares.
  const launch = { ...mod.launch, dynamicSharedBytes: mod.dynamicSharedBytes };

  const kernel = (device: CudaDevice = opts.device ?? cuda(0)): CudaKernel => {
    let k = kernels.get(device);
    if (!k || k.generation !== device.generation || k.module?.unloaded) {
      k = loadModule(device, mod.text).getKernel(mod.entry, {
        staticSharedBytes: mod.staticSharedBytes,
      });
      kernels.set(device, k);
    }
    return k;
  };

  // Tensor maps and cluster dims need cuLaunchKernelEx and extra parameters (tma.ts).
  // (A module made by hand may predate tensorMaps.)
  const extended = (mod.tensorMaps?.length ?? 0) > 0 || mod.launch.cluster !== undefined;
  const launchers = new Map<CudaKernel, ExtendedLauncher>();
  const launchOn = (
    device: CudaDevice,
    args: readonly KernelArg[],
    stream?: CudaStream | null,
  ): void => {
    const k = kernel(device);
    if (!extended) return k.launch(mod.params, args, launch, stream);
    let l = launchers.get(k);
    if (!l) launchers.set(k, (l = new ExtendedLauncher(mod.params, mod.tensorMaps ?? [])));
    l.launch(k, device, args, launch, stream === undefined ? currentStream() : stream);
  };

  const enqueue = (args: readonly KernelArg[], stream?: CudaStream | null): CudaDevice => {
    const argDevice = checkArgs(fn, args);
    let device: CudaDevice;
    if (opts.device) device = opts.device;
    else if (argDevice === undefined) device = cuda(0);
    else if (argDevice instanceof CudaDevice) device = argDevice;
    else
      throw new TirxError(
        "TX5004",
        `kernel "${fn.name}" runs on CUDA, but its tensors live on ${argDevice.name} (${argDevice.kind})`,
        fn.span,
      );
    if (argDevice !== undefined && argDevice !== device) {
      throw new TirxError(
        "TX5004",
        `kernel "${fn.name}" runs on ${device.name} (cuda:${device.ordinal}), but its tensors live on ${argDevice.name}`,
        fn.span,
      );
    }
    launchOn(device, args, stream);
    return device;
  };

  const run = (...args: KernelArg[]): void => {
    enqueue(args).synchronize(`after kernel "${fn.name}"`);
  };

  return Object.assign(run, {
    fn,
    ptx: mod.text,
    module: mod,
    launchAsync: (...args: KernelArg[]): void => {
      enqueue(args);
    },
    launchOn: (stream: CudaStream | null, ...args: KernelArg[]): void => {
      enqueue(args, stream);
    },
    enqueueChecked: (device: CudaDevice, args: readonly KernelArg[]): void => {
      launchOn(device, args, currentStream());
    },
    kernel,
  });
}
