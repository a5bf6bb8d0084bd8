// The pure parts of bench/gemm-sweep.ts (no GPU, no python): options, the case list, FLOP
// counting, the deterministic inputs both sides generate, the sampled check and the markdown
// table. test/bench-gemm-sweep.test.ts runs them on the CPU.
import { parseArgs } from "node:util";
import { wgmmaFp8F32Bound } from "@tirx-ts/core";
import type { GemmConfig, GemmScaleLoad } from "@tirx-ts/kernels";

/**
 * What a case times: bf16 A·Bᵀ, float8 e4m3 A·Bᵀ with per-tensor scales, float8 e4m3 A·Bᵀ with
 * block scales (DeepSeek-V3's: A's per row and 128-wide K block, B's per 128 × 128 block), or
 * bf16 with bias + GELU.
 */
export type GemmKind = "bf16" | "fp8" | "fp8-fast" | "fp8-block" | "bias-gelu";

/** One case of the sweep: D [m, n] = A [m, k] · B [n, k]ᵀ (both K-major: torch's a @ b.T). */
export interface GemmCase {
  readonly kind: GemmKind;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly iters: number;
  /**
   * fp8-block only, with --scale-load: the scale load forced on the case's configuration (absent:
   * the configuration's own, as gemm() would take it).
   */
  readonly scaleLoad?: GemmScaleLoad;
  /** With --configs: the configuration forced on the case (absent: the shipped or picked one). */
  readonly config?: GemmConfig;
}

/** The options of bench/gemm-sweep.ts. */
export interface GemmSweepOptions {
  readonly ms: readonly number[];
  /** (n, k) pairs. */
  readonly shapes: readonly (readonly [number, number])[];
  readonly kinds: readonly GemmKind[];
  /** m = n = k of the epilogue cases (bias + GELU and plain, side by side). */
  readonly epilogueSize: number;
  readonly iters?: number;
  /**
   * fp8-block: rounds of the ABBA alternation with its per-tensor peer (even, at least 2; default
   * 6), each of ⌈iters / rounds⌉ launches a side.
   */
  readonly rounds: number;
  readonly peers: boolean;
  readonly out?: string;
  readonly dryRun: boolean;
  readonly help: boolean;
  /** Tune each case's configuration first (runtime's autotune over gemmTuneCandidates). */
  readonly tune: boolean;
  /**
   * --scale-load: the fp8-block cases once per scale load listed, each forced on the case's
   * configuration (with --tune, tuned among that load's candidates). Absent: one case each, the
   * configuration's own.
   */
  readonly scaleLoads?: readonly GemmScaleLoad[];
  /** --configs: every case once per configuration listed, forced (absent: one case each). */
  readonly configs?: readonly GemmConfig[];
}

/** The issue's sweep: M ∈ {16, 128, 1024, 8192} × these (N, K). */
export const DEFAULT_SHAPES: readonly (readonly [number, number])[] = [
  [4096, 4096],
  [14336, 4096],
  [4096, 14336],
  [8192, 8192],
  [28672, 8192],
  [8192, 28672],
];

/** The --help text. */
export const USAGE = `Usage: tsx -C source bench/gemm-sweep.ts [options]
  --ms 16,128,1024,8192          rows of D
  --shapes 4096x4096,14336x4096  (n)x(k) pairs (default: the six of issue 24)
  --kinds bf16,fp8,fp8-fast,fp8-block,bias-gelu
                                 what to time (fp8: per-tensor scales, each K-tile promoted into
                                 float32, against torch._scaled_mm; fp8-fast: gemm()'s fastAccum
                                 against _scaled_mm's use_fast_accum; fp8-block: block scales,
                                 timed against tirx-ts's per-tensor fp8; bias-gelu: at
                                 --epilogue-size³, with plain bf16 beside it)
  --epilogue-size 8192           m = n = k of the epilogue cases
  --iters N                      timed launches per case (default: by FLOPs, 10 … 100)
  --rounds N                     fp8-block: rounds alternating with its per-tensor peer, ABBA
                                 (even; default 6), ⌈iters / N⌉ launches a side each
  --no-peers                     skip torch (python3 bench/gemm_peers.py)
  --tune                         tune each case's configuration before timing (the table names it)
  --scale-load global,tma,shared fp8-block: time each case once per scale load of the block
                                 scales (global: ld.global two K-tiles ahead; tma: A's staged by
                                 TMA with each K-tile, A's scales transposed first where ⌈k/128⌉
                                 is not a multiple of 4, inside the timed launch; shared: as tma,
                                 and B's copied into shared memory once per tile)
  --configs 128x128x6o,128x192x5 every case once per configuration, forced: bm x bn x stages,
                                 "o" for config.overlap (float8 that promotes, bn ≤ 128),
                                 "c2" for config.cluster 2 (B multicast to tile pairs)
  --out FILE                     write the markdown table there
  --dry-run                      list the cases, launch nothing
  --help`;

const KINDS: readonly GemmKind[] = ["bf16", "fp8", "fp8-fast", "fp8-block", "bias-gelu"];

/** A positive integer list "a,b,c". @throws RangeError naming the option. */
function ints(v: string, what: string): number[] {
  const xs = v.split(",").map((s) => Number(s.trim()));
  if (xs.length === 0 || xs.some((x) => !Number.isSafeInteger(x) || x < 1)) {
    throw new RangeError(`${what} takes positive integers separated by commas, got "${v}"`);
  }
  return xs;
}

/**
 * The options from the command line (see {@link USAGE}).
 * @throws RangeError for a malformed value; TypeError (node:util parseArgs) for an unknown flag.
 */
export function parseGemmArgs(argv: readonly string[]): GemmSweepOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      ms: { type: "string" },
      shapes: { type: "string" },
      kinds: { type: "string" },
      "epilogue-size": { type: "string" },
      iters: { type: "string" },
      rounds: { type: "string" },
      "no-peers": { type: "boolean" },
      out: { type: "string" },
      "dry-run": { type: "boolean" },
      help: { type: "boolean" },
      tune: { type: "boolean" },
      "scale-load": { type: "string" },
      configs: { type: "string" },
    },
    strict: true,
  });
  const shapes =
    values.shapes === undefined
      ? DEFAULT_SHAPES
      : values.shapes.split(",").map((p) => {
          const m = /^\s*(\d+)x(\d+)\s*$/.exec(p);
          if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) {
            throw new RangeError(`--shapes takes (n)x(k) pairs like 4096x14336, got "${p}"`);
          }
          return [Number(m[1]), Number(m[2])] as const;
        });
  const kinds =
    values.kinds === undefined
      ? KINDS
      : values.kinds.split(",").map((k) => {
          if (!(KINDS as readonly string[]).includes(k.trim())) {
            throw new RangeError(`--kinds takes ${KINDS.join(", ")}, got "${k}"`);
          }
          return k.trim() as GemmKind;
        });
  const iters = values.iters === undefined ? undefined : ints(values.iters, "--iters")[0];
  const rounds = values.rounds === undefined ? 6 : ints(values.rounds, "--rounds")[0]!;
  if (rounds % 2 !== 0) {
    throw new RangeError(
      `--rounds takes an even count (ABBA: each side first in half the rounds), got ${rounds}`,
    );
  }
  const loads: readonly string[] = ["global", "tma", "shared"];
  const scaleLoads =
    values["scale-load"] === undefined
      ? undefined
      : [
          ...new Set(
            values["scale-load"].split(",").map((x) => {
              if (!loads.includes(x.trim())) {
                throw new RangeError(`--scale-load takes global, tma, shared, got "${x}"`);
              }
              return x.trim() as GemmScaleLoad;
            }),
          ),
        ];
  const configs = values.configs?.split(",").map((x): GemmConfig => {
    const m = /^\s*(64|128|192)x(\d+)x(\d+)(o?)(c2)?\s*$/.exec(x);
    if (!m) {
      throw new RangeError(
        `--configs takes bm x bn x stages (o: overlap, c2: cluster 2) like 128x128x6o or 128x192x5c2, got "${x}"`,
      );
    }
    const [bm, bn, stages] = [Number(m[1]) as 64 | 128 | 192, Number(m[2]), Number(m[3])];
    return {
      ...{ bm, bn, stages },
      ...(m[4] === "o" ? { overlap: true } : {}),
      ...(m[5] === "c2" ? { cluster: 2 as const } : {}),
    };
  });
  return {
    ms: values.ms === undefined ? [16, 128, 1024, 8192] : ints(values.ms, "--ms"),
    shapes,
    kinds,
    epilogueSize:
      values["epilogue-size"] === undefined
        ? 8192
        : ints(values["epilogue-size"], "--epilogue-size")[0]!,
    ...(iters !== undefined ? { iters } : {}),
    rounds,
    peers: values["no-peers"] !== true,
    ...(values.out !== undefined ? { out: values.out } : {}),
    dryRun: values["dry-run"] === true,
    help: values.help === true,
    tune: values.tune === true,
    ...(scaleLoads !== undefined ? { scaleLoads } : {}),
    ...(configs !== undefined ? { configs } : {}),
  };
}

/** 2·m·n·k. */
export const gemmFlops = (c: { m: number; n: number; k: number }): number => 2 * c.m * c.n * c.k;

/** TFLOP/s of `c` in `us` microseconds. */
export const tflops = (c: { m: number; n: number; k: number }, us: number): number =>
  gemmFlops(c) / us / 1e6;

/** Timed launches for a case: about 20 ms of launches at 500 TFLOP/s, clamped to 10 … 100. */
export function itersFor(c: { m: number; n: number; k: number }): number {
  const us = gemmFlops(c) / 500e6;
  return Math.max(10, Math.min(100, Math.round(2e4 / Math.max(us, 1))));
}

/**
 * The cases: bf16 and fp8 over ms × shapes (each kind asked for; fp8-block once per scale load
 * of `scaleLoads`, side by side), then the epilogue pair at epilogueSize³ (bias + GELU, and
 * plain bf16 unless the sweep already has that shape).
 */
export function gemmSweepCases(o: GemmSweepOptions): GemmCase[] {
  const out: GemmCase[] = [];
  const add = (
    kind: GemmKind,
    m: number,
    n: number,
    k: number,
    scaleLoad?: GemmScaleLoad,
    config?: GemmConfig,
  ): void => {
    if (
      out.some(
        (c) =>
          c.kind === kind &&
          c.m === m &&
          c.n === n &&
          c.k === k &&
          c.scaleLoad === scaleLoad &&
          c.config === config,
      )
    ) {
      return;
    }
    out.push({
      kind,
      m,
      n,
      k,
      iters: o.iters ?? itersFor({ m, n, k }),
      ...(scaleLoad !== undefined ? { scaleLoad } : {}),
      ...(config !== undefined ? { config } : {}),
    });
  };
  for (const kind of ["bf16", "fp8", "fp8-fast", "fp8-block"] as const) {
    if (!o.kinds.includes(kind)) continue;
    const loads = kind === "fp8-block" ? (o.scaleLoads ?? [undefined]) : [undefined];
    for (const m of o.ms) {
      for (const [n, k] of o.shapes) {
        for (const load of loads) {
          for (const config of o.configs ?? [undefined]) add(kind, m, n, k, load, config);
        }
      }
    }
  }
  if (o.kinds.includes("bias-gelu")) {
    const s = o.epilogueSize;
    add("bf16", s, s, s);
    add("bias-gelu", s, s, s);
  }
  return out;
}

/**
 * A case's kind as the table names it, with its forced scale load and configuration (bm x bn x
 * stages, "o" for overlap, "c2" for cluster 2) if any.
 */
export function gemmCaseKind(c: GemmCase): string {
  const cfg = c.config
    ? `${c.config.bm}x${c.config.bn}x${c.config.stages}${c.config.overlap === true ? "o" : ""}${c.config.cluster === 2 ? "c2" : ""}`
    : undefined;
  const tags = [c.scaleLoad, cfg].filter((x) => x !== undefined);
  return tags.length === 0 ? c.kind : `${c.kind} (${tags.join(", ")})`;
}

/** One line of a case's description. */
export function describeGemmCase(c: GemmCase, i: number): string {
  return `#${i} ${gemmCaseKind(c)} m ${c.m} n ${c.n} k ${c.k} (${c.iters} iters)`;
}

/**
 * The deterministic inputs both sides generate (exact in bfloat16 and float8_e4m3, so torch and
 * tirx-ts hold the same bits): element i of a tensor with `seed`:
 * bf16 / the bias: (((i mod 251) · 37 + seed) mod 251) / 128 − 1 (multiples of 1/128 in
 * [−1, 0.96]); fp8: (((i mod 13) · 5 + seed) mod 16) / 8 − 1 (multiples of 1/8 in [−1, 0.875]).
 */
export function inputValue(i: number, seed: number, fp8: boolean): number {
  if (fp8) return (((i % 13) * 5 + seed) % 16) / 8 - 1;
  return (((i % 251) * 37 + seed) % 251) / 128 - 1;
}

/** The seeds of A, B and the bias. */
export const SEEDS = { a: 1, b: 2, bias: 3 } as const;

/** Elements of K (and of N) per block scale of the fp8-block cases. */
export const SCALE_BLOCK = 128;

/** K of one float8 wgmma (PTX ISA, wgmma.mma_async: m64nNk32 for .e4m3/.e5m2). */
export const WGMMA_K = 32;

/**
 * The block scales of the fp8-block cases, exact in float32 (powers of two in 1/4 … 4): element
 * i of A's [m, ⌈k/128⌉] (`b` false) or B's [⌈n/128⌉, ⌈k/128⌉] (`b` true), row-major.
 */
export function blockScaleValue(i: number, b: boolean): number {
  return 2 ** ((((i % 7) * 3 + (b ? 2 : 1)) % 5) - 2);
}
/** The per-tensor scales of the fp8 cases (torch._scaled_mm's scale_a, scale_b). */
export const FP8_SCALES = [0.5, 0.25] as const;

/** The GELU of PyTorch's approximate="tanh", float64. */
export const geluTanh = (v: number): number =>
  0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v * v * v)));

/**
 * The float64 reference of D[i, j] for case `c` from {@link inputValue} (A [m, k], B [n, k],
 * the bias [n]), and the magnitude Σ|a·b| (for the bound).
 */
export function referenceAt(
  c: GemmCase,
  i: number,
  j: number,
): { ref: number; mag: number; tc: number } {
  const fp8 = c.kind === "fp8" || c.kind === "fp8-fast" || c.kind === "fp8-block";
  const kb = Math.ceil(c.k / SCALE_BLOCK);
  // fp8-block: Σ_kb sA[i, kb]·sB[⌊j/128⌋, kb]·Σ_{x in kb} a·b (the block scales in float64).
  const scale = (x: number): number =>
    c.kind === "fp8-block"
      ? blockScaleValue(i * kb + Math.floor(x / SCALE_BLOCK), false) *
        blockScaleValue(Math.floor(j / SCALE_BLOCK) * kb + Math.floor(x / SCALE_BLOCK), true)
      : 1;
  let dot = 0;
  let mag = 0;
  // The float8 tensor cores' truncation (core's wgmmaFp8F32Bound, one k32 wgmma at a time): the
  // accumulator restarts at every 128-wide K-tile, whose float32 sum is then promoted (fp8,
  // fp8-block: scaled there), or runs over all of K (fp8-fast).
  let tc = 0;
  let acc = 0;
  let chunk: number[] = [];
  const flush = (s: number): void => {
    if (chunk.length === 0) return;
    tc += Math.abs(s) * wgmmaFp8F32Bound(acc, chunk);
    for (const p of chunk) acc += p;
    chunk = [];
  };
  for (let x = 0; x < c.k; x++) {
    const raw = inputValue(i * c.k + x, SEEDS.a, fp8) * inputValue(j * c.k + x, SEEDS.b, fp8);
    const p = raw * scale(x);
    dot += p;
    mag += Math.abs(p);
    if (fp8) {
      chunk.push(raw);
      const last = x === c.k - 1;
      if (chunk.length === WGMMA_K || last) flush(scale(x));
      if (c.kind !== "fp8-fast" && ((x + 1) % SCALE_BLOCK === 0 || last)) acc = 0;
    }
  }
  if (c.kind === "fp8-block") return { ref: dot, mag, tc };
  if (fp8) {
    const s = FP8_SCALES[0] * FP8_SCALES[1];
    return { ref: dot * s, mag: mag * s, tc: tc * s };
  }
  if (c.kind === "bias-gelu") {
    const b = inputValue(j, SEEDS.bias, false);
    return { ref: geluTanh(dot + b), mag: mag + Math.abs(b), tc: 0 };
  }
  return { ref: dot, mag, tc: 0 };
}

/**
 * The check's bound at D[i, j] (D bfloat16): 2^-8 of |ref| (half an ulp, and the GELU's
 * tanh.approx 2^-11) plus float32 accumulation k·2^-24·Σ|a·b|, plus, for float8, `tc`: the
 * tensor cores' aligned, truncated sums (core's wgmmaFp8F32Bound summed over the k32 wgmmas of
 * the element, scaled as the kernel scales them; measured on the H200 by
 * test/gpu/wgmma-fp8.test.ts) and for fp8 and fp8-block 3 float32 roundings per K-tile of the
 * promotion.
 */
export function boundAt(c: GemmCase, ref: number, mag: number, tc = 0): number {
  const promote = c.kind === "fp8-block" || c.kind === "fp8" ? 3 * Math.ceil(c.k / SCALE_BLOCK) : 0;
  const acc = (c.k + promote) * 2 ** -24 * mag + tc;
  return 2 ** -8 * Math.abs(ref) + acc + 2 ** -20;
}

/** One row of the table: a variant's time of a case, or why it has none. */
export interface GemmRow {
  readonly case: number;
  readonly variant: string;
  readonly us?: number;
  /** Worst error at the sampled entries as a fraction of the bound (≤ 1 passes). */
  readonly err?: number;
  readonly note?: string;
  /** The configuration timed (with --tune: the tuned one and how it was chosen). */
  readonly config?: string;
}

/** The peer variant each kind is compared with. */
export const PEER: Readonly<Record<GemmKind, string>> = {
  bf16: "torch.matmul",
  fp8: "torch._scaled_mm",
  "fp8-fast": "torch._scaled_mm use_fast_accum",
  // Timed by bench/gemm-sweep.ts itself (torch has no 1 × 128 / 128 × 128 scaled matmul to
  // compare with): the cost of block scaling over per-tensor scaling, target ≥ 0.9.
  "fp8-block": "tirx-ts fp8 per-tensor",
  "bias-gelu": "torch gelu(addmm)",
};

const fmt = (x: number | undefined, d = 1): string =>
  x === undefined || !Number.isFinite(x) ? "–" : x.toFixed(d);

/**
 * The markdown table: one line per case with tirx-ts gemm() and its peer (median µs, TFLOP/s),
 * the ratio peer time / tirx-ts time (> 1: tirx-ts faster), the check, the configuration when
 * any row names one (--tune), and a line per note.
 */
export function formatGemmTable(
  cases: readonly GemmCase[],
  rows: readonly GemmRow[],
  meta: {
    readonly gpu: string;
    readonly command: string;
    readonly date: string;
    /** fp8-block's ABBA rounds (--rounds). */
    readonly rounds: number;
  },
): string {
  const tuned = rows.some((r) => r.config !== undefined);
  const out = [
    "# gemm() sweep: tirx-ts vs torch",
    "",
    `- date: ${meta.date}`,
    `- GPU: ${meta.gpu}`,
    `- command: ${meta.command}`,
    "- D = A·Bᵀ (A [m, k], B [n, k], both K-major), bf16 → bf16; fp8: e4m3 × e4m3 with per-tensor scales → bf16, each 128-wide K-tile's sum promoted into float32 (gemm()'s default; torch._scaled_mm's too); fp8-fast: the same with one accumulator over all of K (gemm()'s fastAccum, _scaled_mm's use_fast_accum); fp8-block: e4m3 × e4m3 with block scales (A 1 × 128, B 128 × 128) → bf16, its peer tirx-ts's per-tensor fp8 (fp8-block (global) / (tma): A's scales by ld.global, or staged by TMA with each K-tile: as given when ⌈k/128⌉ is a multiple of 4, else after their transposition, which the time includes); bias-gelu: bf16 with a bias per column and GELU (tanh) fused",
    `- times: medians of CUDA-event-timed launches after warm-up (fp8-block and its per-tensor peer: ${meta.rounds} rounds alternating ABBA, the median of each side's round medians); ratio = peer time / tirx-ts time`,
    "",
    `| # | kind | m | n | k | tirx-ts µs | TFLOP/s | peer | peer µs | peer TFLOP/s | ratio | check |${tuned ? " config |" : ""}`,
    `| - | ---- | - | - | - | ---------- | ------- | ---- | ------- | ------------ | ----- | ----- |${tuned ? " ------ |" : ""}`,
  ];
  const notes: string[] = [];
  cases.forEach((c, i) => {
    const mine = rows.find((r) => r.case === i && r.variant === "tirx-ts");
    const peer = rows.find((r) => r.case === i && r.variant === PEER[c.kind]);
    for (const r of [mine, peer]) if (r?.note) notes.push(`#${i} ${r.variant}: ${r.note}`);
    const ratio = mine?.us !== undefined && peer?.us !== undefined ? peer.us / mine.us : undefined;
    const check =
      mine?.err === undefined ? "–" : mine.err <= 1 ? "ok" : `FAIL (${fmt(mine.err, 2)})`;
    out.push(
      `| ${i} | ${gemmCaseKind(c)} | ${c.m} | ${c.n} | ${c.k} | ${fmt(mine?.us)} | ${fmt(mine?.us && tflops(c, mine.us))} | ${PEER[c.kind]} | ${fmt(peer?.us)} | ${fmt(peer?.us && tflops(c, peer.us))} | ${fmt(ratio, 2)} | ${check} |${tuned ? ` ${mine?.config ?? "–"} |` : ""}`,
    );
  });
  if (notes.length) out.push("", ...notes.map((n) => `- ${n}`));
  return out.join("\n") + "\n";
}
