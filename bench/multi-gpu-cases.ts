// The pure parts of bench/multi-gpu.ts (no GPU, no driver): options, the plan of rows, the
// kernels of each row at a GPU count, bus bandwidth, the inputs and their exact sums, the table.
import { SYMMETRIC_GRANULARITY, type PrimFunc } from "tirx-ts";
import { makeGemm, pickGemmConfig } from "@tirx-ts/kernels";
import {
  BLOCK,
  VEC,
  makeGatherBlock,
  makeOneShot,
  makeTwoShot,
  type AllreduceBench,
  type GatherBench,
} from "./multi-gpu-kernels.js";

/** Sizes of the all-reduce rows in bytes per GPU (bfloat16): 256 KiB .. 4 MiB, and 256 MiB. */
export const ALLREDUCE_BYTES: readonly number[] = [
  256 << 10,
  512 << 10,
  1 << 20,
  2 << 20,
  4 << 20,
  256 << 20,
];

/** M = N = K of the all-gather + GEMM row. */
export const GEMM_SIZE = 8192;

/** The options of bench/multi-gpu.ts. */
export interface MultiGpuOptions {
  /** GPUs (PEs), 2..8. Default 2. */
  readonly gpus: number;
  /** Print the plan and build every kernel's PTX, touching no GPU. */
  readonly dryRun: boolean;
  /** Timed iterations per measurement (default 50) after `warmup` (default 5). */
  readonly iters: number;
  readonly warmup: number;
  /** CTAs per GPU at most (default: the GPU's SM count; the dry run assumes 132, the H200's). */
  readonly ctas: number | undefined;
  /** Skip the PyTorch peer of the all-gather + GEMM row. */
  readonly noTorch: boolean;
  /** Write the table (markdown) here too. */
  readonly out: string | undefined;
}

/**
 * Parse the command line: `--gpus N`, `--dry-run`, `--iters N`, `--warmup N`, `--ctas N`,
 * `--no-torch`, `--out FILE`.
 * @throws RangeError naming the flag for an unknown flag or a bad value.
 */
export function parseMultiGpuArgs(argv: readonly string[]): MultiGpuOptions {
  const o = {
    gpus: 2,
    dryRun: false,
    iters: 50,
    warmup: 5,
    ctas: undefined as number | undefined,
    noTorch: false,
    out: undefined as string | undefined,
  };
  const int = (flag: string, v: string | undefined, min: number, max: number): number => {
    const n = Number(v);
    if (v === undefined || !Number.isInteger(n) || n < min || n > max) {
      throw new RangeError(`${flag} takes an integer in ${min}..${max}, got ${v ?? "nothing"}`);
    }
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--dry-run") o.dryRun = true;
    else if (a === "--no-torch") o.noTorch = true;
    else if (a === "--gpus") o.gpus = int(a, argv[++i], 2, 8);
    else if (a === "--iters") o.iters = int(a, argv[++i], 1, 100000);
    else if (a === "--warmup") o.warmup = int(a, argv[++i], 0, 100000);
    else if (a === "--ctas") o.ctas = int(a, argv[++i], 1, 65535);
    else if (a === "--out") {
      const f = argv[++i];
      if (f === undefined) throw new RangeError("--out takes a file name");
      o.out = f;
    } else {
      throw new RangeError(
        `unknown option ${a} (options: --gpus N, --dry-run, --iters N, --warmup N, --ctas N, --no-torch, --out FILE)`,
      );
    }
  }
  return o;
}

/** One row of the bench. */
export interface MultiGpuCase {
  readonly kind: "allreduce" | "allgather_gemm";
  /** Bytes per GPU (all-reduce), or M = N = K (all-gather + GEMM). */
  readonly size: number;
  readonly dtype: "bfloat16";
  /** What runs on each side. */
  readonly tirx: string;
  readonly peer: string;
}

/** The rows for `gpus` GPUs. */
export function multiGpuPlan(gpus: number): MultiGpuCase[] {
  const cases: MultiGpuCase[] = ALLREDUCE_BYTES.map((bytes) => ({
    kind: "allreduce",
    size: bytes,
    dtype: "bfloat16",
    tirx: `one-shot and two-shot all-reduce kernels (T.nvshmem, barrier_all) on ${gpus} GPUs, launched on every GPU from one process`,
    peer: `ncclAllReduce(sum) on ${gpus} GPUs, one process (ncclCommInitAll + group)`,
  }));
  cases.push({
    kind: "allgather_gemm",
    size: GEMM_SIZE,
    dtype: "bfloat16",
    tirx: `A's row blocks pulled from each peer (gather_block on a copy stream) overlapped with the Hopper GEMM of each block (kernels' makeGemm, M/${gpus} rows) on a compute stream, ${gpus} GPUs`,
    peer: `torchrun bench/multi_gpu_peers.py: torch.distributed all_gather_into_tensor (NCCL) then torch.matmul, ${gpus} ranks`,
  });
  return cases;
}

/** CTAs of an all-reduce of `n` elements per GPU: one 8-element vector per thread, at most `ctas`. */
export function allreduceCtas(n: number, ctas: number): number {
  return Math.max(1, Math.min(ctas, Math.ceil(n / VEC / BLOCK)));
}

/** The tirx-ts kernels of a row for `gpus` GPUs (shards padded to `granularity`). */
export function caseKernels(
  c: MultiGpuCase,
  gpus: number,
  ctas: number,
  granularity: number = SYMMETRIC_GRANULARITY,
): PrimFunc[] {
  if (c.kind === "allreduce") {
    const n = c.size / 2;
    const s: AllreduceBench = { pes: gpus, n, ctas: allreduceCtas(n, ctas), granularity };
    return [makeOneShot(s), makeTwoShot(s)];
  }
  const g: GatherBench = { pes: gpus, m: c.size, k: c.size, ctas, granularity };
  // The GEMM of one row block; the GPU run takes gemmChoice's configuration (a tuning or a
  // shipped default where there is one), the dry run the table's (pickGemmConfig).
  const m = c.size / gpus;
  const config = pickGemmConfig({ m, n: c.size, k: c.size, inBytes: 2 }).config;
  return [
    makeGatherBlock(g),
    makeGemm({ m, n: c.size, k: c.size, dtype: "bfloat16", config }).main,
  ];
}

/**
 * Bus bandwidth of an all-reduce of `bytes` per GPU over `pes` GPUs in `us` microseconds, GB/s:
 * the algorithm bandwidth bytes / time times 2(P − 1)/P (nccl-tests' busbw for all-reduce).
 */
export function allreduceBusBw(bytes: number, pes: number, us: number): number {
  return ((bytes / (us * 1e-6)) * (2 * (pes - 1))) / pes / 1e9;
}

/** PE p's input element i: multiples of 1/4 in [-3.75, 3.75], exact in bfloat16 and in sums. */
export function allreduceValue(p: number, i: number): number {
  return (((p * 37 + i * 11) % 31) - 15) / 4;
}

/** The exact sum over `pes` PEs of element i (representable in bfloat16 for pes ≤ 8). */
export function allreduceSum(pes: number, i: number): number {
  let s = 0;
  for (let q = 0; q < pes; q++) s += allreduceValue(q, i);
  return s;
}

/** A's and B's elements of the all-gather + GEMM row: small integers, exact in bfloat16. */
export const gemmA = (r: number, c: number): number => ((r * 7 + c * 3) % 5) - 2;
export const gemmB = (r: number, c: number): number => ((r * 5 + c * 2) % 3) - 1;

/** One measured row. */
export interface MultiGpuRow {
  readonly case: MultiGpuCase;
  /** tirx-ts: one-shot and two-shot (all-reduce), or the overlapped gather + GEMM; µs. */
  readonly tirxUs: Readonly<Record<string, number>>;
  /** The peer's time in µs, or why there is none. */
  readonly peerUs: number | string;
  /** Whether tirx-ts's result equalled the host's (sampled for the GEMM). */
  readonly correct: boolean;
}

/** The rows as a markdown table, with bus bandwidth for the all-reduce rows. */
export function formatMultiGpuTable(rows: readonly MultiGpuRow[], gpus: number): string {
  const out = [
    `| case | size | tirx-ts | µs | bus GB/s | peer µs | peer bus GB/s | peer / tirx-ts | correct |`,
    `| --- | --- | --- | --- | --- | --- | --- | --- | --- |`,
  ];
  for (const r of rows) {
    const c = r.case;
    const size = c.kind === "allreduce" ? sizeText(c.size) : `M=N=K=${c.size}`;
    const peer = typeof r.peerUs === "number" ? r.peerUs : undefined;
    for (const [name, us] of Object.entries(r.tirxUs)) {
      const bw = (t: number): string =>
        c.kind === "allreduce" ? allreduceBusBw(c.size, gpus, t).toFixed(1) : "";
      out.push(
        `| ${c.kind} | ${size} | ${name} | ${us.toFixed(1)} | ${bw(us)} | ${peer !== undefined ? peer.toFixed(1) : String(r.peerUs)} | ${peer !== undefined ? bw(peer) : ""} | ${peer !== undefined ? (peer / us).toFixed(2) : ""} | ${r.correct ? "yes" : "NO"} |`,
      );
    }
  }
  return out.join("\n");
}

/** "256 KiB", "4 MiB" */
export function sizeText(bytes: number): string {
  return bytes >= 1 << 20 ? `${bytes / (1 << 20)} MiB` : `${bytes / 1024} KiB`;
}
