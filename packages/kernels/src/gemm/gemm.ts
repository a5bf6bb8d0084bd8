// gemm(a, b, opts): the library call of the Hopper GEMM (makeGemm) on device tensors, in the
// convention of torch.matmul / cuBLAS-style transposes: a is [m, k] (with transA, stored [k, m]
// and read transposed), b is [k, n] (with transB, stored [n, k]), D = epilogue(a · b) [m, n].
// It checks the tensors against each other (TX9002) and the options (TX9001), chooses a
// configuration (`config`; with `tune` or TIRX_TUNE=1 runtime's autotune over GEMM_CONFIGS' and
// GEMM_TUNE_EXTRA's rows per shape class; else a cached tuning, a shipped default or
// pickGemmConfig: gemmChoice), pads an operand whose rows are not a multiple of 16 bytes into a zero-padded copy (TMA's pitch), builds the kernels (kept by sizes;
// compile's cache keeps the compiled ones), and launches where the tensors live, on the GPU or
// on the simulated device.
import {
  TirxError,
  didYouMean,
  invariant,
  showValue,
  type DeviceLike,
  type DType,
  type DeviceTensor,
  type PrimFunc,
} from "@tirx-ts/core";
import {
  autotune,
  autotuneCacheDir,
  canonicalJson,
  compile,
  deviceArch,
  readTuneCache,
  registerTunedDefaults,
  tensor,
  tuneDeviceKey,
  tuneKeyText,
  type AutotuneOptions,
  type Compiled,
} from "@tirx-ts/runtime";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { configError } from "../attention/options.js";
import { atCaller } from "../at-caller.js";
import {
  GEMM_CONFIGS,
  GEMM_TUNE_EXTRA,
  GEMM_TUNED_DEFAULTS,
  gemmRowsBucket,
  gemmTiles,
  gemmTuneKey,
  pickGemmConfig,
  type GemmConfig,
  type GemmShape,
} from "./config.js";
import { checkEpilogueScalar, type GemmActivation, type GemmFloat } from "./epilogue.js";
import {
  blockScaleShapeMN,
  tmaScalesAsGiven,
  blockScaleShapes,
  checkGemmSizes,
  makeGemm,
  type GemmInput,
  type GemmKernels,
  type GemmSizes,
} from "./kernel.js";
import { makePadRows, paddedPitch } from "./pad.js";
import { makeScaleTransposeA } from "./scales.js";
import { cached } from "../cache.js";
import { refuseDisposed } from "../disposed.js";
import { refuseAliasing } from "../memory.js";
import {
  MAX_GEMM_SHARED,
  gemmSharedBytes,
  gemmTileRegisterBudget,
  gemmTileRegisters,
  scalesByTma,
} from "./tile.js";

/** Options of {@link gemm}. */
export interface GemmOptions {
  /** An input of D's shape [m, n] (float32, float16 or bfloat16): D = α·a·b + β·C + … */
  readonly c?: DeviceTensor;
  /**
   * α, a finite number multiplying a·b (default 1). A launch argument of the kernel: every α ≠ 1
   * shares one kernel.
   */
  readonly alpha?: number;
  /**
   * β, a finite number multiplying `c` (default 1; only with `c`). A launch argument, as α; β = 0
   * builds a kernel that reads no C.
   */
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
  /**
   * Write D here: [m, n] of `outDtype` (default: its own dtype) on a's device. It may be `c` or
   * `residual` itself (updated in place), but shares no memory with a, b, the scales or bias.
   */
  readonly out?: DeviceTensor;
  /** D's dtype: float32, float16 or bfloat16 (default: `out`'s, else a's for 16-bit inputs, bfloat16 for float8). */
  readonly outDtype?: GemmFloat;
  /** a is stored [k, m] (its transpose is used). Default false. */
  readonly transA?: boolean;
  /** b is stored [n, k] (its transpose is used: a · bᵀ, as torch.nn.functional.linear). Default false. */
  readonly transB?: boolean;
  /**
   * Float8 inputs: a's scales, float32, one of two shapes (given with `scaleB`, which takes the
   * matching one; only for float8 inputs):
   * - per tensor, [1] (torch._scaled_mm's scale_a): the product is multiplied by scaleA · scaleB
   *   before the rest of the epilogue;
   * - per block (DeepSeek-V3's fine-grained scaling), [m, ⌈k/128⌉]: one scale per row of a and
   *   128-wide K block, with scaleB [⌈n/128⌉, ⌈k/128⌉] (one per 128 × 128 block of b's [n, k]):
   *   D = Σ_kb scaleA[i, kb] · scaleB[⌊j/128⌋, kb] · Σ_{x in kb} a[i, x] · b[x, j], each block's
   *   sum promoted into float32 in the main loop (makeGemm's `scales: "block"`). With a
   *   configuration whose `scaleLoad` is "tma" or "shared" (A's scales staged by TMA with each K-tile) and
   *   ⌈k/128⌉ not a multiple of 4, gemm() first transposes this scaleA into a float32 scratch
   *   [⌈k/128⌉, m rounded up to 4] (one more small kernel and allocation per call); the layout
   *   given here stays [m, ⌈k/128⌉].
   */
  readonly scaleA?: DeviceTensor;
  /** b's scales: float32 [1] with a per-tensor scaleA, [⌈n/128⌉, ⌈k/128⌉] with a block one. */
  readonly scaleB?: DeviceTensor;
  /**
   * Float8 inputs without block scales: accumulate all of K in the tensor cores' accumulator
   * (torch._scaled_mm's use_fast_accum), faster but less exact: the float8 tensor cores add with
   * about 13 fraction bits aligned to the largest term, the running sum included (DeepSeek-V3
   * report, 3.3.2), so the error grows with K (on the H200, 5% of D at k 4096 with inputs of
   * one sign). Default false: each K-tile's sum is promoted into float32 (makeGemm's
   * `fastAccum`).
   */
  readonly fastAccum?: boolean;
  /**
   * The tile configuration. Default: chosen as {@link gemmChoice} describes (tuned with `tune`;
   * else a cached tuning, a shipped default, or the first matching row of GEMM_CONFIGS).
   */
  readonly config?: GemmConfig;
  /**
   * Tune the configuration for this call's shape class (see {@link gemmChoice}): true, or the
   * tuning's options (autotune's `measure`, `cacheDir`, `retune`, `progress`, `warmup`, `iters`,
   * `rounds`). Default: true when the environment has TIRX_TUNE=1, else false. Not with `config`.
   */
  readonly tune?: boolean | GemmTuneOptions;
}

/** The options of gemm()'s tuning: these of runtime's autotune (packages/runtime/src/autotune.ts). */
/** The keys of {@link GemmTuneOptions}. */
const TUNE_OPTIONS = [
  "measure",
  "cacheDir",
  "retune",
  "progress",
  "warmup",
  "iters",
  "rounds",
] as const satisfies readonly (keyof GemmTuneOptions)[];

export type GemmTuneOptions = Pick<
  AutotuneOptions<GemmConfig>,
  "measure" | "cacheDir" | "retune" | "progress" | "warmup" | "iters" | "rounds"
>;

/** How gemm() chose a call's configuration ({@link gemmChoice}). */
export interface GemmChoice {
  /** The configuration the call builds. */
  readonly config: GemmConfig;
  /**
   * - "given": the `config` option;
   * - "tuned", "cache", "default", "first-fit": autotune's result, with `tune`;
   * - "cache" without `tune`: a tuning of this key found in the cache folder;
   * - "default" without `tune`: the shipped default (GEMM_TUNED_DEFAULTS);
   * - "picked": pickGemmConfig (the first matching row of GEMM_CONFIGS).
   */
  readonly source: "given" | "tuned" | "cache" | "default" | "first-fit" | "picked";
  /** One line: why. */
  readonly why: string;
  /** The tuning key's text (gemmTuneKey written by runtime's tuneKeyText). */
  readonly key: string;
  /** Candidates timed for this call (0 unless "tuned"). */
  readonly measurements: number;
  /** The candidates a tuning considered, in order (with `tune`). */
  readonly candidates?: readonly GemmConfig[];
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
  "fastAccum",
  "config",
  "tune",
] as const;

/** The family name of gemm()'s tunings (autotune's `name`; the cache files' prefix). */
const FAMILY = "gemm";

registerTunedDefaults(FAMILY, GEMM_TUNED_DEFAULTS);

/** SMs of the H200, the grid the configurations are written for. */
const SMS = 132;

/** The built kernels by their sizes (canonicalJson of the GemmSizes), the tunings' included. */
const BUILT = new Map<string, GemmKernels>();

/**
 * Kernels built by gemm() and its tuning in this process (makeGemm calls), for tests and
 * benchmarks: a tuned call whose tuning is cached builds one (the choice, at the m bucket's top,
 * which is the call's own kernel when m is the top), a call after it none.
 */
export const gemmBuildStats = { kernels: 0 };

/**
 * The kernels of `sizes`: built once per process (makeGemm) and kept by their canonical JSON,
 * so that a tuning's build of its choice at the bucket's top m is the kernel a call at that m
 * launches (compile's cache then finds the same PrimFunc, with no hashing).
 * @throws TirxError makeGemm's.
 */
function builtKernels(sizes: GemmSizes): GemmKernels {
  return cached(BUILT, canonicalJson(sizes), () => {
    const kernels = makeGemm(sizes);
    gemmBuildStats.kernels++;
    return kernels;
  });
}
/** The built padding kernels by their sizes. */
const PADS = new Map<string, PrimFunc>();

/** TX9002 (kernels/tensors). */
function tensorError(message: string): TirxError {
  return new TirxError("TX9002", `gemm: ${message}`);
}

/** `[a, b]` for a message. */
const show = (s: readonly number[]) => `[${s.join(", ")}]`;

/** `x` as a device tensor (`name`'s role `what`), of any rank. @throws TirxError TX9002. */
function deviceTensor(x: unknown, name: string, what: string): DeviceTensor {
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
  return x as DeviceTensor;
}

/** `x` as a device tensor (`name`'s role `what`) of rank `rank`. @throws TirxError TX9002. */
function ranked(x: unknown, name: string, what: string, rank: number): DeviceTensor {
  const t = deviceTensor(x, name, what);
  if (t.shape.length !== rank) {
    throw tensorError(`${name} must be ${what}, got shape ${show(t.shape)}`);
  }
  return t;
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
  /** The epilogue's tensors, then α's and β's float32 values where they are launch arguments. */
  readonly epilogueArgs: (DeviceTensor | number)[];
  /** The main kernel's last arguments (block scales), after D's or W's epilogue arguments. */
  readonly mainArgs: DeviceTensor[];
  readonly pads: { readonly fn: PrimFunc; readonly x: DeviceTensor; readonly pitch: number }[];
  /**
   * With config.scaleLoad "tma" or "shared": the kernel transposing scaleA (mainArgs[0]) into a scratch of
   * `shape` that replaces it in the main kernel's arguments.
   */
  readonly scaleT?: { readonly fn: PrimFunc; readonly shape: readonly [number, number] };
  readonly choice: GemmChoice;
}

/** What {@link prepare} returns for m, n or k of 0: the checked sizes and operands, no kernel. */
interface EmptyCall {
  readonly empty: true;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly outDtype: GemmFloat;
  readonly A: DeviceTensor;
  readonly B: DeviceTensor;
  readonly transA: boolean;
  readonly transB: boolean;
  readonly scaleKind: "tensor" | "block" | undefined;
}

/**
 * The checks and the kernels of a call (none when m, n or k is 0).
 * @throws TirxError TX9001, TX9002 as {@link gemm}.
 */
function prepare(a: unknown, b: unknown, opts: unknown): Prepared | EmptyCall {
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
  for (const key of ["transA", "transB", "fastAccum"] as const) {
    if (o[key] !== undefined && typeof o[key] !== "boolean") {
      throw configError(`gemm: ${key} is a boolean, got ${showValue(o[key])}`);
    }
  }
  if (
    o.tune !== undefined &&
    typeof o.tune !== "boolean" &&
    (typeof o.tune !== "object" || o.tune === null || Array.isArray(o.tune))
  ) {
    throw configError(
      `gemm: tune is true, false or the tuning's options ({ measure, cacheDir, retune, progress, warmup, iters, rounds }), got ${showValue(o.tune)}`,
    );
  }
  if (typeof o.tune === "object") {
    for (const key of Object.keys(o.tune)) {
      if ((TUNE_OPTIONS as readonly string[]).includes(key)) continue;
      const guess = didYouMean(key, TUNE_OPTIONS);
      throw configError(
        `gemm: tune has no option ${showValue(key)}${guess ? `; did you mean "${guess}"?` : ""} (options: ${TUNE_OPTIONS.join(", ")})`,
      );
    }
  }
  if (o.tune !== undefined && o.tune !== false && o.config !== undefined) {
    throw configError("gemm: give config or tune, not both (tuning chooses the config)");
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
  // The operand kinds wgmma multiplies (PTX ISA, wgmma.mma_async): one 16-bit dtype, or two
  // float8 (e4m3 and e5m2 may mix).
  const f8 = (d: string): boolean => d.startsWith("float8");
  if (f8(A.dtype) !== f8(B.dtype) || (!f8(A.dtype) && A.dtype !== B.dtype)) {
    throw tensorError(
      `a and b must have one 16-bit dtype, or both be float8 (wgmma's operand kinds: PTX ISA, wgmma.mma_async), got ${A.dtype} and ${B.dtype}`,
    );
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
    // The other layout of an operand that would make the k's agree: the likely fix.
    const otherA = transA ? A.shape[1] : A.shape[0];
    const otherB = transB ? B.shape[0] : B.shape[1];
    const hint =
      ka === otherB
        ? `; b read as ${transB ? "[k, n]" : "[n, k]"} would agree: pass transB: ${!transB}`
        : otherA === kb
          ? `; a read as ${transA ? "[m, k]" : "[k, m]"} would agree: pass transA: ${!transA}`
          : "";
    throw tensorError(
      `a's k (${ka}, of ${show(A.shape)}${transA ? " stored [k, m]" : ""}) and b's k (${kb}, of ${show(B.shape)}${transB ? " stored [n, k]" : ""}) differ${hint}`,
    );
  }
  const k = ka;
  // An empty m or n: D is empty; an empty k: D = epilogue(0) (gemm() below), as torch.matmul.
  const empty = m === 0 || n === 0 || k === 0;
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
      `gemm: ${o.scaleA === undefined ? "scaleB" : "scaleA"} given without ${o.scaleA === undefined ? "scaleA" : "scaleB"}: float8 scales come in pairs, per-tensor (torch._scaled_mm's scale_a, scale_b) or block (A's [m, ⌈k/128⌉] and B's [⌈n/128⌉, ⌈k/128⌉]: blockScaleShapes)`,
    );
  }
  const scales: DeviceTensor[] = [];
  let scaleKind: "tensor" | "block" | undefined;
  if (hasScales) {
    const bs = blockScaleShapes(m, n, k);
    const want = `float32 [1] each (per tensor), or scaleA ${show(bs.a)} and scaleB ${show(bs.b)} (per 1 × 128 and 128 × 128 block: [m, ⌈k/128⌉], [⌈n/128⌉, ⌈k/128⌉])`;
    const shapeOf = (x: unknown): readonly number[] | undefined => {
      const sh = (x as Partial<DeviceTensor> | null)?.shape;
      return Array.isArray(sh) ? sh : undefined;
    };
    const sa = shapeOf(o.scaleA);
    scaleKind = sa !== undefined && sa.length === 2 ? "block" : "tensor";
    for (const [name, x, shape] of [
      ["scaleA", o.scaleA, scaleKind === "block" ? bs.a : [1]],
      ["scaleB", o.scaleB, scaleKind === "block" ? bs.b : [1]],
    ] as const) {
      // Any rank here: the message below names the shape this scale must have.
      const t = deviceTensor(x, name, want);
      if (
        t.dtype !== "float32" ||
        t.shape.length !== shape.length ||
        t.shape.some((d, i) => d !== shape[i])
      ) {
        // scaleA sets the kind (rank 2: block, else per tensor); scaleB must follow it.
        const must =
          name === "scaleA"
            ? `float32 [1] (per tensor) or ${show(bs.a)} (per 1 × 128 block: [m, ⌈k/128⌉])`
            : `float32 ${show(shape)} (with ${scaleKind === "block" ? `a block scaleA ${show(bs.a)}` : "a per-tensor scaleA [1]"})`;
        throw tensorError(
          `${name} must be ${must}, got ${t.dtype} ${show(t.shape)}; the scales are ${want}`,
        );
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
  // The inputs by role, for the refusals of an output over one and of a disposed one.
  const inputs: [string, DeviceTensor | undefined][] = [
    ["a", A],
    ["b", B],
    ["scaleA", scales[0]],
    ["scaleB", scales[1]],
    ["bias", bias],
    ["c", C],
    ["residual", R],
  ];
  if (o.out !== undefined) {
    const out = ranked(o.out, "out", `[m, n] = ${show([m, n])}`, 2);
    if (out.shape[0] !== m || out.shape[1] !== n) {
      throw tensorError(`out must be [m, n] = ${show([m, n])}, got ${show(out.shape)}`);
    }
    if (o.outDtype === undefined && FLOATS.includes(out.dtype)) outDtype = out.dtype as GemmFloat;
    if (out.dtype !== outDtype) {
      throw tensorError(
        o.outDtype === undefined
          ? `out's dtype is D's, one of ${FLOATS.join(", ")} (without outDtype, out's own sets D's), got ${out.dtype}`
          : `out's dtype must be outDtype (${outDtype}), got ${out.dtype}`,
      );
    }
    sameDevice(out, "out");
    // Other CTAs still read the operands, scales and bias while a tile of D is stored: D written
    // over one of them is a race (wrong data on the GPU, a hazard on the simulator). C and the
    // residual are read element by element by the thread that then writes D's element (also
    // through split-K's reduction), so out may be either of them, as the very same tensor. An
    // empty D is never written (and empty tensors may share an address).
    if (m > 0 && n > 0) {
      refuseAliasing("gemm", [["out", out]], inputs, ["c", "residual"]);
    }
  }
  // A disposed tensor by its role here: a launch would name the kernel's parameter ("X", "D").
  refuseDisposed("gemm", [...inputs, ["out", o.out as DeviceTensor | undefined]]);
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
  checkEpilogueScalar("alpha", o.alpha);
  checkEpilogueScalar("beta", o.beta);
  const alphaArg = o.alpha !== undefined && o.alpha !== 1 ? o.alpha : undefined;
  const betaArg = C && o.beta !== undefined && o.beta !== 0 && o.beta !== 1 ? o.beta : undefined;
  // α and β's launch arguments, after the epilogue's tensors.
  const scalars = [
    ...(alphaArg !== undefined ? [alphaArg] : []),
    ...(betaArg !== undefined ? [betaArg] : []),
  ];
  // The options as makeGemm takes them (sizes and pitches aside).
  const opts1: Omit<GemmSizes, "config" | "m" | "n" | "k"> = {
    dtype: A.dtype as GemmInput,
    dtypeB: B.dtype as GemmInput,
    outDtype,
    transA,
    transB,
    // α ≠ 1 and β ∉ {0, 1} (with c) are launch arguments (one kernel for every value); β = 0
    // is a constant (its kernel reads no C), β = 1 with c the default, and β without c (any
    // value) goes to makeGemm's checks, which refuse it.
    ...(alphaArg !== undefined ? { alphaAtLaunch: true } : {}),
    ...(betaArg !== undefined ? { betaAtLaunch: true } : {}),
    ...(o.beta !== undefined && betaArg === undefined && (o.beta !== 1 || !C)
      ? { beta: o.beta }
      : {}),
    ...(C ? { c: C.dtype as GemmFloat } : {}),
    ...(bias ? { bias: bias.dtype as GemmFloat } : {}),
    ...(o.activation !== undefined ? { activation: o.activation } : {}),
    ...(R ? { residual: R.dtype as GemmFloat } : {}),
    ...(scaleKind === "tensor" ? { scales: true } : {}),
    ...(scaleKind === "block" ? { scales: "block" as const } : {}),
    ...(o.fastAccum === true ? { fastAccum: true } : {}),
  };
  const inBytes = fp8 ? 1 : 2;
  if (empty) {
    // No kernel runs, but the options are checked as for a call that launches (makeGemm's
    // rules, on sizes of at least 1): an option refused there is refused here too.
    const one = { m: Math.max(m, 1), n: Math.max(n, 1), k: Math.max(k, 1) };
    const config = o.config ?? pickGemmConfig(gemmShapeOf({ ...opts1, ...one })).config;
    // Rows the library pads (its zero-padded copies) are checked with the padded pitch.
    const colsA = transA ? one.m : one.k;
    const colsB = transB ? one.k : one.n;
    const pitchA = paddedPitch(colsA, inBytes);
    const pitchB = paddedPitch(colsB, inBytes);
    checkGemmSizes({
      ...opts1,
      ...one,
      ...(pitchA !== colsA ? { pitchA } : {}),
      ...(pitchB !== colsB ? { pitchB } : {}),
      config,
    });
    return { empty: true, m, n, k, outDtype, A, B, transA, transB, scaleKind };
  }
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
    const fn = cached(
      PADS,
      JSON.stringify([rows, cols, pitch, t.dtype]),
      () => makePadRows(rows, cols, pitch, t.dtype as GemmInput),
      64,
    );
    pads.push({ fn, x: t, pitch });
    return pitch;
  };
  const pitchA = pitchOf(A);
  const pitchB = pitchOf(B);
  const base: Omit<GemmSizes, "config"> = {
    m,
    n,
    k,
    ...opts1,
    ...(pitchA !== undefined ? { pitchA } : {}),
    ...(pitchB !== undefined ? { pitchB } : {}),
  };
  const choice = chooseConfig(o, base, dev, {
    ...(C ? { c: C } : {}),
    ...(bias ? { bias } : {}),
    ...(R ? { residual: R } : {}),
    scales,
    scalars,
  });
  const kernels = builtKernels({ ...base, config: choice.config });
  const epilogueArgs = [
    ...(C ? [C] : []),
    ...(bias ? [bias] : []),
    ...(R ? [R] : []),
    ...(scaleKind === "tensor" ? scales : []),
    ...scalars,
  ];
  const mainArgs = scaleKind === "block" ? scales : [];
  const scaleT =
    scaleKind === "block" && scalesByTma(kernels.config.scaleLoad) && !tmaScalesAsGiven(k)
      ? { fn: scaleTranspose(m, k), shape: blockScaleShapeMN(m, k) }
      : undefined;
  return {
    kernels,
    m,
    n,
    outDtype,
    epilogueArgs,
    mainArgs,
    pads,
    ...(scaleT ? { scaleT } : {}),
    choice,
  };
}

/** The built scale transpositions by (m, k). */
const SCALE_TS = new Map<string, PrimFunc>();

/** makeScaleTransposeA(m, k), built once per process (kept by sizes). */
function scaleTranspose(m: number, k: number): PrimFunc {
  return cached(SCALE_TS, `${m},${k}`, () => makeScaleTransposeA(m, k), 64);
}

/** The tensors of a call besides a and b, for a tuning's timed launches (their shapes and dtypes). */
interface CallTensors {
  readonly c?: DeviceTensor;
  readonly bias?: DeviceTensor;
  readonly residual?: DeviceTensor;
  readonly scales: readonly DeviceTensor[];
  /** α's and β's values where they are launch arguments (after the epilogue's tensors). */
  readonly scalars: readonly number[];
}

/** Choices of this process without `tune`, by key text and device (a cache folder read once). */
const UNTUNED = new Map<string, GemmChoice>();

/** The sizes of `base` at `m` rows (A's pitch recomputed where it depends on m: transA). */
function atRows(base: Omit<GemmSizes, "config">, m: number): Omit<GemmSizes, "config"> {
  if (m === base.m) return base;
  const inBytes = base.dtype.startsWith("float8") ? 1 : 2;
  const rest: Omit<GemmSizes, "config"> & { pitchA?: number } = { ...base };
  delete rest.pitchA;
  const pitchA = base.transA === true ? paddedPitch(m, inBytes) : base.pitchA;
  return { ...rest, m, ...(pitchA !== undefined && pitchA !== m ? { pitchA } : {}) };
}

/**
 * The configurations gemm()'s tuning tries for a shape: the rows of GEMM_CONFIGS and
 * GEMM_TUNE_EXTRA (pickGemmConfig's choice first, each configuration once), without the split-K
 * rows that cannot help: fewer than
 * 2 K-tiles per slice, or D already has as many tiles as the H200 has SMs (132); for promoted
 * float8 (GemmShape's `promoted`), none over 192 columns (two float32 register tiles of 112 or
 * 128 each would spill); tiles of a 32-column step (not 64) only with GemmShape's `kMajorB`.
 * With GemmShape's `blockScales`, each of those again with `scaleLoad: "tma"` (A's scales
 * staged by TMA; kernel.ts's header), after all of them, then again with "shared" (B's scales
 * in shared memory too), where its stages still fit in shared memory with the scales
 * (gemmSharedBytes: bm · 16 bytes a stage as given, bm · 4 transposed; "shared" B's per tile).
 * @example gemmTuneCandidates({ m: 16, n: 256, k: 64, inBytes: 2 }) // no split-K row (1 K-tile)
 * @throws TirxError TX9001 as pickGemmConfig.
 */
export function gemmTuneCandidates(s: GemmShape): GemmConfig[] {
  const first = pickGemmConfig(s).config;
  const seen = new Set<string>();
  const out: GemmConfig[] = [];
  for (const c of [first, ...[...GEMM_CONFIGS, ...GEMM_TUNE_EXTRA].map((r) => r.config)]) {
    const text = canonicalJson(c);
    if (seen.has(text)) continue;
    seen.add(text);
    // Register tiles of sums beyond the consumers' registers (makeGemm's rule: ptxas would
    // spill them), e.g. a promoted float8 K-tile's second tile at bn 224 and 256.
    if (gemmTileRegisters(c, s.promoted === true) > gemmTileRegisterBudget(c.bm)) continue;
    // config.overlap is for float8 that promotes only (makeGemm's rule).
    if (c.overlap === true && s.promoted !== true) continue;
    // Tiles of 32-column steps read a K-major B only (makeGemm's bn rule).
    if (c.bn % 64 !== 0 && s.kMajorB !== true) continue;
    // A cluster of 2 splits an MN-major B's 64-column blocks evenly (makeGemm's cluster rule;
    // float8's B is always K-major).
    if ((c.cluster ?? 1) > 1 && s.inBytes === 2 && s.kMajorB !== true && c.bn % 128 !== 0) continue;
    const split = c.splitK ?? 1;
    if (split > 1) {
      const kTiles = Math.ceil(s.k / (128 / s.inBytes));
      if (kTiles < 2 * split || gemmTiles(s, c) >= SMS) continue;
    }
    out.push(c);
  }
  if (s.blockScales === true) {
    const plain = out.filter((c) => c.scaleLoad === undefined);
    for (const scaleLoad of ["tma", "shared"] as const) {
      for (const c of plain) {
        const t: GemmConfig = { ...c, scaleLoad };
        if (gemmSharedBytes(t, s.k) <= MAX_GEMM_SHARED) out.push(t);
      }
    }
  }
  return out;
}

/** A tuning of key `key` (text) on `dev` in the cache folder, read without building: its config. */
function cachedConfig(
  dir: string | undefined,
  key: string,
  dev: DeviceLike,
  fits: (c: GemmConfig) => boolean,
): GemmConfig | undefined {
  if (dir === undefined || !existsSync(dir)) return undefined;
  const here = tuneDeviceKey(dev);
  let files: string[];
  try {
    files = readdirSync(dir).sort();
  } catch {
    // Not a folder, or unreadable: no cache (a tuning reports it and goes on too).
    return undefined;
  }
  for (const f of files) {
    if (!f.startsWith(`${FAMILY}-`) || !f.endsWith(".json")) continue;
    const r = readTuneCache(join(dir, f));
    if (r.kind !== "entry") continue;
    const e = r.entry;
    const c = e.config as unknown as GemmConfig;
    if (
      e.name === FAMILY &&
      e.key.user === key &&
      e.key.device === here.device &&
      e.key.arch === here.arch &&
      e.key.driver === here.driver &&
      e.key.target === "default" &&
      fits(c)
    ) {
      return c;
    }
  }
  return undefined;
}

/** What pickGemmConfig and the tuning candidates read of a call's sizes. */
function gemmShapeOf(s: Omit<GemmSizes, "config">): GemmShape {
  const inBytes: 1 | 2 = s.dtype.startsWith("float8") ? 1 : 2;
  return {
    m: s.m,
    n: s.n,
    k: s.k,
    inBytes,
    promoted: inBytes === 1 && s.fastAccum !== true,
    kMajorB: s.transB === true && s.scales !== "block",
    blockScales: s.scales === "block",
  };
}

/**
 * The configuration of a call (see {@link gemmChoice}).
 * @throws TirxError autotune's (TX1002 for bad tuning options, TX5013 when no candidate fits).
 */
function chooseConfig(
  o: GemmOptions,
  base: Omit<GemmSizes, "config">,
  dev: DeviceLike,
  x: CallTensors,
): GemmChoice {
  const key = gemmTuneKey(base);
  const text = tuneKeyText(key);
  const plain = { key: text, measurements: 0 };
  if (o.config !== undefined) {
    return { config: o.config, source: "given", why: "the config option", ...plain };
  }
  const shape = gemmShapeOf(base);
  const tune = o.tune ?? process.env["TIRX_TUNE"] === "1";
  if (tune === false) {
    const dir = autotuneCacheDir();
    const memoKey = `${text}|${dev.kind === "sim" ? "sim" : dev.name}|${dir ?? ""}`;
    const memo = UNTUNED.get(memoKey);
    if (memo !== undefined) return memo;
    // A cached config must still be one this kernel takes (a hand-edited file, or a newer
    // release that narrowed the configs): otherwise it is no choice.
    const fits = (c: GemmConfig): boolean => {
      try {
        checkGemmSizes({ ...base, config: c });
        return true;
      } catch (e) {
        if (e instanceof TirxError) return false;
        throw e;
      }
    };
    const cached = cachedConfig(dir, text, dev, fits);
    const shipped = GEMM_TUNED_DEFAULTS[text];
    const pick = pickGemmConfig(shape);
    const choice: GemmChoice =
      cached !== undefined
        ? { config: cached, source: "cache", why: `an earlier tuning in ${dir}`, ...plain }
        : shipped !== undefined
          ? { config: shipped, source: "default", why: "the shipped default", ...plain }
          : {
              config: pick.config,
              source: "picked",
              why: `pickGemmConfig's "${pick.name}" (no tuning cached, no shipped default)`,
              ...plain,
            };
    if (UNTUNED.size >= 1024) UNTUNED.clear();
    UNTUNED.set(memoKey, choice);
    return choice;
  }
  const t: GemmTuneOptions = tune === true ? {} : tune;
  const top = gemmRowsBucket(base.m);
  const rep = atRows(base, top);
  const candidates = gemmTuneCandidates({ ...shape, m: top });
  const kernels = new Map<string, GemmKernels>();
  const make = (c: GemmConfig): PrimFunc => {
    const ks = builtKernels({ ...rep, config: c });
    kernels.set(canonicalJson(c), ks);
    return ks.main;
  };
  const temps: DeviceTensor[] = [];
  try {
    const gpu = dev.kind !== "sim" && t.measure === undefined;
    const launch = gpu ? timedLaunch(rep, dev, x, kernels, temps) : undefined;
    const r = atUser(() =>
      autotune(make, candidates, {
        key,
        name: FAMILY,
        device: dev,
        ...(launch ? { launch } : {}),
        ...(t.measure !== undefined ? { measure: t.measure } : {}),
        ...(t.cacheDir !== undefined ? { cacheDir: t.cacheDir } : {}),
        ...(t.retune !== undefined ? { retune: t.retune } : {}),
        ...(t.progress !== undefined ? { progress: t.progress } : {}),
        ...(t.warmup !== undefined ? { warmup: t.warmup } : {}),
        ...(t.iters !== undefined ? { iters: t.iters } : {}),
        ...(t.rounds !== undefined ? { rounds: t.rounds } : {}),
      }),
    );
    // A tuning may have written the cache: untuned calls look again.
    UNTUNED.clear();
    return {
      config: r.config,
      source: r.source,
      why: `${r.why} (m bucket ≤ ${top})`,
      key: text,
      measurements: r.measurements,
      candidates,
    };
  } finally {
    for (const d of temps) d.dispose();
  }
}

/**
 * A GPU tuning's launch of one candidate at the bucket's sizes `rep`: zero-filled operands and
 * epilogue tensors of those sizes (allocated at the first launch, so that a choice read from the
 * cache, this process's memo or a shipped default allocates nothing; disposed by the caller
 * through `temps`), the main kernel and, with split-K, the finishing kernel (the workspace is
 * not zeroed again between timed launches: its sums are not read).
 */
function timedLaunch(
  rep: Omit<GemmSizes, "config">,
  dev: DeviceLike,
  x: CallTensors,
  kernels: ReadonlyMap<string, GemmKernels>,
  temps: DeviceTensor[],
): (kernel: Compiled, config: GemmConfig) => void {
  let args: { A: DeviceTensor; B: DeviceTensor; D: DeviceTensor; W: DeviceTensor } | undefined;
  let epi: (DeviceTensor | number)[] = [];
  let tail: DeviceTensor[] = [];
  // scaleLoad "tma" / "shared" candidates where the kernel takes A's scales MN-major (tmaScalesAsGiven):
  // transposed into `tailT[0]` before each launch, as gemm() does (the transposition is part of
  // what a call costs).
  let tailT: DeviceTensor[] = [];
  const allocate = (): NonNullable<typeof args> => {
    const { m, n, k } = rep;
    const zeros = (shape: number[], dtype: string): DeviceTensor => {
      const t = tensor.zeros(shape, dtype as "float32", dev);
      temps.push(t);
      return t;
    };
    const A = zeros(rep.transA ? [k, rep.pitchA ?? m] : [m, rep.pitchA ?? k], rep.dtype);
    const B = zeros(
      rep.transB ? [n, rep.pitchB ?? k] : [k, rep.pitchB ?? n],
      rep.dtypeB ?? rep.dtype,
    );
    const D = zeros([m, n], rep.outDtype ?? "bfloat16");
    const W = zeros([m, n], "float32");
    const block = rep.scales === "block";
    epi = [
      ...(x.c ? [zeros([m, n], x.c.dtype)] : []),
      ...(x.bias ? [x.bias] : []),
      ...(x.residual ? [zeros([m, n], x.residual.dtype)] : []),
      ...(block ? [] : x.scales),
      ...x.scalars,
    ];
    tail = block ? [zeros([m, Math.ceil(k / 128)], "float32"), x.scales[1]!] : [];
    tailT = block ? [zeros([...blockScaleShapeMN(m, k)], "float32"), x.scales[1]!] : [];
    return { A, B, D, W };
  };
  // The finishing kernels and the scale transposition, compiled once (outside the timed
  // launches after the first).
  const finishes = new Map<string, Compiled>();
  let transpose: Compiled | undefined;
  return (kernel, config) => {
    const { A, B, D, W } = (args ??= allocate());
    const text = canonicalJson(config);
    const ks = kernels.get(text);
    invariant(ks !== undefined, "gemm: a tuned candidate was built by make");
    let last = tail;
    if (scalesByTma(ks.config.scaleLoad) && rep.scales === "block" && !tmaScalesAsGiven(rep.k)) {
      transpose ??= compile(scaleTranspose(rep.m, rep.k), { target: "cuda" });
      transpose.launchAsync(tail[0]!, tailT[0]!);
      last = tailT;
    }
    if (ks.finish === undefined) kernel.launchAsync(A, B, D, ...epi, ...last);
    else {
      let fin = finishes.get(text);
      if (fin === undefined) finishes.set(text, (fin = compile(ks.finish, { target: "cuda" })));
      kernel.launchAsync(A, B, W, ...last);
      fin.launchAsync(W, D, ...epi);
    }
  };
}

/**
 * How gemm(a, b, opts) chooses its configuration, and the choice (gemm's checks; the kernels are
 * built and kept, so a gemm() call after it with the same options builds nothing):
 * 1. `config`: taken as given;
 * 2. `tune` (or TIRX_TUNE=1 in the environment, unless `tune: false`): runtime's autotune over
 *    {@link gemmTuneCandidates}, key {@link gemmTuneKey} (m bucketed by gemmRowsBucket, every
 *    candidate built and timed at the bucket's top m; n and k exact; dtypes, layouts, epilogue),
 *    family name "gemm": this process's earlier answer, else the cache file (autotune's folder:
 *    `$TIRX_CACHE_DIR/autotune`, …), else a shipped default (GEMM_TUNED_DEFAULTS: nothing timed),
 *    else each candidate timed (CUDA events around launches on zero-filled tensors of the
 *    bucket's sizes, or the `measure` option), the fastest written to the cache file; on the
 *    simulator without `measure`, the first candidate that fits, untimed;
 * 3. otherwise, building nothing: a tuning of the same key and device found in the cache folder
 *    (its kernel source not checked: every configuration is correct for every shape; `tune: true`
 *    checks it), else the shipped default, else pickGemmConfig (the first matching row of
 *    GEMM_CONFIGS).
 * @example gemmChoice(x, w, { transB: true, tune: true }).config // e.g. { bm: 128, bn: 256, stages: 4 }
 * @throws TirxError as {@link gemm} before its launches, and autotune's (TX5013: no candidate fits).
 */
export function gemmChoice(a: DeviceTensor, b: DeviceTensor, opts: GemmOptions = {}): GemmChoice {
  return atCaller(() => {
    const p = prepare(a, b, opts);
    if (!("empty" in p)) return p.choice;
    if (p.m === 0 || p.n === 0) {
      throw configError(
        `gemmChoice: m ${p.m}, n ${p.n}: D is empty and gemm() launches no kernel, so there is no configuration`,
      );
    }
    // k = 0: gemm() computes the epilogue of a zero product with k = 1 (emptyK).
    return withZeroOperands(p, opts, (a1, b1, o1) => gemmChoice(a1, b1, o1));
  });
}

/**
 * D = epilogue(a · b) on device tensors (the Hopper GEMM of makeGemm: TMA, wgmma, float32
 * accumulation; see GemmEpilogue for the epilogue's order: scales, α, β·C, bias, activation,
 * residual, the conversion to D's dtype). Any m, n, k ≥ 0 (m or n of 0: an empty D, no launch;
 * k of 0: D = the epilogue of a zero product, computed as k = 1 over zeros); float16, bfloat16 (a and b one
 * dtype), or float8_e4m3 / float8_e5m2 (any pair; then a [m, k] and b [n, k] with `transB`:
 * wgmma reads float8 only K-major). An operand whose rows are not a multiple of 16 bytes is
 * first copied into a zero-padded tensor (one extra kernel and allocation per call). With a
 * split-K configuration the call also allocates a zeroed float32 workspace [m, n]. The
 * configuration: `config`, else tuned or looked up as {@link gemmChoice} says (`tune`,
 * TIRX_TUNE=1). Runs where
 * the tensors live: on the GPU (sm_90: Hopper) or on the simulated device.
 * Each element of D is within the rounding of D's dtype plus float32 accumulation error (about
 * k · 2^-24 · Σ|a·b|; float8 on a GPU: the tensor cores' 13-bit alignment, WGMMA_FP8_BOUND, per
 * 128-wide K-tile promoted into float32, or over all of K with `fastAccum`) of the exact result
 * of the stored inputs.
 * @param a [m, k] (transA: [k, m]).
 * @param b [k, n] (transB: [n, k]), on a's device.
 * @returns D [m, n] of `outDtype` (a new tensor, or `out`).
 * @example const d = gemm(x, w, { transB: true, bias, activation: "gelu" }) // x·wᵀ + bias, GELU
 * @example const d = gemm(x, w, { transB: true, tune: true }) // tuned for x's m bucket, n and k
 * @example const d = gemm(a8, b8, { transB: true, scaleA, scaleB, outDtype: "bfloat16" })
 * @example // DeepSeek-V3 block scales: sa float32 [m, ⌈k/128⌉], sb float32 [⌈n/128⌉, ⌈k/128⌉]
 *   const d = gemm(a8, b8, { transB: true, scaleA: sa, scaleB: sb })
 * @throws TirxError TX9002 (kernels/tensors) for an a, b, c, residual, out (rank 2), bias (rank
 *   1) or scale (float32: both [1], or scaleA [m, ⌈k/128⌉] with scaleB [⌈n/128⌉, ⌈k/128⌉]) that
 *   is not such a device tensor, shapes that disagree (k, [m, n],
 *   [n]), dtypes outside the lists, out's dtype other than outDtype, out that shares memory
 *   with a, b, a scale or bias (other tiles still read what D would overwrite; out may be c or
 *   residual itself, an in-place update, but not overlap them otherwise), tensors on different devices, an operand to pad of 2^31 − 256 elements or more; TX9001 (kernels/config) for an
 *   unknown option, transA / transB / fastAccum not booleans, fastAccum with 16-bit inputs or
 *   block scales, tune not a boolean or an object, tune with config, one scale without the other, outDtype outside
 *   the list, a GPU that is not Hopper, and makeGemm's (float8 with an MN-major operand, scales
 *   with 16-bit inputs, beta without c, alpha / beta not finite, an unknown activation, a config
 *   outside its ranges, split-K with m · n of 2^31 − 256 or more); with tune, autotune's (TX1002 for
 *   bad tuning options, TX5013 when no candidate fits); TX5011 for a disposed tensor, naming its
 *   option (refuseDisposed); the launches' errors (CudaError).
 */
export function gemm(a: DeviceTensor, b: DeviceTensor, opts: GemmOptions = {}): DeviceTensor {
  return atCaller(() => {
    const p = prepare(a, b, opts);
    const dev = a.device;
    if ("empty" in p) {
      // m or n of 0: an empty D, nothing to launch. k of 0: A·B is 0, D the epilogue of 0
      // (α·0 + β·C, bias, activation, residual), as torch.matmul gives for an empty k.
      if (p.m === 0 || p.n === 0) return opts.out ?? tensor.empty([p.m, p.n], p.outDtype, dev);
      return withZeroOperands(p, opts, (a1, b1, o1) => gemm(a1, b1, o1));
    }
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
      // scaleLoad "tma" / "shared": A's block scales transposed into an MN-major scratch first.
      let mainArgs = p.mainArgs;
      if (p.scaleT !== undefined) {
        const y = tensor.empty([...p.scaleT.shape], "float32", dev);
        temps.push(y);
        compile(p.scaleT.fn, cuda)(p.mainArgs[0]!, y);
        mainArgs = [y, ...p.mainArgs.slice(1)];
      }
      const D = opts.out ?? tensor.empty([p.m, p.n], p.outDtype, dev);
      if (p.kernels.finish === undefined) {
        compile(p.kernels.main, cuda)(ops[0]!, ops[1]!, D, ...p.epilogueArgs, ...mainArgs);
      } else {
        const W = tensor.zeros([p.m, p.n], "float32", dev);
        temps.push(W);
        compile(p.kernels.main, cuda)(ops[0]!, ops[1]!, W, ...mainArgs);
        compile(p.kernels.finish, cuda)(W, D, ...p.epilogueArgs);
      }
      return D;
    } finally {
      // compile's launches synchronize: the temporaries are no longer read.
      for (const t of temps) t.dispose();
    }
  });
}

/**
 * `f` on the call with k = 1 that `p` (k = 0, m and n ≥ 1) equals: zero operands [m, 1] and
 * [1, n] (transposed as given) of the operands' dtypes, block scales of 1 over them (a zero
 * product whatever they are), the other options as given; the temporaries disposed after.
 */
function withZeroOperands<R>(
  p: EmptyCall,
  opts: GemmOptions,
  f: (a: DeviceTensor, b: DeviceTensor, opts: GemmOptions) => R,
): R {
  const dev = p.A.device;
  const temps: ReturnType<typeof tensor.empty>[] = [];
  const zeros = (shape: number[], dtype: DType): DeviceTensor => {
    const t = tensor.zeros(shape, dtype, dev);
    temps.push(t);
    return t;
  };
  const ones = (shape: number[]): DeviceTensor => {
    const t = tensor(new Float32Array(shape[0]! * shape[1]!).fill(1), {
      shape,
      dtype: "float32",
      device: dev,
    });
    temps.push(t);
    return t;
  };
  try {
    const a1 = zeros(p.transA ? [1, p.m] : [p.m, 1], p.A.dtype);
    const b1 = zeros(p.transB ? [p.n, 1] : [1, p.n], p.B.dtype);
    const bs = blockScaleShapes(p.m, p.n, 1);
    const scales =
      p.scaleKind === "block" ? { scaleA: ones([...bs.a]), scaleB: ones([...bs.b]) } : {};
    return f(a1, b1, { ...opts, ...scales });
  } finally {
    for (const t of temps) t.dispose();
  }
}

/**
 * `f()` (autotune called from here), its TirxError stripped of the position autotune gives it
 * (this file: autotune's caller), so that gemm()'s atCaller places it at the user's line.
 */
function atUser<R>(f: () => R): R {
  try {
    return f();
  } catch (e) {
    if (e instanceof TirxError && e.span !== undefined)
      throw new TirxError(e.code, e.text, undefined, e.notes);
    throw e;
  }
}
