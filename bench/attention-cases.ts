// The pure parts of bench/attention.ts (no GPU, no python): the options, the case list, FLOP
// counting, the accuracy bounds, the check of sampled output rows and the markdown table.
// test/bench-attention.test.ts runs them on the CPU.
import { parseArgs } from "node:util";
import { FLASH_ATTENTION_BLOCK_N } from "@tirx-ts/kernels";

/** A 16-bit input/output dtype of the attention benchmark. */
export type AttentionDType = "float16" | "bfloat16";

/** Head dims the benchmark (and examples/flash_attention.ts) covers. */
export type HeadDim = 64 | 128 | 256;

/** Tokens per case: batch × seqlen (the issue's shapes). */
export const TOKENS = 16384;
/** Hidden size per token: heads × head dim (the issue's shapes). */
export const HIDDEN = 2048;
/** The head dim whose backward is timed (the issue's "backward at hd 128"). */
export const BACKWARD_HD = 128;

/**
 * Accuracy bounds, against a float32 reference on sampled rows (bench/attention_peers.py).
 * - forward: per row, max |o - ref| ≤ bound · max |ref| over the row. bfloat16: P and O are
 *   rounded to 8-bit mantissas (relative error 2^-9 each), 2^-7 leaves 2× above their sum;
 *   float16: 11-bit mantissas (2^-11 each), 2^-9 likewise.
 * - backward: per gradient (dQ, dK, dV), max |g - ref| ≤ bound · max |ref| over the sampled rows;
 *   one more rounding (dS) before the last product than the forward, so twice the forward bound.
 */
export const FWD_BOUND: Readonly<Record<AttentionDType, number>> = {
  bfloat16: 2 ** -7,
  float16: 2 ** -9,
};
/** The backward bound of each dtype (see FWD_BOUND). */
export const BWD_BOUND: Readonly<Record<AttentionDType, number>> = {
  bfloat16: 2 ** -6,
  float16: 2 ** -8,
};

/** One forward case (and its backward when `backward`); Q, K, V, O are [batch, seq, heads, hd]. */
export interface AttentionCase {
  readonly dtype: AttentionDType;
  readonly batch: number;
  readonly heads: number;
  readonly seq: number;
  readonly hd: HeadDim;
  readonly causal: boolean;
  /** Also time the backward of this case (tirx-ts: @tirx-ts/kernels' backward kernels). */
  readonly backward: boolean;
  /** CUDA-event-timed calls per variant (after 3 warm-ups). */
  readonly iters: number;
}

/**
 * A tile of makeFlashAttention: `blockM` query rows per CTA (128: two consumer warpgroups, 192:
 * three) and, when given, `blockN` keys per KV block (else the builder's default, 128; 64 at hd
 * 256).
 */
export interface AttentionTile {
  readonly blockM: 128 | 192;
  readonly blockN?: 64 | 80 | 128 | 176 | 192;
}

/**
 * Whether makeFlashAttention offers `tile` at head dim `hd`: 192 query rows at hd 64 only, and a
 * KV block of FLASH_ATTENTION_BLOCK_N's.
 */
export function tileOffered(hd: HeadDim, tile: AttentionTile): boolean {
  return (
    (tile.blockM === 128 || hd === 64) &&
    (tile.blockN === undefined || FLASH_ATTENTION_BLOCK_N[hd].includes(tile.blockN))
  );
}

/** `tile` as --tiles spells it: "192", "192x128". */
export function tileName(tile: AttentionTile): string {
  return tile.blockN === undefined ? `${tile.blockM}` : `${tile.blockM}x${tile.blockN}`;
}

/**
 * CTAs of the forward's grid as --ctas spells them: a count (a persistent grid of at most that
 * many CTAs) or "grid" (one CTA per query tile of each batch and head).
 */
export type AttentionCtas = number | "grid";

/**
 * One tirx-ts forward row of a case: a schedule, a tile and a grid, each undefined for the
 * library call's tuning (none of them given) or the builder's default (some given).
 */
export interface ForwardVariant {
  readonly schedule?: "serial" | "overlap" | "pingpong";
  readonly tile?: AttentionTile;
  readonly ctas?: AttentionCtas;
}

/**
 * The tirx-ts forward rows of a case at head dim `hd`: each tile of `tiles` the head dim offers
 * ({@link tileOffered}; none: the default tile) with each schedule of `schedules` and each grid
 * of `ctas` (undefined: one row with the default).
 * @example forwardVariants(128, ["pingpong"], [{ blockM: 192 }]); // [{ schedule: "pingpong" }]
 */
export function forwardVariants(
  hd: HeadDim,
  schedules: AttentionOptions["schedules"],
  tiles: AttentionOptions["tiles"],
  ctas?: AttentionOptions["ctas"],
): ForwardVariant[] {
  const offered = tiles?.filter((t) => tileOffered(hd, t));
  const ts = offered !== undefined && offered.length > 0 ? offered : [undefined];
  return ts.flatMap((tile) =>
    (schedules ?? [undefined]).flatMap((schedule) =>
      (ctas ?? [undefined]).map((c) => ({
        ...(schedule !== undefined ? { schedule } : {}),
        ...(tile !== undefined ? { tile } : {}),
        ...(c !== undefined ? { ctas: c } : {}),
      })),
    ),
  );
}

/**
 * The suffix a forward row's variant name takes: " (pingpong)", " (serial, 192x128)",
 * " (ctas 132)", "".
 */
export function variantSuffix(v: ForwardVariant): string {
  const parts = [
    v.schedule,
    v.tile && tileName(v.tile),
    v.ctas === undefined ? undefined : v.ctas === "grid" ? "grid" : `ctas ${v.ctas}`,
  ].filter((x) => x !== undefined);
  return parts.length > 0 ? ` (${parts.join(", ")})` : "";
}

/** The benchmark's options (bench/attention.ts --help lists them). */
export interface AttentionOptions {
  readonly dtypes: readonly AttentionDType[];
  readonly hds: readonly HeadDim[];
  readonly seqs: readonly number[];
  readonly causal: readonly boolean[];
  readonly backward: boolean;
  /** Head dims whose cases also time the backward (default [BACKWARD_HD]). */
  readonly backwardHds: readonly HeadDim[];
  readonly peers: boolean;
  readonly iters: number;
  readonly out?: string;
  /**
   * makeFlashAttention's grids to time, each a forward row: a CTA count (persistent) or "grid"
   * (one CTA per query tile); default: the library call's tuning.
   */
  readonly ctas?: readonly AttentionCtas[];
  /** makeFlashAttention's consumer schedules to time, each a forward row (default: its own). */
  readonly schedules?: readonly ("serial" | "overlap" | "pingpong")[];
  /**
   * makeFlashAttention's tiles to time at head dim 64, each a forward row with each schedule
   * (default: its own; other head dims take their default tile).
   */
  readonly tiles?: readonly AttentionTile[];
  /**
   * makeFlashAttentionBackward's `backwardMma` to time, each a backward row (default: its own,
   * "ss").
   */
  readonly backwardMmas?: readonly ("ss" | "rs")[];
  readonly dryRun: boolean;
  readonly help: boolean;
}

/** The usage text of bench/attention.ts. */
export const USAGE = `Usage: tsx -C source bench/attention.ts [options]
  --dtypes LIST   bfloat16,float16 (default both)
  --hd LIST       head dims among 64,128,256 (default all); heads = ${HIDDEN} / hd
  --seqs LIST     sequence lengths dividing ${TOKENS} (default 1024,4096,16384); batch = ${TOKENS} / seq
  --causal LIST   false,true (default both)
  --no-backward   skip the backward
  --backward-hd L head dims whose cases also time the backward (default ${BACKWARD_HD}: the target's)
  --no-peers      time only tirx-ts (python still makes the inputs and references)
  --iters N       timed calls per variant (default 20, at least 5; halved at seq ≥ 16384, not below 10)
  --ctas L        makeFlashAttention grids to time, among grid (a CTA per query tile) and CTA
                  counts (a persistent grid), a forward row each (default: the library's)
  --schedules L   makeFlashAttention schedules to time, among serial,overlap,pingpong (default:
                  the builder's default), a forward row each
  --tiles L       makeFlashAttention tiles to time, query rows per CTA (192 at hd 64 only) and
                  optionally keys per KV block (hd 64: 128, 192; hd 128: 128, 176, 192; hd 256:
                  64, 80), e.g. 128,192,192x192,128x176,128x80 (default: the builder's), a forward
                  row each with each schedule at each head dim that offers it (192x192 takes
                  serial only; the 192-row default schedule is serial); the others take the default
  --backward-mma L  the backward's main kernel, among ss,rs (S with the queries or the keys as
                  wgmma M), a backward row each (default: the builder's, ss)
  --out FILE      also write the markdown table there
  --dry-run       print the planned cases and exit
  --help          this text`;

const list = (s: string): string[] => s.split(",").filter((x) => x !== "");

/**
 * Parse the command line of bench/attention.ts.
 * @throws Error naming the bad option value (a dtype, head dim, causal flag or count outside the
 *   lists above).
 */
export function parseAttentionArgs(argv: readonly string[]): AttentionOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      dtypes: { type: "string", default: "bfloat16,float16" },
      hd: { type: "string", default: "64,128,256" },
      seqs: { type: "string", default: "1024,4096,16384" },
      causal: { type: "string", default: "false,true" },
      "no-backward": { type: "boolean", default: false },
      "backward-hd": { type: "string", default: String(BACKWARD_HD) },
      "no-peers": { type: "boolean", default: false },
      iters: { type: "string", default: "20" },
      ctas: { type: "string" },
      schedules: { type: "string" },
      tiles: { type: "string" },
      "backward-mma": { type: "string" },
      out: { type: "string" },
      "dry-run": { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  const dtypes = list(values.dtypes!).map((d) => {
    if (d !== "float16" && d !== "bfloat16") throw new Error(`--dtypes: unknown dtype "${d}"`);
    return d;
  });
  const headDims = (flag: string, s: string): HeadDim[] =>
    list(s).map((x) => {
      const n = Number(x);
      if (n !== 64 && n !== 128 && n !== 256)
        throw new Error(`--${flag}: ${x} is not 64, 128 or 256`);
      return n as HeadDim;
    });
  const hds = headDims("hd", values.hd!);
  const backwardHds = headDims("backward-hd", values["backward-hd"]!);
  const seqs = list(values.seqs!).map((x) => {
    const n = Number(x);
    if (!Number.isInteger(n) || n < 128 || TOKENS % n !== 0 || n % 128 !== 0)
      throw new Error(`--seqs: ${x} must be a multiple of 128 dividing ${TOKENS}`);
    return n;
  });
  const causal = list(values.causal!).map((x) => {
    if (x !== "true" && x !== "false") throw new Error(`--causal: "${x}" is not true or false`);
    return x === "true";
  });
  const iters = Number(values.iters);
  if (!Number.isInteger(iters) || iters < 5) throw new Error(`--iters must be an integer ≥ 5`);
  const ctas =
    values.ctas === undefined
      ? undefined
      : list(values.ctas).map((x): AttentionCtas => {
          if (x === "grid") return x;
          const n = Number(x);
          if (!(Number.isInteger(n) && n > 0))
            throw new Error(`--ctas: "${x}" is not grid or a positive integer`);
          return n;
        });
  const schedules =
    values.schedules === undefined
      ? undefined
      : list(values.schedules).map((x) => {
          if (x !== "serial" && x !== "overlap" && x !== "pingpong")
            throw new Error(`--schedules: "${x}" is not serial, overlap or pingpong`);
          return x;
        });
  const tiles =
    values.tiles === undefined
      ? undefined
      : list(values.tiles).map((x): AttentionTile => {
          const m = /^(128|192)(?:x(64|80|128|176|192))?$/.exec(x);
          if (!m) {
            throw new Error(
              `--tiles: "${x}" is not 128 or 192, optionally x64, x80, x128, x176 or x192`,
            );
          }
          const blockM = Number(m[1]) as 128 | 192;
          return m[2] === undefined
            ? { blockM }
            : { blockM, blockN: Number(m[2]) as NonNullable<AttentionTile["blockN"]> };
        });
  const backwardMmas =
    values["backward-mma"] === undefined
      ? undefined
      : list(values["backward-mma"]).map((x) => {
          if (x !== "ss" && x !== "rs") throw new Error(`--backward-mma: "${x}" is not ss or rs`);
          return x;
        });
  return {
    dtypes,
    hds,
    seqs,
    causal,
    backward: !values["no-backward"],
    backwardHds,
    peers: !values["no-peers"],
    iters,
    ...(values.out !== undefined ? { out: values.out } : {}),
    ...(ctas !== undefined ? { ctas } : {}),
    ...(schedules !== undefined ? { schedules } : {}),
    ...(tiles !== undefined ? { tiles } : {}),
    ...(backwardMmas !== undefined ? { backwardMmas } : {}),
    dryRun: values["dry-run"]!,
    help: values.help!,
  };
}

/** Timed calls at sequence length `seq`: `iters`, halved at seq ≥ 16384 (not below 10). */
export function itersFor(seq: number, iters: number): number {
  return seq >= 16384 ? Math.min(iters, Math.max(10, Math.round(iters / 2))) : iters;
}

/**
 * The cases of a run, dtype-major (then head dim, seq, causal): batch = TOKENS / seq, heads =
 * HIDDEN / hd; backward at the head dims of `o.backwardHds` when `o.backward`.
 */
export function attentionCases(o: AttentionOptions): AttentionCase[] {
  const out: AttentionCase[] = [];
  for (const dtype of o.dtypes)
    for (const hd of o.hds)
      for (const seq of o.seqs)
        for (const causal of o.causal)
          out.push({
            dtype,
            batch: TOKENS / seq,
            heads: HIDDEN / hd,
            seq,
            hd,
            causal,
            backward: o.backward && o.backwardHds.includes(hd),
            iters: itersFor(seq, o.iters),
          });
  return out;
}

/**
 * FLOPs of one call: forward 4·batch·heads·seqQ·seqK·hd (two matmuls, 2 FLOPs per multiply-add),
 * halved when causal (only the visible half of the score matrix counts); backward 2.5× the
 * forward (five matmuls to the forward's two), as FlashAttention-2's benchmarks count.
 */
export function attentionFlops(
  c: Pick<AttentionCase, "batch" | "heads" | "seq" | "hd" | "causal">,
  pass: "forward" | "backward",
): number {
  const fwd = 4 * c.batch * c.heads * c.seq * c.seq * c.hd * (c.causal ? 0.5 : 1);
  return pass === "forward" ? fwd : 2.5 * fwd;
}

/**
 * The forward check of bench/attention_peers.py on the tirx-ts output: for each sampled row
 * (index[3i..3i+2] = batch, seq position, head), max |o - ref| / max |ref| over the row's hd
 * values; returns the worst (NaN counts as Infinity, so an unwritten output fails).
 * @param o the output, decoded, [batch, seq, heads, hd] flattened
 * @param ref float32 [count, hd], the reference rows in `index` order
 */
export function worstRowError(
  o: (i: number) => number,
  dims: { seq: number; heads: number; hd: number },
  index: Int32Array,
  ref: Float32Array,
): number {
  const { seq, heads, hd } = dims;
  let worst = 0;
  for (let i = 0; i < index.length / 3; i++) {
    const [b, s, h] = [index[3 * i]!, index[3 * i + 1]!, index[3 * i + 2]!];
    const at = ((b * seq + s) * heads + h) * hd;
    let err = 0;
    let mag = 0;
    for (let d = 0; d < hd; d++) {
      const r = ref[i * hd + d]!;
      const e = Math.abs(o(at + d) - r);
      err = Number.isNaN(e) ? Infinity : Math.max(err, e);
      mag = Math.max(mag, Math.abs(r));
    }
    worst = Math.max(worst, err / mag);
  }
  return worst;
}

/** One measured (or skipped) variant of one case. */
export interface AttentionRow {
  /** Index of the case in the run's case list. */
  readonly case: number;
  readonly pass: "forward" | "backward";
  readonly variant: string;
  /** Median µs; absent when the variant was skipped. */
  readonly us?: number;
  readonly err?: number;
  readonly bound?: number;
  /** Why the variant has no time (e.g. "tirx-ts: examples/flash_attention.ts missing"). */
  readonly note?: string;
}

/** True for timed rows whose check failed (err above bound, or no error measured). */
export const failed = (r: AttentionRow): boolean =>
  r.us !== undefined && !(r.err !== undefined && r.bound !== undefined && r.err <= r.bound);

/**
 * The markdown table of a run: one line per row, grouped by case and pass, with TFLOP/s
 * (attentionFlops / median), × cuDNN and × flash (their median / this median, higher is faster).
 */
export function formatAttentionTable(
  cases: readonly AttentionCase[],
  rows: readonly AttentionRow[],
): string[] {
  const lines = [
    "| dtype | hd | seq | batch×heads | causal | pass | variant | µs | TFLOP/s | × cuDNN | × flash | check |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  cases.forEach((c, ci) => {
    for (const pass of ["forward", "backward"] as const) {
      const group = rows.filter((r) => r.case === ci && r.pass === pass);
      const ref = (prefix: string) =>
        group.find((r) => r.variant.startsWith(prefix) && r.us !== undefined)?.us;
      const cudnn = ref("torch SDPA cuDNN");
      const flash = ref("torch SDPA flash");
      for (const r of group) {
        const head = `| ${c.dtype} | ${c.hd} | ${c.seq} | ${c.batch}×${c.heads} | ${c.causal ? "yes" : "no"} | ${pass} | ${r.variant} |`;
        if (r.us === undefined) {
          lines.push(`${head} | | | | ${r.note ?? "skipped"} |`);
          continue;
        }
        const tf = attentionFlops(c, pass) / (r.us * 1e-6) / 1e12;
        const check =
          r.err === undefined || r.bound === undefined
            ? ""
            : `${r.err <= r.bound ? "ok" : "FAILED"}: err ${r.err.toExponential(1)} (bound ${r.bound.toExponential(1)})`;
        lines.push(
          `${head} ${r.us.toFixed(1)} | ${tf.toFixed(1)} | ${cudnn ? (cudnn / r.us).toFixed(3) : ""} | ${flash ? (flash / r.us).toFixed(3) : ""} | ${check} |`,
        );
      }
    }
  });
  return lines;
}

/** One line per case of a dry run: the shapes, FLOPs and what is timed. */
export function describeCase(c: AttentionCase, i: number): string {
  const gf = (p: "forward" | "backward") => (attentionFlops(c, p) / 1e9).toFixed(1);
  return `case ${i}: ${c.dtype} hd ${c.hd} seq ${c.seq} batch ${c.batch} heads ${c.heads} causal ${c.causal}: forward ${gf("forward")} GFLOP${c.backward ? `, backward ${gf("backward")} GFLOP` : ""}, ${c.iters} iters`;
}
