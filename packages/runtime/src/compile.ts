import {
  checkArchOption,
  checkArgs,
  checkDepth,
  checkPrimFunc,
  launchArgError,
  didYouMean,
  isStaticShape,
  NVSHMEM_STATE,
  type DeviceLike,
  showValue,
  TirxError as TirxErrorClass,
  type Span,
  verify,
  type KernelArg,
  type PrimFunc,
  type TirxError,
  type VerifiedFunc,
} from "@tirx-ts/core";
import { defaultArch, emitPtx, type PtxModule } from "@tirx-ts/codegen-ptx";
import { callerSpan } from "@tirx-ts/dsl";
import {
  archForDevice,
  compileCuda,
  CudaDevice,
  launchPes,
  peDevices,
  type CompiledLaunch,
  type CudaCompiled,
  type CudaStream,
  type PeArg,
} from "@tirx-ts/runtime-cuda";
import { runSim } from "@tirx-ts/runtime-sim";
import { device as defaultDevice } from "./device.js";
import { CompileCache } from "./cache.js";
import { fastArgCheck } from "./fast-args.js";
import { atCaller } from "./at-caller.js";

/** Options of `compile`. */
export interface CompileOptions {
  /** Only "cuda": the kernel is compiled to PTX; it also runs on the simulated device. */
  readonly target: "cuda";
  /**
   * PTX target. Default: on a GPU, the GPU's own compute capability (`sm_90` on an H200), raised
   * to `sm_90a` on an sm_90 GPU where the kernel needs it (wgmma, setmaxnreg, TMA multicast); the
   * `ptx` property and the simulator use the lowest target the kernel needs (codegen-ptx's
   * `requiredArch`: "sm_80" for cp.async, "sm_90" for bulk copies, TMA and clusters, "sm_90a").
   */
  readonly arch?: string;
  /** Simulator hazard reports: "throw" (default) stops at the first, "collect" gathers them. */
  readonly hazards?: "throw" | "collect";
  /**
   * Guard, on the GPU, every load and store whose index the verifier could not bound (a
   * data-dependent gather index `A[idx[i]]`, or one built from a scalar parameter): the access
   * is skipped when out of range (a load reads 0), and the launch's first such access is thrown
   * after the kernel completes as TirxError TX6005 naming the thread, CTA and source line, as
   * the simulator reports it. Checked by the synchronous call (`run(...)`), not by `launchAsync`
   * or `launchOn`. Default false (the simulator always checks).
   */
  readonly checkBounds?: boolean;
}

/** What one launch returned: hazard reports from the simulator (always empty on a GPU). */
export interface LaunchResult {
  readonly device: "cuda" | "sim";
  readonly reports: readonly TirxError[];
}

/** A compiled kernel: call it with device tensors (and numbers for scalars) in parameter order. */
export interface Compiled {
  (...args: KernelArg[]): LaunchResult;
  /** The PTX module text. */
  readonly ptx: string;
  /** The PTX module with its entry name, version, target and launch. */
  readonly module: PtxModule;
  /** The verified IR. */
  readonly verified: VerifiedFunc;
  /**
   * Launch without waiting for the GPU, on the current stream (`stream.use(...)`, or inside
   * `captureGraph`); on the simulator, runs it.
   */
  launchAsync(...args: KernelArg[]): void;
  /** Launch on `stream` without waiting (the default stream for null); on the simulator, runs it. */
  launchOn(stream: CudaStream | null, ...args: KernelArg[]): void;
  /**
   * Launch a `T.nvshmem` kernel on several GPUs, one PE per GPU (PE p on `pes[p]`, a CudaDevice
   * or an ordinal), from this process, then wait for every GPU. Each PE's module is loaded on its
   * GPU with its PE state (`my_pe` = p, `n_pes` = P) and, when the kernel calls barrier_all, the
   * counters of this set of GPUs; each launch goes on its GPU's default stream, all queued before
   * any wait. The arguments are given once for all PEs (runtime-cuda's `PeArg`):
   * - a `SymmetricTensor` over `pes` (in that order) for each symmetric parameter
   *   `T.Tensor([P, ...shard])`, leading dim = P (its shard padded to the GPUs' allocation
   *   granularity: `symmetricShard`);
   * - a list of P tensors for any other tensor parameter, PE p's on `pes[p]`;
   * - a scalar for every PE, or a list of P scalars.
   * The simulator runs such kernels with runSim's `pes`.
   * @example f.launchAll([0, 1], X, Out, Stage, Sig) // X, Out, Stage, Sig: SymmetricTensors
   * @example f.launchAll([cuda(0), cuda(1)], A, [b0, b1], C, Sig) // b0 on cuda(0), b1 on cuda(1)
   * @throws TirxError TX5015 (not a SymmetricTensor over these GPUs where the kernel needs one, a
   *   PE count that is not the kernel's, a list whose length is not P or whose tensor is on
   *   another GPU, one tensor for several PEs, a barrier_all grid a GPU cannot hold at once),
   *   TX5001–TX5012 for each PE's arguments as a one-GPU launch, TX5010 without a CUDA driver or
   *   GPU, TX5014 without the virtual memory API; TX6005 for `checkBounds`; CudaError.
   */
  launchAll(pes: readonly (CudaDevice | number)[], ...args: PeArg[]): LaunchResult;
  /** {@link launchAll} without waiting: one launch per GPU on its default stream. */
  launchAllAsync(pes: readonly (CudaDevice | number)[], ...args: PeArg[]): void;
  /**
   * {@link launchAll} without waiting, PE p's launch on `streams[p]` (PE p's GPU is that
   * stream's device).
   * @throws TirxError as {@link launchAll}; TX5015 for two streams of one GPU.
   */
  launchAllOn(streams: readonly CudaStream[], ...args: PeArg[]): void;
}

/**
 * Verify `fn`, generate its PTX, and return a callable that launches it where its tensors live:
 * on the GPU through the CUDA driver, or on the simulated device. Arguments are checked
 * (count, dtype, shape, device) before anything runs; a GPU launch synchronizes before returning.
 * @throws TirxError from the verifier (TX1xxx–TX4xxx) or for bad arguments (TX5xxx); CudaError.
 */
export function compile(fn: PrimFunc, opts: CompileOptions = { target: "cuda" }): Compiled {
  const span = callerSpan();
  checkCompileArgs(fn, opts, span);
  // A check with no source position of its own (a target the kernel cannot take: TX5006 from
  // codegen's resolveArch) is reported at this call.
  return atCaller(
    () => span,
    () => compileAt(fn, opts),
  );
}

/** {@link compile} after its argument checks. */
function compileAt(fn: PrimFunc, opts: CompileOptions): Compiled {
  // Before the cache hashes the IR: a tree past the limits (TX2013, TX2018) would take the hash
  // exponential time (each use of a shared sub-expression is hashed).
  checkDepth(fn);
  if (process.env["TIRX_CACHE"] === "off") return compileUncached(fn, opts);
  const key = `${opts.arch ?? ""}|${opts.hazards ?? "throw"}|${opts.checkBounds === true}`;
  return COMPILED.get(fn, key, () => compileUncached(fn, opts));
}

/**
 * Compilations in this process, keyed by the IR's structural hash, its spans and the options:
 * compiling an equal kernel again (a loop, a second import) returns the same `Compiled`, with its
 * loaded CUDA modules and argument packers. `TIRX_CACHE=off` disables it.
 */
export const COMPILED = new CompileCache<Compiled>();

function compileUncached(fn: PrimFunc, opts: CompileOptions): Compiled {
  const verified = verify(fn);
  const checkBounds = opts.checkBounds === true;
  const module = emitPtx(verified, { ...(opts.arch ? { arch: opts.arch } : {}), checkBounds });
  // One CUDA compilation per device arch (the default arch follows the GPU).
  const onCuda = new Map<string, CudaCompiled>();
  let lastDevice: CudaDevice | undefined;
  let lastCompiled: CudaCompiled | undefined;
  const cudaFor = (dev: CudaDevice): CudaCompiled => {
    if (dev === lastDevice) return lastCompiled!;
    const arch = opts.arch ?? defaultArch(verified, archForDevice(dev));
    let c = onCuda.get(arch);
    if (!c) {
      const m = arch === module.target ? module : emitPtx(verified, { arch, checkBounds });
      c = compileCuda(fn, { module: m });
      onCuda.set(arch, c);
    }
    lastDevice = dev;
    lastCompiled = c;
    return c;
  };
  const quickCheck = fastArgCheck(fn);
  /** The kernel reads T.nvshmem's module state: only a launch on several GPUs writes it. */
  const peState = module.text.includes(NVSHMEM_STATE);
  /** The context of a synchronize's error, built once (a synchronous launch allocates nothing). */
  const afterKernel = `after kernel "${fn.name}"`;
  const SIM: LaunchResult = { device: "sim", reports: [] };
  const CUDA: LaunchResult = Object.freeze({ device: "cuda", reports: Object.freeze([]) });
  const launch = (args: KernelArg[], wait: boolean, stream?: CudaStream | null): LaunchResult => {
    let checked = quickCheck(args);
    if (checked === null) checked = checkArgs(fn, args);
    const dev = checked ?? defaultDevice();
    if (dev.kind === "sim") {
      const { reports } = runSim(verified, args, { hazards: opts.hazards ?? "throw" });
      return reports.length === 0 ? SIM : { device: "sim", reports };
    }
    if (!(dev instanceof CudaDevice)) {
      // A look-alike tensor whose device says "cuda" but is none.
      throw launchArgError(
        "TX5012",
        `the tensors' device ${showValue(dev)} is not one from cuda(n)`,
        fn,
      );
    }
    if (peState) {
      throw launchArgError(
        "TX5015",
        `kernel "${fn.name}" reads T.nvshmem's PE state (my_pe, n_pes, barrier_all), which a launch on one GPU does not set: launch it with launchAll(pes, ...args), one GPU per PE (on the simulated device, runSim(verify(fn), args, { pes }))`,
        fn,
      );
    }
    const cudaDev = dev;
    const c = cudaFor(cudaDev);
    if (stream !== undefined) c.launchOn(stream, ...args);
    else c.enqueueChecked(cudaDev, args);
    if (wait) {
      if (stream) stream.synchronize();
      else cudaDev.synchronize(afterKernel);
      if (checkBounds) c.checkBoundsRecord(cudaDev);
    }
    return CUDA;
  };
  // The fast path of a queued launch: after the first CUDA launch whose arguments pass the
  // quick check, launches with arguments of the same kinds on the same device go straight to
  // the kernel's bound launch function (no dispatch, no lookups).
  let fastDevice: DeviceLike | undefined;
  let fastLaunch: CompiledLaunch | undefined;
  const symbolic = fn.params.some((p) => p.kind === "buffer" && !isStaticShape(p.buffer.shape));
  const prime = (checked: DeviceLike | null | undefined): void => {
    if (checked && checked.kind === "cuda" && !symbolic) {
      fastLaunch = cudaFor(checked as CudaDevice).launcher(checked as CudaDevice);
      fastDevice = checked;
    }
  };
  const launchAsync = (...args: KernelArg[]): void => {
    const checked = quickCheck(args);
    if (checked !== undefined && checked === fastDevice) return fastLaunch!(args);
    launch(args, false);
    prime(checked);
  };
  // A synchronous launch takes the same fast path and waits (cuCtxSynchronize, in the same FFI
  // call as the launch where runtime-cuda's launch stub is loaded), then reads the bounds record.
  const run = (...args: KernelArg[]): LaunchResult => {
    const checked = quickCheck(args);
    if (checked === undefined || checked !== fastDevice) {
      const r = launch(args, true);
      prime(checked);
      return r;
    }
    fastLaunch!.sync(args, afterKernel);
    const dev = checked as CudaDevice;
    if (checkBounds) cudaFor(dev).checkBoundsRecord(dev);
    return CUDA;
  };
  // Several GPUs: one launch per PE (runtime-cuda launchPes), each GPU's arch compiled once.
  const onPes = (
    pes: readonly (CudaDevice | number)[],
    args: readonly PeArg[],
    streams: readonly (CudaStream | null)[],
    wait: boolean,
  ): LaunchResult => {
    const devices = peDevices(fn, pes);
    const plans = launchPes(fn, cudaFor, devices, args, streams);
    if (!wait) return CUDA;
    plans.forEach((p) => p.device.synchronize(afterKernel));
    if (checkBounds) plans.forEach((p) => p.compiled.checkBoundsRecord(p.device));
    return CUDA;
  };
  return Object.assign(run, {
    ptx: module.text,
    module,
    verified,
    launchAsync,
    launchOn: (stream: CudaStream | null, ...args: KernelArg[]): void =>
      void launch(args, false, stream),
    launchAll: (pes: readonly (CudaDevice | number)[], ...args: PeArg[]): LaunchResult =>
      onPes(pes, args, [], true),
    launchAllAsync: (pes: readonly (CudaDevice | number)[], ...args: PeArg[]): void =>
      void onPes(pes, args, [], false),
    launchAllOn: (streams: readonly CudaStream[], ...args: PeArg[]): void => {
      if (!Array.isArray(streams) || streams.some((s) => !(s?.device instanceof CudaDevice))) {
        throw launchArgError(
          "TX5015",
          `kernel "${fn.name}": launchAllOn takes one CudaStream per PE, got ${showValue(streams)}`,
          fn,
        );
      }
      void onPes(
        streams.map((s) => s.device),
        args,
        streams,
        false,
      );
    },
  });
}

const OPTIONS = ["target", "arch", "hazards", "checkBounds"] as const;

/** `compile`'s own argument checks: a PrimFunc and an options object with known fields. */
function checkCompileArgs(fn: unknown, opts: unknown, span?: Span): void {
  checkPrimFunc(fn, "compile", span);
  const bad = (message: string, code: "TX1002" | "TX5006" = "TX1002"): never => {
    throw new TirxErrorClass(code, message, span);
  };
  if (typeof opts !== "object" || opts === null || Array.isArray(opts)) {
    bad(`compile options must be an object like { target: "cuda" }, got ${showValue(opts)}`);
  }
  const o = opts as Record<string, unknown>;
  for (const k of Reflect.ownKeys(o)) {
    if (typeof k === "string" && (OPTIONS as readonly string[]).includes(k)) continue;
    const guess = typeof k === "string" ? didYouMean(k, OPTIONS) : undefined;
    bad(
      `compile has no option ${showValue(k)}${guess ? `; did you mean "${guess}"?` : ""} (options: ${OPTIONS.join(", ")})`,
    );
  }
  if (o.target !== undefined && o.target !== "cuda") {
    bad(`compile supports target "cuda" only, got ${showValue(o.target)}`, "TX5006");
  }
  checkArchOption(o.arch, span);
  if (o.checkBounds !== undefined && typeof o.checkBounds !== "boolean") {
    bad(`checkBounds must be true or false, got ${showValue(o.checkBounds)}`);
  }
  if (o.hazards !== undefined && o.hazards !== "throw" && o.hazards !== "collect") {
    bad(`hazards must be "throw" or "collect", got ${showValue(o.hazards)}`);
  }
}
