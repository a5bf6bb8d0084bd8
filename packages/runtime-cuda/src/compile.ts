import {
  checkArgs,
  launchArgError,
  dtypeBytes,
  isStaticShape,
  type DeviceTensor,
  type KernelArg,
  type PrimFunc,
} from "@tirx-ts/core";
import { compileToPtx, INDEX32_MAX_BYTES, type PtxModule } from "@tirx-ts/codegen-ptx";
import { cuda, CudaDevice } from "./device.js";
import { launchThenSync, type BoundLaunch, type CudaKernel } from "./launch.js";
import { loadModule } from "./module.js";
import { takeBoundsReport } from "./bounds.js";
import { currentStream, type CudaStream } from "./stream.js";
import { ExtendedLauncher } from "./tma.js";

/** Options of `compileCuda`. */
export interface CudaCompileOptions {
  /**
   * PTX target, e.g. "sm_80" or "sm_90" (needed for bulk copies). Default: the lowest target the
   * kernel's instructions need (codegen-ptx's `requiredArch`: sm_80 for cp.async, sm_90 for bulk
   * copies and clusters, sm_90a for wgmma). The driver JITs the PTX for the actual GPU, so a
   * target at or below the device's own architecture works.
   */
  readonly arch?: string;
  /** The device the kernel runs on; default: the device of the tensor arguments, else `cuda(0)`. */
  readonly device?: CudaDevice;
  /** An already generated module for `fn` (skips verification and code generation). */
  readonly module?: PtxModule;
  /**
   * Guard indices the verifier could not bound (codegen-ptx's `checkBounds`): a synchronous
   * call throws the first out-of-range access as TirxError TX6005 naming the thread, CTA and
   * source line, as the simulator does. Default false.
   */
  readonly checkBounds?: boolean;
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
  /**
   * For a `checkBounds` kernel, after its launches on `device` have completed: throw the first
   * out-of-range access recorded since the last check (and clear it). A no-op otherwise.
   * @throws TirxError TX6005.
   */
  checkBoundsRecord(device: CudaDevice): void;
  /** The PTX module text. */
  readonly ptx: string;
  /** Everything the code generator produced (entry name, version, target, shared bytes, launch, params). */
  readonly module: PtxModule;
  /** Check the arguments and queue the launch without waiting (for `timeLaunches`). */
  launchAsync(...args: KernelArg[]): void;
  /** Queue one launch on `stream` (null: the default stream) without waiting. */
  launchOn(stream: CudaStream | null, ...args: KernelArg[]): void;
  /**
   * @internal Queue one launch on `device` and `stream` (default: the current stream; null: the
   * default stream), with arguments the caller has already checked (core's `checkArgs`): the
   * fast path of tirx-ts's `compile`, and each PE's launch of a launch on several GPUs.
   */
  enqueueChecked(device: CudaDevice, args: readonly KernelArg[], stream?: CudaStream | null): void;
  /**
   * @internal A launch function for `device` with everything resolved but the arguments (see
   * `CudaKernel.launcher`), for arguments the caller has checked; it reloads the module after a
   * `device.reset()` or an unload. Tensor parameters must all have static shapes.
   */
  launcher(device: CudaDevice): CompiledLaunch;
  /** The loaded kernel on `device` (loading the module on first use). */
  kernel(device?: CudaDevice): CudaKernel;
  /**
   * @internal The loaded kernel a launch on `device` with `args` uses (the 64-bit-offset
   * module's when a symbolic tensor is larger than 2^31 − 1 bytes), loading it on first use: a
   * launch on several GPUs writes the PE state into that kernel's module.
   */
  kernelFor(device: CudaDevice, args: readonly KernelArg[]): CudaKernel;
}

/**
 * A launch function of `CudaCompiled.launcher`: `launch(args, stream?)` queues one launch on
 * `stream` (default: the current stream; null: the default stream) and does not wait.
 */
export type CompiledLaunch = ((args: readonly KernelArg[], stream?: CudaStream | null) => void) & {
  /**
   * Queue one launch on the current stream, then wait for the device (cuCtxSynchronize; CUDA
   * Driver API), as `launch(args); device.synchronize(context)` does and with the same errors:
   * one FFI call for both where the launch stub is loaded (`BoundLaunch.sync`), two calls for a
   * kernel with tensor maps or clusters (tma.ts's launch) or without the stub. `context` is the
   * text a failed synchronize names, e.g. `after kernel "name"`.
   * @throws TirxError as the launch; CudaError from cuLaunchKernelEx or cuCtxSynchronize.
   */
  readonly sync: (args: readonly KernelArg[], context?: string) => void;
};

/**
 * Verify `fn` and emit PTX (`compileToPtx` of @tirx-ts/codegen-ptx) now; JIT-load the module on
 * the first call, once per device (modules are cached by the hash of their text).
 *
 * Index width: a kernel with symbolic tensor dims is compiled with 32-bit offsets for them. A
 * launch whose symbolic tensors include one of more than 2^31 − 1 bytes uses a second module,
 * emitted on first need with `wideSymbolic: true` (64-bit offsets) and cached beside the first.
 * @example
 *   const run = compileCuda(copy_async);
 *   run(a, b); // a, b: CudaTensor on cuda(0)
 * @throws TirxError from the verifier (any code) at compile time.
 */
export function compileCuda(fn: PrimFunc, opts: CudaCompileOptions = {}): CudaCompiled {
  const mod =
    opts.module ??
    compileToPtx(fn, {
      ...(opts.arch !== undefined ? { arch: opts.arch } : {}),
      checkBounds: opts.checkBounds === true,
    });
  const kernels = new Map<CudaDevice, CudaKernel>();
  // The module's dynamic shared bytes cover both the launch's request and dyn buffers it declares.
  const launch = { ...mod.launch, dynamicSharedBytes: mod.dynamicSharedBytes };

  const load = (
    m: PtxModule,
    cache: Map<CudaDevice, CudaKernel>,
    device: CudaDevice,
  ): CudaKernel => {
    let k = cache.get(device);
    if (!k || k.generation !== device.generation || k.module?.unloaded) {
      k = loadModule(device, m.text).getKernel(m.entry, {
        staticSharedBytes: m.staticSharedBytes,
      });
      cache.set(device, k);
    }
    return k;
  };
  const kernel = (device: CudaDevice = opts.device ?? cuda(0)): CudaKernel =>
    load(mod, kernels, device);

  // Tensor parameters with symbolic dims, and the 64-bit-offset module for large ones.
  const symbolic = fn.params.flatMap((p, i) =>
    p.kind === "buffer" && !isStaticShape(p.buffer.shape) ? [i] : [],
  );
  let wideMod: PtxModule | undefined;
  const wideKernels = new Map<CudaDevice, CudaKernel>();
  const kernelFor = (device: CudaDevice, args: readonly KernelArg[]): CudaKernel => {
    for (const i of symbolic) {
      const t = args[i] as DeviceTensor;
      let bytes = dtypeBytes(t.dtype);
      for (const n of t.shape) bytes *= n;
      if (bytes > INDEX32_MAX_BYTES) {
        wideMod ??= compileToPtx(fn, {
          arch: mod.target,
          wideSymbolic: true,
          checkBounds: mod.boundsSites.length > 0,
        });
        return load(wideMod, wideKernels, device);
      }
    }
    return kernel(device);
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
    const k = kernelFor(device, args);
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
      throw launchArgError(
        "TX5004",
        `kernel "${fn.name}" runs on CUDA, but its tensors live on ${argDevice.name} (${argDevice.kind})`,
        fn,
      );
    if (argDevice !== undefined && argDevice !== device) {
      throw launchArgError(
        "TX5004",
        `kernel "${fn.name}" runs on ${device.name} (cuda:${device.ordinal}), but its tensors live on ${argDevice.name}`,
        fn,
      );
    }
    launchOn(device, args, stream);
    return device;
  };

  const launcher = (device: CudaDevice): CompiledLaunch => {
    // Tensor maps and clusters go through cuLaunchKernelEx with per-launch encoding.
    if (extended) {
      const go = (args: readonly KernelArg[], stream?: CudaStream | null): void =>
        launchOn(device, args, stream);
      return Object.assign(go, { sync: launchThenSync(go, device) });
    }
    let k = kernel(device);
    let bound = k.launcher(mod.params, launch);
    const current = (): BoundLaunch => {
      if (k.generation !== device.generation || k.module?.unloaded) {
        k = kernel(device);
        bound = k.launcher(mod.params, launch);
      }
      return bound;
    };
    const go = (args: readonly KernelArg[], stream?: CudaStream | null): void =>
      current()(args, stream);
    const sync = (args: readonly KernelArg[], context?: string): void =>
      current().sync(args, context);
    return Object.assign(go, { sync });
  };

  const checkBoundsRecord = (device: CudaDevice): void => {
    for (const [m, cache] of [
      [mod, kernels],
      [wideMod, wideKernels],
    ] as const) {
      const k = m && cache.get(device);
      if (!m || !k || k.generation !== device.generation) continue;
      const report = takeBoundsReport(k, m);
      if (report) throw report;
    }
  };

  const run = (...args: KernelArg[]): void => {
    const device = enqueue(args);
    device.synchronize(`after kernel "${fn.name}"`);
    if (mod.boundsSites.length > 0) checkBoundsRecord(device);
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
    enqueueChecked: (
      device: CudaDevice,
      args: readonly KernelArg[],
      stream: CudaStream | null = currentStream(),
    ): void => {
      launchOn(device, args, stream);
    },
    kernel,
    kernelFor,
    launcher,
    checkBoundsRecord,
  });
}
