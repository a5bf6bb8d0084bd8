import {
  callSite,
  launchGrid,
  TirxError,
  type DeviceTensor,
  type KernelArg,
  type LaunchConfig,
  type Param,
} from "@tirx-ts/core";
import { ARG_SLOT_BYTES, packArgs } from "./args.js";
import { cuda, CudaDevice } from "./device.js";
import { CU_FUNC_ATTRIBUTE, driver, koffi, type CudaDriver, type CuHandle } from "./driver.js";
import { CudaTensor } from "./tensor.js";
import { currentStream, type CudaStream } from "./stream.js";
import {
  LAUNCH_FAILED,
  LAUNCH_RECORD_BYTES,
  launchShim,
  RECORD_RESULT_OFFSET,
} from "./launch-shim.js";

/** Shared memory a CTA gets without opting in (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES needed above it), bytes. */
export const DEFAULT_SHARED_BYTES = 48 * 1024;

/** How a parameter is written into its slot: a tensor pointer, a common scalar, or the general path. */
const TENSOR = 0;
const OTHER = 1;
const I32 = 2;
const U32 = 3;
const F32 = 4;
const F64 = 5;

function slotKind(p: Param): number {
  if (p.kind === "buffer") return TENSOR;
  switch (p.var.dtype) {
    case "int32":
      return I32;
    case "uint32":
      return U32;
    case "float32":
      return F32;
    case "float64":
      return F64;
    default:
      return OTHER;
  }
}

/**
 * The argument buffer and packer of one kernel, built once: `ARG_SLOT_BYTES` per parameter of
 * values, followed by the `kernelParams` array of pointers to each value. It lives in memory
 * from `koffi.alloc`, which never moves, so the pointers stay valid. `pack` writes a launch's
 * arguments with one pass over precomputed slot kinds and allocates nothing for tensors and
 * int32/uint32/float32/float64 number scalars (the common case); anything else goes through
 * `packArgs`. @internal exported for tests.
 */
export class ArgPacker {
  readonly params: readonly Param[];
  readonly values: DataView;
  /** Address of the kernelParams array (0n for a kernel without parameters). */
  readonly kernelParams: CuHandle;
  readonly #block: bigint;
  readonly #kinds: Uint8Array;
  readonly #device: CudaDevice;
  readonly #pointerOf: (t: DeviceTensor, i: number) => bigint;

  constructor(params: readonly Param[], device: CudaDevice) {
    this.params = params;
    this.#device = device;
    this.#pointerOf = pointerOn(device);
    const n = params.length;
    const k = koffi();
    const bytes = Math.max(1, n) * ARG_SLOT_BYTES * 2;
    this.#block = k.alloc("uint8_t", bytes) as bigint;
    const all = k.view(this.#block, bytes);
    this.values = new DataView(all, 0, n * ARG_SLOT_BYTES);
    const pointers = new DataView(all, n * ARG_SLOT_BYTES);
    for (let i = 0; i < n; i++)
      pointers.setBigUint64(i * 8, this.#block + BigInt(i * ARG_SLOT_BYTES), true);
    this.kernelParams = n > 0 ? this.#block + BigInt(n * ARG_SLOT_BYTES) : 0n;
    this.#kinds = Uint8Array.from(params, slotKind);
  }

  /** Write `args` (count and kinds checked by the caller) into the buffer. */
  pack(args: readonly KernelArg[]): void {
    const kinds = this.#kinds;
    const view = this.values;
    const dev = this.#device;
    for (let i = 0; i < kinds.length; i++) {
      const a = args[i];
      const off = i * ARG_SLOT_BYTES;
      const kind = kinds[i];
      if (kind === TENSOR) {
        if (a instanceof CudaTensor && a.device === dev) {
          view.setBigUint64(off, a.ptr, true);
          continue;
        }
      } else if (typeof a === "number") {
        // The high bytes of a slot are cleared so that they are deterministic (as packArgs does).
        if (kind === I32 && Number.isInteger(a) && a >= -2147483648 && a <= 2147483647) {
          view.setInt32(off, a, true);
          view.setInt32(off + 4, 0, true);
          continue;
        }
        if (kind === U32 && Number.isInteger(a) && a >= 0 && a <= 4294967295) {
          view.setUint32(off, a, true);
          view.setInt32(off + 4, 0, true);
          continue;
        }
        if (kind === F32) {
          view.setFloat32(off, a, true);
          view.setInt32(off + 4, 0, true);
          continue;
        }
        if (kind === F64) {
          view.setFloat64(off, a, true);
          continue;
        }
      }
      // Anything else (other dtypes, bigints, booleans, and every error): the checked path.
      packArgs(this.params, args, view, this.#pointerOf);
      return;
    }
  }

  free(): void {
    koffi().free(this.#block);
  }
}

/** Equal launch configurations (grid extents compared by identity: numbers or IR nodes). */
function sameLaunch(a: LaunchConfig, b: LaunchConfig): boolean {
  return (
    a === b ||
    (a.dynamicSharedBytes === b.dynamicSharedBytes &&
      a.grid.every((g, i) => g === b.grid[i]) &&
      a.block.every((x, i) => x === b.block[i]))
  );
}

function sameParams(a: readonly Param[], b: readonly Param[]): boolean {
  return a === b || (a.length === b.length && a.every((p, i) => p === b[i]));
}

/** The device pointer of a tensor argument for a launch on `device`. @throws TirxError TX5004 otherwise. */
function pointerOn(device: CudaDevice): (t: DeviceTensor, i: number) => bigint {
  return (t, i) => {
    if (!(t instanceof CudaTensor) || t.device !== device) {
      throw new TirxError(
        "TX5004",
        `argument ${i} lives on ${t.device.name} (${t.device.kind}), but the kernel runs on ${device.name} (cuda:${device.ordinal})`,
        callSite(),
      );
    }
    return t.ptr;
  };
}

/** `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION` (cuda.h, CUDA 12.0). */
const PROGRAMMATIC_STREAM_SERIALIZATION = 6;

/** Where the launch stub's record lies in a {@link launchConfigBlock}, bytes from its start. */
const RECORD_OFFSET = 56 + 72;

/**
 * @internal Counts for tests: `launchers`, the bound launchers made (`CudaKernel.launcher`
 * calls that got that far); `configBlocks`, the {@link launchConfigBlock}s allocated with
 * koffi.alloc and not yet freed (one per cuLaunchKernelEx launcher, freed once it is garbage
 * collected).
 */
export const launchCounts = { launchers: 0, configBlocks: 0 };

/**
 * Frees a launcher's {@link launchConfigBlock} (its address, held here: not the launcher) once
 * the launcher is garbage collected. A queued launch does not need it: the driver reads the
 * CUlaunchConfig and the parameter values during the cuLaunchKernelEx call (the argument buffer
 * is rewritten by the next launch while earlier ones may still be queued, as it always was).
 */
const configBlocks = new FinalizationRegistry<bigint>((address) => {
  koffi().free(address);
  launchCounts.configBlocks--;
});

/** How many bound launchers `CudaKernel.launch` keeps per kernel, for as many launch configurations. */
const LAUNCHERS_KEPT = 4;

/**
 * A CUlaunchConfig (cuda.h, CUDA 12.0) for `launch` in memory that never moves: gridDimX/Y/Z,
 * blockDimX/Y/Z and sharedMemBytes as u32 at bytes 0–24, hStream at 32, attrs at 40, numAttrs at
 * 48; 56 bytes, then one 72-byte CUlaunchAttribute (id u32 at 56, value at 64), then the launch
 * stub's record (`RECORD_OFFSET`, `LAUNCH_RECORD_BYTES`, written by the caller). The attribute is
 * used (attrs, numAttrs 1) for a programmatic dependent launch:
 * `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION` with value 1, so the launch may start
 * before the previous kernel on its stream completes, once that kernel's CTAs all executed
 * griddepcontrol.launch_dependents or exited (CUDA Programming Guide, "Programmatic Dependent
 * Launch and Synchronization"); otherwise attrs is NULL and numAttrs 0. A runtime grid is written
 * per launch by the caller.
 */
function launchConfigBlock(
  launch: LaunchConfig,
  programmatic = false,
): { address: bigint; view: DataView } {
  const k = koffi();
  const bytes = RECORD_OFFSET + LAUNCH_RECORD_BYTES;
  const address = k.alloc("uint8_t", bytes) as bigint;
  launchCounts.configBlocks++;
  const view = new DataView(k.view(address, bytes));
  const g = launch.grid;
  const fields = [
    typeof g[0] === "number" ? g[0] : 0,
    typeof g[1] === "number" ? g[1] : 1,
    typeof g[2] === "number" ? g[2] : 1,
    ...launch.block,
    launch.dynamicSharedBytes,
  ];
  fields.forEach((v, i) => view.setUint32(4 * i, v, true));
  view.setUint32(28, 0, true);
  view.setBigUint64(32, 0n, true);
  view.setBigUint64(40, programmatic ? address + 56n : 0n, true);
  view.setBigUint64(48, programmatic ? 1n : 0n, true);
  for (let b = 56; b < bytes; b += 4) view.setUint32(b, 0, true);
  if (programmatic) {
    view.setUint32(56, PROGRAMMATIC_STREAM_SERIALIZATION, true);
    view.setInt32(64, 1, true);
  }
  return { address, view };
}

/**
 * A launch function of {@link CudaKernel.launcher}, with the parameters and launch it is for.
 * Called as `bound(args, stream?)`, it queues one launch on `stream` (default: the current stream;
 * null: the default stream) and does not wait.
 */
export type BoundLaunch = ((args: readonly KernelArg[], stream?: CudaStream | null) => void) & {
  readonly params: readonly Param[];
  readonly launch: LaunchConfig;
  /**
   * Queue the launch as the function does, then wait for all work of the device's context
   * (cuCtxSynchronize; CUDA Driver API), as `bound(args, stream); device.synchronize(context)`
   * does and with the same errors, in one FFI call where the launch stub is loaded
   * (launch-shim.ts) and the launch goes through cuLaunchKernelEx. `context` is the text a
   * failed synchronize names, e.g. `after kernel "name"`.
   * @throws as the function; CudaError from cuCtxSynchronize (a kernel's fault, e.g.
   *   CUDA_ERROR_ILLEGAL_ADDRESS, which marks the context lost as `device.synchronize` does).
   */
  readonly sync: (args: readonly KernelArg[], context?: string, stream?: CudaStream | null) => void;
};

/**
 * BoundLaunch's `sync` for a launcher without a one-call launch and synchronize: `run`, then
 * the device's synchronize (its errors name `context`).
 * @internal also for compile.ts's launchers of kernels with tensor maps or clusters.
 */
export function launchThenSync(
  run: (args: readonly KernelArg[], stream?: CudaStream | null) => void,
  dev: CudaDevice,
): BoundLaunch["sync"] {
  return (args, context, stream = currentStream()) => {
    run(args, stream);
    dev.synchronize(context);
  };
}

/**
 * What a kernel keeps of the module it was loaded from, a `CudaModule`, seen through the members
 * the launch path reads (module.ts makes kernels, so this file does not import it).
 */
export interface LoadedModule {
  /** The CUmodule. */
  readonly handle: CuHandle;
  /** True once the module was unloaded: its kernels can no longer launch. */
  readonly unloaded: boolean;
}

/**
 * One `.entry` of a loaded module (a CUfunction). `launch` packs the arguments into the kernel's
 * reusable argument buffer and queues it on a stream; it does not wait.
 */
export class CudaKernel {
  readonly device: CudaDevice;
  readonly name: string;
  /** The CUfunction. */
  readonly handle: CuHandle;
  /** Static shared memory of the entry, in bytes, as the code generator reported it. */
  readonly staticSharedBytes: number;
  /** The device's generation when the kernel was loaded (it does not survive `device.reset()`). */
  readonly generation: number;
  #args: ArgPacker | undefined;
  /** The bound launchers of `launch`, most recent first, at most LAUNCHERS_KEPT. */
  readonly #launchers: BoundLaunch[] = [];
  #dynamicLimit = 0;
  #launch: LaunchConfig | undefined;
  #staticGrid: readonly [number, number, number] | undefined;
  readonly #context: string;
  /** The binding that loaded the kernel (not looked up per launch). */
  readonly #driver: CudaDriver;

  /** The module the kernel belongs to (kept alive by the kernel). */
  readonly module: LoadedModule | undefined;

  /** @internal use `CudaModule.getKernel`. */
  constructor(
    device: CudaDevice,
    name: string,
    handle: CuHandle,
    staticSharedBytes = 0,
    module?: LoadedModule,
  ) {
    this.module = module;
    this.device = device;
    this.name = name;
    this.handle = handle;
    this.staticSharedBytes = staticSharedBytes;
    this.#context = `kernel "${name}"`;
    this.#driver = driver();
    this.generation = device.generation;
  }

  /**
   * Queue one launch (cuLaunchKernel) on `stream` (default: the current stream of
   * `CudaStream.use`, else the default stream). Tensors are passed as `.u64` device pointers,
   * scalars as their dtype (see `packArgs`). When static + dynamic shared memory exceeds 48 KiB
   * the kernel first opts in with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES. Errors of the
   * kernel itself surface at the next synchronization. Runtime grid extents are evaluated from
   * the scalar arguments (core's `launchGrid`); a static grid is computed once. A repeated launch
   * with the same parameters and launch configuration allocates nothing for tensor arguments: the
   * kernel keeps the bound launchers ({@link launcher}) of its last four launch configurations
   * (equal grids, blocks and shared bytes, or the same object), so that alternating between a few
   * binds each once.
   * @throws TirxError TX5004 (tensor on another device), TX5005 (bad scalar), TX5009 (grid),
   *   TX2008 (shared memory above the device's opt-in limit); CudaError from the driver.
   */
  launch(
    params: readonly Param[],
    args: readonly KernelArg[],
    launch: LaunchConfig,
    stream: CudaStream | null = currentStream(),
  ): void {
    const kept = this.#launchers;
    let l = kept[0];
    if (!l || !sameLaunch(l.launch, launch) || !sameParams(l.params, params)) {
      const i = kept.findIndex((k) => sameLaunch(k.launch, launch) && sameParams(k.params, params));
      if (i >= 0) {
        l = kept[i]!;
        kept.splice(i, 1);
      } else {
        l = this.launcher(params, launch);
        if (kept.length >= LAUNCHERS_KEPT) kept.pop();
      }
      kept.unshift(l);
    }
    l(args, stream);
  }

  /**
   * A launch function for fixed `params` and `launch` (what {@link launch} runs, with its
   * per-configuration work done here, once): the argument packer, the static grid, the
   * shared-memory opt-in and the block are resolved now, so a call only packs the arguments and
   * calls cuLaunchKernel. Used by the launch fast paths of `compileCuda` and tirx-ts's `compile`.
   * The packer lives as long as the kernel; the CUlaunchConfig of a cuLaunchKernelEx launcher (a
   * koffi.alloc block) is freed once the launcher is garbage collected (the function and its
   * `sync` hold it). Same errors as {@link launch}.
   *
   * `opts.ex` (default: true, unless `TIRX_LAUNCH=classic` is in the environment) launches with
   * cuLaunchKernelEx and a CUlaunchConfig kept beside the packer, four FFI arguments instead of
   * eleven (about 0.2 µs less per queued launch on the H200 host, bench/results/gpu-runs.md);
   * cuLaunchKernel is used when the driver lacks cuLaunchKernelEx (before CUDA 12.0).
   *
   * `opts.shim` (default: true) makes each cuLaunchKernelEx launch one FFI call of the launch
   * stub (launch-shim.ts: C compiled at first use, as Triton's launcher), `tirx_launch` of a
   * record kept beside the CUlaunchConfig, one argument instead of four, and `sync` one call for
   * the launch and cuCtxSynchronize instead of two. Where the stub cannot be built or loaded, or
   * with `TIRX_LAUNCH_SHIM=off`, the same calls go through koffi; the driver sees the same
   * arguments and an error is the same CudaError either way.
   *
   * `opts.programmaticDependent` launches with the programmatic stream serialization attribute
   * (programmatic dependent launch, sm_90): the kernel may start while the previous kernel on the
   * stream still runs, once every CTA of that kernel executed
   * `T.ptx.griddepcontrol.launch_dependents()` or exited; it must execute
   * `T.ptx.griddepcontrol.wait()` before it reads what that kernel wrote (PTX ISA,
   * griddepcontrol). Always through cuLaunchKernelEx.
   * @throws TirxError TX5010 for `programmaticDependent` with a driver that lacks cuLaunchKernelEx.
   */
  launcher(
    params: readonly Param[],
    launch: LaunchConfig,
    opts: {
      readonly ex?: boolean;
      readonly programmaticDependent?: boolean;
      readonly shim?: boolean;
    } = {},
  ): BoundLaunch {
    const dev = this.device;
    const stale = (): Error =>
      new TirxError(
        "TX5011",
        `kernel "${this.name}" was loaded before cuda:${dev.ordinal} was reset; load its module again`,
      );
    if (this.generation !== dev.generation) throw stale();
    dev.activate();
    this.#prepare(launch);
    let buf = this.#args;
    if (!buf || !sameParams(buf.params, params)) {
      buf = this.#args = new ArgPacker(params, dev);
    }
    const packer = buf;
    const staticGrid = this.#staticGrid;
    const [bx, by, bz] = launch.block;
    const shared = launch.dynamicSharedBytes;
    const handle = this.handle;
    const kernelParams = packer.kernelParams;
    const call = this.#driver.cuLaunchKernel;
    const name = this.name;
    const generation = this.generation;
    const fn = { name, params };
    launchCounts.launchers++;
    const programmatic = opts.programmaticDependent === true;
    const ex =
      programmatic || (opts.ex ?? process.env["TIRX_LAUNCH"] !== "classic")
        ? this.#driver.cuLaunchKernelEx
        : undefined;
    if (programmatic && !ex) {
      throw new TirxError(
        "TX5010",
        `kernel "${this.name}": a programmatic dependent launch needs cuLaunchKernelEx, which this CUDA driver lacks (CUDA 12.0 or newer)`,
      );
    }
    if (ex) {
      const config = launchConfigBlock(launch, programmatic);
      const shim = opts.shim === false ? undefined : launchShim(this.#driver.library);
      // The stub's record: driver table, CUlaunchConfig, CUfunction, kernelParams, then the
      // CUresult tirx_launch_sync writes (zeroed with the block).
      const record = shim ? config.address + BigInt(RECORD_OFFSET) : 0n;
      if (shim) {
        config.view.setBigUint64(RECORD_OFFSET, shim.driverTable, true);
        config.view.setBigUint64(RECORD_OFFSET + 8, config.address, true);
        config.view.setBigUint64(RECORD_OFFSET + 16, handle, true);
        config.view.setBigUint64(RECORD_OFFSET + 24, kernelParams, true);
      }
      const shimLaunch = shim?.launch;
      const shimLaunchSync = shim?.launchSync;
      let lastStream = 0n;
      /** Everything of a launch before the driver call: checks, runtime grid, stream, arguments. */
      const begin = (args: readonly KernelArg[], stream: CudaStream | null): void => {
        if (generation !== dev.generation) throw stale();
        dev.activate();
        dev.lastKernel = name;
        if (!staticGrid) {
          const grid = launchGrid(fn, launch, args);
          config.view.setUint32(0, grid[0], true);
          config.view.setUint32(4, grid[1], true);
          config.view.setUint32(8, grid[2], true);
        }
        const s = stream === null ? 0n : stream.handle;
        if (s !== lastStream) {
          config.view.setBigUint64(32, s, true);
          lastStream = s;
        }
        packer.pack(args);
      };
      const run = (
        args: readonly KernelArg[],
        stream: CudaStream | null = currentStream(),
      ): void => {
        begin(args, stream);
        const code = shimLaunch ? shimLaunch(record) : ex(config.address, handle, kernelParams, 0n);
        if (code !== 0) this.#driver.check("cuLaunchKernelEx", code, { context: this.#context });
      };
      const sync: BoundLaunch["sync"] = !shimLaunchSync
        ? launchThenSync(run, dev)
        : (args, after, stream = currentStream()) => {
            begin(args, stream);
            const code = shimLaunchSync(record);
            if (code === 0) return;
            // The same checks as the koffi path's (driver.ctxSynchronize for the synchronize),
            // so that the error and the lost-context marking are the same. The failed call's
            // CUresult is in the record (any int32: koffi's is the same int).
            const result = config.view.getInt32(RECORD_OFFSET + RECORD_RESULT_OFFSET, true);
            if (code === LAUNCH_FAILED) {
              this.#driver.check("cuLaunchKernelEx", result, { context: this.#context });
            } else {
              this.#driver.check("cuCtxSynchronize", result, after ? { context: after } : {});
            }
          };
      // The block is freed once `config` is collected: `run` and `sync` both read it (begin,
      // the record), so it lives as long as either of them is held.
      configBlocks.register(config, config.address);
      return Object.assign(run, { params, launch, sync });
    }
    const run = (args: readonly KernelArg[], stream: CudaStream | null = currentStream()): void => {
      if (generation !== dev.generation) throw stale();
      dev.activate();
      dev.lastKernel = name;
      const grid = staticGrid ?? launchGrid(fn, launch, args);
      packer.pack(args);
      const code = call(
        handle,
        grid[0],
        grid[1],
        grid[2],
        bx,
        by,
        bz,
        shared,
        stream === null ? 0n : stream.handle,
        kernelParams,
        0n,
      );
      if (code !== 0) this.#driver.check("cuLaunchKernel", code, { context: this.#context });
    };
    return Object.assign(run, { params, launch, sync: launchThenSync(run, dev) });
  }

  /**
   * @internal The shared-memory opt-in for `launch`, for launches queued outside `launch()`
   * (cuLaunchKernelEx in tma.ts).
   */
  prepareExtended(launch: LaunchConfig): void {
    if (this.generation !== this.device.generation) {
      throw new TirxError(
        "TX5011",
        `kernel "${this.name}" was loaded before cuda:${this.device.ordinal} was reset; load its module again`,
      );
    }
    this.device.lastKernel = this.name;
    if (launch !== this.#launch) this.#prepare(launch);
  }

  /** Per launch configuration, once: the static grid and the shared-memory opt-in. */
  #prepare(launch: LaunchConfig): void {
    const g = launch.grid;
    this.#staticGrid =
      typeof g[0] === "number" && typeof g[1] === "number" && typeof g[2] === "number"
        ? [g[0], g[1], g[2]]
        : undefined;
    const dev = this.device;
    const dynamic = launch.dynamicSharedBytes;
    const shared = this.staticSharedBytes + dynamic;
    if (shared > DEFAULT_SHARED_BYTES) {
      if (shared > dev.maxSharedOptin) {
        throw new TirxError(
          "TX2008",
          `kernel "${this.name}" needs ${shared} bytes of shared memory (${this.staticSharedBytes} static + ${dynamic} dynamic); ${dev.name} allows ${dev.maxSharedOptin} per CTA`,
        );
      }
      if (dynamic > this.#dynamicLimit) {
        driver().funcSetAttribute(
          this.handle,
          CU_FUNC_ATTRIBUTE.MAX_DYNAMIC_SHARED_SIZE_BYTES,
          dynamic,
        );
        this.#dynamicLimit = dynamic;
      }
    }
    this.#launch = launch;
  }
}

/** Options of `timeLaunches`. */
export interface TimeOptions {
  /** Untimed calls first (default 3). */
  readonly warmup?: number;
  /** Timed calls (default 20). */
  readonly iters?: number;
  /** The device whose default stream is timed (default `cuda(0)`). */
  readonly device?: CudaDevice;
}

/** Timings of `timeLaunches`, in microseconds. */
export interface LaunchTimes {
  readonly medianUs: number;
  readonly minUs: number;
  readonly samplesUs: readonly number[];
}

/**
 * Time `fn` (which should only queue work, e.g. `CudaKernel.launch` or a compiled kernel's
 * `launchAsync`) with CUDA events on the default stream: one start/end event pair per
 * iteration, all read after one final synchronization. Resolution is about 0.5 µs.
 * @returns median, minimum and every sample, in µs.
 * @throws CudaError from the driver; RangeError when `iters` < 1.
 */
export function timeLaunches(fn: () => void, opts: TimeOptions = {}): LaunchTimes {
  const warmup = opts.warmup ?? 3;
  const iters = opts.iters ?? 20;
  if (!Number.isInteger(iters) || iters < 1)
    throw new RangeError(`iters must be a positive integer, got ${iters}`);
  const dev = opts.device ?? cuda(0);
  const d = driver();
  dev.activate();
  for (let i = 0; i < warmup; i++) fn();
  dev.synchronize();
  const events: CuHandle[] = [];
  try {
    for (let i = 0; i < 2 * iters; i++) events.push(d.eventCreate(0));
    for (let i = 0; i < iters; i++) {
      dev.activate();
      d.eventRecord(events[2 * i]!, 0n);
      fn();
      d.eventRecord(events[2 * i + 1]!, 0n);
    }
    d.eventSynchronize(events[2 * iters - 1]!);
    const samplesUs: number[] = [];
    for (let i = 0; i < iters; i++)
      samplesUs.push(d.eventElapsedMs(events[2 * i]!, events[2 * i + 1]!) * 1000);
    return { medianUs: median(samplesUs), minUs: Math.min(...samplesUs), samplesUs };
  } finally {
    for (const e of events) {
      try {
        d.eventDestroy(e);
      } catch {
        // keep the first error
      }
    }
  }
}

/** Median of a non-empty list (mean of the two middle values for even lengths). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
