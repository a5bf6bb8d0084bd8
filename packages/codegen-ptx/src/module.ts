import {
  checkArchOption,
  DEFAULT_PASSES,
  runPipeline,
  checkPrimFunc,
  showValue,
  TirxError,
  verify,
  type Span,
  type LaunchConfig,
  type Param,
  type TensorMap,
  type PrimFunc,
  type Pass,
  type VerifiedFunc,
} from "@tirx-ts/core";
import { storagePass } from "./lower/storage-pass.js";
import { emitEntry } from "./emit/entry.js";
import { renderModule } from "./render.js";
import type { BoundsSite } from "./emit/bounds-check.js";
import { defaultArch, ptxVersionFor, resolveArch } from "./target.js";

/** Options of {@link emitPtx} and {@link compileToPtx}. */
export interface PtxOptions {
  /** Target architecture: `sm_80` (default), `sm_86`, `sm_87`, `sm_89`, `sm_90` or `sm_90a`. */
  readonly arch?: string;
  /**
   * Address tensors with symbolic dims with 64-bit offsets (default false: 32-bit, correct for
   * tensors of at most 2^31 − 1 bytes). The runtimes choose it at launch from the actual sizes;
   * tensors of static shape get 64-bit offsets exactly when they exceed 2^31 − 1 bytes.
   */
  readonly wideSymbolic?: boolean;
  /**
   * Guard every plain load and store whose index the verifier could not bound (data-dependent,
   * or built from a scalar parameter) on a tensor of static shape: an out-of-range access is
   * skipped (a load reads 0) and the first one is recorded in the module's `tirx_oob` global
   * for the runtime to report (see `boundsSites`). The same for each author index the verifier
   * left to the run (core's `axis-checks` pass): one outside its axis skips the access even
   * where the flat offset stays inside the buffer, and its site names the axis
   * (`BoundsSite.axis`; `emit/axis-guard.ts`). Default false.
   */
  readonly checkBounds?: boolean;
}

/** A PTX module holding one kernel, with what a runtime needs to launch it. */
export interface PtxModule {
  /** The module text, ready for ptxas or `cuModuleLoadDataEx` (append a NUL for the driver). */
  readonly text: string;
  /** Name of the `.visible .entry` (the function name as a PTX identifier). */
  readonly entry: string;
  /** `.version`, e.g. `"7.0"`. */
  readonly version: string;
  /** `.target`, e.g. `"sm_80"`. */
  readonly target: string;
  /** Static shared memory of one CTA in bytes. */
  readonly staticSharedBytes: number;
  /** Dynamic shared memory to pass at launch, in bytes. */
  readonly dynamicSharedBytes: number;
  readonly launch: LaunchConfig;
  /** Kernel parameters in `.param` order: tensors as `.u64` pointers, scalars by value. */
  readonly params: readonly Param[];
  /** Whether tensors with symbolic dims are addressed with 64-bit offsets (`wideSymbolic`). */
  readonly wideSymbolic: boolean;
  /** The guarded accesses by site id (`checkBounds`); empty when nothing is guarded. */
  readonly boundsSites: readonly BoundsSite[];
  /**
   * Tensor maps the runtime encodes at each launch (from the argument of `map.buffer`'s
   * parameter) and passes as 128-byte parameters after `params`, in this order.
   */
  readonly tensorMaps: readonly TensorMap[];
}

/**
 * The stages `emitPtx` runs after `verify`, in order: core's DEFAULT_PASSES (lower-tile →
 * axis-checks → tile-storage → unroll → simplify → swizzle → upcast-half) → storage.
 * `--emit ir --after NAME` names one of them.
 */
export const PTX_PASSES: readonly Pass[] = [...DEFAULT_PASSES, storagePass];

/**
 * Emit the PTX module of a verified function: run {@link PTX_PASSES}, then emit.
 *
 * `.version` is the lowest PTX ISA covering both the features used (`vf.ptxVersion`: cp.async
 * 7.0, `.L2::` qualifiers 7.4, ignore-src 7.5, `mbarrier.*.shared::cta` 7.8, cp.async.bulk 8.0,
 * bulk destination `.shared::cta` 8.6) and the target (sm_80 7.0, sm_86 7.1, sm_87 7.4, sm_89 and
 * sm_90 7.8, sm_90a 8.0); `.address_size` is 64. Rules: TIRx's cp.async tile pattern,
 * "Code generation", PTX ISA "cp.async", "cp.async.bulk", "mbarrier".
 *
 * @example
 * const mod = emitPtx(verify(fn), { arch: "sm_90" });
 * mod.text; // ".version 7.8\n.target sm_90\n..."
 * @throws TirxError TX5006 (unknown or unsupported arch), TX3023 (cp.async on a target below
 *   sm_80) and TX4007 (cp.async.bulk, expect_tx, try_wait or async-proxy fences below sm_90),
 *   both naming the instruction, the target and the author's span; TX1002 (arguments that are
 *   not a verified function or options). What the target does not decide the verifier checked:
 *   codegen meets no other user error, and anything else is an InternalError.
 */
export function emitPtx(vf: VerifiedFunc, opts: PtxOptions = {}): PtxModule {
  if (typeof vf !== "object" || vf === null || typeof vf.fn !== "object" || !vf.entry) {
    throw new TirxError("TX1002", `emitPtx needs the result of verify(fn), got ${showValue(vf)}`);
  }
  checkPtxOptions(opts, vf.fn.span);
  const arch = resolveArch(opts.arch ?? defaultArch(vf), vf);
  const version = ptxVersionFor(vf, arch);
  const wideSymbolic = opts.wideSymbolic === true;
  const entry = emitEntry(runPipeline(vf, PTX_PASSES), wideSymbolic, opts.checkBounds === true);
  const text = renderModule(
    {
      version,
      target: arch.name,
      launch: vf.launch,
      // The author's CTAs per SM (`min_ctas_per_sm`); else, setmaxnreg is honoured only under
      // a register cap at entry (ptxas C7508 otherwise): .maxntid with .minnctapersm 1, as
      // __launch_bounds__(threads, 1) gives.
      ...(vf.launch.minCtasPerSm !== undefined
        ? { minCtasPerSm: vf.launch.minCtasPerSm }
        : vf.requirements.some((r) => r.registerCap)
          ? { minCtasPerSm: 1 }
          : {}),
    },
    entry,
  );
  return {
    text,
    entry: entry.name,
    version,
    target: arch.name,
    staticSharedBytes: vf.staticSharedBytes,
    // Plus the slack for aligning the dynamic array at run time beyond CUDA's 16 bytes.
    dynamicSharedBytes:
      Math.max(vf.launch.dynamicSharedBytes, entry.storage.dynamicBytes) +
      (entry.storage.dynamicBytes > 0 && entry.storage.dynamicAlign > 16
        ? entry.storage.dynamicAlign - 16
        : 0),
    launch: vf.launch,
    params: vf.fn.params,
    wideSymbolic,
    boundsSites: entry.boundsSites,
    tensorMaps: entry.tensorMaps,
  };
}

/**
 * `verify(fn)` then {@link emitPtx}.
 * @throws TirxError from the verifier (TX1xxx–TX4xxx) or from {@link emitPtx}.
 */
export function compileToPtx(fn: PrimFunc, opts: PtxOptions = {}): PtxModule {
  checkPrimFunc(fn, "compileToPtx", (fn as Partial<PrimFunc> | null | undefined)?.span);
  checkPtxOptions(opts, fn.span);
  return emitPtx(verify(fn), opts);
}

function checkPtxOptions(opts: unknown, span?: Span): asserts opts is PtxOptions {
  if (typeof opts !== "object" || opts === null || Array.isArray(opts)) {
    throw new TirxError(
      "TX1002",
      `PTX options must be an object like { arch: "sm_90" }, got ${showValue(opts)}`,
      span,
    );
  }
  checkArchOption((opts as PtxOptions).arch, span);
  for (const k of ["wideSymbolic", "checkBounds"] as const) {
    const v: unknown = (opts as PtxOptions)[k];
    if (v !== undefined && typeof v !== "boolean") {
      throw new TirxError("TX1002", `${k} must be a boolean, got ${showValue(v)}`, span);
    }
  }
}
