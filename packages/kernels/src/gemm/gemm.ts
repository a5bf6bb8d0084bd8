// gemm(a, b, opts): the library call of the Hopper GEMM (makeGemm) on device tensors, in the
// convention of torch.matmul / cuBLAS-style transposes: a is [m, k] (with transA, stored [k, m]
// and read transposed), b is [k, n] (with transB, stored [n, k]), D = epilogue(a · b) [m, n].
// It checks the tensors against each other (TX9002) and the options (TX9001), picks a
// configuration from GEMM_CONFIGS (or takes `config`), pads an operand whose rows are not a
// multiple of 16 bytes into a zero-padded copy (TMA's pitch), builds the kernels (kept by sizes;
// compile's cache keeps the compiled ones), and launches where the tensors live, on the GPU or
// on the simulated device.
import {
  TirxError,
  callSite,
  didYouMean,
  showValue,
  type DeviceLike,
  type DeviceTensor,
  type PrimFunc,
} from "@tirx-ts/core";
import { compile, deviceArch, tensor } from "@tirx-ts/runtime";
import { configError } from "../attention/options.js";
import { pickGemmConfig, type GemmConfig } from "./config.js";
import type { GemmActivation, GemmFloat } from "./epilogue.js";
import { makeGemm, type GemmInput, type GemmKernels, type GemmSizes } from "./kernel.js";
import { makePadRows, paddedPitch } from "./pad.js";

/** Options of {@link gemm}. */
export interface GemmOptions {
  /** An input of D's shape [m, n] (float32, float16 or bfloat16): D = α·a·b + β·C + … */
  readonly c?: DeviceTensor;
  /** α, a finite number multiplying a·b (default 1; a compile-time constant of the kernel). */
  readonly alpha?: number;
  /** β, a finite number multiplying `c` (default 1; only with `c`). */
  readonly beta?: number;
  /** A bias per column of D: [n], float32, float16 or bfloat16, added after α·a·b + β·C. */
  readonly bias?: DeviceTensor;
  /**
   * After the bias: "relu", "gelu" (tanh approximation, `tanh.approx.f32`: PyTorch's
   * gelu(approximate="tanh")) or "silu" (x · sigmoid(x), e^-x by `ex2.approx`).
   */
  readonly activation?: GemmActivation;
  /** Added after the activation: [m, n], float32, float16 or bfloat16. */
  readonly residual?: DeviceTensor;
  /** Write D here: [m, n] of `outDtype` (default: its own dtype) on a's device. */
  readonly out?: DeviceTensor;
  /** D's dtype: float32, float16 or bfloat16 (default: `out`'s, else a's for 16-bit inputs, bfloat16 for float8). */
  readonly outDtype?: GemmFloat;
  /** a is stored [k, m] (its transpose is used). Default false. */
  readonly transA?: boolean;
  /** b is stored [n, k] (its transpose is used: a · bᵀ, as torch.nn.functional.linear). Default false. */
  readonly transB?: boolean;
  /**
   * Float8 inputs: a's per-tensor scale, a float32 device tensor [1] (torch._scaled_mm's
   * scale_a): the product is multiplied by scaleA · scaleB before the rest of the epilogue.
   * Given with `scaleB`; only for float8 inputs.
   */
  readonly scaleA?: DeviceTensor;
  /** b's per-tensor scale, float32 [1] (torch._scaled_mm's scale_b); with `scaleA`. */
  readonly scaleB?: DeviceTensor;
  /** The tile configuration (default: the first matching row of GEMM_CONFIGS). */
  readonly config?: GemmConfig;
}

const OPTIONS = [
  "c",
  "alpha",
  "beta",
  "bias",
  "activation",
  "residual",
  "out",
  "outDtype",
  "transA",
  "transB",
  "scaleA",
  "scaleB",
  "config",
] as const;

/** The built kernels by their sizes. */
const BUILT = new Map<string, GemmKernels>();
/** The built padding kernels by their sizes. */
const PADS = new Map<string, PrimFunc>();

/** TX9002 (kernels/tensors). */
function tensorError(message: string): TirxError {
  return new TirxError("TX9002", `gemm: ${message}`);
}

/** `[a, b]` for a message. */
const show = (s: readonly number[]) => `[${s.join(", ")}]`;

/** `x` as a device tensor (`name`'s role `what`) of rank `rank`. @throws TirxError TX9002. */
function ranked(x: unknown, name: string, what: string, rank: number): DeviceTensor {
  const t = x as Partial<DeviceTensor> | null;
  if (
    typeof x !== "object" ||
    t === null ||
    !Array.isArray(t.shape) ||
    typeof t.dtype !== "string" ||
    typeof t.device !== "object"
  ) {
    throw tensorError(`${name} must be a device tensor ${what}, got ${showValue(x)}`);
  }
  if (t.shape.length !== rank) {
    throw tensorError(`${name} must be ${what}, got shape ${show(t.shape)}`);
  }
  return x as DeviceTensor;
}

/** A device's name for a message. */
function deviceName(d: DeviceLike | undefined): string {
  if (d === undefined) return "none";
  if (d.kind === "sim") return "the simulated device";
  const n = (d as { ordinal?: unknown }).ordinal;
  return typeof n === "number" ? `${d.name} (cuda:${n})` : d.name;
}

const INPUTS: readonly string[] = ["float16", "bfloat16", "float8_e4m3", "float8_e5m2"];
const FLOATS: readonly string[] = ["float32", "float16", "bfloat16"];

/** What {@link prepare} returns: the kernels, the checked tensors and the launch's argument lists. */
interface Prepared {
  readonly kernels: GemmKernels;
  readonly m: number;
  readonly n: number;
  readonly outDtype: GemmFloat;
  readonly epilogueArgs: DeviceTensor[];
  readonly pads: { readonly fn: PrimFunc; readonly x: DeviceTensor; readonly pitch: number }[];
}

/**
 * The checks and the kernels of a call.
 * @throws TirxError TX9001, TX9002 as {@link gemm}.
 */
function prepare(a: unknown, b: unknown, opts: unknown): Prepared {
  if (typeof opts !== "object" || opts === null || Array.isArray(opts)) {
    throw configError(
      `gemm: options must be an object like { bias, activation: "gelu" }, got ${showValue(opts)}`,
    );
  }
  const o = opts as Record<string, unknown> & GemmOptions;
  for (const key of Object.keys(o)) {
    if ((OPTIONS as readonly string[]).includes(key)) continue;
    const guess = didYouMean(key, OPTIONS);
    throw configError(
      `gemm: no option ${showValue(key)}${guess ? `; did you mean "${guess}"?` : ""} (options: ${OPTIONS.join(", ")})`,
    );
  }
  for (const key of ["transA", "transB"] as const) {
    if (o[key] !== undefined && typeof o[key] !== "boolean") {
      throw configError(`gemm: ${key} is a boolean, got ${showValue(o[key])}`);
    }
  }
  const transA = o.transA === true;
  const transB = o.transB === true;
  const A = ranked(a, "a", transA ? "[k, m] (transA)" : "[m, k]", 2);
  const B = ranked(b, "b", transB ? "[n, k] (transB)" : "[k, n]", 2);
  if (!INPUTS.includes(A.dtype)) {
    throw tensorError(`a's dtype must be one of ${INPUTS.join(", ")}, got ${A.dtype}`);
  }
  if (!INPUTS.includes(B.dtype)) {
    throw tensorError(`b's dtype must be one of ${INPUTS.join(", ")}, got ${B.dtype}`);
  }
  const dev = A.device;
  const sameDevice = (t: DeviceTensor, name: string): void => {
    if (t.device !== dev) {
      throw tensorError(
        `${name} must be on a's device (${deviceName(dev)}), got ${deviceName(t.device)}`,
      );
    }
  };
  sameDevice(B, "b");
  const [m, ka] = (transA ? [A.shape[1], A.shape[0]] : A.shape) as [number, number];
  const [kb, n] = (transB ? [B.shape[1], B.shape[0]] : B.shape) as [number, number];
  if (ka !== kb) {
    throw tensorError(
      `a's k (${ka}, of ${show(A.shape)}${transA ? " stored [k, m]" : ""}) and b's k (${kb}, of ${show(B.shape)}${transB ? " stored [n, k]" : ""}) differ`,
    );
  }
  const k = ka;
  if (m < 1 || n < 1 || k < 1) {
    throw tensorError(`m, n and k must be at least 1, got m ${m}, n ${n}, k ${k}`);
  }
  const mn = (x: unknown, name: string): DeviceTensor => {
    const t = ranked(x, name, `[m, n] = ${show([m, n])}`, 2);
    if (t.shape[0] !== m || t.shape[1] !== n) {
      throw tensorError(`${name} must be [m, n] = ${show([m, n])}, got ${show(t.shape)}`);
    }
    if (!FLOATS.includes(t.dtype)) {
      throw tensorError(`${name}'s dtype must be one of ${FLOATS.join(", ")}, got ${t.dtype}`);
    }
    sameDevice(t, name);
    return t;
  };
  const C = o.c !== undefined ? mn(o.c, "c") : undefined;
  const R = o.residual !== undefined ? mn(o.residual, "residual") : undefined;
  let bias: DeviceTensor | undefined;
  if (o.bias !== undefined) {
    bias = ranked(o.bias, "bias", `[n] = [${n}]`, 1);
    if (bias.shape[0] !== n)
      throw tensorError(`bias must be [n] = [${n}], got ${show(bias.shape)}`);
    if (!FLOATS.includes(bias.dtype)) {
      throw tensorError(`bias's dtype must be one of ${FLOATS.join(", ")}, got ${bias.dtype}`);
    }
    sameDevice(bias, "bias");
  }
  const hasScales = o.scaleA !== undefined || o.scaleB !== undefined;
  if (hasScales && (o.scaleA === undefined || o.scaleB === undefined)) {
    throw configError(
      `gemm: ${o.scaleA === undefined ? "scaleB" : "scaleA"} given without ${o.scaleA === undefined ? "scaleA" : "scaleB"}: per-tensor scales come in pairs (torch._scaled_mm's scale_a, scale_b)`,
    );
  }
  const scales: DeviceTensor[] = [];
  if (hasScales) {
    for (const [name, x] of [
      ["scaleA", o.scaleA],
      ["scaleB", o.scaleB],
    ] as const) {
      const t = ranked(x, name, "[1] float32", 1);
      if (t.shape[0] !== 1 || t.dtype !== "float32") {
        throw tensorError(`${name} must be a float32 tensor [1], got ${t.dtype} ${show(t.shape)}`);
      }
      sameDevice(t, name);
      scales.push(t);
    }
  }
  if (o.outDtype !== undefined && !FLOATS.includes(o.outDtype)) {
    throw configError(
      `gemm: outDtype is one of ${FLOATS.join(", ")}, got ${showValue(o.outDtype)}`,
    );
  }
  const fp8 = A.dtype.startsWith("float8");
  let outDtype: GemmFloat = o.outDtype ?? (fp8 ? "bfloat16" : (A.dtype as GemmFloat));
  if (o.out !== undefined) {
    const out = ranked(o.out, "out", `[m, n] = ${show([m, n])}`, 2);
    if (out.shape[0] !== m || out.shape[1] !== n) {
      throw tensorError(`out must be [m, n] = ${show([m, n])}, got ${show(out.shape)}`);
    }
    if (o.outDtype === undefined && FLOATS.includes(out.dtype)) outDtype = out.dtype as GemmFloat;
    if (out.dtype !== outDtype) {
      throw tensorError(`out's dtype must be outDtype (${outDtype}), got ${out.dtype}`);
    }
    sameDevice(out, "out");
  }
  let arch: string | undefined;
  try {
    arch = deviceArch(dev);
  } catch (e) {
    if (e instanceof TirxError) throw tensorError(`a's device is not one: ${e.text}`);
    throw e;
  }
  if (arch !== undefined && !/^sm_9\d/.test(arch)) {
    throw configError(
      `gemm: the kernel is written for Hopper (sm_90a: wgmma, TMA), the GPU's target is ${arch}`,
    );
  }
  const inBytes = fp8 ? 1 : 2;
  // Rows that are not a multiple of 16 bytes are read from zero-padded copies.
  const pads: Prepared["pads"] = [];
  const pitchOf = (t: DeviceTensor): number | undefined => {
    const [rows, cols] = t.shape as [number, number];
    const pitch = paddedPitch(cols, inBytes);
    if (pitch === cols) return undefined;
    if (rows * pitch > 2 ** 31 - 256) {
      throw tensorError(
        `${t === A ? "a" : "b"} ${show(t.shape)} needs a zero-padded copy (rows of ${cols} elements are not a multiple of 16 bytes), which takes fewer than 2^31 elements; pad it yourself to ${pitch} columns`,
      );
    }
    const key = JSON.stringify([rows, cols, pitch, t.dtype]);
    let fn = PADS.get(key);
    if (fn === undefined) {
      fn = makePadRows(rows, cols, pitch, t.dtype as GemmInput);
      if (PADS.size >= 64) PADS.clear();
      PADS.set(key, fn);
    }
    pads.push({ fn, x: t, pitch });
    return pitch;
  };
  const pitchA = pitchOf(A);
  const pitchB = pitchOf(B);
  const config = o.config ?? pickGemmConfig({ m, n, k, inBytes }).config;
  const sizes: GemmSizes = {
    m,
    n,
    k,
    dtype: A.dtype as GemmInput,
    dtypeB: B.dtype as GemmInput,
    outDtype,
    transA,
    transB,
    config,
    ...(pitchA !== undefined ? { pitchA } : {}),
    ...(pitchB !== undefined ? { pitchB } : {}),
    ...(o.alpha !== undefined ? { alpha: o.alpha } : {}),
    ...(o.beta !== undefined ? { beta: o.beta } : {}),
    ...(C ? { c: C.dtype as GemmFloat } : {}),
    ...(bias ? { bias: bias.dtype as GemmFloat } : {}),
    ...(o.activation !== undefined ? { activation: o.activation } : {}),
    ...(R ? { residual: R.dtype as GemmFloat } : {}),
    ...(hasScales ? { scales: true } : {}),
  };
  const key = JSON.stringify(sizes);
  let kernels = BUILT.get(key);
  if (kernels === undefined) {
    kernels = makeGemm(sizes);
    if (BUILT.size >= 256) BUILT.clear();
    BUILT.set(key, kernels);
  }
  const epilogueArgs = [...(C ? [C] : []), ...(bias ? [bias] : []), ...(R ? [R] : []), ...scales];
  return { kernels, m, n, outDtype, epilogueArgs, pads };
}

/**
 * D = epilogue(a · b) on device tensors (the Hopper GEMM of makeGemm: TMA, wgmma, float32
 * accumulation; see GemmEpilogue for the epilogue's order: scales, α, β·C, bias, activation,
 * residual, the conversion to D's dtype). Any m, n, k ≥ 1; float16, bfloat16 (a and b one
 * dtype), or float8_e4m3 / float8_e5m2 (any pair; then a [m, k] and b [n, k] with `transB`:
 * wgmma reads float8 only K-major). An operand whose rows are not a multiple of 16 bytes is
 * first copied into a zero-padded tensor (one extra kernel and allocation per call). With a
 * split-K configuration the call also allocates a zeroed float32 workspace [m, n]. Runs where
 * the tensors live: on the GPU (sm_90: Hopper) or on the simulated device.
 * Each element of D is within the rounding of D's dtype plus float32 accumulation error (about
 * k · 2^-24 · Σ|a·b|; float8 on a GPU: the tensor cores' 13-bit alignment, WGMMA_FP8_BOUND) of
 * the exact result of the stored inputs.
 * @param a [m, k] (transA: [k, m]).
 * @param b [k, n] (transB: [n, k]), on a's device.
 * @returns D [m, n] of `outDtype` (a new tensor, or `out`).
 * @example const d = gemm(x, w, { transB: true, bias, activation: "gelu" }) // x·wᵀ + bias, GELU
 * @example const d = gemm(a8, b8, { transB: true, scaleA, scaleB, outDtype: "bfloat16" })
 * @throws TirxError TX9002 (kernels/tensors) for an a, b, c, residual, out (rank 2), bias (rank
 *   1) or scale ([1] float32) that is not such a device tensor, shapes that disagree (k, [m, n],
 *   [n]), dtypes outside the lists, out's dtype other than outDtype, tensors on different
 *   devices, an operand to pad of 2^31 − 256 elements or more; TX9001 (kernels/config) for an
 *   unknown option, transA / transB not booleans, one scale without the other, outDtype outside
 *   the list, a GPU that is not Hopper, and makeGemm's (float8 with an MN-major operand, scales
 *   with 16-bit inputs, beta without c, alpha / beta not finite, an unknown activation, a config
 *   outside its ranges, split-K with m · n of 2^31 − 256 or more); the launches' errors (TX5011
 *   for a disposed tensor, CudaError).
 */
export function gemm(a: DeviceTensor, b: DeviceTensor, opts: GemmOptions = {}): DeviceTensor {
  const p = atCaller(() => prepare(a, b, opts));
  const dev = a.device;
  const cuda = { target: "cuda" } as const;
  const temps: ReturnType<typeof tensor.empty>[] = [];
  try {
    // The padded copies replace a and b, in order.
    const ops = [a, b].map((x) => {
      const pad = p.pads.find((q) => q.x === x);
      if (pad === undefined) return x;
      const y = tensor.empty([x.shape[0]!, pad.pitch], x.dtype, dev);
      temps.push(y);
      compile(pad.fn, cuda)(x, y);
      return y;
    });
    const D = opts.out ?? tensor.empty([p.m, p.n], p.outDtype, dev);
    if (p.kernels.finish === undefined) {
      compile(p.kernels.main, cuda)(ops[0]!, ops[1]!, D, ...p.epilogueArgs);
    } else {
      const W = tensor.zeros([p.m, p.n], "float32", dev);
      temps.push(W);
      compile(p.kernels.main, cuda)(ops[0]!, ops[1]!, W);
      compile(p.kernels.finish, cuda)(W, D, ...p.epilogueArgs);
    }
    return D;
  } finally {
    // compile's launches synchronize: the temporaries are no longer read.
    for (const t of temps) t.dispose();
  }
}

/** `f()`, a TirxError without a position placed at the caller's line (core's callSite). */
function atCaller<R>(f: () => R): R {
  try {
    return f();
  } catch (e) {
    if (e instanceof TirxError && e.span === undefined) {
      throw new TirxError(e.code, e.text, callSite(), e.notes);
    }
    throw e;
  }
}
