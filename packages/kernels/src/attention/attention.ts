// attention(q, k, v, opts): the library call of the FlashAttention forward kernel on device
// tensors. It checks the tensors against each other (TX9002), picks the configuration for the
// head dim and the GPU from ATTENTION_CONFIGS, builds the kernel with makeFlashAttention (which
// checks the options: TX9001), compiles it through @tirx-ts/runtime's `compile` (cached:
// a second call of the same sizes launches the same compiled kernel) and launches it where the
// tensors live, on the GPU or on the simulated device.
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
import { makeFlashAttention, type FlashAttentionSizes } from "./forward.js";

/** Which kernel builder an {@link AttentionConfig} configures. */
export type AttentionPass = "forward" | "backward";

/**
 * The builder fields a configuration sets: tuning choices that do not change the result. Today
 * only `ctas` (which the forward kernel does not use yet: its grid is one CTA per 128 query rows
 * of each batch and head); a tuning option a builder grows (KV block, pipeline stages) is added
 * here and to {@link FlashAttentionSizes}.
 */
export type AttentionTuning = Partial<Pick<FlashAttentionSizes, "ctas">>;

/** One configuration of an attention pass: what the library call builds for a head dim on a GPU. */
export interface AttentionConfig {
  /** The pass: "forward" (makeFlashAttention) or "backward" (makeFlashAttentionBackward). */
  readonly pass: AttentionPass;
  /** The head dim the entry serves. */
  readonly headDim: number;
  /**
   * The GPU's PTX target, as runtime's `deviceArch` names it ("sm_90" for an H100/H200). The
   * simulated device takes the entries of {@link SIM_ARCH}.
   */
  readonly arch: string;
  /** A further condition on the sizes (long sequences, causal, GQA); absent: every size. */
  readonly when?: (s: FlashAttentionSizes) => boolean;
  /** The builder fields the entry sets. */
  readonly tune: AttentionTuning;
  /** The tiles the builder uses with this entry, and where its numbers come from. */
  readonly note: string;
}

/**
 * The target whose configurations the simulated device takes: the kernels are written for
 * Hopper (wgmma, TMA, setmaxnreg: PTX ISA, sm_90a), and the simulator runs their instructions.
 */
export const SIM_ARCH = "sm_90";

/**
 * The configurations of the attention library calls, tried in order: the first entry of the
 * pass, head dim and GPU whose `when` holds (absent: every size) is taken. A head dim with no
 * entry on a GPU that has entries is built with the builder's defaults (so the builder's own
 * TX9001 names the head dims it offers); a GPU with no entry for the pass is refused (TX9001).
 * Today the forward kernel has one configuration per head dim (its tiles follow from the head
 * dim; measured on an H200 in bench/results/attention-2026-12-02.md); tuned entries for a shape
 * range go before the head dim's general entry, with a `when`. The backward call adds its
 * entries with `pass: "backward"`.
 */
export const ATTENTION_CONFIGS: readonly AttentionConfig[] = [
  {
    pass: "forward",
    headDim: 64,
    arch: "sm_90",
    tune: {},
    note: "128 query rows per CTA, 128-key blocks, a 2-stage K/V ring; a producer and two consumer warpgroups",
  },
  {
    pass: "forward",
    headDim: 128,
    arch: "sm_90",
    tune: {},
    note: "128 query rows per CTA, 128-key blocks, a 2-stage K/V ring; a producer and two consumer warpgroups",
  },
  {
    pass: "forward",
    headDim: 256,
    arch: "sm_90",
    tune: {},
    note: "128 query rows per CTA, 64-key blocks (Q and two stages of K and V fill 227 KiB of shared memory)",
  },
];

/**
 * The configuration of `pass` for sizes `s` on a GPU of target `arch` (undefined: the simulated
 * device, which takes {@link SIM_ARCH}'s entries), from `configs` (default
 * {@link ATTENTION_CONFIGS}): the first entry of the pass, head dim and target whose `when`
 * holds; for a head dim without one, an entry with no tuning (the builder's defaults).
 * @throws TirxError TX9001 (kernels/config) when no entry of the pass is for `arch` (a GPU the
 *   kernels are not written for).
 */
export function pickAttentionConfig(
  pass: AttentionPass,
  s: FlashAttentionSizes,
  arch: string | undefined,
  configs: readonly AttentionConfig[] = ATTENTION_CONFIGS,
): AttentionConfig {
  const target = arch ?? SIM_ARCH;
  const mine = configs.filter((c) => c.pass === pass && c.arch === target);
  if (mine.length === 0) {
    const archs = [...new Set(configs.filter((c) => c.pass === pass).map((c) => c.arch))];
    throw new TirxError(
      "TX9001",
      `attention ${pass}: no configuration for a GPU of target ${target} (written for ${archs.join(", ") || "no GPU yet"})`,
    );
  }
  const hit = mine.find((c) => c.headDim === s.headDim && (c.when === undefined || c.when(s)));
  return (
    hit ?? { pass, headDim: s.headDim, arch: target, tune: {}, note: "the builder's defaults" }
  );
}

/** Options of {@link attention}. */
export interface AttentionOptions {
  /**
   * Query i sees keys j ≤ i + seqK − seqQ (FlashAttention's bottom-right alignment: the last
   * query sees the last key; a row that sees no key gives O = 0 and LSE = −inf). Default false.
   */
  readonly causal?: boolean;
  /** Softmax scale, a finite number (default 1 / √headDim). */
  readonly scale?: number;
  /**
   * Sliding window [left, right] in keys: query i sees keys i − left ≤ j ≤ i + right (absolute
   * indices), −1 leaving that side unbounded (FlashAttention's convention). Not with `causal`.
   * Default no window.
   */
  readonly window?: readonly [number, number];
  /** Also return LSE [batch, heads, seqQ] float32 (natural log). Default false. */
  readonly lse?: boolean;
  /** Write O here instead of a new tensor: [batch, seqQ, heads, headDim], q's dtype and device. */
  readonly out?: DeviceTensor;
}

/** What {@link attention} returns. */
export interface AttentionResult {
  /** O [batch, seqQ, heads, headDim], q's dtype, on q's device (`out` when given). */
  readonly o: DeviceTensor;
  /**
   * With `lse: true`, LSE [batch, heads, seqQ] float32 on q's device: log Σ_j exp(scale · q_i ·
   * k_j) over the keys row i sees (−inf for a row that sees none; its O row is 0).
   */
  readonly lse?: DeviceTensor;
}

const OPTIONS = ["causal", "scale", "window", "lse", "out"] as const;

/** The built kernels by their sizes (building traces the kernel; compile's cache then hits by identity). */
const BUILT = new Map<string, PrimFunc>();

/** TX9002 (kernels/tensors). */
function tensorError(message: string): TirxError {
  return new TirxError("TX9002", `attention: ${message}`);
}

/** `x` as a device tensor of rank 4 (`name`'s role in `what`). @throws TirxError TX9002. */
function rank4(x: unknown, name: string, what: string): DeviceTensor {
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
  if (t.shape.length !== 4) {
    throw tensorError(`${name} must be ${what}, got shape [${t.shape.join(", ")}]`);
  }
  return x as DeviceTensor;
}

/**
 * FlashAttention forward on device tensors: O = softmax(Q·Kᵀ · scale) · V per batch and query
 * head, with query head h reading KV head ⌊h / (heads / kvHeads)⌋ (grouped-query attention;
 * kvHeads is k's third dim). Float32 accumulation and softmax; O within 2 ulp of the 16-bit dtype
 * of a float64 reference for inputs in [-1, 1) (examples/flash_attention.ts). Runs where the
 * tensors live: on the GPU (an sm_90 one: Hopper) or on the simulated device.
 * @param q [batch, seqQ, heads, headDim], float16 or bfloat16.
 * @param k [batch, seqK, kvHeads, headDim], q's dtype and device; seqQ and seqK positive
 *   multiples of 128, headDim 64, 128 or 256, kvHeads dividing heads.
 * @param v k's shape, q's dtype and device.
 * @returns O (a new tensor, or `out`) and with `lse: true` LSE [batch, heads, seqQ] float32.
 * @example const { o, lse } = attention(q, k, v, { causal: true, lse: true });
 * @throws TirxError TX9002 (kernels/tensors) for a q, k, v or out that is not a rank-4 device
 *   tensor, a dtype other than float16/bfloat16 or differing from q's, shapes that disagree
 *   (batch, head dim, k vs v, out vs q), tensors on different devices; TX9001 (kernels/config)
 *   for options or sizes the kernel does not offer (an unknown option, a non-boolean `causal`, a
 *   scale that is not a finite number, and the builder's: head dim, sequence multiples, heads
 *   not a multiple of kvHeads, the window), or a GPU the kernel is not written for; the
 *   launch's errors (TX5011 for a disposed tensor, CudaError).
 */
export function attention(
  q: DeviceTensor,
  k: DeviceTensor,
  v: DeviceTensor,
  opts: AttentionOptions & { readonly lse: true },
): AttentionResult & { readonly lse: DeviceTensor };
export function attention(
  q: DeviceTensor,
  k: DeviceTensor,
  v: DeviceTensor,
  opts?: AttentionOptions,
): AttentionResult;
export function attention(
  q: DeviceTensor,
  k: DeviceTensor,
  v: DeviceTensor,
  opts: AttentionOptions = {},
): AttentionResult {
  const { fn, o, lseShape } = atCaller(() => prepare(q, k, v, opts));
  const dev = q.device;
  const O = o.out ?? tensor.empty(q.shape, q.dtype, dev);
  const lse = lseShape ? tensor.empty(lseShape, "float32", dev) : undefined;
  compile(fn, { target: "cuda" })(q, k, v, O, ...(lse ? [lse] : []));
  return lse ? { o: O, lse } : { o: O };
}

/**
 * `f()`, with a TirxError it throws without a position placed at the caller's line that called
 * `attention` (core's `callSite`: the first frame outside the tirx-ts packages).
 */
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

/**
 * attention's checks and its kernel: the options, the tensors, the configuration, and the
 * kernel built for them (kept by sizes). Returns the checked options and LSE's shape when asked.
 * @throws TirxError TX9001, TX9002 as {@link attention}.
 */
function prepare(
  q: DeviceTensor,
  k: DeviceTensor,
  v: DeviceTensor,
  opts: AttentionOptions,
): { fn: PrimFunc; o: AttentionOptions; lseShape: number[] | undefined } {
  const o = checkOptions(opts);
  const Q = rank4(q, "q", "[batch, seqQ, heads, headDim]");
  const K = rank4(k, "k", "[batch, seqK, kvHeads, headDim]");
  const V = rank4(v, "v", "[batch, seqK, kvHeads, headDim]");
  const dtype = Q.dtype;
  if (dtype !== "float16" && dtype !== "bfloat16") {
    throw tensorError(`q's dtype must be float16 or bfloat16, got ${dtype}`);
  }
  const [batch, seqQ, heads, headDim] = Q.shape as [number, number, number, number];
  const [kb, seqK, kvHeads, kd] = K.shape as [number, number, number, number];
  const show = (s: readonly number[]) => `[${s.join(", ")}]`;
  for (const [name, t] of [
    ["k", K],
    ["v", V],
  ] as const) {
    if (t.dtype !== dtype)
      throw tensorError(`${name}'s dtype must be q's (${dtype}), got ${t.dtype}`);
    if (t.device !== Q.device) {
      throw tensorError(
        `${name} must be on q's device (${deviceName(Q.device)}), got ${deviceName(t.device)}`,
      );
    }
  }
  if (kb !== batch || kd !== headDim) {
    throw tensorError(
      `k must be [batch, seqK, kvHeads, headDim] with q's batch ${batch} and head dim ${headDim}, got ${show(K.shape)}`,
    );
  }
  if (!sameShape(V.shape, K.shape)) {
    throw tensorError(`v's shape must be k's ${show(K.shape)}, got ${show(V.shape)}`);
  }
  if (o.out !== undefined) {
    const out = rank4(o.out, "out", "[batch, seqQ, heads, headDim]");
    if (!sameShape(out.shape, Q.shape)) {
      throw tensorError(`out's shape must be q's ${show(Q.shape)}, got ${show(out.shape)}`);
    }
    if (out.dtype !== dtype)
      throw tensorError(`out's dtype must be q's (${dtype}), got ${out.dtype}`);
    if (out.device !== Q.device) {
      throw tensorError(
        `out must be on q's device (${deviceName(Q.device)}), got ${deviceName(out.device)}`,
      );
    }
  }
  const sizes: FlashAttentionSizes = {
    batch,
    heads,
    seqQ,
    seqK,
    headDim: headDim as FlashAttentionSizes["headDim"],
    dtype,
    kvHeads,
    ...(o.causal !== undefined ? { causal: o.causal } : {}),
    ...(o.scale !== undefined ? { scale: o.scale } : {}),
    ...(o.window !== undefined ? { window: o.window } : {}),
    ...(o.lse !== undefined ? { lse: o.lse } : {}),
  };
  let arch: string | undefined;
  try {
    arch = deviceArch(Q.device);
  } catch (e) {
    // A look-alike device: the tensors are on none this library can launch on.
    if (e instanceof TirxError) throw tensorError(`q's device is not one: ${e.text}`);
    throw e;
  }
  const config = pickAttentionConfig("forward", sizes, arch);
  const full: FlashAttentionSizes = { ...sizes, ...config.tune };
  const key = JSON.stringify(full);
  let fn = BUILT.get(key);
  if (fn === undefined) {
    fn = makeFlashAttention(full);
    if (BUILT.size >= 256) BUILT.clear();
    BUILT.set(key, fn);
  }
  return { fn, o, lseShape: o.lse === true ? [batch, heads, seqQ] : undefined };
}

/** Options checked before the tensors: known keys, `causal` a boolean, `scale` finite. */
function checkOptions(opts: unknown): AttentionOptions {
  const bad = (message: string): never => {
    throw new TirxError("TX9001", `attention: ${message}`);
  };
  if (typeof opts !== "object" || opts === null || Array.isArray(opts)) {
    bad(`options must be an object like { causal: true }, got ${showValue(opts)}`);
  }
  const o = opts as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if ((OPTIONS as readonly string[]).includes(key)) continue;
    const guess = didYouMean(key, OPTIONS);
    bad(
      `no option ${showValue(key)}${guess ? `; did you mean "${guess}"?` : ""} (options: ${OPTIONS.join(", ")}; kvHeads is k's third dim)`,
    );
  }
  if (o.causal !== undefined && typeof o.causal !== "boolean") {
    bad(`causal is a boolean, got ${showValue(o.causal)}`);
  }
  if (o.scale !== undefined && !(typeof o.scale === "number" && Number.isFinite(o.scale))) {
    bad(`scale is a finite number, got ${showValue(o.scale)}`);
  }
  return o as AttentionOptions;
}

/** Equal shapes (same rank and extents). */
function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** A device's name for a message: "the simulated device", or the GPU's name and ordinal. */
function deviceName(d: DeviceLike | undefined): string {
  if (d === undefined) return "none";
  if (d.kind === "sim") return "the simulated device";
  const n = (d as { ordinal?: unknown }).ordinal;
  return typeof n === "number" ? `${d.name} (cuda:${n})` : d.name;
}
