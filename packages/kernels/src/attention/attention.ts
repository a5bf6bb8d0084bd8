// attention(q, k, v, opts): the library call of the FlashAttention forward kernel on device
// tensors, and attentionBackward(q, k, v, o, dO, lse, opts) that of the backward kernels. Each
// checks the tensors against each other (TX9002), picks the configuration for the head dim and
// the GPU from ATTENTION_CONFIGS, builds the kernel(s) with makeFlashAttention or
// makeFlashAttentionBackward (which check the options: TX9001), compiles through
// @tirx-ts/runtime's `compile` (cached: a second call of the same sizes launches the same
// compiled kernels) and launches where the tensors live, on the GPU or on the simulated device.
// Both take a packed variable-length batch (cuSeqlensQ, cuSeqlensK, maxSeqQ, and maxSeqK for the
// backward: FlashAttention's varlen convention).
import {
  TirxError,
  didYouMean,
  showValue,
  type DeviceLike,
  type DeviceTensor,
  type PrimFunc,
} from "@tirx-ts/core";
import { compile, deviceArch, tensor } from "@tirx-ts/runtime";
import { checkDynamicSeqs, makeFlashAttention, type FlashAttentionSizes } from "./forward.js";
import {
  backwardScratch,
  makeFlashAttentionBackward,
  type FlashAttentionBackward,
  type ScratchTensor,
} from "./backward.js";
import { cached } from "../cache.js";
import { clampWindow, configError, launchScale, scaleProblem } from "./options.js";
import { refuseDisposed } from "../disposed.js";
import { refuseAliasing } from "../memory.js";
import { atCaller } from "../at-caller.js";

/** Which kernel builder an {@link AttentionConfig} configures. */
export type AttentionPass = "forward" | "backward";

/**
 * The builder fields a configuration sets: tuning choices that do not change the result. Today
 * `schedule` (the forward consumers' schedule: serial, overlap or pingpong, bit for bit the same
 * output), `blockM` (the forward's query tile at head dim 64, 128 or 192 rows: each row's
 * arithmetic is the same, a taller tile's extra KV blocks fully masked for the row, adding exact
 * zeros), `blockN` (its KV block at head dim 64, 128 or 192 keys: the online
 * softmax's blocks move, so the result moves within rounding) and `ctas` (the forward's
 * persistent grid of at most `ctas` CTAs, bit for bit the same output; offered by static builds
 * only: {@link attention} launches the static build of the call's sizes for a dense batch whose
 * picked row sets it, where it otherwise launches the `dynamic` build, so a row that sets it must
 * hold only for lengths the static build takes, multiples of 128, and never for a packed batch,
 * whose varlen build refuses it with TX9001) and `backwardMma` (the backward's "ss" or "rs"
 * wgmma forms at head dims 64 and 128: the same products with the keys or the queries as wgmma
 * M, so the gradients move within rounding); a tuning option a builder grows (pipeline stages)
 * is added here and to {@link FlashAttentionSizes}.
 */
export type AttentionTuning = Partial<
  Pick<FlashAttentionSizes, "ctas" | "schedule" | "blockM" | "blockN" | "backwardMma">
>;

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
 * The forward kernel has a general entry per head dim (its tiles follow from the head dim;
 * measured on an H200 in bench/results/attention-2026-12-02.md), and at head dim 64 tuned
 * entries for shape ranges before it, each with a `when` (bench/results/
 * attention-tiles-hd64-2026-12-02f.md). The backward kernels
 * (makeFlashAttentionBackward) have one entry per head dim, 64, 128 and 256 (their tiles follow
 * from the head dim).
 */
export const ATTENTION_CONFIGS: readonly AttentionConfig[] = [
  {
    pass: "forward",
    headDim: 64,
    arch: "sm_90",
    when: (s) => s.seqQ >= 2048 && s.seqK >= 2048,
    tune: { blockM: 192, blockN: 192 },
    note: "long sequences: 192 query rows per CTA (three consumer warpgroups) and 192-key blocks, the serial schedule; H200 bf16 0.99× cuDNN at seq 4k (causal 0.99×) against 0.88× (0.86×) with 128 × 128, 1.12× (1.13×) at 16k against 0.92× (bench/results/attention-tiles-hd64-2026-12-02f.md)",
  },
  {
    pass: "forward",
    headDim: 64,
    arch: "sm_90",
    when: (s) => persistable(s) && s.seqQ < 2048 && s.causal !== true && s.seqQ >= 192,
    tune: { blockM: 192, ctas: 132 },
    note: "short dense sequences without causal: a persistent grid of 132 CTAs (the H200's SMs) of 192 query rows each; H200 seq 1k 331.7 µs against 351.0 with 128 rows (both persistent), 364.5 and 383.4 with a CTA a tile (bench/results/attention-persistent-2026-12-03b.md)",
  },
  {
    pass: "forward",
    headDim: 64,
    arch: "sm_90",
    when: (s) => persistable(s) && s.seqQ < 2048,
    tune: { ctas: 132 },
    note: "short dense causal sequences: a persistent grid of 132 CTAs, 128 × 128 tiles; H200 bf16 seq 1k 0.88× cuDNN against 0.75× with a CTA a tile (192 rows: 252.2 µs against 228.0; bench/results/attention-persistent-2026-12-03.md, -03b.md)",
  },
  {
    pass: "forward",
    headDim: 64,
    arch: "sm_90",
    when: (s) => s.causal !== true && s.seqQ >= 192 && s.seqK >= 128,
    tune: { blockM: 192 },
    note: "short sequences without causal: 192 query rows per CTA, 128-key blocks; H200 bf16 seq 1k 0.86× cuDNN against 0.82× with 128 rows (causal: 0.71× against 0.75×, so causal keeps 128; bench/results/attention-tiles-hd64-2026-12-02f.md)",
  },
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
    when: (s) => persistable(s) && s.causal !== true && s.seqK < 2048,
    tune: { ctas: 132 },
    note: "short dense sequences without causal: a persistent grid of 132 CTAs; H200 bf16 seq 1k 0.87× cuDNN against 0.83× with a CTA a tile (causal, and head dim 256, lost with it: 0.83× against 0.83×, 0.70× against 0.83×; bench/results/attention-persistent-2026-12-03.md)",
  },
  {
    pass: "forward",
    headDim: 128,
    arch: "sm_90",
    when: (s) => s.seqQ >= 2048 && s.seqK >= 2048,
    tune: { blockN: 192 },
    note: "long sequences: 192-key blocks (FlashAttention-3's non-causal tile; the last block masked where partial), a 2-stage K/V ring; H200 bf16 0.958× cuDNN at seq 4k (causal 0.973×) against 0.918× (0.934×) with 128-key blocks, 1.022× (1.102×) at 16k against 0.955× (1.021×); 176 keys in between; at seq 1k 192 lost (0.779× against 0.820×) (bench/results/attention-blockn-2026-12-03c.md)",
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
    tune: { blockN: 80 },
    note: "128 query rows per CTA, 80-key blocks (Q and two stages of K and V in 227 KiB of shared memory; the last block masked where partial); H200 bf16 against 64-key blocks: seq 1k 0.865× cuDNN against 0.850× (causal 0.830× against 0.820×), 4k 0.937× against 0.923× (0.948× against 0.905×), 16k 0.981× against 0.961× (1.101× against 1.034×); fp16 the same order (bench/results/attention-blockn-2026-12-03c.md)",
  },
  {
    pass: "backward",
    headDim: 64,
    arch: "sm_90",
    tune: {},
    note: "128 keys per CTA (two consumer warpgroups of 64), 64-query Q/dO blocks through a 2-stage ring; H200 bf16 0.93-1.02x cuDNN at seq 1k-16k (bench/results/attention-2026-12-03f.md, run 6)",
  },
  {
    pass: "backward",
    headDim: 128,
    arch: "sm_90",
    tune: { backwardMma: "rs" },
    note: '128 keys per CTA (two consumer warpgroups of 64), 64-query Q/dO blocks through a 2-stage ring; the consumers split dQ\'s columns; backwardMma "rs" (Sᵀ and dPᵀ with the keys as wgmma M, dV\'s and dK\'s A operands from registers): H200 0-4% faster than "ss" in 19 of 20 same-run comparisons at seq 1k-16k, both dtypes, and 1.01-1.10x cuDNN (bench/results/attention-warmup-2026-12-04.md)',
  },
  {
    pass: "backward",
    headDim: 256,
    arch: "sm_90",
    tune: {},
    note: "64 keys per CTA (packages/kernels/src/attention/backward-wide.ts): two consumer warpgroups of 32 keys for S and dP, each accumulating dKᵀ and dVᵀ of half the head dim; a 2-stage Q ring, one dO stage; H200 bf16 0.92-1.04x cuDNN at seq 1k-16k (bench/results/attention-2026-12-03f.md, run 3)",
  },
];

/**
 * Whether sizes `s` take a persistent forward (`ctas`): a dense batch (no `varlen`, no
 * `dynamic`) whose lengths the static build takes, positive multiples of 128.
 */
function persistable(s: FlashAttentionSizes): boolean {
  const dense = s.varlen === undefined && s.dynamic !== true;
  return dense && [s.seqQ, s.seqK].every((n) => n >= 128 && n % 128 === 0);
}

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
   * query sees the last key; with `cuSeqlensQ`, each sequence's own lengths; a row that sees no
   * key gives O = 0 and LSE = −inf). Default false.
   */
  readonly causal?: boolean;
  /**
   * Softmax scale, a finite number whose product with log2 e is finite in float32 (|scale| ≤
   * 2.36e38; default 1 / √headDim). The logits q·k · scale must be finite in float32 too (the
   * dot products accumulate in float32): beyond that the output is NaN, as for every float32
   * FlashAttention.
   */
  readonly scale?: number;
  /**
   * Sliding window [left, right] in keys, −1 leaving that side unbounded, bottom-right aligned
   * as FlashAttention's (and as `causal`, which is [−1, 0]): query i sees keys
   * i + seqK − seqQ − left ≤ j ≤ i + seqK − seqQ + right (with `cuSeqlensQ`, per sequence:
   * lenK − lenQ, indices within the sequence). Any other negative offset is literal (`[-3, 10]`:
   * keys i + 3 … i + 10 of a square batch), and an offset past the sequences means what it says
   * (left ≥ seqK or right ≥ seqQ: unbounded, e.g. `[2 ** 31 - 1, 0]` is causal). Not with
   * `causal`. Default no window.
   */
  readonly window?: readonly [number, number];
  /**
   * Also return LSE [batch, heads, seqQ] float32 (natural log); [heads, totalQ] for a packed
   * batch (`cuSeqlensQ`). Default false.
   */
  readonly lse?: boolean;
  /**
   * Write O here instead of a new tensor: q's shape ([batch, seqQ, heads, headDim], or [totalQ,
   * heads, headDim] for a packed batch), dtype and device.
   */
  readonly out?: DeviceTensor;
  /**
   * A variable-length batch (FlashAttention's `cu_seqlens_q`): q and O packed [totalQ, heads,
   * headDim], sequence b's queries at rows cuSeqlensQ[b] … cuSeqlensQ[b + 1] − 1. An int32
   * device tensor [batch + 1] on q's device: non-decreasing offsets from 0 to at most totalQ.
   * Given with `cuSeqlensK` and `maxSeqQ`. Default none (q [batch, seqQ, heads, headDim]).
   */
  readonly cuSeqlensQ?: DeviceTensor;
  /**
   * With `cuSeqlensQ` (FlashAttention's `cu_seqlens_k`): k and v packed [totalK, kvHeads,
   * headDim], sequence b's keys at rows cuSeqlensK[b] … cuSeqlensK[b + 1] − 1; int32 [batch + 1]
   * (cuSeqlensQ's batch) on q's device, non-decreasing from 0 to at most totalK.
   */
  readonly cuSeqlensK?: DeviceTensor;
  /**
   * With `cuSeqlensQ` (FlashAttention's `max_seqlen_q`): the longest sequence's query rows, an
   * integer in 1 … totalQ, at least every sequence's (it sizes the grid: ⌈maxSeqQ / 128⌉ query
   * tiles per sequence and head).
   */
  readonly maxSeqQ?: number;
}

/** What {@link attention} returns. */
export interface AttentionResult {
  /**
   * O like q ([batch, seqQ, heads, headDim], or [totalQ, heads, headDim] for a packed batch),
   * q's dtype, on q's device (`out` when given). Rows of a packed q outside every sequence are
   * not written (a new tensor's are uninitialized).
   */
  readonly o: DeviceTensor;
  /**
   * With `lse: true`, LSE [batch, heads, seqQ] float32 on q's device ([heads, totalQ] for a
   * packed batch, rows outside every sequence not written): log Σ_j exp(scale · q_i · k_j) over
   * the keys row i sees (−inf for a row that sees none; its O row is 0).
   */
  readonly lse?: DeviceTensor;
}

const OPTIONS = [
  "causal",
  "scale",
  "window",
  "lse",
  "out",
  "cuSeqlensQ",
  "cuSeqlensK",
  "maxSeqQ",
] as const;
const BACKWARD_OPTIONS = [
  "causal",
  "scale",
  "window",
  "out",
  "cuSeqlensQ",
  "cuSeqlensK",
  "maxSeqQ",
  "maxSeqK",
] as const;
const BACKWARD_OUTS = ["dq", "dk", "dv"] as const;

/** The library call a message names. */
type Call = "attention" | "attentionBackward";

/** The built kernels by their sizes (building traces the kernel; compile's cache then hits by identity). */
const BUILT = new Map<string, PrimFunc>();
/** The built backward kernels by their sizes, as {@link BUILT}. */
const BUILT_BACKWARD = new Map<string, FlashAttentionBackward>();

/** TX9002 (kernels/tensors). */
function tensorError(message: string, who: Call = "attention"): TirxError {
  return new TirxError("TX9002", `${who}: ${message}`);
}

/** `x` as a device tensor of rank `rank` (`name`'s role in `what`). @throws TirxError TX9002. */
function ranked(x: unknown, name: string, what: string, rank: number, who: Call): DeviceTensor {
  const t = x as Partial<DeviceTensor> | null;
  if (
    typeof x !== "object" ||
    t === null ||
    !Array.isArray(t.shape) ||
    typeof t.dtype !== "string" ||
    typeof t.device !== "object"
  ) {
    throw tensorError(`${name} must be a device tensor ${what}, got ${showValue(x)}`, who);
  }
  if (t.shape.length !== rank) {
    throw tensorError(`${name} must be ${what}, got shape [${t.shape.join(", ")}]`, who);
  }
  return x as DeviceTensor;
}

/** `x` as a device tensor of rank 4 (`name`'s role in `what`). @throws TirxError TX9002. */
function rank4(x: unknown, name: string, what: string, who: Call = "attention"): DeviceTensor {
  return ranked(x, name, what, 4, who);
}

/**
 * FlashAttention forward on device tensors: O = softmax(Q·Kᵀ · scale) · V per batch and query
 * head, with query head h reading KV head ⌊h / (heads / kvHeads)⌋ (grouped-query attention;
 * kvHeads is k's third dim). Float32 accumulation and softmax; O within 2 ulp of the 16-bit dtype
 * of a float64 reference for inputs in [-1, 1) (examples/flash_attention.ts). Runs where the
 * tensors live: on the GPU (an sm_90 one: Hopper) or on the simulated device. One kernel serves
 * every batch and sequence length of a head dim, dtype, head count and options
 * (makeFlashAttention's `dynamic` build: the sizes are launch arguments), so a new length
 * compiles nothing; every positive softmax scale shares it too (built with `scaleAtLaunch`: the
 * scale is a launch argument), and every negative one shares a second kernel (its kernel masks
 * and takes the running max differently: `negativeScale`). Sequence lengths are any integers
 * ≥ 1, tile multiples or not (the last query tile and KV block are partial: keys past seqK are
 * masked, rows past seqQ not stored).
 *
 * Variable-length batches (FlashAttention's varlen convention, `flash_attn_varlen_func`): with
 * `cuSeqlensQ`, `cuSeqlensK` and `maxSeqQ`, q and O are packed [totalQ, heads, headDim] and k, v
 * [totalK, kvHeads, headDim]; sequence b's queries are rows cuSeqlensQ[b] … cuSeqlensQ[b + 1] − 1
 * and its keys rows cuSeqlensK[b] … cuSeqlensK[b + 1] − 1 (the offsets int32 [batch + 1] device
 * tensors on q's device, FlashAttention's `cu_seqlens_q`/`cu_seqlens_k`: non-decreasing from 0;
 * `maxSeqQ` its `max_seqlen_q`). Sequences have any lengths (0 included); each attends only to
 * its own keys, causal and `window` bottom-right aligned per sequence (query i of a sequence sees
 * its keys j ≤ i + lenK − lenQ: the last query sees the last key; a row that sees none gives O =
 * 0, LSE = −inf). LSE is [heads, totalQ]. The packed totals are at least 128 rows (64 keys at
 * head dim 256: a tile's TMA box fits in the tensor; pad the packed tensors). Rows of O and LSE
 * outside every sequence are not written. The offsets are read back to the host and checked
 * (one small copy each). {@link attentionBackward} takes the same packed batch (and maxSeqK).
 * @param q [batch, seqQ, heads, headDim] ([totalQ, heads, headDim] packed), float16 or bfloat16.
 * @param k [batch, seqK, kvHeads, headDim] ([totalK, kvHeads, headDim] packed), q's dtype and
 *   device; seqQ and seqK any integers ≥ 1 (not multiples of 128: the kernel masks keys past
 *   seqK and stores no row past seqQ; packed: any lengths, totals ≥ 128), headDim 64, 128 or
 *   256, kvHeads dividing heads.
 * @param v k's shape, q's dtype and device.
 * @returns O (a new tensor, or `out`) and with `lse: true` LSE [batch, heads, seqQ] float32
 *   ([heads, totalQ] packed).
 * @example const { o, lse } = attention(q, k, v, { causal: true, lse: true });
 * @example
 *   // Three sequences of 1, 130 and 77 queries packed in q [208, heads, 64], and of keys in k, v.
 *   const cuSeqlensQ = tensor(Int32Array.of(0, 1, 131, 208), { shape: [4], dtype: "int32" });
 *   const { o, lse } = attention(q, k, v, { cuSeqlensQ, cuSeqlensK, maxSeqQ: 130, lse: true });
 * @throws TirxError TX9002 (kernels/tensors) for a q, k, v or out that is not a rank-4 device
 *   tensor (rank 3 for a packed batch), a dtype other than float16/bfloat16 or differing from
 *   q's, shapes that disagree (batch, head dim, k vs v, out vs q), a batch, heads or kvHeads of
 *   0, tensors on different devices, an out that shares memory with q, k, v or the offsets
 *   (other CTAs still read them while O is stored);
 *   offsets that are not rank-1 int32 tensors [batch + 1] (batch ≥ 1) of equal length on q's
 *   device, or whose values are not non-decreasing from 0 to at most totalQ / totalK; TX9001
 *   (kernels/config) for options or sizes the kernel does not offer (an unknown option, a
 *   non-boolean `causal`, a scale that is not a finite number, one offset tensor without the
 *   other, offsets without `maxSeqQ` or `maxSeqQ` without offsets, a `maxSeqQ` under the longest
 *   sequence's query rows, a dense seqQ or seqK of 0 (a tensor map's dims are at least 1), and
 *   the builder's: head dim, packed totals under 128, `maxSeqQ` not an integer in 1 … totalQ,
 *   heads not a multiple of kvHeads, the window), or a GPU the kernel is not written for; TX5011
 *   for a disposed tensor, naming its role (refuseDisposed); the launch's errors (CudaError).
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
  return atCaller(() => {
    const { fn, o, lseShape, offsets, sizes, scale } = prepare(q, k, v, opts);
    const dev = q.device;
    const O = o.out ?? tensor.empty(q.shape, q.dtype, dev);
    const lse = lseShape ? tensor.empty(lseShape, "float32", dev) : undefined;
    compile(fn, { target: "cuda" })(
      q,
      k,
      v,
      O,
      ...offsets,
      ...sizes,
      ...(lse ? [lse] : []),
      scale.scaleLog2,
    );
    return lse ? { o: O, lse } : { o: O };
  });
}

/** Options of {@link attentionBackward}: the forward call's mask and scale, and where to write. */
export interface AttentionBackwardOptions {
  /** As {@link AttentionOptions.causal}; give the forward call's. Default false. */
  readonly causal?: boolean;
  /** As {@link AttentionOptions.scale}; give the forward call's (default 1 / √headDim). */
  readonly scale?: number;
  /** As {@link AttentionOptions.window}; give the forward call's. Default no window. */
  readonly window?: readonly [number, number];
  /**
   * Write the gradients here instead of new tensors, each optional: dq like q, dk and dv like k
   * (shape, dtype, device).
   */
  readonly out?: {
    readonly dq?: DeviceTensor;
    readonly dk?: DeviceTensor;
    readonly dv?: DeviceTensor;
  };
  /**
   * A packed variable-length batch, as {@link AttentionOptions.cuSeqlensQ} (give the forward
   * call's): q, o, dO and dq [totalQ, heads, headDim], lse [heads, totalQ]. Given with
   * `cuSeqlensK`, `maxSeqQ` and `maxSeqK`.
   */
  readonly cuSeqlensQ?: DeviceTensor;
  /** As {@link AttentionOptions.cuSeqlensK}: k, v, dk and dv [totalK, kvHeads, headDim]. */
  readonly cuSeqlensK?: DeviceTensor;
  /**
   * As {@link AttentionOptions.maxSeqQ} (FlashAttention's `max_seqlen_q`): at least every
   * sequence's query rows (it sizes the grids of the backward's per-row kernels: ⌈maxSeqQ / 64⌉
   * blocks of 64 rows per sequence and head).
   */
  readonly maxSeqQ?: number;
  /**
   * With `cuSeqlensK` (FlashAttention's `max_seqlen_k`): the longest sequence's key rows, an
   * integer in 1 … totalK, at least every sequence's (it sizes the main kernel's grid:
   * ⌈maxSeqK / 128⌉ key tiles per sequence and KV head).
   */
  readonly maxSeqK?: number;
}

/**
 * What {@link attentionBackward} returns: the gradients of the forward's O. For a packed batch,
 * rows outside every sequence are not written (a new tensor's are uninitialized).
 */
export interface AttentionGradients {
  /**
   * dQ [batch, seqQ, heads, headDim] ([totalQ, heads, headDim] packed), q's dtype, on q's device
   * (`out.dq` when given).
   */
  readonly dq: DeviceTensor;
  /**
   * dK [batch, seqK, kvHeads, headDim] ([totalK, kvHeads, headDim] packed), k's dtype, on q's
   * device (`out.dk` when given).
   */
  readonly dk: DeviceTensor;
  /** dV, as dK (`out.dv` when given). */
  readonly dv: DeviceTensor;
}

/**
 * FlashAttention backward on device tensors: the gradients dQ, dK and dV of the forward's O =
 * softmax(Q·Kᵀ · scale) · V given dO (the loss's gradient with respect to O), from the forward's
 * O and LSE (`attention(q, k, v, { ...opts, lse: true })`), with the forward's options. Grouped
 * query heads add into their KV head's dK and dV. Float32 accumulation; P and dS are rounded to
 * the 16-bit dtype before their products; the gradients within 2^-9 (float16) or 2^-6 (bfloat16)
 * of each tensor's largest magnitude of a float64 reference for random inputs uniform in
 * [-1, 1) (examples/flash_attention_backward.ts; measured at scales 0.125 to 50). Where dP − Δ
 * cancels (a softmax nearly one-hot over tied keys) the gradients are near 0 and the same
 * absolute error, set by the 16-bit O and dS (FlashAttention's design), can be many times
 * that bound. Launches makeFlashAttentionBackward's three kernels in
 * turn (Δ = rowsum(dO ∘ O) and a float32 dQ accumulator, then dK, dV and the accumulator, then
 * dQ) on scratch tensors it allocates and frees; runs where the tensors live, on the GPU (an
 * sm_90 one: Hopper) or on the simulated device. Kernels are kept by sizes and options, with one
 * for every positive scale and one for every negative scale (a launch argument, as
 * {@link attention}'s).
 *
 * Variable-length batches, as {@link attention}'s (give the forward call's `cuSeqlensQ`,
 * `cuSeqlensK` and `maxSeqQ`, and `maxSeqK`, FlashAttention's `max_seqlen_k`): q, o, dO and dq
 * packed [totalQ, heads, headDim], k, v, dk and dv [totalK, kvHeads, headDim], lse [heads,
 * totalQ]; causal and `window` bottom-right aligned per sequence. A sequence with no keys gets
 * dq = 0, one with no queries dk = dv = 0; gradient rows outside every sequence are not written.
 * Rows of q, dO, k and v after the last sequence (up to the totals) are read, as the forward reads
 * them, and must hold finite values (e.g. zeros): their products with a probability of 0 are 0.
 * @param q [batch, seqQ, heads, headDim] ([totalQ, heads, headDim] packed), float16 or bfloat16.
 * @param k [batch, seqK, kvHeads, headDim] ([totalK, kvHeads, headDim] packed), q's dtype and
 *   device; seqQ and seqK positive multiples of 128 (equal when causal; packed: any lengths,
 *   totals ≥ 128), headDim 64, 128 or 256, kvHeads dividing heads.
 * @param v k's shape, q's dtype and device.
 * @param o The forward's O: q's shape, dtype and device.
 * @param dO The gradient of O: q's shape, dtype and device.
 * @param lse The forward's LSE (its `lse: true` output): [batch, heads, seqQ] ([heads, totalQ]
 *   packed) float32 (natural log; −inf for a row that sees no key, whose dQ is 0), on q's device.
 * @returns New tensors dq (like q), dk and dv (like k), or those of `out`.
 * @example const { dq, dk, dv } = attentionBackward(q, k, v, o, dO, lse, { causal: true });
 * @example
 *   // The packed batch of attention's example, its O and LSE.
 *   const { dq, dk, dv } = attentionBackward(q, k, v, o, dO, lse,
 *     { cuSeqlensQ, cuSeqlensK, maxSeqQ: 130, maxSeqK: 200 });
 * @throws TirxError TX9002 (kernels/tensors) for a q, k, v, o, dO or out tensor that is not a
 *   rank-4 device tensor (rank 3 packed), an lse that is not a rank-3 one (rank 2 packed), a
 *   dtype other than float16/bfloat16 or differing from q's (lse: other than float32), shapes
 *   that disagree (k vs q, v vs k, o and dO vs q, lse vs [batch, heads, seqQ] or [heads,
 *   totalQ], out.dq vs q, out.dk and out.dv vs k), a batch, heads or kvHeads of 0, tensors on
 *   different devices, an out tensor that shares memory with an input or another out tensor,
 *   offsets as
 *   {@link attention}'s; TX9001 (kernels/config) for options or sizes the kernels do not offer
 *   (an unknown option or out key, a non-boolean `causal`, a scale that is not a finite number,
 *   offsets without both of `maxSeqQ` and `maxSeqK` or either without offsets, one offset tensor
 *   without the other, a `maxSeqQ` or `maxSeqK` under the longest sequence's rows, and the
 *   builder's: head dim other than 64, 128 or 256, sequence multiples or packed totals under 128,
 *   causal with seqQ ≠ seqK (not packed), `maxSeqQ` / `maxSeqK` not integers in 1 … totalQ /
 *   totalK, heads not a multiple of kvHeads, the window), or a GPU the kernels are not written
 *   for; TX5011 for a disposed tensor, naming its role (refuseDisposed); the launches' errors
 *   (CudaError).
 */
export function attentionBackward(
  q: DeviceTensor,
  k: DeviceTensor,
  v: DeviceTensor,
  o: DeviceTensor,
  dO: DeviceTensor,
  lse: DeviceTensor,
  opts: AttentionBackwardOptions = {},
): AttentionGradients {
  return atCaller(() => {
    const { kernels, out, offsets, scale } = prepareBackward(q, k, v, o, dO, lse, opts);
    const dev = q.device;
    const dq = out.dq ?? tensor.empty(q.shape, q.dtype, dev);
    const dk = out.dk ?? tensor.empty(k.shape, k.dtype, dev);
    const dv = out.dv ?? tensor.empty(k.shape, k.dtype, dev);
    // The scratch tensors as the kernels declare them (preprocess writes all three: Δ, LSE₂ and
    // the zeroed dQ accumulator).
    const scratch = backwardScratch(kernels);
    const empty = (b: ScratchTensor) => tensor.empty(b.shape, b.dtype, dev);
    const delta = empty(scratch.Delta);
    const lse2 = empty(scratch.LSE2);
    const dQacc = empty(scratch.dQacc);
    try {
      const cuda = { target: "cuda" } as const;
      // A packed batch's kernels take cuSeqlensQ last (the main kernel cuSeqlensK after it).
      const offQ = offsets.slice(0, 1);
      // Built for a launch scale (every positive one), the main kernel takes scale and
      // scaleLog2 last, the postprocessing kernel scale.
      const sMain = [scale.scale, scale.scaleLog2];
      const sPost = [scale.scale];
      compile(kernels.preprocess, cuda)(o, dO, lse, delta, lse2, dQacc, ...offQ);
      compile(kernels.main, cuda)(q, k, v, dO, lse2, delta, dQacc, dk, dv, ...offsets, ...sMain);
      compile(kernels.postprocess, cuda)(dQacc, dq, ...offQ, ...sPost);
    } finally {
      // Each launch has finished (compile's launches synchronize).
      for (const t of [delta, lse2, dQacc]) t.dispose();
    }
    return { dq, dk, dv };
  });
}

/** q, k and v checked against each other, and the sizes they give. */
interface Checked {
  readonly Q: DeviceTensor;
  readonly K: DeviceTensor;
  readonly dtype: "float16" | "bfloat16";
  readonly batch: number;
  readonly seqQ: number;
  readonly heads: number;
  readonly headDim: number;
  readonly seqK: number;
  readonly kvHeads: number;
}

/** `[a, b, c]` for a message. */
const show = (s: readonly number[]) => `[${s.join(", ")}]`;

/**
 * q, k and v of the call `who`: rank-4 device tensors, q's dtype float16 or bfloat16, k and v
 * of q's dtype and device, k of q's batch and head dim, v of k's shape.
 * @throws TirxError TX9002.
 */
function checkQKV(q: unknown, k: unknown, v: unknown, who: Call): Checked {
  const qShape = (q as Partial<DeviceTensor> | null)?.shape;
  if (Array.isArray(qShape) && qShape.length === 3) {
    throw tensorError(
      `q must be [batch, seqQ, heads, headDim], got shape ${show(qShape)} (a packed [totalQ, heads, headDim] batch takes ${who === "attention" ? "cuSeqlensQ, cuSeqlensK and maxSeqQ" : "cuSeqlensQ, cuSeqlensK, maxSeqQ and maxSeqK"})`,
      who,
    );
  }
  const Q = rank4(q, "q", "[batch, seqQ, heads, headDim]", who);
  const K = rank4(k, "k", "[batch, seqK, kvHeads, headDim]", who);
  const V = rank4(v, "v", "[batch, seqK, kvHeads, headDim]", who);
  const dtype = Q.dtype;
  if (dtype !== "float16" && dtype !== "bfloat16") {
    throw tensorError(`q's dtype must be float16 or bfloat16, got ${dtype}`, who);
  }
  const [batch, seqQ, heads, headDim] = Q.shape as [number, number, number, number];
  const [kb, seqK, kvHeads, kd] = K.shape as [number, number, number, number];
  for (const [name, t] of [
    ["k", K],
    ["v", V],
  ] as const) {
    checkDtypeDevice(t, name, dtype, Q, who);
  }
  if (kb !== batch || kd !== headDim) {
    throw tensorError(
      `k must be [batch, seqK, kvHeads, headDim] with q's batch ${batch} and head dim ${headDim}, got ${show(K.shape)}`,
      who,
    );
  }
  if (!sameShape(V.shape, K.shape)) {
    throw tensorError(`v's shape must be k's ${show(K.shape)}, got ${show(V.shape)}`, who);
  }
  if (batch < 1 || heads < 1 || kvHeads < 1) {
    throw tensorError(
      `batch, heads and kvHeads must be at least 1 (a tensor map's dims are), got batch ${batch}, heads ${heads}, kvHeads ${kvHeads}`,
      who,
    );
  }
  checkGridDims(heads, batch, "batch", who);
  return { Q, K, dtype, batch, seqQ, heads, headDim, seqK, kvHeads };
}

/**
 * The kernels' grids are [query tiles, heads, batch] (varlen: sequences): CUDA's grid y and z
 * extents are at most 65535 (CUDA C++ Programming Guide, "Features and Technical
 * Specifications").
 * @throws TirxError TX9001 for heads or a batch past that.
 */
function checkGridDims(heads: number, batch: number, batchName: string, who: string): void {
  for (const [name, v] of [
    ["heads", heads],
    [batchName, batch],
  ] as const) {
    if (v > 65535) {
      throw configError(
        `${who}: ${name} ${v} is past 65535, the largest grid extent the kernels' CTAs can index by (CUDA's grid y and z limits): split the call`,
      );
    }
  }
}

/** `t`'s dtype is `dtype` (q's) and its device q's. @throws TirxError TX9002. */
function checkDtypeDevice(
  t: DeviceTensor,
  name: string,
  dtype: string,
  Q: DeviceTensor,
  who: Call,
  whose = "q's",
): void {
  if (t.dtype !== dtype) {
    throw tensorError(`${name}'s dtype must be ${whose} (${dtype}), got ${t.dtype}`, who);
  }
  if (t.device !== Q.device) {
    throw tensorError(
      `${name} must be on q's device (${deviceName(Q.device)}), got ${deviceName(t.device)}`,
      who,
    );
  }
}

/**
 * `x` (`name`) a device tensor of `like`'s shape (rank 4, or rank 3 for a packed batch) and dtype
 * (`likeName`'s), on q's device.
 * @throws TirxError TX9002.
 */
function checkLike(
  x: unknown,
  name: string,
  like: DeviceTensor,
  likeName: string,
  Q: DeviceTensor,
  who: Call,
): DeviceTensor {
  const packed = like.shape.length === 3;
  const what =
    likeName === "q"
      ? packed
        ? "[totalQ, heads, headDim]"
        : "[batch, seqQ, heads, headDim]"
      : packed
        ? "[totalK, kvHeads, headDim]"
        : "[batch, seqK, kvHeads, headDim]";
  const t = ranked(x, name, what, like.shape.length, who);
  if (!sameShape(t.shape, like.shape)) {
    throw tensorError(
      `${name}'s shape must be ${likeName}'s ${show(like.shape)}, got ${show(t.shape)}`,
      who,
    );
  }
  checkDtypeDevice(t, name, like.dtype, Q, who, `${likeName}'s`);
  return t;
}

/**
 * The target of the tensors' device (undefined: the simulated device).
 * @throws TirxError TX9002 for a device this library cannot launch on.
 */
function archOf(Q: DeviceTensor, who: Call): string | undefined {
  try {
    return deviceArch(Q.device);
  } catch (e) {
    // A look-alike device: the tensors are on none this library can launch on.
    if (e instanceof TirxError) throw tensorError(`q's device is not one: ${e.text}`, who);
    throw e;
  }
}

/**
 * The sizes of the checked tensors with the mask options that are given; the softmax scale a
 * launch argument (`scaleAtLaunch`), so that one kernel serves every positive scale (the default
 * 1 / √headDim included) and one, built with `negativeScale`, every negative one (those kernels
 * mask to +inf and take the running max from rowmin(S)).
 */
function sizesOf(c: Checked, o: AttentionOptions | AttentionBackwardOptions): FlashAttentionSizes {
  return {
    batch: c.batch,
    heads: c.heads,
    seqQ: c.seqQ,
    seqK: c.seqK,
    headDim: c.headDim as FlashAttentionSizes["headDim"],
    dtype: c.dtype,
    kvHeads: c.kvHeads,
    ...(o.causal !== undefined ? { causal: o.causal } : {}),
    scaleAtLaunch: true,
    ...(o.scale !== undefined && o.scale < 0 ? { negativeScale: true } : {}),
    ...(o.window !== undefined
      ? { window: clampWindow(o.window, c.seqQ, c.seqK) as [number, number] }
      : {}),
  };
}

/** A softmax scale's launch arguments (`launchScale`'s). */
type ScaleArgs = ReturnType<typeof launchScale>;

/**
 * The launch arguments of the softmax scale for the kernels of sizes `s` ({@link sizesOf}'s,
 * built with `scaleAtLaunch` and the scale's sign): the call's scale (default 1 / √headDim) as
 * float32 `scale` and `scaleLog2`.
 * @throws TirxError TX9001 as `launchScale` (not reached: the options were checked).
 */
function scaleArgs(
  s: FlashAttentionSizes,
  o: AttentionOptions | AttentionBackwardOptions,
): ScaleArgs {
  return launchScale(o.scale ?? 1 / Math.sqrt(s.headDim), "attention", s.negativeScale === true);
}

/**
 * attention's checks and its kernel: the options, the tensors, the configuration, and the
 * kernel built for them: for dense tensors makeFlashAttention's `dynamic` build, kept by head
 * dim, dtype, heads and options (one kernel across batch and sequence lengths, which it takes
 * as the scalars `sizes` after O); for a packed batch the static build, kept by sizes. Returns
 * the checked options and LSE's shape when asked.
 * @throws TirxError TX9001, TX9002 as {@link attention}.
 */
function prepare(
  q: DeviceTensor,
  k: DeviceTensor,
  v: DeviceTensor,
  opts: AttentionOptions,
): {
  fn: PrimFunc;
  o: AttentionOptions;
  lseShape: number[] | undefined;
  offsets: DeviceTensor[];
  sizes: number[];
  scale: ScaleArgs;
} {
  const o = checkOptions(opts, OPTIONS, "attention") as AttentionOptions;
  const packed = checkVarlenOptions(o);
  const c = packed ? checkPackedQKV(q, k, v, o) : checkQKV(q, k, v, "attention");
  if (o.out !== undefined) checkLike(o.out, "out", c.Q, "q", c.Q, "attention");
  const inputs: [string, DeviceTensor | undefined][] = [
    ["q", c.Q],
    ["k", c.K],
    ["v", v],
    ["cuSeqlensQ", o.cuSeqlensQ],
    ["cuSeqlensK", o.cuSeqlensK],
  ];
  refuseDisposed("attention", [...inputs, ["out", o.out]]);
  // Other CTAs still read K and V (and their Q rows, and the offsets) while O is stored.
  refuseAliasing("attention", [["out", o.out]], inputs);
  const sizes: FlashAttentionSizes = {
    ...sizesOf(c, o),
    ...(o.lse !== undefined ? { lse: o.lse } : {}),
    ...(packed ? { varlen: { maxSeqQ: o.maxSeqQ! } } : {}),
  };
  const config = pickAttentionConfig("forward", sizes, archOf(c.Q, "attention"));
  const full: FlashAttentionSizes = { ...sizes, ...config.tune };
  const scale = scaleArgs(full, o);
  const denseLse = o.lse === true ? [c.batch, c.heads, c.seqQ] : undefined;
  if (!packed && full.ctas === undefined) {
    // One kernel per head dim, dtype, heads and options across batch and sequence lengths: the
    // dynamic build, kept without the sizes it takes at launch (any lengths ≥ 1, checked here).
    const { batch: _b, seqQ: _q, seqK: _k, ...rest } = full;
    const fn = cached(BUILT, JSON.stringify({ ...rest, dynamic: true }), () =>
      makeFlashAttention({ ...full, dynamic: true }),
    );
    checkDynamicSeqs(c.seqQ, c.seqK);
    return { fn, o, lseShape: denseLse, offsets: [], sizes: [c.batch, c.seqQ, c.seqK], scale };
  }
  // The static build of these sizes, kept by sizes: a packed batch's, or a dense batch's whose
  // picked row sets a persistent grid (`ctas`; its rows hold only for lengths this build takes).
  const fn = cached(BUILT, JSON.stringify(full), () => makeFlashAttention(full));
  if (!packed) return { fn, o, lseShape: denseLse, offsets: [], sizes: [], scale };
  // After the builder's checks (maxSeqQ an integer in 1 … totalQ, the totals): the offsets' values.
  checkOffsetValues(o, c);
  const lseShape = o.lse === true ? [c.heads, c.seqQ] : undefined;
  return { fn, o, lseShape, offsets: [o.cuSeqlensQ!, o.cuSeqlensK!], sizes: [], scale };
}

/** The varlen options of a call: the offsets and the longest sequences' rows. */
interface VarlenOptions {
  readonly cuSeqlensQ?: DeviceTensor;
  readonly cuSeqlensK?: DeviceTensor;
  readonly maxSeqQ?: number;
  readonly maxSeqK?: number;
}

/** The longest-sequence options the call `who` takes with its offsets, for a message. */
function varlenMaxes(who: Call): string {
  return who === "attention" ? "maxSeqQ" : "maxSeqQ and maxSeqK";
}

/**
 * Whether the options of the call `who` ask for a packed variable-length batch: `cuSeqlensQ`,
 * `cuSeqlensK` and `maxSeqQ` (and for attentionBackward `maxSeqK`) all given (true) or none
 * (false).
 * @throws TirxError TX9001 for one offset tensor without the other, offsets without `maxSeqQ`
 *   (or `maxSeqK`), or either without offsets.
 */
function checkVarlenOptions(o: VarlenOptions, who: Call = "attention"): boolean {
  const bad = (message: string): never => {
    throw new TirxError("TX9001", `${who}: ${message}`);
  };
  const hasQ = o.cuSeqlensQ !== undefined;
  const hasK = o.cuSeqlensK !== undefined;
  if (hasQ !== hasK) {
    bad(
      `${hasQ ? "cuSeqlensQ" : "cuSeqlensK"} given without ${hasQ ? "cuSeqlensK" : "cuSeqlensQ"}: a packed variable-length batch takes both offset tensors (FlashAttention's cu_seqlens_q and cu_seqlens_k) and ${varlenMaxes(who)}`,
    );
  }
  const backward = who === "attentionBackward";
  if (hasQ && o.maxSeqQ === undefined && !backward) {
    bad(
      "a packed variable-length batch (cuSeqlensQ, cuSeqlensK) needs maxSeqQ, the longest sequence's query rows (FlashAttention's max_seqlen_q)",
    );
  }
  if (hasQ && backward && (o.maxSeqQ === undefined || o.maxSeqK === undefined)) {
    bad(
      "a packed variable-length batch (cuSeqlensQ, cuSeqlensK) needs maxSeqQ and maxSeqK, the longest sequence's query and key rows (FlashAttention's max_seqlen_q and max_seqlen_k)",
    );
  }
  for (const name of ["maxSeqQ", "maxSeqK"] as const) {
    if (!hasQ && o[name] !== undefined) {
      bad(
        `${name} is for a packed variable-length batch: give it with cuSeqlensQ and cuSeqlensK (q [totalQ, heads, headDim])`,
      );
    }
  }
  return hasQ;
}

/**
 * q, k and v of a packed batch (of the call `who`): rank-3 device tensors q [totalQ, heads,
 * headDim] and k, v [totalK, kvHeads, headDim], dtypes and device as {@link checkQKV}; the
 * offsets rank-1 int32 tensors [batch + 1] (batch ≥ 1) of equal length on q's device. The
 * checked sizes have the sequence count as batch and the totals as seqQ and seqK.
 * @throws TirxError TX9002.
 */
function checkPackedQKV(
  q: unknown,
  k: unknown,
  v: unknown,
  o: VarlenOptions,
  who: Call = "attention",
): Checked {
  const Q = ranked(q, "q", "[totalQ, heads, headDim] (a packed batch: cuSeqlensQ given)", 3, who);
  const kWhat = "[totalK, kvHeads, headDim] (a packed batch: cuSeqlensK given)";
  const K = ranked(k, "k", kWhat, 3, who);
  const V = ranked(v, "v", kWhat, 3, who);
  const dtype = Q.dtype;
  if (dtype !== "float16" && dtype !== "bfloat16") {
    throw tensorError(`q's dtype must be float16 or bfloat16, got ${dtype}`, who);
  }
  checkDtypeDevice(K, "k", dtype, Q, who);
  checkDtypeDevice(V, "v", dtype, Q, who);
  const [seqQ, heads, headDim] = Q.shape as [number, number, number];
  const [seqK, kvHeads, kd] = K.shape as [number, number, number];
  if (kd !== headDim) {
    throw tensorError(
      `k must be [totalK, kvHeads, headDim] with q's head dim ${headDim}, got ${show(K.shape)}`,
      who,
    );
  }
  if (!sameShape(V.shape, K.shape)) {
    throw tensorError(`v's shape must be k's ${show(K.shape)}, got ${show(V.shape)}`, who);
  }
  if (heads < 1 || kvHeads < 1) {
    throw tensorError(
      `heads and kvHeads must be at least 1 (a tensor map's dims are), got heads ${heads}, kvHeads ${kvHeads}`,
      who,
    );
  }
  let batch = 0;
  for (const name of ["cuSeqlensQ", "cuSeqlensK"] as const) {
    const t = ranked(o[name], name, "[batch + 1] int32 (cumulative offsets)", 1, who);
    if (t.dtype !== "int32") {
      throw tensorError(`${name}'s dtype must be int32, got ${t.dtype}`, who);
    }
    if (t.device !== Q.device) {
      throw tensorError(
        `${name} must be on q's device (${deviceName(Q.device)}), got ${deviceName(t.device)}`,
        who,
      );
    }
    const n = t.shape[0]!;
    if (n < 2) {
      throw tensorError(
        `${name} must be [batch + 1] with batch ≥ 1 (offsets 0, end of sequence 0, …), got ${show(t.shape)}`,
        who,
      );
    }
    if (name === "cuSeqlensQ") batch = n - 1;
    else if (n - 1 !== batch) {
      throw tensorError(
        `cuSeqlensK must be [batch + 1] with cuSeqlensQ's batch ${batch}, got ${show(t.shape)}`,
        who,
      );
    }
  }
  checkGridDims(heads, batch, "the number of sequences", who);
  return { Q, K, dtype, batch, seqQ, heads, headDim, seqK, kvHeads };
}

/**
 * The offsets' values (read back to the host) of the call `who`: each tensor non-decreasing from
 * 0 to at most its total (c.seqQ, c.seqK), and `maxSeqQ` (and `maxSeqK` when given) at least the
 * longest sequence's query (key) rows (the grid covers ⌈maxSeqQ / 128⌉ tiles per sequence: rows
 * past them would be left unwritten; the backward's grids likewise).
 * @throws TirxError TX9002 for offsets out of order or range; TX9001 for a short `maxSeqQ` or
 *   `maxSeqK`.
 */
function checkOffsetValues(o: VarlenOptions, c: Checked, who: Call = "attention"): void {
  let longest = 0;
  let longestK = 0;
  for (const [name, total, what] of [
    ["cuSeqlensQ", c.seqQ, "totalQ"],
    ["cuSeqlensK", c.seqK, "totalK"],
  ] as const) {
    const x = Array.from(o[name]!.toArray() as Int32Array);
    const ok =
      x[0] === 0 && x.every((e, i) => i === 0 || e >= x[i - 1]!) && x[x.length - 1]! <= total;
    if (!ok) {
      const shown = x.length <= 16 ? show(x) : `${show(x.slice(0, 16)).slice(0, -1)}, …]`;
      throw tensorError(
        `${name} must be non-decreasing offsets from 0 to at most ${what} (${total}), got ${shown}`,
        who,
      );
    }
    for (let i = 1; i < x.length; i++) {
      if (name === "cuSeqlensQ") longest = Math.max(longest, x[i]! - x[i - 1]!);
      else longestK = Math.max(longestK, x[i]! - x[i - 1]!);
    }
  }
  if (o.maxSeqQ! < longest) {
    throw new TirxError(
      "TX9001",
      `${who}: maxSeqQ (${o.maxSeqQ}) must be at least the longest sequence's query rows (${longest}, from cuSeqlensQ)`,
    );
  }
  if (o.maxSeqK !== undefined && o.maxSeqK < longestK) {
    throw new TirxError(
      "TX9001",
      `${who}: maxSeqK (${o.maxSeqK}) must be at least the longest sequence's key rows (${longestK}, from cuSeqlensK)`,
    );
  }
}

/**
 * attentionBackward's checks and its kernels: the options, the tensors (q, k, v, then o, dO,
 * lse and the outs), the configuration, and the kernels built for them (kept by sizes). Returns
 * the checked `out` (empty when none) and, for a packed batch, the offset tensors the kernels
 * take (cuSeqlensQ, cuSeqlensK; none otherwise).
 * @throws TirxError TX9001, TX9002 as {@link attentionBackward}.
 */
function prepareBackward(
  q: DeviceTensor,
  k: DeviceTensor,
  v: DeviceTensor,
  o: DeviceTensor,
  dO: DeviceTensor,
  lse: DeviceTensor,
  opts: AttentionBackwardOptions,
): {
  kernels: FlashAttentionBackward;
  out: NonNullable<AttentionBackwardOptions["out"]>;
  offsets: DeviceTensor[];
  scale: ScaleArgs;
} {
  const who = "attentionBackward";
  const op = checkOptions(opts, BACKWARD_OPTIONS, who) as AttentionBackwardOptions;
  const out = op.out ?? {};
  if (typeof out !== "object" || out === null || Array.isArray(out)) {
    throw new TirxError(
      "TX9001",
      `${who}: out must be an object like { dq, dk, dv } (each optional), got ${showValue(out)}`,
    );
  }
  for (const key of Object.keys(out)) {
    if ((BACKWARD_OUTS as readonly string[]).includes(key)) continue;
    const guess = didYouMean(key, BACKWARD_OUTS);
    throw new TirxError(
      "TX9001",
      `${who}: out has no key ${showValue(key)}${guess ? `; did you mean "${guess}"?` : ""} (keys: ${BACKWARD_OUTS.join(", ")})`,
    );
  }
  const packed = checkVarlenOptions(op, who);
  const c = packed ? checkPackedQKV(q, k, v, op, who) : checkQKV(q, k, v, who);
  checkLike(o, "o", c.Q, "q", c.Q, who);
  checkLike(dO, "dO", c.Q, "q", c.Q, who);
  const lseShape = packed ? [c.heads, c.seqQ] : [c.batch, c.heads, c.seqQ];
  const lseWhat = packed ? "[heads, totalQ]" : "[batch, heads, seqQ]";
  const L = ranked(lse, "lse", `${lseWhat} float32`, lseShape.length, who);
  if (!sameShape(L.shape, lseShape)) {
    throw tensorError(
      `lse must be ${lseWhat} = ${show(lseShape)} (the forward's lse output), got ${show(L.shape)}`,
      who,
    );
  }
  if (L.dtype !== "float32") {
    throw tensorError(
      `lse's dtype must be float32 (the forward's lse output), got ${L.dtype}`,
      who,
    );
  }
  checkDtypeDevice(L, "lse", "float32", c.Q, who);
  if (out.dq !== undefined) checkLike(out.dq, "out.dq", c.Q, "q", c.Q, who);
  if (out.dk !== undefined) checkLike(out.dk, "out.dk", c.K, "k", c.Q, who);
  if (out.dv !== undefined) checkLike(out.dv, "out.dv", c.K, "k", c.Q, who);
  const outputs: [string, DeviceTensor | undefined][] = [
    ["out.dq", out.dq],
    ["out.dk", out.dk],
    ["out.dv", out.dv],
  ];
  const inputs: [string, DeviceTensor | undefined][] = [
    ["q", c.Q],
    ["k", c.K],
    ["v", v],
    ["o", o],
    ["dO", dO],
    ["lse", L],
    ["cuSeqlensQ", op.cuSeqlensQ],
    ["cuSeqlensK", op.cuSeqlensK],
  ];
  refuseDisposed(who, [...inputs, ...outputs]);
  // The gradients are accumulated while other CTAs still read every input.
  refuseAliasing(who, outputs, inputs);
  const sizes: FlashAttentionSizes = {
    ...sizesOf(c, op),
    ...(packed ? { varlen: { maxSeqQ: op.maxSeqQ!, maxSeqK: op.maxSeqK! } } : {}),
  };
  const config = pickAttentionConfig("backward", sizes, archOf(c.Q, who));
  const full: FlashAttentionSizes = { ...sizes, ...config.tune };
  const scale = scaleArgs(full, op);
  const kernels = cached(BUILT_BACKWARD, JSON.stringify(full), () =>
    makeFlashAttentionBackward(full),
  );
  if (!packed) return { kernels, out, offsets: [], scale };
  // After the builder's checks (maxSeqQ and maxSeqK integers in 1 … the totals): the offsets'
  // values.
  checkOffsetValues(op, c, who);
  return { kernels, out, offsets: [op.cuSeqlensQ!, op.cuSeqlensK!], scale };
}

/**
 * Options checked before the tensors: an object of known keys (`known`, those of the call
 * `who`), `causal` a boolean, `scale` finite.
 * @throws TirxError TX9001.
 */
function checkOptions(opts: unknown, known: readonly string[], who: Call): object {
  const bad = (message: string): never => {
    throw new TirxError("TX9001", `${who}: ${message}`);
  };
  if (typeof opts !== "object" || opts === null || Array.isArray(opts)) {
    bad(`options must be an object like { causal: true }, got ${showValue(opts)}`);
  }
  const o = opts as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (known.includes(key)) continue;
    if (key === "lse" && who === "attentionBackward") {
      bad(`no option "lse": the forward's lse output is the sixth argument`);
    }
    const guess = didYouMean(key, known);
    bad(
      `no option ${showValue(key)}${guess ? `; did you mean "${guess}"?` : ""} (options: ${known.join(", ")}; kvHeads is k's third dim)`,
    );
  }
  if (o.causal !== undefined && typeof o.causal !== "boolean") {
    bad(`causal is a boolean, got ${showValue(o.causal)}`);
  }
  const problem = o.scale === undefined ? undefined : scaleProblem(o.scale);
  if (problem) bad(problem);
  return o;
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
