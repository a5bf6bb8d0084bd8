import {
  archNamed,
  checkArchOption,
  checkPrimFunc,
  didYouMean,
  showValue,
  TirxError,
  type DeviceLike,
  type DiagnosticCode,
  type KernelArg,
  type PrimFunc,
  type Span,
} from "@tirx-ts/core";
import { defaultArch, emitPtx } from "@tirx-ts/codegen-ptx";
import { callerSpan } from "@tirx-ts/dsl";
import {
  archForDevice,
  CudaDevice,
  CudaError,
  driver,
  findPtxas,
  median,
  timeLaunches,
} from "@tirx-ts/runtime-cuda";
import {
  autotuneCacheDir,
  autotuneFile,
  canonicalJson,
  readTuneCache,
  sha256,
  writeTuneCache,
  type CachedCandidate,
  type TuneCacheEntry,
  type TuneConfig,
  type TuneKeyRecord,
} from "./autotune-cache.js";
import { ptxasUsage, REGISTERS_PER_BLOCK, registersPerBlock } from "./autotune-fit.js";
import { funcHash } from "./cache.js";
import { Progress, type ProgressStream } from "./autotune-progress.js";
import { compile, type Compiled } from "./compile.js";
import { device as defaultDevice, deviceArch } from "./device.js";

export type { TuneConfig, TuneValue, TuneKeyRecord } from "./autotune-cache.js";
export type { ProgressStream } from "./autotune-progress.js";

/**
 * The caller's part of a tuning key: what the best config depends on besides the device and the
 * kernel source, e.g. the shape class and dtypes. A string, or a flat object of strings,
 * numbers and booleans (written `k=v,k2=v2` with the names sorted, `tuneKeyText`).
 */
export type TuneKey = string | { readonly [k: string]: string | number | boolean };

/**
 * Shipped choices, `{ key → config }`, consulted before tuning. A key is either
 * `tuneKeyText(userKey)` (any GPU) or `<arch>/<tuneKeyText(userKey)>` (only on a GPU of that
 * compute capability, e.g. `"sm_90/dtype=float16,n=4096"`; on the simulator, autotune's `arch`
 * option), the latter first.
 */
export type TunedDefaults<C extends object = TuneConfig> = { readonly [key: string]: C };

/** Limits a candidate must fit besides the device's own (tighter budgets, e.g. two CTAs per SM). */
export interface AutotuneLimits {
  /**
   * Static plus dynamic shared memory one CTA may use, bytes. Default: the device's opt-in limit
   * (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 227 KiB on sm_90); on the simulator,
   * the target table's (core's `ARCHS`: CUDA C++ Programming Guide, "Features and Technical
   * Specifications") for the candidate's PTX target.
   */
  readonly sharedBytes?: number;
  /**
   * Registers one CTA may take from the register file (`registersPerBlock`: warps × registers per
   * thread × 32, in units of 256). Default `REGISTERS_PER_BLOCK` (64 K).
   */
  readonly registersPerBlock?: number;
}

/** Options of `autotune`. */
export interface AutotuneOptions<C extends object> {
  /** The caller's key (shape class, dtypes, …); see `TuneKey`. Required. */
  readonly key: TuneKey;
  /** The family's name, for the cache file and messages. Default: the first candidate's kernel name. */
  readonly name?: string;
  /** Where to time. Default: `device()` (the GPU when the driver loads, else the simulator). */
  readonly device?: DeviceLike;
  /** PTX target the candidates are compiled for (`compile`'s `arch`). Default: compile's. */
  readonly arch?: string;
  /**
   * The arguments of a timed launch (tensors on the device, numbers), or a function of the
   * config giving them (called once per candidate, outside the timed region). On a GPU, one of
   * `args`, `launch` or `measure` is required.
   */
  readonly args?: readonly KernelArg[] | ((config: C) => readonly KernelArg[]);
  /**
   * Queue one run of a candidate on the current stream without waiting (default:
   * `kernel.launchAsync(...args)`), e.g. a kernel and its reduction kernel for split-k.
   */
  readonly launch?: (kernel: Compiled, config: C) => void;
  /**
   * The time of one candidate, µs, lower is better: replaces autotune's own timing (warm-up,
   * iterations and rounds are then the function's business). Tests inject a deterministic one;
   * given one, autotune also tunes on the simulator.
   */
  readonly measure?: (config: C, kernel: Compiled) => number;
  /** Untimed launches before the first round (default 3). */
  readonly warmup?: number;
  /** Launches per round, each timed with a pair of CUDA events (default 20). */
  readonly iters?: number;
  /** Rounds; a candidate's time is the median of the rounds' medians (default 5). */
  readonly rounds?: number;
  /** Shipped choices; default: the table `registerTunedDefaults(name, …)` registered, if any. */
  readonly defaults?: TunedDefaults<C>;
  /**
   * Folder of the cache files; false: no disk cache. Default: `autotune/` beside the GPU
   * binaries (`$TIRX_CACHE_DIR`, else `$XDG_CACHE_HOME/tirx-ts`, else `~/.cache/tirx-ts`;
   * none under `TIRX_CACHE=off`).
   */
  readonly cacheDir?: string | false;
  /** Tune even when the cache, this process or the defaults have a choice (and overwrite the cache). */
  readonly retune?: boolean;
  /** Limits besides the device's; see `AutotuneLimits`. */
  readonly limits?: AutotuneLimits;
  /** Progress bar, final line and warnings; false: silent. Default `process.stderr`. */
  readonly progress?: ProgressStream | false;
  /** Milliseconds for the progress bar's one-second delay (default `performance.now`). */
  readonly clock?: () => number;
}

/** One candidate of a result. */
export interface TuneCandidate<C extends object> {
  /** The caller's config object. */
  readonly config: C;
  /**
   * - "timed": fits and was timed (`us`);
   * - "pruned": cannot run here (`reason`, and `code` when a TirxError said so): it failed to
   *   build, its shared memory or registers exceed the limits, or its launch failed;
   * - "untimed": fits, not timed (the choice of a cache file, a default or the simulator);
   * - "unchecked": neither built into PTX nor fitted (a choice came first).
   */
  readonly status: "timed" | "pruned" | "untimed" | "unchecked";
  /** Median time, µs (timed; from the cache file for a cache hit). */
  readonly us?: number;
  /** The rounds' medians, µs (timed on the GPU in this process). */
  readonly samplesUs?: readonly number[];
  /** Why it was pruned: the stage (build, compile, shared memory, registers, launch) and the message. */
  readonly reason?: string;
  /** The TirxError's code that pruned it, if a TirxError did (TX2008 for shared memory). */
  readonly code?: string;
  /**
   * Static plus dynamic shared memory of one CTA, bytes (fitted in this process, or as the
   * tuning recorded it for a cache hit's choice).
   */
  readonly sharedBytes?: number;
  /** ptxas's registers per thread (when a ptxas was found; a cache hit's from the file). */
  readonly registers?: number;
}

/** What `autotune` chose and why. */
export interface AutotuneResult<C extends object> {
  /** The chosen config: one of the caller's objects (or the default table's). */
  readonly config: C;
  /**
   * The chosen candidate, compiled (`compile`'s result). A cache hit whose file recorded the
   * choice's fit compiles it on the first read of this property, not before: a caller that
   * launches a kernel of its own (gemm() at the call's sizes) compiles nothing here.
   * @throws TirxError compile's, on that first read (the kernel compiled when it was tuned).
   */
  readonly kernel: Compiled;
  /**
   * - "tuned": timed every fitting candidate now (by CUDA events, or `measure`);
   * - "cache": read the choice of an earlier tuning from the cache file; nothing timed;
   * - "default": a shipped default; nothing timed;
   * - "first-fit": the simulated device without `measure`: it has no meaningful timings, so the
   *   first candidate that fits, not timed.
   */
  readonly source: "tuned" | "cache" | "default" | "first-fit";
  /** One line: how the choice was made (and why an earlier choice was not used). */
  readonly why: string;
  /** The chosen candidate's time, µs (tuned, or cache). */
  readonly us?: number;
  /** What the choice depends on (`TuneKeyRecord`), as the cache file records it. */
  readonly key: TuneKeyRecord;
  /** Every candidate, in the order given. */
  readonly candidates: readonly TuneCandidate<C>[];
  /** The pruned candidates, with why. */
  readonly pruned: readonly TuneCandidate<C>[];
  /** Candidates timed by this call (0 unless "tuned"). */
  readonly measurements: number;
  /** The cache file read or written, if any. */
  readonly cacheFile?: string;
}

const OPTIONS = [
  "key",
  "name",
  "device",
  "arch",
  "args",
  "launch",
  "measure",
  "warmup",
  "iters",
  "rounds",
  "defaults",
  "cacheDir",
  "retune",
  "limits",
  "progress",
  "clock",
] as const;

/** Tables of `registerTunedDefaults`, by family name. */
const REGISTERED = new Map<string, TunedDefaults<object>>();

/** Results of this process, by `make` and everything else that decides them (see `autotune`). */
const MEMO = new WeakMap<object, Map<string, AutotuneResult<object>>>();

/** Results of this process for calls that name their family (the name is in the memo key). */
const MEMO_BY_NAME = new Map<string, AutotuneResult<object>>();

/**
 * Register shipped choices for the family `name` (autotune's `name` option, or its first
 * candidate's kernel name), consulted when autotune's own `defaults` option is absent; a second
 * call for the same name replaces the table.
 * @example registerTunedDefaults("gemm", { "sm_90/dtype=float16,n=4096": { bm: 128, bn: 256 } });
 * @throws TirxError TX1002 when `name` is not a non-empty string or a config of `table` is not
 *   a plain object of JSON values.
 */
export function registerTunedDefaults<C extends object>(
  name: string,
  table: TunedDefaults<C>,
): void {
  const span = callerSpan();
  if (typeof name !== "string" || name === "") {
    throw new TirxError(
      "TX1002",
      `registerTunedDefaults needs a family name, got ${showValue(name)}`,
      span,
    );
  }
  checkDefaults(table, "registerTunedDefaults", span);
  REGISTERED.set(name, table);
}

/**
 * The text of a tuning key: a string as is; an object as `k=v` pairs, names sorted, joined by
 * commas. The keys of a `TunedDefaults` table are written this way. A name or value holding `,`,
 * `=` or `"` is written as JSON (quoted), so that two keys never share a text
 * (`{ a: "x,b=y" }` and `{ a: "x", b: "y" }` differ).
 * @example tuneKeyText({ n: 4096, dtype: "float16" }); // "dtype=float16,n=4096"
 */
export function tuneKeyText(key: TuneKey): string {
  if (typeof key === "string") return key;
  const part = (x: string): string => (/[,="]/.test(x) ? JSON.stringify(x) : x);
  return Object.keys(key)
    .sort()
    .map((k) => `${part(k)}=${part(String(key[k]))}`)
    .join(",");
}

/**
 * The source hash of a candidate family: the SHA-256 of one line per candidate, in order, of
 * the config's canonical JSON, "=", and the structural hash of the kernel IR its builder returned
 * (core's `structuralHash`, spans left out: moving the code does not change it), or "error" and
 * the TirxError's code and text when the build threw. A change in any candidate's IR, a config
 * added, removed or reordered changes it; a change in the code generator that keeps the IR does
 * not (tune again with `retune: true`, or delete the cache file).
 */
export function familyHash(
  lines: readonly {
    /** canonicalJson of the config */
    readonly config: string;
    readonly fn?: PrimFunc;
    readonly error?: TirxError;
  }[],
): string {
  return sha256(lines.map((b) => `${b.config}=${candidateHash(b)}`).join("\n"));
}

/** One candidate's part of {@link familyHash}: its IR's structural hash, or its build error. */
export function candidateHash(b: { readonly fn?: PrimFunc; readonly error?: TirxError }): string {
  return b.fn ? funcHash(b.fn) : `error ${b.error?.code} ${b.error?.text}`;
}

/** A candidate's build: its kernel, or the TirxError its builder threw. */
interface Built<C extends object> {
  readonly config: C;
  /** canonicalJson(config) */
  readonly text: string;
  readonly fn?: PrimFunc;
  /** When the builder returned a compiled kernel. */
  readonly compiled?: Compiled;
  readonly error?: TirxError;
}

/** A fitted candidate, or why it cannot run here. */
type Fit =
  | {
      readonly ok: true;
      /** The candidate compiled: at once when fitted here, on first use when from a cache entry. */
      readonly kernel: () => Compiled;
      /** Static plus dynamic shared memory of one CTA, bytes. */
      readonly sharedBytes: number;
      /** Threads per CTA (the launch's block). */
      readonly threads: number;
      /** The PTX target whose module this device runs (the limits' target). */
      readonly target: string;
      /** Registers per thread, from ptxas -v or a cache entry that recorded them. */
      readonly registers?: number;
    }
  | { readonly ok: false; readonly reason: string; readonly code?: DiagnosticCode };

/**
 * The device part of a tuning's cache key: the GPU's name, arch and driver version ("sim",
 * "sim", "none" on the simulated device). A cached choice is used only where all three match.
 * @throws TirxError as deviceArch for a device that is not one.
 */
export function tuneDeviceKey(dev: DeviceLike): {
  readonly device: string;
  readonly arch: string;
  readonly driver: string;
} {
  const arch = deviceArch(dev);
  const gpu = dev instanceof CudaDevice ? dev : undefined;
  return {
    device: gpu ? gpu.name : "sim",
    arch: arch ?? "sim",
    driver: gpu ? String(driver().driverVersion()) : "none",
  };
}

/**
 * Choose the fastest of `configs` for `make`, per key, and remember the choice on disk.
 *
 * Order: (1) this process's earlier result for the same `name` (without one, the same `make`
 * function object), configs, key, device, `arch`, `cacheDir` and `limits`, unless `retune`:
 * nothing is built then, so a library call can call autotune on every call with a fresh closure
 * (the key must name everything `make` depends on besides the config); (2) the cache file (`autotuneFile`: `<name>-<hash of user key, GPU name, compute
 * capability, driver version, target>.json`) when its kernel source hash (`familyHash`) is this
 * family's and its config still fits (a file that records each candidate's hash, for the same
 * candidates in the same order, has only its choice built and that kernel's hash checked, its
 * registers, shared memory and threads read from the file and checked against the limits: a
 * first call in a new process costs one build, not one per candidate, and compiles the choice
 * only when the result's `kernel` is read; a change to another candidate's kernel is seen at
 * the next tuning); (3) the shipped default (`defaults`, or the table registered for `name`)
 * when it fits; (4) on the simulated device without `measure`, the first
 * candidate that fits, untimed (there is nothing meaningful to time); (5) otherwise tuning:
 * each candidate is built, compiled and fitted, in order, and timed if it fits (CUDA events
 * around `iters` launches after `warmup`, median of `rounds` medians; or `measure`); the
 * fastest is written to the cache file (JSON, tmp + rename). A TTY shows a progress bar after
 * one second; every tuning ends with one line on the progress stream (stderr).
 *
 * Fitting, before any launch: the build must not throw a TirxError and `compile` must accept
 * it; static + dynamic shared memory must not exceed `limits.sharedBytes` (default: the
 * device's opt-in limit, 227 KiB on sm_90); when a ptxas is found (runtime-cuda's `findPtxas`),
 * `ptxas -v`'s registers per thread × the block's threads (`registersPerBlock`) must not exceed
 * `limits.registersPerBlock` (64 K). A timed launch that fails (a CudaError other than a lost
 * context, or a TirxError) prunes its candidate too. Every pruned candidate keeps its reason.
 *
 * @param make builds the kernel of one config (a PrimFunc, or a `compile`d kernel); it is called
 *   once per config and call when tuning (the source hash needs every candidate), once for a
 *   cache hit as (2) or a shipped default, not at all for a call this process answered before
 *   (see (1)).
 * @param configs candidate configs, plain objects of JSON values (`TuneConfig`), in order of
 *   preference (the first that fits wins on the simulator, and ties).
 * @example
 *   const { config, kernel } = autotune((c) => makeGemm(n, c), [{ bm: 64 }, { bm: 128 }], {
 *     key: { n, dtype: "float16" }, args: [a, b, out],
 *   });
 *   kernel(a, b, out);
 * @throws TirxError TX1002 for malformed arguments or options (and TX5006 for a bad `arch`,
 *   TX5012 for a device that is not `sim()` or `cuda(n)`); TX5013 when no candidate fits or runs
 *   (the message lists each candidate's reason); CudaError when a launch loses the GPU's context;
 *   whatever `make` throws other than a TirxError.
 */
export function autotune<C extends object>(
  make: (config: C) => PrimFunc | Compiled,
  configs: readonly C[],
  options: AutotuneOptions<C>,
): AutotuneResult<C> {
  const span = callerSpan();
  checkAutotuneArgs(make, configs, options, span);
  const dev = options.device ?? defaultDevice();
  const gpu = dev instanceof CudaDevice ? dev : undefined;
  if (gpu && !options.measure && !options.args && !options.launch) {
    throw new TirxError(
      "TX1002",
      "autotune on a GPU needs args (the tensors and numbers of a timed launch), launch or measure",
      span,
    );
  }
  const user = tuneKeyText(options.key);
  const dir = options.cacheDir === false ? undefined : (options.cacheDir ?? autotuneCacheDir());
  const memoKey = canonicalJson({
    user,
    device: gpu ? `cuda:${gpu.ordinal}` : "sim",
    arch: options.arch ?? null,
    dir: dir ?? null,
    limits: options.limits ?? null,
    name: options.name ?? null,
    configs,
  });
  let memo = options.name !== undefined ? MEMO_BY_NAME : MEMO.get(make);
  if (!memo) MEMO.set(make, (memo = new Map()));
  const earlier = memo.get(memoKey);
  if (earlier && options.retune !== true) {
    // This process's earlier answer: nothing is timed by this call.
    const e = earlier as unknown as AutotuneResult<C>;
    return e.measurements === 0
      ? e
      : {
          ...e,
          measurements: 0,
          why: `${e.why}; answered again from this process's tuning, nothing timed now`,
        };
  }

  // The candidates are built lazily: a cache hit builds only the cached choice (its IR's hash is
  // checked against the one the tuning recorded), a shipped default only itself.
  const builds = new Builds(make, configs, span);
  const name = options.name ?? builds.firstName();
  const key: Omit<TuneKeyRecord, "source"> = {
    user,
    ...tuneDeviceKey(dev),
    target: options.arch ?? "default",
  };
  const tuner = new Tuner(make, options, dev, gpu, name, key, builds, dir, span);
  const result = tuner.choose();
  memo.set(memoKey, result);
  return result;
}

/** Call `make(config)`: its kernel, or the TirxError it threw (anything else propagates). */
function build<C extends object>(
  make: (config: C) => PrimFunc | Compiled,
  config: C,
  span: Span | undefined,
): Built<C> {
  const text = canonicalJson(config);
  let out: unknown;
  try {
    out = make(config);
  } catch (e) {
    if (e instanceof TirxError) return { config, text, error: e };
    throw e;
  }
  if (isCompiled(out)) return { config, text, fn: out.verified.fn, compiled: out };
  checkPrimFunc(out, `autotune's make(${text})`, span);
  return { config, text, fn: out };
}

/** The candidates' builds, each made on first use (in configs' order for `all`). */
class Builds<C extends object> {
  readonly texts: readonly string[];
  readonly #done = new Map<string, Built<C>>();
  #all: readonly Built<C>[] | undefined;

  constructor(
    readonly make: (config: C) => PrimFunc | Compiled,
    readonly configs: readonly C[],
    readonly span: Span | undefined,
  ) {
    this.texts = configs.map((c) => canonicalJson(c));
  }

  /** The build of the config whose canonical JSON is `text` (a candidate's or not). */
  one(text: string, config?: C): Built<C> {
    let b = this.#done.get(text);
    if (!b) {
      const i = this.texts.indexOf(text);
      const c = i >= 0 ? this.configs[i]! : config!;
      this.#done.set(text, (b = build(this.make, c, this.span)));
    }
    return b;
  }

  /** Every candidate's build, in order. */
  all(): readonly Built<C>[] {
    this.#all ??= this.configs.map((c, i) => this.one(this.texts[i]!, c));
    return this.#all;
  }

  /** The family's source hash ({@link familyHash}): builds every candidate. */
  source(): string {
    return familyHash(this.all().map((b) => ({ ...b, config: b.text })));
  }

  /** The first candidate's kernel name that builds (building up to it), else "kernel". */
  firstName(): string {
    for (const t of this.texts) {
      const fn = this.one(t).fn;
      if (fn) return fn.name;
    }
    return "kernel";
  }
}

function isCompiled(x: unknown): x is Compiled {
  return (
    typeof x === "function" &&
    typeof (x as Partial<Compiled>).ptx === "string" &&
    typeof (x as Partial<Compiled>).verified === "object"
  );
}

const fmtUs = (us: number): string => `${Number(us.toPrecision(4))} µs`;

/** One call's state: the candidates, where to report, and the four ways to a choice. */
class Tuner<C extends object> {
  readonly #stream: ProgressStream | undefined;
  readonly #fits = new Map<Built<C>, Fit>();

  constructor(
    readonly make: (config: C) => PrimFunc | Compiled,
    readonly options: AutotuneOptions<C>,
    readonly dev: DeviceLike,
    readonly gpu: CudaDevice | undefined,
    readonly name: string,
    keyBase: Omit<TuneKeyRecord, "source">,
    readonly builds: Builds<C>,
    readonly dir: string | undefined,
    readonly span: Span | undefined,
  ) {
    this.#stream = options.progress === false ? undefined : (options.progress ?? process.stderr);
    // The key's source hash needs every candidate built: computed when first read (a cache hit
    // that checked its choice alone sets it from the file).
    let source: string | undefined;
    const key = { ...keyBase } as TuneKeyRecord;
    Object.defineProperty(key, "source", {
      enumerable: true,
      get: () => (source ??= builds.source()),
      set: (v: string) => void (source = v),
    });
    this.key = key;
  }

  /** What the choice depends on; `source` is computed on first read. */
  readonly key: TuneKeyRecord;

  /** Every candidate's build, in order (built on first use). */
  get built(): readonly Built<C>[] {
    return this.builds.all();
  }

  choose(): AutotuneResult<C> {
    const file = this.dir === undefined ? undefined : autotuneFile(this.dir, this.name, this.key);
    const notes: string[] = [];
    if (file && this.options.retune !== true) {
      const hit = this.#fromCache(file, notes);
      if (hit) return hit;
    }
    if (this.options.retune !== true) {
      const d = this.#fromDefaults(notes);
      if (d) return d;
    }
    if (!this.gpu && !this.options.measure) return this.#firstFit(notes);
    return this.#tune(file, notes);
  }

  #warn(line: string): void {
    this.#stream?.write(`tirx-ts: autotune ${this.name}: ${line}\n`);
  }

  /** The cached choice, or undefined with a note of why not (a warning when the file is bad). */
  #fromCache(file: string, notes: string[]): AutotuneResult<C> | undefined {
    const read = readTuneCache(file);
    if (read.kind === "none") return undefined;
    if (read.kind === "corrupt") {
      this.#warn(`the cache file ${file} is unreadable (${read.why}); tuning again`);
      notes.push(`the cache file was unreadable (${read.why})`);
      return undefined;
    }
    const e = read.entry;
    const k = this.key;
    if (
      e.key.user !== k.user ||
      e.key.device !== k.device ||
      e.key.arch !== k.arch ||
      e.key.driver !== k.driver ||
      e.key.target !== k.target
    ) {
      notes.push("the cache file holds another key");
      return undefined;
    }
    const fast = this.#fromCacheChecked(e, file, notes);
    if (fast !== undefined) return fast === "changed" ? undefined : fast;
    if (e.key.source !== k.source) {
      notes.push(
        `the kernel source changed since the cached tuning (source ${e.key.source.slice(0, 12)} → ${k.source.slice(0, 12)})`,
      );
      return undefined;
    }
    const text = canonicalJson(e.config);
    const chosen = this.built.find((b) => b.text === text);
    if (!chosen) {
      notes.push("the cached config is no longer a candidate");
      return undefined;
    }
    const fit = this.#fit(chosen);
    if (!fit.ok) {
      notes.push(`the cached config no longer fits (${fit.reason})`);
      return undefined;
    }
    const candidates = this.#cachedCandidates(e, chosen, fit);
    return this.#result(chosen.config, fit.kernel, "cache", candidates, {
      why: `read from the cache file ${file}: the choice of an earlier tuning for this key, device, driver and kernel source (${fmtUs(e.us)}); nothing timed`,
      us: e.us,
      file,
    });
  }

  /**
   * A cache entry that records each candidate's hash (`CachedCandidate.hash`), for the same
   * candidates in the same order: only the cached choice is built, and its hash checked (its
   * registers taken from the file, not from ptxas; with its shared bytes and target recorded
   * too, its fit checked from the file and its compile left to the result's `kernel`). The
   * result; "changed" when the choice's kernel changed or no longer fits (then the caller tunes
   * again, with a note); undefined when the entry cannot be checked this way (the caller builds
   * every candidate and compares the family's hash).
   */
  #fromCacheChecked(
    e: TuneCacheEntry,
    file: string,
    notes: string[],
  ): AutotuneResult<C> | "changed" | undefined {
    const texts = this.builds.texts;
    const cached = e.candidates;
    if (
      cached.length !== texts.length ||
      !cached.every((c, i) => typeof c.hash === "string" && canonicalJson(c.config) === texts[i])
    ) {
      return undefined;
    }
    const text = canonicalJson(e.config);
    const i = texts.indexOf(text);
    if (i < 0) return undefined;
    const chosen = this.builds.one(text);
    const now = candidateHash(chosen);
    if (now !== cached[i]!.hash) {
      notes.push(
        `the cached choice's kernel changed since the tuning (${cached[i]!.hash!.slice(0, 12)} → ${now.slice(0, 12)})`,
      );
      return "changed";
    }
    const fit = this.#fit(chosen, cached[i]!);
    if (!fit.ok) {
      notes.push(`the cached config no longer fits (${fit.reason})`);
      return "changed";
    }
    (this.key as { source: string }).source = e.key.source;
    const candidates = this.#cachedCandidates(e, chosen, fit);
    return this.#result(chosen.config, fit.kernel, "cache", candidates, {
      why: `read from the cache file ${file}: the choice of an earlier tuning for this key, device, driver and candidates, its kernel unchanged (${fmtUs(e.us)}); nothing timed, no other candidate built`,
      us: e.us,
      file,
    });
  }

  /**
   * The candidates as a cache hit reports them: the chosen one fitted and untimed (at the file's
   * time), the others as the file recorded them (pruned with its reason, or unchecked with their
   * time), none of them built.
   */
  #cachedCandidates(e: TuneCacheEntry, chosen: Built<C>, fit: Fit): TuneCandidate<C>[] {
    const byText = new Map<string, CachedCandidate>();
    for (const c of e.candidates) byText.set(canonicalJson(c.config), c);
    return this.builds.configs.map((config, j): TuneCandidate<C> => {
      const text = this.builds.texts[j]!;
      if (text === chosen.text) return this.#fitted(chosen, fit, "untimed", e.us);
      const c = byText.get(text);
      if (c?.pruned !== undefined) {
        return { config, status: "pruned", reason: c.pruned, ...(c.code ? { code: c.code } : {}) };
      }
      return { config, status: "unchecked", ...(typeof c?.us === "number" ? { us: c.us } : {}) };
    });
  }

  /** The shipped default that fits, or undefined (a warning when it does not fit). */
  #fromDefaults(notes: string[]): AutotuneResult<C> | undefined {
    const table = this.options.defaults ?? (REGISTERED.get(this.name) as TunedDefaults<C>);
    if (!table) return undefined;
    const arch = this.gpu ? this.key.arch : this.options.arch;
    const names = [...(arch ? [`${arch}/${this.key.user}`] : []), this.key.user];
    const found = names.find((n) => Object.hasOwn(table, n));
    if (found === undefined) return undefined;
    const config = table[found]!;
    const text = canonicalJson(config);
    const b = this.builds.one(text, config);
    const fit = this.#fit(b);
    if (!fit.ok) {
      this.#warn(`the shipped default "${found}" ${text} does not fit (${fit.reason}); tuning`);
      notes.push(`the shipped default "${found}" does not fit (${fit.reason})`);
      return undefined;
    }
    const candidates = this.builds.configs.map((config, j): TuneCandidate<C> =>
      this.builds.texts[j] === text
        ? this.#fitted(b, fit, "untimed")
        : { config, status: "unchecked" },
    );
    const more = notes.length > 0 ? `; ${notes.join("; ")}` : "";
    return this.#result(b.config, fit.kernel, "default", candidates, {
      why: `the shipped default "${found}"; nothing timed${more}`,
    });
  }

  /** The simulator without `measure`: the first candidate that fits. */
  #firstFit(notes: readonly string[]): AutotuneResult<C> {
    const candidates: TuneCandidate<C>[] = [];
    let chosen: { b: Built<C>; kernel: Compiled; index: number } | undefined;
    for (const [i, b] of this.built.entries()) {
      if (chosen) {
        candidates.push({ config: b.config, status: "unchecked" });
        continue;
      }
      const fit = this.#fit(b);
      candidates.push(this.#fitted(b, fit, "untimed"));
      if (fit.ok) chosen = { b, kernel: fit.kernel(), index: i };
    }
    if (!chosen) this.#noneFits(candidates);
    const more = notes.length > 0 ? `; ${notes.join("; ")}` : "";
    const { kernel } = chosen;
    return this.#result(chosen.b.config, () => kernel, "first-fit", candidates, {
      why: `the simulated device has no meaningful timings: the first candidate that fits (${chosen.index + 1} of ${this.built.length}), not timed${more}`,
    });
  }

  /** Time every fitting candidate; keep the fastest; write the cache file. */
  #tune(file: string | undefined, notes: readonly string[]): AutotuneResult<C> {
    const n = this.built.length;
    const clock = this.options.clock ?? (() => performance.now());
    const progress = new Progress(this.#stream, clock, `tirx-ts: autotune ${this.name}`, n);
    const candidates: TuneCandidate<C>[] = [];
    let best: { b: Built<C>; kernel: Compiled; us: number } | undefined;
    for (const [i, b] of this.built.entries()) {
      progress.update(i + 1, best && `${best.b.text} ${fmtUs(best.us)}`);
      const fit = this.#fit(b);
      if (!fit.ok) {
        candidates.push(this.#fitted(b, fit, "pruned"));
        continue;
      }
      const timed = this.#time(b, fit.kernel());
      if ("reason" in timed) {
        candidates.push({ config: b.config, status: "pruned", ...timed });
        continue;
      }
      candidates.push(this.#fitted(b, fit, "timed", timed.us, timed.samplesUs));
      if (!best || timed.us < best.us) best = { b, kernel: fit.kernel(), us: timed.us };
    }
    if (!best) {
      progress.finish(`tirx-ts: autotune ${this.name} (${this.key.user}): no candidate fits`);
      this.#noneFits(candidates);
    }
    const timedCount = candidates.filter((c) => c.status === "timed").length;
    const prunedCount = candidates.filter((c) => c.status === "pruned").length;
    let written: string | undefined;
    if (file) {
      const failed = writeTuneCache(file, {
        format: 1,
        name: this.name,
        key: this.key,
        config: best.b.config as TuneConfig,
        us: best.us,
        candidates: candidates.map((c, j) => {
          const fit = this.#fits.get(this.built[j]!);
          return {
            config: c.config as TuneConfig,
            ...(c.status === "timed" ? { us: c.us! } : {}),
            ...(c.status === "pruned"
              ? { pruned: c.reason!, ...(c.code ? { code: c.code } : {}) }
              : {}),
            hash: candidateHash(this.built[j]!),
            ...(c.registers !== undefined ? { registers: c.registers } : {}),
            ...(fit?.ok
              ? {
                  sharedBytes: fit.sharedBytes,
                  ...(Number.isFinite(fit.threads) ? { threads: fit.threads } : {}),
                  target: fit.target,
                }
              : {}),
          };
        }),
      });
      if (failed === undefined) written = file;
      else this.#warn(`the cache file ${file} could not be written (${failed})`);
    }
    const on = this.options.measure ? "by the measure function" : `on ${this.key.device}`;
    const more = notes.length > 0 ? `; ${notes.join("; ")}` : "";
    const why = `tuned ${on}: the fastest of ${timedCount} timed candidates (${prunedCount} pruned)${more}`;
    progress.finish(
      `tirx-ts: autotune ${this.name} (${this.key.user}): ${best.b.text} at ${fmtUs(best.us)}, the fastest of ${timedCount} timed (${prunedCount} pruned)${written ? `; cached in ${written}` : ""}`,
    );
    const { kernel } = best;
    return this.#result(best.b.config, () => kernel, "tuned", candidates, {
      why,
      us: best.us,
      measurements: timedCount,
      ...(written ? { file: written } : {}),
    });
  }

  /** A candidate's report from its fit. */
  #fitted(
    b: Built<C>,
    fit: Fit,
    status: "timed" | "untimed" | "pruned",
    us?: number,
    samplesUs?: readonly number[],
  ): TuneCandidate<C> {
    if (!fit.ok) {
      return {
        config: b.config,
        status: "pruned",
        reason: fit.reason,
        ...(fit.code ? { code: fit.code } : {}),
      };
    }
    return {
      config: b.config,
      status,
      ...(us !== undefined ? { us } : {}),
      ...(samplesUs ? { samplesUs } : {}),
      sharedBytes: fit.sharedBytes,
      ...(fit.registers !== undefined ? { registers: fit.registers } : {}),
    };
  }

  /** The result; `kernel` compiles the choice on first read (see AutotuneResult's `kernel`). */
  #result(
    config: C,
    kernel: () => Compiled,
    source: AutotuneResult<C>["source"],
    candidates: readonly TuneCandidate<C>[],
    more: { why: string; us?: number; measurements?: number; file?: string },
  ): AutotuneResult<C> {
    let compiled: Compiled | undefined;
    return {
      config,
      get kernel(): Compiled {
        return (compiled ??= kernel());
      },
      source,
      why: more.why,
      ...(more.us !== undefined ? { us: more.us } : {}),
      key: this.key,
      candidates,
      pruned: candidates.filter((c) => c.status === "pruned"),
      measurements: more.measurements ?? 0,
      ...(more.file ? { cacheFile: more.file } : {}),
    };
  }

  /** @throws TirxError TX5013 listing every candidate's reason. */
  #noneFits(candidates: readonly TuneCandidate<C>[]): never {
    const reasons = candidates.map((c) => `${canonicalJson(c.config)}: ${c.reason ?? c.status}`);
    throw new TirxError(
      "TX5013",
      `no candidate of ${this.name} fits ${this.gpu ? this.key.device : "the simulated device"}: ${reasons.join("; ")}`,
      this.span,
    );
  }

  /**
   * Check a candidate's shared memory and registers against the limits (memoized): from
   * `recorded`, the fit a tuning recorded for this same kernel (its hash checked by the caller),
   * when it holds the shared bytes and target (and the registers, or no ptxas is found now),
   * compiling nothing; else built into PTX (and `ptxas -v` for the registers, unless `recorded`
   * has them).
   */
  #fit(b: Built<C>, recorded?: CachedCandidate): Fit {
    let fit = this.#fits.get(b);
    if (!fit) {
      fit =
        (recorded && this.#fitRecorded(b, recorded)) ?? this.#fitUncached(b, recorded?.registers);
      this.#fits.set(b, fit);
    }
    return fit;
  }

  /** The fit of a cache entry's candidate from its record, or undefined when it lacks a part. */
  #fitRecorded(b: Built<C>, r: CachedCandidate): Fit | undefined {
    const { sharedBytes, threads, target, registers } = r;
    if (b.error || typeof sharedBytes !== "number" || typeof target !== "string") return undefined;
    if (this.options.arch !== undefined && this.options.arch !== target) return undefined;
    if (registers === undefined && findPtxas() !== undefined) return undefined;
    const over =
      this.#sharedOver(sharedBytes, `${sharedBytes} bytes per CTA (as tuned)`, target) ??
      this.#registersOver(registers, threads ?? NaN);
    if (over) return over;
    let kernel: Compiled | undefined;
    return {
      ok: true,
      kernel: () =>
        (kernel ??=
          b.compiled ??
          compile(b.fn!, {
            target: "cuda",
            ...(this.options.arch !== undefined ? { arch: this.options.arch } : {}),
          })),
      sharedBytes,
      threads: threads ?? NaN,
      target,
      ...(registers !== undefined ? { registers } : {}),
    };
  }

  /** Build into PTX and check shared memory and registers against the limits. */
  #fitUncached(b: Built<C>, knownRegisters?: number): Fit {
    if (b.error) return { ok: false, reason: `build: ${b.error.message}`, code: b.error.code };
    let kernel: Compiled;
    try {
      kernel =
        b.compiled ??
        compile(b.fn!, {
          target: "cuda",
          ...(this.options.arch !== undefined ? { arch: this.options.arch } : {}),
        });
    } catch (e) {
      if (!(e instanceof TirxError)) throw e;
      return { ok: false, reason: `compile: ${e.message}`, code: e.code };
    }
    const m = kernel.module;
    // The module this device runs: compile's choice for the GPU (its compute capability, raised
    // to sm_90a where the kernel needs it), else the PTX property's target.
    const arch =
      this.options.arch ??
      (this.gpu ? defaultArch(kernel.verified, archForDevice(this.gpu)) : m.target);
    let mod = m;
    if (arch !== m.target) {
      try {
        mod = emitPtx(kernel.verified, { arch });
      } catch (e) {
        if (!(e instanceof TirxError)) throw e;
        return { ok: false, reason: `compile for ${arch}: ${e.message}`, code: e.code };
      }
    }
    const shared = mod.staticSharedBytes + mod.dynamicSharedBytes;
    const threads = mod.launch.block.reduce<number>(
      (a, x) => a * (typeof x === "number" ? x : NaN),
      1,
    );
    const detail = `${shared} bytes (${mod.staticSharedBytes} static + ${mod.dynamicSharedBytes} dynamic) per CTA`;
    const sharedOver = this.#sharedOver(shared, detail, arch);
    if (sharedOver) return sharedOver;
    const ptxas = knownRegisters === undefined ? findPtxas() : undefined;
    const registers =
      knownRegisters ?? (ptxas ? ptxasUsage(ptxas, mod.text, arch) : undefined)?.registers;
    const over = this.#registersOver(registers, threads);
    if (over) return over;
    return {
      ok: true,
      kernel: () => kernel,
      sharedBytes: shared,
      threads,
      target: arch,
      ...(registers !== undefined ? { registers } : {}),
    };
  }

  /**
   * Why `shared` bytes of shared memory per CTA (`detail`: how to write them) cannot run here
   * for `target`, or undefined: over `limits.sharedBytes`, else the GPU's opt-in limit, else on
   * the simulator the target's limit per CTA (core's ARCHS).
   */
  #sharedOver(shared: number, detail: string, target: string): Fit | undefined {
    const limit = this.options.limits?.sharedBytes;
    const [sharedLimit, from] =
      limit !== undefined
        ? [limit, "the limits.sharedBytes option"]
        : this.gpu
          ? [this.gpu.maxSharedOptin, `${this.gpu.name}'s opt-in limit per CTA`]
          : [archNamed(target)?.sharedPerCta ?? Infinity, `the limit per CTA on ${target}`];
    if (shared <= sharedLimit) return undefined;
    return {
      ok: false,
      reason: `shared memory: ${detail} exceed ${from}, ${sharedLimit} bytes`,
      code: "TX2008",
    };
  }

  /**
   * Why `registers` per thread (when known) × `threads` per CTA (when finite) cannot run here,
   * or undefined: their share of the register file (`registersPerBlock`) over
   * `limits.registersPerBlock` (64 K by default).
   */
  #registersOver(registers: number | undefined, threads: number): Fit | undefined {
    if (registers === undefined || !Number.isFinite(threads)) return undefined;
    const regs = registersPerBlock(registers, threads);
    const regLimit = this.options.limits?.registersPerBlock ?? REGISTERS_PER_BLOCK;
    if (regs <= regLimit) return undefined;
    return {
      ok: false,
      reason: `registers: ${registers} per thread (ptxas -v) × ${threads} threads take ${regs} of the register file, over ${regLimit} per CTA`,
    };
  }

  /** Time one fitting candidate: its median µs, or why its launch failed. */
  #time(
    b: Built<C>,
    kernel: Compiled,
  ): { us: number; samplesUs?: readonly number[] } | { reason: string; code?: string } {
    const o = this.options;
    try {
      if (o.measure) {
        const us = o.measure(b.config, kernel);
        if (typeof us !== "number" || !Number.isFinite(us) || us < 0) {
          throw new TirxError(
            "TX1002",
            `autotune's measure must return a time in µs (a finite number ≥ 0), got ${showValue(us)} for ${b.text}`,
            this.span,
          );
        }
        return { us };
      }
      const gpu = this.gpu!;
      const args = typeof o.args === "function" ? o.args(b.config) : (o.args ?? []);
      const run = o.launch
        ? (): void => o.launch!(kernel, b.config)
        : (): void => kernel.launchAsync(...args);
      const rounds = o.rounds ?? 5;
      const medians: number[] = [];
      for (let r = 0; r < rounds; r++) {
        const t = timeLaunches(run, {
          warmup: r === 0 ? (o.warmup ?? 3) : 0,
          iters: o.iters ?? 20,
          device: gpu,
        });
        medians.push(t.medianUs);
      }
      return { us: median(medians), samplesUs: medians };
    } catch (e) {
      if (e instanceof TirxError && e.code === "TX1002") throw e;
      if (this.gpu?.lost) throw e;
      if (e instanceof TirxError) return { reason: `launch: ${e.message}`, code: e.code };
      if (e instanceof CudaError) return { reason: `launch: ${e.message}` };
      throw e;
    }
  }
}

/** autotune's own argument checks (TX1002 at the caller's line). */
function checkAutotuneArgs(
  make: unknown,
  configs: unknown,
  options: unknown,
  span: Span | undefined,
): void {
  const bad = (message: string): never => {
    throw new TirxError("TX1002", message, span);
  };
  if (typeof make !== "function") {
    bad(`autotune's first argument must build a kernel from a config, got ${showValue(make)}`);
  }
  if (!Array.isArray(configs) || configs.length === 0) {
    bad(`autotune needs a non-empty array of candidate configs, got ${showValue(configs)}`);
  }
  for (const [i, c] of (configs as unknown[]).entries()) {
    const problem = jsonProblem(c, `configs[${i}]`, true);
    if (problem) bad(`autotune's configs are plain objects of JSON values: ${problem}`);
  }
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    bad(`autotune's options must be an object like { key: "n=4096" }, got ${showValue(options)}`);
  }
  const o = options as Record<string, unknown>;
  for (const k of Reflect.ownKeys(o)) {
    if (typeof k === "string" && (OPTIONS as readonly string[]).includes(k)) continue;
    const guess = typeof k === "string" ? didYouMean(k, OPTIONS) : undefined;
    bad(
      `autotune has no option ${showValue(k)}${guess ? `; did you mean "${guess}"?` : ""} (options: ${OPTIONS.join(", ")})`,
    );
  }
  const key = o["key"];
  const flat = (x: unknown): boolean =>
    typeof x === "string" || typeof x === "boolean" || (typeof x === "number" && isFinite(x));
  if (typeof key !== "string" && !(isPlainObject(key) && Object.values(key).every(flat))) {
    bad(
      `autotune's key must be a string or a flat object of strings, numbers and booleans (shape class, dtypes), got ${showValue(key)}`,
    );
  }
  if (o["name"] !== undefined && (typeof o["name"] !== "string" || o["name"] === "")) {
    bad(`autotune's name must be a non-empty string, got ${showValue(o["name"])}`);
  }
  checkArchOption(o["arch"], span);
  for (const f of ["launch", "measure", "clock"] as const) {
    if (o[f] !== undefined && typeof o[f] !== "function") {
      bad(`autotune's ${f} must be a function, got ${showValue(o[f])}`);
    }
  }
  if (o["args"] !== undefined && typeof o["args"] !== "function" && !Array.isArray(o["args"])) {
    bad(
      `autotune's args must be an array of kernel arguments or a function of the config, got ${showValue(o["args"])}`,
    );
  }
  for (const [f, min] of [
    ["warmup", 0],
    ["iters", 1],
    ["rounds", 1],
  ] as const) {
    const v = o[f];
    if (v !== undefined && (typeof v !== "number" || !Number.isInteger(v) || v < min)) {
      bad(`autotune's ${f} must be an integer ≥ ${min}, got ${showValue(v)}`);
    }
  }
  if (o["defaults"] !== undefined) checkDefaults(o["defaults"], "autotune's defaults", span);
  const dir = o["cacheDir"];
  if (dir !== undefined && dir !== false && (typeof dir !== "string" || dir === "")) {
    bad(`autotune's cacheDir must be a folder or false, got ${showValue(dir)}`);
  }
  if (o["retune"] !== undefined && typeof o["retune"] !== "boolean") {
    bad(`autotune's retune must be true or false, got ${showValue(o["retune"])}`);
  }
  const limits = o["limits"];
  if (limits !== undefined) {
    if (!isPlainObject(limits))
      bad(`autotune's limits must be an object, got ${showValue(limits)}`);
    for (const [k, v] of Object.entries(limits as object)) {
      if (k !== "sharedBytes" && k !== "registersPerBlock") {
        bad(
          `autotune's limits has no field ${showValue(k)} (fields: sharedBytes, registersPerBlock)`,
        );
      }
      if (typeof v !== "number" || !(v > 0)) {
        bad(`autotune's limits.${k} must be a positive number, got ${showValue(v)}`);
      }
    }
  }
  const p = o["progress"];
  if (
    p !== undefined &&
    p !== false &&
    !(typeof p === "object" && p !== null && typeof (p as ProgressStream).write === "function")
  ) {
    bad(
      `autotune's progress must be a stream (such as process.stderr) or false, got ${showValue(p)}`,
    );
  }
}

/** A `TunedDefaults` table: a plain object of plain-object configs (TX1002 otherwise). */
function checkDefaults(d: unknown, what: string, span: Span | undefined): void {
  if (!isPlainObject(d)) {
    throw new TirxError(
      "TX1002",
      `${what} must be an object { key: config }, got ${showValue(d)}`,
      span,
    );
  }
  for (const [k, c] of Object.entries(d)) {
    const problem = jsonProblem(c, `[${JSON.stringify(k)}]`, true);
    if (problem)
      throw new TirxError("TX1002", `${what} hold plain-object configs: ${problem}`, span);
  }
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (typeof x !== "object" || x === null || Array.isArray(x)) return false;
  const proto = Object.getPrototypeOf(x) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Why `x` (at `path`) is not JSON data, a plain object when `object`; undefined when it is. */
function jsonProblem(x: unknown, path: string, object = false): string | undefined {
  if (object && !isPlainObject(x)) return `${path} is ${showValue(x)}, not a plain object`;
  if (x === null || typeof x === "string" || typeof x === "boolean") return undefined;
  if (typeof x === "number") return Number.isFinite(x) ? undefined : `${path} is ${x}`;
  if (Array.isArray(x)) {
    for (const [i, v] of x.entries()) {
      const p = jsonProblem(v, `${path}[${i}]`);
      if (p) return p;
    }
    return undefined;
  }
  if (isPlainObject(x)) {
    for (const [k, v] of Object.entries(x)) {
      const p = jsonProblem(v, `${path}.${k}`);
      if (p) return p;
    }
    return undefined;
  }
  return `${path} is ${showValue(x)}`;
}
