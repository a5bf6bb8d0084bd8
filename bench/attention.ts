// FlashAttention on the GPU, side by side, on the same inputs: 16384 tokens (batch × seq), hidden
// 2048 (heads × hd), hd 64/128/256, seq 1024/4096/16384, causal and not, bfloat16 and float16;
// forward, and backward (at hd 128, the target's, unless --backward-hd says otherwise):
//   tirx-ts examples/flash_attention.ts (makeFlashAttention, imported when present) and, for the
//   backward, @tirx-ts/kernels' makeFlashAttentionBackward (its three kernels, timed together)
//   torch SDPA with the cuDNN backend and with the flash backend, and the Triton FlashAttention-2
//   kernels of bench/attention_triton.py: bench/attention_peers.py, one python3 process
// The inputs (normal(0, 1), fixed seed, bshd) are made by bench/attention_peers.py, which also
// writes them and float32 reference rows for the tirx-ts side; every output is checked on sampled
// rows before it is timed (bounds: bench/attention-cases.ts FWD_BOUND / BWD_BOUND). Times are
// medians of CUDA-event-timed calls after 3 warm-ups and 300 ms of warm-up launches; TFLOP/s
// count 4·b·h·s²·hd for the forward (half when causal) and 2.5× that for the backward; × cuDNN /
// × flash = their time / this time.
// Usage: tsx -C source bench/attention.ts [--dtypes bfloat16,float16] [--hd 64,128,256]
//   [--seqs 1024,4096,16384] [--causal false,true] [--no-backward] [--backward-hd 64,128,256]
//   [--no-peers] [--iters 20]
//   [--ctas N] [--schedules serial,overlap,pingpong] [--tiles 128,192,192x192] [--backward-mma ss,rs]
//   [--out results.md]
//   [--dry-run] [--help]
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { DType, PrimFunc } from "@tirx-ts/core";
import type {
  FlashAttentionBackward,
  backwardScratch,
  pickAttentionConfig,
} from "@tirx-ts/kernels";
import type { CudaTensor } from "@tirx-ts/runtime-cuda";
import {
  BWD_BOUND,
  FWD_BOUND,
  USAGE,
  attentionCases,
  describeCase,
  failed,
  formatAttentionTable,
  forwardVariants,
  parseAttentionArgs,
  tileName,
  variantSuffix,
  worstRowError,
  type AttentionCase,
  type AttentionDType,
  type AttentionRow,
} from "./attention-cases.js";
import { warmUpFor } from "./warm-up.js";

const repo = (p: string): string => fileURLToPath(new URL(`../${p}`, import.meta.url));
const EXAMPLE = "examples/flash_attention.ts";

const opts = parseAttentionArgs(process.argv.slice(2));
if (opts.help) {
  console.log(USAGE);
  process.exit(0);
}
const cases = attentionCases(opts);
const command = `tsx -C source bench/attention.ts ${process.argv.slice(2).join(" ")}`.trim();
if (opts.dryRun) {
  console.log(`${command}: ${cases.length} cases (dry run, nothing launched)`);
  cases.forEach((c, i) => console.log(describeCase(c, i)));
  console.log(
    `variants: tirx-ts ${EXAMPLE} (${existsSync(repo(EXAMPLE)) ? "present" : "missing"}; the backward: @tirx-ts/kernels makeFlashAttentionBackward)` +
      (opts.tiles ? ` at tiles ${opts.tiles.map(tileName).join(", ")} (where offered)` : "") +
      (opts.peers
        ? ", torch SDPA cuDNN, torch SDPA flash, Triton FA2 (bench/attention_peers.py)"
        : ""),
  );
  process.exit(0);
}

const rows: AttentionRow[] = [];
const notes: string[] = [];

// ---- the tirx-ts kernel: imported when the example exists ----
/** The interface examples/flash_attention.ts implements (see its doc comment). */
interface FlashAttentionSizes {
  batch: number;
  heads: number;
  seqQ: number;
  seqK: number;
  headDim: 64 | 128 | 256;
  dtype: "float16" | "bfloat16";
  causal?: boolean;
  scale?: number;
  scaleAtLaunch?: boolean;
  ctas?: number;
  lse?: boolean;
  schedule?: "serial" | "overlap" | "pingpong";
  blockM?: 128 | 192;
  blockN?: 64 | 80 | 128 | 176 | 192;
  backwardMma?: "ss" | "rs";
}
type MakeFlashAttention = (s: FlashAttentionSizes) => PrimFunc;

/**
 * The kernel sizes of case `c`: seq_q = seq_k = `c.seq`; the softmax scale (1/√hd) a launch
 * argument (`scaleAtLaunch`), as attention() and attentionBackward() build their kernels for every
 * positive scale. The launch arguments are {@link scaleArgs}.
 */
function sizesOf(c: AttentionCase): FlashAttentionSizes {
  return {
    batch: c.batch,
    heads: c.heads,
    seqQ: c.seq,
    seqK: c.seq,
    headDim: c.hd,
    dtype: c.dtype,
    causal: c.causal,
    scaleAtLaunch: true,
  };
}

/**
 * The launch arguments of case `c`'s softmax scale 1/√hd for the scaleAtLaunch kernels: float32
 * `scale` and `scaleLog2` (the library's launchScale; the forward takes `scaleLog2` last, the
 * backward's main kernel `scale` and `scaleLog2`, its postprocessing kernel `scale`).
 * @throws Error when @tirx-ts/kernels did not load (the rows then carry the reason).
 */
function scaleArgs(c: AttentionCase): { scale: number; scaleLog2: number } {
  if (!launchScale) throw new Error(`@tirx-ts/kernels has no launchScale: ${backwardWhy}`);
  return launchScale(1 / Math.sqrt(c.hd), "bench/attention");
}
let make: MakeFlashAttention | undefined;
let tirxWhy = "";
if (!existsSync(repo(EXAMPLE))) tirxWhy = `${EXAMPLE} missing`;
else {
  try {
    const m = (await import(pathToFileURL(repo(EXAMPLE)).href)) as {
      makeFlashAttention?: MakeFlashAttention;
    };
    if (typeof m.makeFlashAttention !== "function")
      tirxWhy = `${EXAMPLE} does not export makeFlashAttention`;
    else make = m.makeFlashAttention;
  } catch (err) {
    tirxWhy = `${EXAMPLE} failed to import: ${String(err).split("\n")[0]}`;
  }
}

/** The backward kernels of @tirx-ts/kernels and their scratch shapes, when that package loads. */
type MakeBackward = (s: FlashAttentionSizes) => FlashAttentionBackward;
/** The library call's tuning of the forward for sizes on a GPU of target `arch` (its table). */
type PickTuning = (s: FlashAttentionSizes, arch: string) => Partial<FlashAttentionSizes>;
let pickTuning: PickTuning | undefined;
/** The same for the backward (its `backwardMma`). */
let pickBackwardTuning: PickTuning | undefined;
let makeBackward: MakeBackward | undefined;
let scratchOf: typeof backwardScratch | undefined;
let launchScale: ((scale: number, who: string) => { scale: number; scaleLog2: number }) | undefined;
let backwardWhy = "";
try {
  const m = (await import("@tirx-ts/kernels")) as {
    makeFlashAttentionBackward?: MakeBackward;
    backwardScratch?: typeof backwardScratch;
    pickAttentionConfig?: typeof pickAttentionConfig;
    launchScale?: typeof launchScale;
  };
  launchScale = m.launchScale;
  const pick = m.pickAttentionConfig;
  if (pick) pickTuning = (s, arch) => pick("forward", s, arch).tune;
  if (pick) pickBackwardTuning = (s, arch) => pick("backward", s, arch).tune;
  makeBackward = m.makeFlashAttentionBackward;
  scratchOf = m.backwardScratch;
  if (!makeBackward || !scratchOf)
    backwardWhy = "@tirx-ts/kernels has no makeFlashAttentionBackward / backwardScratch";
} catch (err) {
  backwardWhy = `@tirx-ts/kernels failed to import: ${String(err).split("\n")[0]}`;
}

// ---- peers (and the inputs and references) ----
const work = mkdtempSync(join(tmpdir(), "attention-"));
const plan = join(work, "plan.json");
writeFileSync(
  plan,
  JSON.stringify({
    seed: 0,
    cases: cases.map((c) => ({
      ...c,
      fwd_bound: FWD_BOUND[c.dtype],
      bwd_bound: BWD_BOUND[c.dtype],
    })),
  }),
);
interface Inputs {
  q: string;
  k: string;
  v: string;
  do: string;
}
const inputs = new Map<string, Inputs>(); // `${dtype}:${elements}` → files
const refs = new Map<number, { index: Int32Array; rows: Float32Array }>();
/** Backward cases: float32 [3, count, hd], the dQ, dK and dV references at the rows of `refs`. */
const grefs = new Map<number, Float32Array>();
let gpu = "unknown GPU";
let pyOk = false;
if (opts.peers || make) {
  const args = [repo("bench/attention_peers.py"), plan];
  if (make) args.push("--dump", work);
  if (!opts.peers) args.push("--no-time");
  console.log(`peers: python3 ${args.join(" ")}`);
  // Streamed: each result is printed as it comes (the whole run takes minutes).
  const child = spawn("python3", args, { stdio: ["ignore", "pipe", "inherit"] });
  const closed = new Promise<string>((resolve) => {
    child.on("error", (e) => resolve(String(e)));
    child.on("close", (code, signal) => resolve(code === 0 ? "" : `exit ${code ?? signal}`));
  });
  for await (const line of createInterface({ input: child.stdout })) {
    if (!line.startsWith("{")) {
      if (line.trim()) console.log(line);
      continue;
    }
    let j: Record<string, unknown>;
    try {
      j = JSON.parse(line) as Record<string, unknown>;
    } catch {
      console.log(line);
      continue;
    }
    if (j.kind === "info") {
      gpu = String(j.gpu);
      notes.push(
        `peers: torch ${String(j.torch)}, cuDNN ${String(j.cudnn)}, Triton ${String(j.triton)}`,
      );
    } else if (j.kind === "inputs") {
      inputs.set(`${String(j.dtype)}:${Number(j.elements)}`, j as unknown as Inputs);
    } else if (j.kind === "ref") {
      const raw = (f: unknown) => {
        const b = readFileSync(String(f));
        return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
      };
      refs.set(Number(j.case), {
        index: new Int32Array(raw(j.index)),
        rows: new Float32Array(raw(j.rows)),
      });
    } else if (j.kind === "gref") {
      const b = readFileSync(String(j.rows));
      grefs.set(
        Number(j.case),
        new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)),
      );
    } else if (j.kind === "result") {
      const row: AttentionRow =
        j.skipped !== undefined
          ? {
              case: Number(j.case),
              pass: j.pass as "forward" | "backward",
              variant: String(j.variant),
              note: `skipped: ${String(j.skipped)}`,
            }
          : {
              case: Number(j.case),
              pass: j.pass as "forward" | "backward",
              variant: String(j.variant),
              us: Number(j.median_us),
              // null: a non-finite error (NaN or overflow in the output)
              err: j.err === null ? Infinity : Number(j.err),
              bound: Number(j.bound),
            };
      rows.push(row);
      console.log(JSON.stringify(row));
    }
  }
  const failure = await closed;
  pyOk = failure === "";
  if (!pyOk) notes.push(`peers: python3 bench/attention_peers.py failed (${failure})`);
}

// ---- tirx-ts ----
const tirxRow = (ci: number, note: string): void => {
  rows.push({ case: ci, pass: "forward", variant: "tirx-ts", note: `tirx-ts: ${note}` });
};
const rt = await import("@tirx-ts/runtime-cuda");
/**
 * Each tirx-ts variant is launched for WARM_MS before it is timed (bench/warm-up.ts). Three
 * warm-ups were not enough on the H200: after the peers' process and our own build the GPU's
 * clocks had dropped, and whichever tirx-ts variant ran first after them timed 1-7% slower than
 * the same kernel run second (hd 128 seq 4k backward, "ss" and "rs" in either order,
 * bench/results/attention-warmup-2026-12-04.md). bench/attention_peers.py warms each peer the
 * same way.
 */
const WARM_MS = 300;
const warmUp = (launch: () => void, dev: { synchronize(): void }): void =>
  warmUpFor(launch, () => dev.synchronize(), WARM_MS, 10);
const probe = rt.cudaAvailable();
if (!make) cases.forEach((_, ci) => tirxRow(ci, tirxWhy));
else if (!probe.ok) cases.forEach((_, ci) => tirxRow(ci, `no CUDA driver (${probe.reason})`));
else if (!pyOk && inputs.size === 0)
  cases.forEach((_, ci) => tirxRow(ci, "no inputs (bench/attention_peers.py failed)"));
else {
  const { decodeHost } = await import("@tirx-ts/core");
  const dev = rt.cuda(0);
  if (gpu === "unknown GPU") gpu = dev.name;
  const tables = new Map<AttentionDType, Float32Array>();
  /** Every 16-bit pattern of `dtype` as a float. */
  const table = (dtype: AttentionDType): Float32Array => {
    let t = tables.get(dtype);
    if (!t) {
      const all = new Uint16Array(65536).map((_, i) => i);
      t = Float32Array.from(decodeHost(new Uint8Array(all.buffer), dtype) as ArrayLike<number>);
      tables.set(dtype, t);
    }
    return t;
  };
  /**
   * The tirx-ts backward of case `c` (makeFlashAttentionBackward's three kernels) on the forward's
   * inputs: O and LSE from the forward with `lse`, dO from the peers' inputs; checked per
   * gradient at the sampled rows against `gref` (BWD_BOUND), then timed (the three launches).
   */
  const backward = (
    c: AttentionCase,
    ci: number,
    x: { Q: CudaTensor; K: CudaTensor; V: CudaTensor; O: CudaTensor },
    files: Inputs,
    index: Int32Array,
    gref: Float32Array,
    mma: "ss" | "rs" | undefined,
  ): void => {
    // --backward-mma's choice, else the library call's (attention()'s table for the shape).
    const tuned = mma === undefined ? pickBackwardTuning?.(sizesOf(c), dev.arch) : undefined;
    const sizes = {
      ...sizesOf(c),
      ...(mma !== undefined ? { backwardMma: mma } : (tuned ?? {})),
    };
    const picked = tuned?.backwardMma;
    const suffix =
      mma !== undefined
        ? ` (${mma})`
        : picked !== undefined
          ? ` (attention() tuning ${picked})`
          : "";
    const note = (why: string): void => {
      rows.push({
        case: ci,
        pass: "backward",
        variant: `tirx-ts${suffix}`,
        note: `tirx-ts${suffix}: ${why}`,
      });
    };
    if (!makeBackward || !scratchOf) return note(backwardWhy);
    const shape = [c.batch, c.seq, c.heads, c.hd];
    const rowShape = [c.batch, c.heads, c.seq];
    const held: CudaTensor[] = [];
    const empty = (sh: readonly number[], dt: DType) => {
      const t = rt.cudaEmpty(sh, dt, dev);
      held.push(t);
      return t;
    };
    try {
      const fwd = rt.compileCuda(make!({ ...sizes, lse: true } as FlashAttentionSizes), {
        device: dev,
      });
      const k = makeBackward(sizes);
      const [pre, main, post] = [k.preprocess, k.main, k.postprocess].map((f) =>
        rt.compileCuda(f, { device: dev }),
      );
      const dO = empty(shape, c.dtype).copyFrom(new Uint8Array(readFileSync(files.do)));
      const lse = empty(rowShape, "float32");
      // The scratch tensors as the kernels declare them (dQacc is blocked).
      const scratch = scratchOf(k);
      const delta = empty(scratch.Delta.shape, scratch.Delta.dtype);
      const lse2 = empty(scratch.LSE2.shape, scratch.LSE2.dtype);
      const dQacc = empty(scratch.dQacc.shape, scratch.dQacc.dtype);
      const [dQ, dK, dV] = [0, 1, 2].map(() => empty(shape, c.dtype));
      const sa = scaleArgs(c);
      fwd(x.Q, x.K, x.V, x.O, lse, sa.scaleLog2);
      for (const g of [dQ!, dK!, dV!]) rt.driver().memsetD8(g.ptr, 0xff, g.nbytes);
      // The three kernels in order: synchronous for the check, queued for the timing.
      const argsOf = [
        [x.O, dO, lse, delta, lse2, dQacc],
        [x.Q, x.K, x.V, dO, lse2, delta, dQacc, dK!, dV!, sa.scale, sa.scaleLog2],
        [dQacc, dQ!, sa.scale],
      ];
      const kernels = [pre!, main!, post!];
      const launch = (sync: boolean) =>
        kernels.forEach((f, fi) => (sync ? f(...argsOf[fi]!) : f.launchAsync(...argsOf[fi]!)));
      launch(true);
      const t16 = table(c.dtype);
      const hd = c.hd;
      const count = index.length / 3;
      let err = 0;
      [dQ!, dK!, dV!].forEach((g, gi) => {
        const gb = g.toBytes();
        const bits = new Uint16Array(gb.buffer, gb.byteOffset, gb.byteLength / 2);
        let worst = 0;
        let mag = 0;
        for (let i = 0; i < count; i++) {
          const [b, s, h] = [index[3 * i]!, index[3 * i + 1]!, index[3 * i + 2]!];
          const at = ((b * c.seq + s) * c.heads + h) * hd;
          for (let d = 0; d < hd; d++) {
            const r = gref[(gi * count + i) * hd + d]!;
            const e = Math.abs(t16[bits[at + d]!]! - r);
            worst = Number.isNaN(e) ? Infinity : Math.max(worst, e);
            mag = Math.max(mag, Math.abs(r));
          }
        }
        err = Math.max(err, worst / mag);
      });
      warmUp(() => launch(false), dev);
      const t = rt.timeLaunches(() => launch(false), { iters: c.iters, device: dev });
      const row: AttentionRow = {
        case: ci,
        pass: "backward",
        variant: `tirx-ts @tirx-ts/kernels backward${suffix}`,
        us: t.medianUs,
        err,
        bound: BWD_BOUND[c.dtype],
      };
      rows.push(row);
      console.log(JSON.stringify(row));
    } catch (e) {
      note(String(e).split("\n")[0]!.slice(0, 240));
    } finally {
      for (const t of held) t.dispose();
    }
  };
  let hostKey = "";
  let host: Uint8Array[] = [];
  cases.forEach((c: AttentionCase, ci) => {
    const shape = [c.batch, c.seq, c.heads, c.hd];
    const n = shape.reduce((a, b) => a * b, 1);
    const files = inputs.get(`${c.dtype}:${n}`);
    const ref = refs.get(ci);
    if (!files || !ref)
      return tirxRow(ci, "no inputs or reference rows from bench/attention_peers.py");
    const tensors: { dispose(): void }[] = [];
    try {
      if (hostKey !== `${c.dtype}:${n}`) {
        host = [files.q, files.k, files.v].map((f) => new Uint8Array(readFileSync(f)));
        hostKey = `${c.dtype}:${n}`;
      }
      const [Q, K, V] = host.map((b) => rt.cudaEmpty(shape, c.dtype, dev).copyFrom(b));
      const O = rt.cudaEmpty(shape, c.dtype, dev);
      tensors.push(Q!, K!, V!, O);
      // One forward row per schedule and tile asked for (the builder's defaults when none was);
      // a variant the builder refuses (192x192 overlapped: TX9001) is a row with its reason.
      for (const v of forwardVariants(c.hd, opts.schedules, opts.tiles, opts.ctas)) {
        // No tile, schedule or grid asked for: the library call's tuning for the case
        // (attention()'s table for this GPU), named in the row.
        const lib =
          v.tile === undefined && v.schedule === undefined && v.ctas === undefined && pickTuning
            ? pickTuning(sizesOf(c), dev.arch)
            : undefined;
        const libName =
          lib && Object.keys(lib).length > 0
            ? ` (attention() tuning ${Object.entries(lib)
                .map(([key, x]) => `${key} ${String(x)}`)
                .join(", ")})`
            : "";
        const variant = `tirx-ts ${EXAMPLE}${variantSuffix(v)}${libName}`;
        let fn: PrimFunc;
        try {
          fn = make!({
            ...sizesOf(c),
            ...lib,
            ...(typeof v.ctas === "number" ? { ctas: v.ctas } : {}),
            ...v.tile,
            ...(v.schedule ? { schedule: v.schedule } : {}),
          });
        } catch (err) {
          rows.push({
            case: ci,
            pass: "forward",
            variant,
            note: `tirx-ts: ${String(err).split("\n")[0]!.slice(0, 240)}`,
          });
          continue;
        }
        const run = rt.compileCuda(fn, { device: dev });
        // NaN everywhere first, so that rows the kernel does not write fail the check.
        rt.driver().memsetD8(O.ptr, 0xff, O.nbytes);
        const { scaleLog2 } = scaleArgs(c);
        run(Q!, K!, V!, O, scaleLog2);
        const ob = O.toBytes();
        const bits = new Uint16Array(ob.buffer, ob.byteOffset, n);
        const t16 = table(c.dtype);
        const err = worstRowError((i) => t16[bits[i]!]!, c, ref.index, ref.rows);
        warmUp(() => run.launchAsync(Q!, K!, V!, O, scaleLog2), dev);
        const t = rt.timeLaunches(() => run.launchAsync(Q!, K!, V!, O, scaleLog2), {
          iters: c.iters,
          device: dev,
        });
        const row: AttentionRow = {
          case: ci,
          pass: "forward",
          variant,
          us: t.medianUs,
          err,
          bound: FWD_BOUND[c.dtype],
        };
        rows.push(row);
        console.log(JSON.stringify(row));
      }
      const gref = grefs.get(ci);
      if (c.backward && gref) {
        for (const mma of opts.backwardMmas ?? [undefined]) {
          backward(c, ci, { Q: Q!, K: K!, V: V!, O }, files, ref.index, gref, mma);
        }
      }
    } catch (err) {
      tirxRow(ci, String(err).split("\n")[0]!.slice(0, 240));
    } finally {
      for (const t of tensors) t.dispose();
    }
  });
}
rmSync(work, { recursive: true, force: true });

// ---- table ----
const lines = formatAttentionTable(cases, rows);
const summary: string[] = [];
cases.forEach((c, ci) => {
  for (const pass of ["forward", "backward"] as const) {
    const g = rows.filter((r) => r.case === ci && r.pass === pass && r.us !== undefined);
    const cudnn = g.find((r) => r.variant.startsWith("torch SDPA cuDNN"));
    const flash = g.find((r) => r.variant.startsWith("torch SDPA flash"));
    // A line per tirx-ts row (its schedule and tile named when there are several).
    const ours = g.filter((r) => r.variant.startsWith("tirx-ts"));
    for (const o of cudnn || flash ? ours : []) {
      const name = ours.length > 1 ? o.variant.replace(` ${EXAMPLE}`, "") : "tirx-ts";
      summary.push(
        `${pass} ${c.dtype} hd ${c.hd} seq ${c.seq}${c.causal ? " causal" : ""}: ${name} ${cudnn ? `${(cudnn.us! / o.us!).toFixed(3)}× cuDNN` : ""}${cudnn && flash ? ", " : ""}${flash ? `${(flash.us! / o.us!).toFixed(3)}× flash` : ""}`,
      );
    }
  }
});
const text = [
  `# FlashAttention, ${new Date().toISOString()}`,
  "",
  `- GPU: ${gpu}`,
  `- command: ${command}`,
  `- shapes: batch × seq = 16384 tokens, heads × hd = 2048; Q, K, V, O bshd; inputs normal(0, 1), seed 0; scale 1/√hd (tirx-ts: a launch argument, as attention() builds)`,
  `- checks (sampled rows against float32 SDPA): forward max |o − ref| ≤ bound · max |ref| per row (bf16 2^-7, fp16 2^-9); backward per gradient, bound · max |ref| over the rows (bf16 2^-6, fp16 2^-8)`,
  ...notes.map((n) => `- ${n}`),
  "",
  ...lines,
  "",
  ...summary,
  "",
].join("\n");
console.log(text);
if (opts.out) writeFileSync(opts.out, text);
process.exitCode = rows.some(failed) ? 1 : 0;
