// Compute benchmarks on the GPU: vector_add, softmax, reduce_rows and gemm_simt, each side by side:
//   tirx-ts kernel (examples/<name>.ts, when it exists; see bench/compute-kernels.ts)
//   hand-written CUDA C++ kernel(s) of the same design (bench/cuda/*.cu, nvcc -O3 -arch=sm_90)
//   cudaMemcpy D2D (cuMemcpyDtoD) of the same traffic: the memory roofline of the memory-bound ones
//   GEMM only: cuBLAS (bench/cuda/cublas_gemm.cu, cublasGemmEx fp16 in, fp32 compute and out)
//   peers, when python3 can import torch and triton: bench/peers.py (torch.matmul, Triton)
// Inputs are seeded pseudo-random; every kernel's output is checked against a float64 CPU
// reference before it is timed. Times are medians of CUDA-event-timed launches; each variant is
// timed in two rounds, alternating with the others, and keeps its better median.
// Ratios are throughput ratios (higher is better): × memcpy = memcpy time for the same bytes /
// time, × hand = best hand-written time / time, × cuBLAS = cuBLAS time / time.
// Usage: tsx -C source bench/compute.ts [--iters 20] [--no-peers] [--only gemm_mma,...] [--out results.md]
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  checkArgs,
  decodeHost,
  encodeHost,
  mkBuffer,
  mkVar,
  type DType,
  type KernelArg,
  type Param,
} from "@tirx-ts/core";
import { compileToPtx, type PtxModule } from "@tirx-ts/codegen-ptx";
import {
  cuda,
  cudaAvailable,
  cudaEmpty,
  driver,
  loadModule,
  timeLaunches,
  type CudaDevice,
  type CudaKernel,
  type CudaModule,
  type CudaTensor,
} from "@tirx-ts/runtime-cuda";
import {
  computeKernels,
  gemmSimt,
  gemmMma,
  gemmMmaSizes,
  gemmMmaTile,
  reduceRows,
  repoPath,
  softmax,
  softmaxTile,
  vectorAdd,
  benchSizes,
  type BenchKernel,
} from "./compute-kernels.js";

const { values } = parseArgs({
  options: {
    iters: { type: "string", default: "20" },
    out: { type: "string" },
    "no-peers": { type: "boolean", default: false },
    only: { type: "string" },
  },
});
/** `--only gemm_mma,softmax` runs only those benchmarks (default: all). */
const only = values.only?.split(",").filter(Boolean);
const want = (name: string): boolean => !only || only.includes(name);
const iters = Number(values.iters);
if (!Number.isInteger(iters) || iters < 20) throw new Error(`--iters must be an integer ≥ 20`);

const VEC = benchSizes.vector_add;
const ROWS = benchSizes.softmax;
if (benchSizes.reduce_rows.rows !== ROWS.rows || benchSizes.reduce_rows.cols !== ROWS.cols)
  throw new Error("softmax and reduce_rows share one matrix shape here");
const GEMM = benchSizes.gemm_simt;
/** Columns of a row in bench/cuda/softmax_rows.cu (a compile-time constant there). */
const SOFTMAX_COLS = 8192;

const lines: string[] = [];
const say = (s: string) => {
  console.log(s);
  lines.push(s);
};
let failures = 0;

// ---- tirx-ts kernels: import, build and generate PTX (no GPU needed) ----
interface Tirx {
  readonly kernel: BenchKernel;
  readonly mod: PtxModule;
}
const tirx = new Map<string, Tirx>();
const tirxNotes: string[] = [];
for (const e of computeKernels) {
  try {
    // Each entry's sizes type matches its name in sizesOf.
    const k = await (e.build as (s: unknown) => Promise<BenchKernel | undefined>)(
      benchSizes[e.name as keyof typeof benchSizes],
    );
    if (!k) {
      tirxNotes.push(`${e.name}: tirx-ts kernel: not built yet (${e.example} missing)`);
      continue;
    }
    const mod = compileToPtx(k.fn, { arch: "sm_90" });
    tirx.set(e.name, { kernel: k, mod });
    tirxNotes.push(
      `${e.name}: tirx-ts kernel: ${e.example} → PTX entry ${mod.entry} (${mod.text.split("\n").length} lines, ${mod.staticSharedBytes} B static shared)`,
    );
  } catch (err) {
    failures++;
    tirxNotes.push(`${e.name}: tirx-ts kernel: ${e.example} FAILED to build: ${String(err)}`);
  }
}
for (const n of tirxNotes) console.log(n);

const probe = cudaAvailable();
if (!probe.ok) {
  console.log(`compute: no CUDA driver (${probe.reason}); this benchmark needs an sm_90 GPU`);
  process.exit(failures ? 1 : 0);
}
const dev = cuda(0);

// ---- deterministic inputs ----
/** mulberry32: a seeded 32-bit PRNG; returns uniform floats in [0, 1). */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
/** `count` float32 values uniform in [lo, hi). */
function randomF32(count: number, seed: number, lo = -1, hi = 1): Float32Array {
  const r = prng(seed);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) out[i] = lo + (hi - lo) * r();
  return out;
}
/**
 * `count` float16 values j/256 with j uniform in [-range·256, range·256) (exact in float16 for
 * range ≤ 8): the bits for the device and the values for the reference.
 */
function randomF16(
  count: number,
  seed: number,
  range: number,
): { bits: Uint16Array; values: Float32Array } {
  const steps = range * 512;
  const table = new Float32Array(steps);
  for (let j = 0; j < steps; j++) table[j] = (j - steps / 2) / 256;
  const tbits = new Uint16Array(encodeHost(table, "float16", steps).buffer);
  const r = prng(seed);
  const bits = new Uint16Array(count);
  const values = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    const j = Math.floor(r() * steps);
    bits[i] = tbits[j]!;
    values[i] = table[j]!;
  }
  return { bits, values };
}
const f16Table = decodeHost(
  new Uint8Array(Uint16Array.from({ length: 65536 }, (_, i) => i).buffer),
  "float16",
) as Float32Array;
const bytesOf = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
function upload(data: ArrayBufferView, shape: number[], dtype: DType): CudaTensor {
  const t = cudaEmpty(shape, dtype, dev);
  t.copyFrom(bytesOf(data));
  return t;
}
const asF32 = (t: CudaTensor) => {
  const b = t.toBytes();
  return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
};
const asF16 = (t: CudaTensor) => {
  const b = t.toBytes();
  const bits = new Uint16Array(b.buffer, b.byteOffset, b.byteLength / 2);
  return Float32Array.from(bits, (x) => f16Table[x]!);
};
/** Fill a tensor with 0xff bytes (NaN for floats) so that unwritten outputs fail the check. */
const poison = (t: CudaTensor) => driver().memsetD8(t.ptr, 0xff, t.nbytes);

// ---- hand-written kernels ----
const work = mkdtempSync(join(tmpdir(), "compute-bench-"));
function nvccCubin(rel: string): CudaModule {
  const out = join(work, rel.replace(/\W/g, "_") + ".cubin");
  execFileSync("nvcc", ["-O3", "-arch=sm_90", "-cubin", "-o", out, repoPath(rel)], {
    stdio: "inherit",
  });
  return loadModule(dev, new Uint8Array(readFileSync(out)));
}
const bufParam = (name: string, dtype: DType): Param => ({
  kind: "buffer",
  name,
  buffer: mkBuffer(name, [1], dtype, "global"),
});
const i32Param = (name: string): Param => ({ kind: "scalar", name, var: mkVar(name, "int32") });

/** A launchable kernel: hand-written (cubin) or tirx-ts (our PTX). */
interface Launchable {
  readonly label: string;
  launch(args: readonly KernelArg[]): void;
}
function hand(
  mod: CudaModule,
  entry: string,
  params: Param[],
  grid: [number, number, number],
  block: number,
): Launchable {
  const k: CudaKernel = mod.getKernel(entry);
  return {
    label: `hand-written ${entry}`,
    launch: (args) => k.launch(params, args, { grid, block: [block, 1, 1], dynamicSharedBytes: 0 }),
  };
}
/** Argument lists already checked against a tirx-ts kernel's parameters (checked once, not per timed launch). */
const checked = new WeakSet<readonly KernelArg[]>();
function ours(name: string): Launchable | undefined {
  const t = tirx.get(name);
  if (!t) return undefined;
  const k = loadModule(dev, t.mod.text).getKernel(t.mod.entry, {
    staticSharedBytes: t.mod.staticSharedBytes,
  });
  const launch = {
    grid: t.kernel.grid ?? t.mod.launch.grid,
    block: t.mod.launch.block,
    dynamicSharedBytes: t.mod.dynamicSharedBytes,
  };
  return {
    label: `tirx-ts ${t.mod.entry}`,
    launch: (args) => {
      const all = [...args, ...(t.kernel.scalars ?? [])];
      if (!checked.has(args)) {
        checkArgs(t.kernel.fn, all);
        checked.add(args);
      }
      k.launch(t.mod.params, all, launch);
    },
  };
}

/** Time every launcher in two alternating rounds; each keeps its better median (µs). */
function timeAll(fns: readonly (() => void)[]): number[] {
  const best = fns.map(() => Infinity);
  for (let round = 0; round < 2; round++) {
    fns.forEach((fn, i) => {
      const t = timeLaunches(fn, { warmup: round === 0 ? 3 : 1, iters, device: dev });
      best[i] = Math.min(best[i]!, t.medianUs);
    });
  }
  return best;
}

// cudaMemcpy D2D of `traffic / 2` bytes reads and writes `traffic` bytes in all.
let scratch: { src: CudaTensor; dst: CudaTensor } | undefined;
function memcpyFor(traffic: number): () => void {
  const bytes = Math.floor(traffic / 2 / 16) * 16;
  if (!scratch || scratch.src.shape[0]! < bytes) {
    scratch?.src.dispose();
    scratch?.dst.dispose();
    scratch = { src: cudaEmpty([bytes], "uint8", dev), dst: cudaEmpty([bytes], "uint8", dev) };
    driver().memsetD8(scratch.src.ptr, 0x5a, bytes);
  }
  const { src, dst } = scratch;
  return () => driver().memcpyDtoD(dst.ptr, src.ptr, bytes);
}

// ---- the table ----
interface Row {
  bench: string;
  variant: string;
  us: number;
  traffic?: number;
  flops?: number;
  check: string;
}
const rows: Row[] = [];
const summaries: string[] = [];
const fmt = (x: number | undefined, d: number) => (x === undefined ? "" : x.toFixed(d));

/** Check one output; a failing check is counted, printed and keeps the kernel out of the timing. */
function verdict(label: string, ok: boolean, detail: string): boolean {
  const line = `${ok ? "ok  " : "FAIL"} ${label}: ${detail}`;
  console.log(line);
  if (!ok) {
    failures++;
    summaries.push(line);
  }
  return ok;
}

interface Contender {
  readonly k: Launchable;
  readonly args: readonly KernelArg[];
}

/**
 * Run each contender once on poisoned outputs and check it; time the ones that pass next to
 * cudaMemcpy of the same traffic (when given) and add their rows.
 */
function bench(
  name: string,
  contenders: readonly Contender[],
  outputs: readonly CudaTensor[],
  check: () => { ok: boolean; detail: string },
  cost: { traffic?: number; flops?: number },
): void {
  console.log(`\n== ${name}`);
  const passed: Contender[] = [];
  const checks: string[] = [];
  for (const c of contenders) {
    for (const o of outputs) poison(o);
    c.k.launch(c.args);
    dev.synchronize(`after ${c.k.label}`);
    const r = check();
    if (verdict(`${name} ${c.k.label}`, r.ok, r.detail)) {
      passed.push(c);
      checks.push(r.detail);
    }
  }
  const fns = passed.map((c) => () => c.k.launch(c.args));
  const withMemcpy = cost.traffic !== undefined;
  if (withMemcpy) fns.unshift(memcpyFor(cost.traffic!));
  const times = timeAll(fns);
  if (withMemcpy)
    rows.push({
      bench: name,
      variant: "cudaMemcpy D2D, same bytes",
      us: times[0]!,
      ...cost,
      check: "",
    });
  passed.forEach((c, i) =>
    rows.push({
      bench: name,
      variant: c.k.label,
      us: times[i + (withMemcpy ? 1 : 0)]!,
      ...cost,
      check: checks[i]!,
    }),
  );
}

// ---- peers: cuBLAS, torch, Triton (separate processes, before we allocate) ----
interface PeerLine {
  bench: string;
  variant: string;
  median_us: number;
  tflops?: number;
  traffic_bytes?: number;
  flops?: number;
  max_err?: number;
}
const peerRows: Row[] = [];
let cublasUs: number | undefined;
function buildCublas(): string | undefined {
  const exe = join(work, "cublas_gemm");
  const src = repoPath("bench/cuda/cublas_gemm.cu");
  const attempts: string[][] = [["-O3", "-arch=sm_90", "-o", exe, src, "-lcublas"]];
  // torch's pip wheels carry cuBLAS (headers and library) when the toolkit lacks it.
  const py = spawnSync(
    "python3",
    ["-c", "import nvidia.cublas; print(list(nvidia.cublas.__path__)[0])"],
    { encoding: "utf8" },
  );
  const dir = py.status === 0 ? py.stdout.trim() : "";
  const lib = join(dir, "lib");
  const so =
    dir && existsSync(lib)
      ? readdirSync(lib)
          .filter((f) => /^libcublas\.so/.test(f))
          .sort()[0]
      : undefined;
  if (so) {
    attempts.push([
      "-O3",
      "-arch=sm_90",
      "-o",
      exe,
      src,
      `-I${join(dir, "include")}`,
      join(lib, so),
      `-Xlinker=-rpath,${lib}`,
    ]);
  }
  const errors: string[] = [];
  for (const a of attempts) {
    const r = spawnSync("nvcc", a, { encoding: "utf8" });
    if (r.status === 0) return exe;
    errors.push((r.stderr || r.error?.message || "").trim().split("\n").slice(-2).join(" "));
  }
  console.log(`cuBLAS: skipped, cublas_gemm.cu did not build: ${errors.join(" | ")}`);
  summaries.push(`cuBLAS: skipped (cublas_gemm.cu did not build here)`);
  return undefined;
}
const cublasExe = buildCublas();
if (want("gemm_simt")) {
  const exe = cublasExe;
  let out: string | undefined;
  try {
    if (exe)
      out = execFileSync(exe, [String(GEMM.m), String(GEMM.n), String(GEMM.k), "50"], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "inherit"],
      });
  } catch (e) {
    verdict("gemm cuBLAS", false, `cublas_gemm failed: ${(e as Error).message}`);
  }
  if (out !== undefined) {
    const j = JSON.parse(out.trim().split("\n").pop()!) as {
      median_us: number;
      max_rel_err: number;
      checked: number;
    };
    const ok = j.max_rel_err <= 1e-3;
    verdict(
      "gemm cuBLAS",
      ok,
      `max rel err ${j.max_rel_err.toExponential(1)} on ${j.checked} sampled entries`,
    );
    cublasUs = j.median_us;
    peerRows.push({
      bench: gemmSimt.name,
      variant: "cuBLAS cublasGemmEx (fp16 in, fp32 compute/out, tensor cores)",
      us: j.median_us,
      flops: 2 * GEMM.m * GEMM.n * GEMM.k,
      check: `rel err ${j.max_rel_err.toExponential(1)}`,
    });
  }
}
if (values["no-peers"]) {
  summaries.push("peers: skipped (--no-peers)");
} else if (spawnSync("python3", ["-c", "import torch, triton"]).status !== 0) {
  console.log("peers: skipped (python3 cannot import torch and triton)");
  summaries.push("peers: skipped (python3 cannot import torch and triton)");
} else {
  let out = "";
  try {
    out = execFileSync("python3", [repoPath("bench/peers.py")], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
      timeout: 600_000,
    });
  } catch (e) {
    verdict("peers", false, `bench/peers.py failed: ${(e as Error).message}`);
  }
  for (const line of out.split("\n")) {
    if (!line.startsWith("{")) continue;
    const p = JSON.parse(line) as PeerLine;
    const bench = p.bench === "gemm" ? gemmSimt.name : p.bench;
    peerRows.push({
      bench,
      variant: p.variant,
      us: p.median_us,
      ...(p.flops !== undefined ? { flops: p.flops } : {}),
      ...(p.traffic_bytes !== undefined ? { traffic: p.traffic_bytes } : {}),
      check: p.max_err === undefined ? "" : `max err ${p.max_err.toExponential(1)}`,
    });
  }
}

// ---- vector_add ----

if (want("vector_add")) {
  const handVec = nvccCubin(vectorAdd.hand);
  const { n } = VEC;
  const grids = (m: number) => ({
    scalar: Math.ceil(m / 256),
    f4: Math.max(1, Math.ceil(Math.floor(m / 4) / 256)),
    f4x4: Math.max(1, Math.ceil(Math.floor(m / 4) / 1024)),
  });
  const params = [
    bufParam("a", "float32"),
    bufParam("b", "float32"),
    bufParam("c", "float32"),
    i32Param("n"),
  ];
  const variants = (m: number) => {
    const g = grids(m);
    return [
      hand(handVec, "vector_add", params, [g.scalar, 1, 1], 256),
      hand(handVec, "vector_add_f4", params, [g.f4, 1, 1], 256),
      hand(handVec, "vector_add_f4x4", params, [g.f4x4, 1, 1], 256),
    ];
  };
  const setup = (m: number, seed: number) => {
    const a = randomF32(m, seed);
    const b = randomF32(m, seed + 1);
    const A = upload(a, [m], "float32");
    const B = upload(b, [m], "float32");
    const C = cudaEmpty([m], "float32", dev);
    const check = () => {
      const c = asF32(C);
      let worst = 0;
      for (let i = 0; i < m; i++) {
        const ref = a[i]! + b[i]!; // float64 sum of the float32 inputs
        const err = Math.abs(c[i]! - ref) / Math.max(Math.abs(ref), 2 ** -126);
        if (!(err <= worst)) worst = Number.isNaN(err) ? Infinity : err;
      }
      return { ok: worst <= 1e-5, detail: `max rel err ${worst.toExponential(1)} over ${m}` };
    };
    return { A, B, C, check };
  };
  // The tail: an odd length through every hand-written variant (checked, not timed).
  for (const m of [1_000_003, 5]) {
    const s = setup(m, 11 + m);
    for (const k of variants(m)) {
      poison(s.C);
      k.launch([s.A, s.B, s.C, m]);
      dev.synchronize(`after ${k.label}`);
      const r = s.check();
      verdict(`vector_add n=${m} ${k.label}`, r.ok, r.detail);
    }
    for (const t of [s.A, s.B, s.C]) t.dispose();
  }
  const s = setup(n, 1);
  const contenders: Contender[] = variants(n).map((k) => ({ k, args: [s.A, s.B, s.C, n] }));
  const t = ours(vectorAdd.name);
  if (t) contenders.push({ k: t, args: [s.A, s.B, s.C] });
  bench(vectorAdd.name, contenders, [s.C], s.check, { traffic: 12 * n });
  for (const x of [s.A, s.B, s.C]) x.dispose();
}

// ---- softmax ----

if (want("softmax")) {
  const handSoftmax = nvccCubin(softmax.hand);
  const { rows: R, cols: C } = ROWS;
  if (C !== SOFTMAX_COLS) throw new Error(`softmax_rows.cu is built for ${SOFTMAX_COLS} columns`);
  const x = randomF16(R * C, 2, 8);
  const X = upload(x.bits, [R, C], "float16");
  const Y = cudaEmpty([R, C], "float16", dev);
  // Per row: the max and the float64 sum of exp(x - max).
  const rowMax = new Float64Array(R);
  const rowSum = new Float64Array(R);
  for (let r = 0; r < R; r++) {
    const o = r * C;
    let m = -Infinity;
    for (let c = 0; c < C; c++) m = Math.max(m, x.values[o + c]!);
    let sum = 0;
    for (let c = 0; c < C; c++) sum += Math.exp(x.values[o + c]! - m);
    rowMax[r] = m;
    rowSum[r] = sum;
  }
  const check = () => {
    const y = asF16(Y);
    let worstAbs = 0;
    let worstRel = 0;
    for (let r = 0; r < R; r++) {
      const o = r * C;
      const m = rowMax[r]!;
      const sum = rowSum[r]!;
      for (let c = 0; c < C; c++) {
        const ref = Math.exp(x.values[o + c]! - m) / sum;
        const err = Math.abs(y[o + c]! - ref);
        if (!(err <= worstAbs)) worstAbs = Number.isNaN(err) ? Infinity : err;
        if (ref >= 2 ** -14 && !(err / ref <= worstRel))
          worstRel = Number.isNaN(err) ? Infinity : err / ref;
      }
    }
    return {
      ok: worstAbs <= 2e-3 && worstRel <= 1e-2,
      detail: `max abs err ${worstAbs.toExponential(1)} (≤ 2e-3), max rel err ${worstRel.toExponential(1)} where y ≥ 2^-14 (≤ 1e-2)`,
    };
  };
  const params = [bufParam("x", "float16"), bufParam("y", "float16")];
  const contenders: Contender[] = [
    ["softmax_rows", 256],
    ["softmax_rows_t128", 128],
    ["softmax_rows_t512", 512],
  ].map(([entry, block]) => ({
    k: hand(handSoftmax, entry as string, params, [R, 1, 1], block as number),
    args: [X, Y],
  }));
  const t = ours(softmax.name);
  if (t) contenders.push({ k: t, args: [X, Y] });
  // The tile-layer twin (examples/tile/softmax.ts), same design, side by side.
  const tile = ours(softmaxTile.name);
  if (tile) contenders.push({ k: { ...tile, label: `${tile.label} (tile layer)` }, args: [X, Y] });
  bench(softmax.name, contenders, [Y], check, { traffic: 4 * R * C });
  X.dispose();
  Y.dispose();
}

// ---- reduce_rows ----

if (want("reduce_rows")) {
  const handReduce = nvccCubin(reduceRows.hand);
  const params = [
    bufParam("x", "float32"),
    bufParam("y", "float32"),
    i32Param("rows"),
    i32Param("cols"),
  ];
  const setup = (R: number, C: number, seed: number) => {
    const x = randomF32(R * C, seed);
    const X = upload(x, [R, C], "float32");
    const Y = cudaEmpty([R], "float32", dev);
    const ref = new Float64Array(R);
    const mag = new Float64Array(R);
    for (let r = 0; r < R; r++) {
      for (let c = 0; c < C; c++) {
        ref[r]! += x[r * C + c]!;
        mag[r]! += Math.abs(x[r * C + c]!);
      }
    }
    const check = () => {
      const y = asF32(Y);
      let worst = 0;
      for (let r = 0; r < R; r++) {
        const err = Math.abs(y[r]! - ref[r]!) / Math.max(mag[r]!, 2 ** -126);
        if (!(err <= worst)) worst = Number.isNaN(err) ? Infinity : err;
      }
      return {
        ok: worst <= 1e-5,
        detail: `max |y - ref| / sum|x| ${worst.toExponential(1)} over ${R} rows of ${C}`,
      };
    };
    const k = hand(handReduce, "reduce_rows", params, [Math.ceil(R / 8), 1, 1], 256);
    return { X, Y, check, k };
  };
  // Rows not a multiple of 8, a vector tail, and unaligned rows (scalar path): checked, not timed.
  for (const [R, C] of [
    [37, 1000],
    [37, 1001],
  ] as const) {
    const s = setup(R, C, R * C);
    poison(s.Y);
    s.k.launch([s.X, s.Y, R, C]);
    dev.synchronize(`after ${s.k.label}`);
    const r = s.check();
    verdict(`reduce_rows ${R}×${C} ${s.k.label}`, r.ok, r.detail);
    s.X.dispose();
    s.Y.dispose();
  }
  const { rows: R, cols: C } = ROWS;
  const s = setup(R, C, 3);
  const contenders: Contender[] = [{ k: s.k, args: [s.X, s.Y, R, C] }];
  const t = ours(reduceRows.name);
  if (t) contenders.push({ k: t, args: [s.X, s.Y] });
  bench(reduceRows.name, contenders, [s.Y], s.check, { traffic: 4 * R * C + 4 * R });
  s.X.dispose();
  s.Y.dispose();
}

// ---- gemm_simt ----

if (want("gemm_simt")) {
  const handGemm = nvccCubin(gemmSimt.hand);
  const { m: M, n: N, k: K } = GEMM;
  if (M % 64 || N % 64 || K % 32)
    throw new Error("gemm_cp_async needs M, N multiples of 64 and K of 32");
  const a = randomF16(M * K, 4, 1);
  const b = randomF16(K * N, 5, 1);
  const A = upload(a.bits, [M, K], "float16");
  const B = upload(b.bits, [K, N], "float16");
  const Cd = cudaEmpty([M, N], "float32", dev);
  // 64 sampled rows, one at each row position within a 64-row CTA tile, spread over the tiles.
  const sample = Array.from({ length: 64 }, (_, j) => (((j * 7) % (M / 64)) * 64 + j) % M);
  const refRows = sample.map((i) => {
    const ref = new Float64Array(N);
    for (let k = 0; k < K; k++) {
      const av = a.values[i * K + k]!;
      const o = k * N;
      for (let j = 0; j < N; j++) ref[j]! += av * b.values[o + j]!;
    }
    return ref;
  });
  const check = () => {
    const c = asF32(Cd);
    let num = 0;
    let den = 0;
    sample.forEach((i, s) => {
      const ref = refRows[s]!;
      for (let j = 0; j < N; j++) {
        const d = c[i * N + j]! - ref[j]!;
        num += d * d;
        den += ref[j]! * ref[j]!;
      }
    });
    const rel = Math.sqrt(num / den);
    return {
      ok: rel <= 1e-3,
      detail: `rel Frobenius err ${Number.isNaN(rel) ? "NaN" : rel.toExponential(1)} over ${sample.length} sampled rows`,
    };
  };
  const params = [
    bufParam("A", "float16"),
    bufParam("B", "float16"),
    bufParam("C", "float32"),
    i32Param("M"),
    i32Param("N"),
    i32Param("K"),
  ];
  const contenders: Contender[] = [
    {
      k: hand(handGemm, "gemm_cp_async", params, [N / 64, M / 64, 1], 256),
      args: [A, B, Cd, M, N, K],
    },
  ];
  const t = ours(gemmSimt.name);
  if (t) contenders.push({ k: t, args: [A, B, Cd] });
  bench(gemmSimt.name, contenders, [Cd], check, { flops: 2 * M * N * K });
  for (const x of [A, B, Cd]) x.dispose();
}
// ---- gemm_mma (tensor cores) at 4096³ and 8192³: tirx-ts, the hand kernel, cuBLAS ----
const handMma = want("gemm_mma") ? nvccCubin(gemmMma.hand) : undefined;
for (const size of want("gemm_mma") ? gemmMmaSizes : []) {
  const { m: M, n: N, k: K } = size;
  const label = `${gemmMma.name} ${M}x${N}x${K}`;
  const a = randomF16(M * K, 6, 1);
  const b = randomF16(K * N, 7, 1);
  const A = upload(a.bits, [M, K], "float16");
  const B = upload(b.bits, [K, N], "float16");
  const Cd = cudaEmpty([M, N], "float32", dev);
  // 16 sampled rows; the bound is mma's (2^-20 of Σ|a·b| per element, see examples/gemm_mma.ts).
  const sample = Array.from({ length: 16 }, (_, j) => (j * 997 + 5) % M);
  const refRows = sample.map((i) => {
    const ref = new Float64Array(N);
    const mag = new Float64Array(N);
    for (let k = 0; k < K; k++) {
      const av = a.values[i * K + k]!;
      const o = k * N;
      for (let j = 0; j < N; j++) {
        ref[j]! += av * b.values[o + j]!;
        mag[j]! += Math.abs(av * b.values[o + j]!);
      }
    }
    return { ref, mag };
  });
  const check = () => {
    const c = asF32(Cd);
    let worst = 0;
    sample.forEach((i, s) => {
      const { ref, mag } = refRows[s]!;
      for (let j = 0; j < N; j++) {
        const e = Math.abs(c[i * N + j]! - ref[j]!) / (mag[j]! * 2 ** -20);
        worst = Math.max(worst, Number.isNaN(e) ? Infinity : e);
      }
    });
    return {
      ok: worst <= 1,
      detail: `worst err ${worst.toFixed(3)} of 2^-20·Σ|a·b| over ${sample.length} rows`,
    };
  };
  const params = [
    bufParam("A", "float16"),
    bufParam("B", "float16"),
    bufParam("C", "float32"),
    i32Param("M"),
    i32Param("N"),
    i32Param("K"),
  ];
  const contenders: Contender[] = [
    {
      k: hand(handMma!, "gemm_mma", params, [N / 128, M / 128, 1], 256),
      args: [A, B, Cd, M, N, K],
    },
  ];
  // The instruction-level kernel and its tile-layer twin (examples/tile/gemm_mma.ts), side by side.
  for (const entry of [gemmMma, gemmMmaTile]) {
    const built = await entry.build(size);
    if (!built) continue;
    const mod = compileToPtx(built.fn, { arch: "sm_90" });
    const k = loadModule(dev, mod.text).getKernel(mod.entry, {
      staticSharedBytes: mod.staticSharedBytes,
    });
    contenders.push({
      k: {
        label: `tirx-ts ${mod.entry}${entry === gemmMmaTile ? " (tile layer)" : ""}`,
        launch: (args) =>
          k.launch(
            built.fn.params.map((p) =>
              p.kind === "buffer" ? bufParam(p.buffer.name, p.buffer.dtype) : i32Param(p.var.name),
            ),
            args,
            {
              grid: mod.launch.grid,
              block: mod.launch.block,
              dynamicSharedBytes: mod.dynamicSharedBytes,
            },
          ),
      },
      args: [A, B, Cd],
    });
  }
  bench(label, contenders, [Cd], check, { flops: 2 * M * N * K });
  if (cublasExe) {
    try {
      const out = execFileSync(cublasExe, [String(M), String(N), String(K), "20"], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "inherit"],
      });
      const j = JSON.parse(out.trim().split("\n").pop()!) as {
        median_us: number;
        max_rel_err: number;
      };
      rows.push({
        bench: label,
        variant: "cuBLAS cublasGemmEx (fp16 in, fp32 compute/out, tensor cores)",
        us: j.median_us,
        flops: 2 * M * N * K,
        check: `rel err ${j.max_rel_err.toExponential(1)}`,
      });
    } catch (e) {
      verdict(`${label} cuBLAS`, false, `cublas_gemm failed: ${(e as Error).message}`);
    }
  }
  for (const x of [A, B, Cd]) x.dispose();
}
scratch?.src.dispose();
scratch?.dst.dispose();

// ---- report ----
rows.push(...peerRows);
const order = computeKernels.map((e) => e.name as string);
rows.sort((x, y) => order.indexOf(x.bench) - order.indexOf(y.bench));
const memcpyUs = new Map<string, number>();
const handUs = new Map<string, number>();
for (const r of rows) {
  if (r.variant.startsWith("cudaMemcpy")) memcpyUs.set(r.bench, r.us);
  if (r.variant.startsWith("hand-written"))
    handUs.set(r.bench, Math.min(handUs.get(r.bench) ?? Infinity, r.us));
}

say(`# compute benchmarks`);
say(``);
say(`- date: ${new Date().toISOString()}`);
say(`- GPU: ${dev.name} (sm_${dev.computeCapability.join("")})`);
say(
  `- command: tsx -C source bench/compute.ts --iters ${iters}${values["no-peers"] ? " --no-peers" : ""}${only ? ` --only ${only.join(",")}` : ""}`,
);
say(
  `- sizes: vector_add n = ${VEC.n} float32; softmax ${ROWS.rows}×${ROWS.cols} float16; reduce_rows ${ROWS.rows}×${ROWS.cols} float32; gemm ${GEMM.m}×${GEMM.n}×${GEMM.k} (fp16 in, fp32 out)`,
);
say(
  `- times: median of ${iters} CUDA-event-timed launches after warm-up, better of two alternating rounds (peers: their own timers, see bench/peers.py)`,
);
say(
  `- ratios are throughput ratios, higher is better; × hand is against the fastest hand-written variant`,
);
say(``);
say(`| benchmark | variant | median µs | GB/s | × memcpy | × hand | TFLOP/s | × cuBLAS | check |`);
say(`| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |`);
for (const r of rows) {
  const gbps = r.traffic !== undefined ? r.traffic / (r.us * 1e3) : undefined;
  const mc = memcpyUs.get(r.bench);
  const xMemcpy = r.traffic !== undefined && mc !== undefined ? mc / r.us : undefined;
  // GEMM rows of another size (torch.matmul 4096³) get no ratios.
  const sameSize = r.flops === undefined || r.flops === 2 * GEMM.m * GEMM.n * GEMM.k;
  const hu = sameSize ? handUs.get(r.bench) : undefined;
  const xHand = hu !== undefined && !r.variant.startsWith("cudaMemcpy") ? hu / r.us : undefined;
  const tflops = r.flops !== undefined ? r.flops / (r.us * 1e6) : undefined;
  const xCublas =
    r.flops !== undefined && sameSize && cublasUs !== undefined ? cublasUs / r.us : undefined;
  say(
    `| ${r.bench} | ${r.variant} | ${r.us.toFixed(1)} | ${fmt(gbps, 0)} | ${fmt(xMemcpy, 3)} | ${fmt(xHand, 3)} | ${fmt(tflops, 2)} | ${fmt(xCublas, 3)} | ${r.check} |`,
  );
}
say(``);
for (const n of tirxNotes) say(`- ${n}`);
for (const e of computeKernels) {
  const r = rows.find((x) => x.bench === e.name && x.variant.startsWith("tirx-ts"));
  if (!r) continue;
  const hu = handUs.get(e.name);
  const parts = [
    hu === undefined
      ? "not compared with a hand-written kernel (none passed its check)"
      : `${(hu / r.us).toFixed(3)}× the fastest hand-written kernel`,
  ];
  const mc = memcpyUs.get(e.name);
  if (mc !== undefined) parts.push(`${(mc / r.us).toFixed(3)}× the cudaMemcpy roofline`);
  if (r.flops !== undefined) parts.push(`${(r.flops / (r.us * 1e6)).toFixed(2)} TFLOP/s`);
  if (r.flops !== undefined && cublasUs !== undefined)
    parts.push(`${(cublasUs / r.us).toFixed(3)}× cuBLAS`);
  say(`- ${e.name}: tirx-ts is ${parts.join(", ")}.`);
}
for (const s of summaries) say(`- ${s}`);
if (values.out) writeFileSync(values.out, lines.join("\n") + "\n");
process.exitCode = failures ? 1 : 0;
