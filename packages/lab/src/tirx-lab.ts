// What "tirx-ts" (and "@tirx-ts/runtime") is in the lab: the names the examples import, from the
// browser-clean packages (core, dsl, codegen-ptx, runtime-sim, kernels), with compile, tensor and
// device on the simulated device only (the Node package's runtime loads the CUDA driver and a disk
// cache). Every launch is recorded in `launches` (its hazard reports and trace) for the lab's Run
// panel; hazards are collected, not thrown, so that a run shows all of them.
import {
  checkArgs,
  checkTensorSpec,
  MAX_SIM_TENSOR_BYTES,
  TirxError,
  verify,
  type DType,
  type DeviceLike,
  type DeviceTensor,
  type ExampleResult,
  type HostData,
  type KernelArg,
  type PrimFunc,
  type VerifiedFunc,
} from "@tirx-ts/core";
import { emitPtx, type PtxModule } from "@tirx-ts/codegen-ptx";
import { runSim, sim, simEmpty, simTensor, simZeros, type TraceEvent } from "@tirx-ts/runtime-sim";

export * from "@tirx-ts/core";
export * from "@tirx-ts/dsl";
export * from "@tirx-ts/codegen-ptx";
export * from "@tirx-ts/runtime-sim";
export * from "@tirx-ts/kernels";

/** One launch of a compiled kernel in the lab: the kernel, its hazard reports and its trace. */
export interface LabLaunch {
  readonly kernel: string;
  readonly reports: readonly TirxError[];
  /** The simulator's trace (runtime-sim's Tracer), for the first TRACED_LAUNCHES launches only. */
  readonly trace: readonly TraceEvent[] | undefined;
}

/** Launches since the last `resetLaunches()`, in order. */
export const launches: LabLaunch[] = [];

/** Launches traced per run: a trace costs the simulator time, and the panel draws a few. */
const TRACED_LAUNCHES = 4;

/** Forget the recorded launches (the lab calls it before each Run). */
export function resetLaunches(): void {
  launches.length = 0;
}

/** Options of `compile` (the Node package's, of which the lab honours `arch`). */
export interface CompileOptions {
  readonly target: "cuda";
  readonly arch?: string;
  readonly hazards?: "throw" | "collect";
  readonly checkBounds?: boolean;
}

/** What one launch returned: the simulator's hazard reports. */
export interface LaunchResult {
  readonly device: "sim";
  readonly reports: readonly TirxError[];
}

/** A compiled kernel: call it with simulated tensors (and numbers for scalars) in parameter order. */
export interface Compiled {
  (...args: KernelArg[]): LaunchResult;
  readonly ptx: string;
  readonly module: PtxModule;
  readonly verified: VerifiedFunc;
  launchAsync(...args: KernelArg[]): void;
  launchOn(stream: unknown, ...args: KernelArg[]): void;
}

/**
 * Verify `fn`, emit its PTX and return a callable that runs it on the simulated device (the
 * Node package's `compile` with the simulator as the only device). Hazards are collected into
 * `launches`, never thrown.
 * @throws TirxError from the verifier (TX1xxx–TX4xxx) and TX5xxx for bad arguments.
 */
export function compile(fn: PrimFunc, opts: CompileOptions = { target: "cuda" }): Compiled {
  const verified = verify(fn);
  const module = emitPtx(verified, opts.arch ? { arch: opts.arch } : {});
  const launch = (args: KernelArg[]): LaunchResult => {
    checkArgs(fn, args);
    const trace = launches.length < TRACED_LAUNCHES;
    const r = runSim(verified, args, { hazards: "collect", trace });
    launches.push({ kernel: fn.name, reports: r.reports, trace: r.trace });
    return { device: "sim", reports: r.reports };
  };
  return Object.assign((...args: KernelArg[]) => launch(args), {
    ptx: module.text,
    module,
    verified,
    launchAsync: (...args: KernelArg[]) => void launch(args),
    launchOn: (_stream: unknown, ...args: KernelArg[]) => void launch(args),
  });
}

/** The lab's only device: the simulator. */
export function device(): DeviceLike {
  return sim();
}

/** The PTX target of a device: undefined for the simulator (the kernel's own lowest target). */
export function deviceArch(_dev: DeviceLike): string | undefined {
  return undefined;
}

/** Options of `tensor`. */
export interface TensorOptions {
  readonly shape: readonly number[];
  readonly dtype: DType;
  readonly device?: DeviceLike;
}

/**
 * A tensor on the simulated device holding `data` (converted to `dtype`, row-major `shape`).
 * @throws TirxError TX5007 for a bad shape, dtype or size (checkTensorSpec).
 */
export function tensor(data: HostData, opts: TensorOptions): DeviceTensor & Disposable {
  checkTensorSpec(opts.shape, opts.dtype, MAX_SIM_TENSOR_BYTES);
  return simTensor(data, { shape: opts.shape, dtype: opts.dtype });
}
/** A zero-filled tensor on the simulated device. @throws TirxError TX5007 (checkTensorSpec). */
tensor.zeros = (shape: readonly number[], dtype: DType, _dev?: DeviceLike) => {
  checkTensorSpec(shape, dtype, MAX_SIM_TENSOR_BYTES);
  return simZeros(shape, dtype);
};
/** A tensor on the simulated device whose bytes are unset (the simulator's poison). @throws TirxError TX5007. */
tensor.empty = (shape: readonly number[], dtype: DType, _dev?: DeviceLike) => {
  checkTensorSpec(shape, dtype, MAX_SIM_TENSOR_BYTES);
  return simEmpty(shape, dtype);
};

/** No CUDA in a browser. */
export function cudaAvailable(): { ok: false; reason: string } {
  return { ok: false, reason: "CUDA is unavailable: the lab runs on the simulated device" };
}

/** Never the program's entry point in the lab (the lab calls `runExample` itself). */
export function isMain(_importMetaUrl: string): boolean {
  return false;
}

/** Run `runExample` on the simulator and log its summary (the lab's Run calls runExample itself). */
export function runAsMain(
  name: string,
  runExample: (dev: DeviceLike) => ExampleResult,
  dev: DeviceLike = device(),
): void {
  console.log(`${name} on the simulated device: ${runExample(dev).summary}`);
}

export { layoutPictures, siteSvg, type LayoutPicture } from "tirx-ts/src/layout.js";

/** A tuning key: a string, or named numbers and strings (runtime's TuneKey). */
export type TuneKey = string | { readonly [k: string]: string | number };

/**
 * Register shipped choices for the autotune family `name` (runtime's registerTunedDefaults): the
 * lab never tunes, so it keeps none. (kernels calls it while its modules load, before this
 * module's own body has run: it must touch no module-level binding.)
 */
export function registerTunedDefaults(_name: string, _table: object): void {}

/**
 * A tuning key's text: `k=v` pairs, names sorted, joined by commas, a part holding `,`, `=` or
 * `"` written as JSON (runtime's tuneKeyText).
 */
export function tuneKeyText(key: TuneKey): string {
  if (typeof key === "string") return key;
  const part = (x: string): string => (/[,="]/.test(x) ? JSON.stringify(x) : x);
  return Object.keys(key)
    .sort()
    .map((k) => `${part(k)}=${part(String(key[k]))}`)
    .join(",");
}

/** JSON with object keys sorted at every level (runtime's canonicalJson). */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v);
}

/** Autotune's cache folder: none in the lab (no file system). */
export function autotuneCacheDir(): string | undefined {
  return undefined;
}

/** The device part of a tuning's key: the simulated device's in the lab (runtime's tuneDeviceKey). */
export function tuneDeviceKey(_dev: unknown): {
  readonly device: string;
  readonly arch: string;
  readonly driver: string;
} {
  return { device: "sim", arch: "sim", driver: "none" };
}

/** A tuning cache file: never one in the lab (runtime's readTuneCache's "none"). */
export function readTuneCache(_file: string): { readonly kind: "none" } {
  return { kind: "none" };
}

/** Not in the lab: a TirxError TX5010 naming what needs a GPU. */
function gpuOnly(what: string): never {
  throw new TirxError("TX5010", `${what} needs a CUDA GPU; the lab runs on the simulated device`);
}
/** CUDA streams, events and graphs are GPU-only (TX5010 when used). */
export const cuda = (): never => gpuOnly("cuda(n)");
export const captureGraph = (): never => gpuOnly("captureGraph");
/** Autotuning times candidates on a GPU (TX5010 in the lab). */
export const autotune = (): never => gpuOnly("autotune");
