// Simulator speed, old and new side by side in one run: the seed kernel, a 1024 x 1024 float32
// row copy through shared memory (1024 CTAs x 256 threads, cp.async), examples/bulk_pipeline
// at 4 MiB (32 CTAs, bulk copies and mbarriers) and examples/gemm_simt at 128 x 128 x 64 (a
// compute kernel: float16 loads, fma.rn.f32, 16-byte shared vectors). "old" is the simulator of a baseline checkout
// (a directory holding the tree of an earlier commit with its node_modules), loaded from its
// sources into this process; "new" is this tree's. Each case: first launch (verify + compile +
// run) and warm launches (median, min and max of WARM runs, fresh tensors each run, a full
// garbage collection before each with --expose-gc; also the
// median process CPU time, less sensitive to other work on a shared machine), with hazard
// tracking on, and for this tree also with hazards "off".
// Run: node --expose-gc --conditions=source --import tsx bench/sim-speed.ts [--baseline DIR] [--warm 7]
// [--only NAME] (the cases whose name contains NAME). Through tsx's CLI (node --expose-gc
// node_modules/tsx/dist/cli.mjs -C source ...) the flag does not reach the script: no collection
// runs between launches then (a note on stderr says so).
// Make a baseline: git archive <commit> | tar -x -C DIR && (cd DIR && npm ci --ignore-scripts)
// Exits 1 when a first launch exceeds its limit or a result is wrong.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadSimTree, type SimTree } from "./sim-tree.js";

const { values } = parseArgs({
  options: {
    baseline: { type: "string" },
    warm: { type: "string", default: "7" },
    only: { type: "string" },
  },
});
const WARM = Number(values.warm);
const here = resolve(fileURLToPath(new URL("..", import.meta.url)));

/** A simulator tree as the benchmark uses it: its label, and whether it runs the hazards-off mode. */
interface Lib extends SimTree {
  readonly label: string;
  readonly offMode: boolean;
}

async function load(root: string, label: string): Promise<Lib> {
  return { ...(await loadSimTree(root, label)), label, offMode: root === here };
}

/** A tensor argument: its values (encoded to `dtype`) or, without `data`, zeros. */
interface Arg {
  shape: number[];
  dtype: string;
  data?: Float32Array;
}

interface Case {
  name: string;
  fn: (lib: Lib) => unknown;
  args: Arg[];
  /** Whether the arguments after a launch hold the right result (their bytes). */
  ok: (bytes: Uint8Array[]) => boolean;
  limitMs: number;
}

/** A copy kernel's check: the output (argument 1) equals the input (argument 0). */
const copied = (b: Uint8Array[]): boolean => Buffer.from(b[0]!).equals(b[1]!);

const gemmDims = { m: 128, n: 128, k: 64 };
/** float16-exact inputs for gemm_simt (small integers over 8). */
const gemmA = Float32Array.from(
  { length: gemmDims.m * gemmDims.k },
  (_, i) => ((i * 7) % 13) / 8 - 0.75,
);
const gemmB = Float32Array.from(
  { length: gemmDims.k * gemmDims.n },
  (_, i) => ((i * 5) % 11) / 8 - 0.625,
);

/** gemm_simt's check: C (argument 2, float32) equals the float64 product (exact here: K·|a·b| < 2^24 ulps). */
function gemmOk(b: Uint8Array[]): boolean {
  const { m, n, k } = gemmDims;
  const c = new Float32Array(b[2]!.buffer, b[2]!.byteOffset, m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let acc = 0;
      for (let p = 0; p < k; p++) acc += gemmA[i * k + p]! * gemmB[p * n + j]!;
      if (c[i * n + j] !== acc) return false;
    }
  }
  return true;
}

const n = 1024;
const pipeCfg = { elements: 1 << 20, tileBytes: 8192, stages: 3, grid: 32 };
const cases: Case[] = [
  {
    name: "seed copy_async (128x32 f16, 1 CTA x 128 threads)",
    fn: (l) => l.seedKernel,
    args: [
      {
        shape: [128, 32],
        dtype: "float16",
        data: Float32Array.from({ length: 4096 }, (_, i) => i % 97),
      },
      { shape: [128, 32], dtype: "float16" },
    ],
    ok: copied,
    limitMs: 100,
  },
  {
    name: "row copy (1024x1024 f32, 1024 CTAs x 256 threads)",
    fn: (l) => l.rowCopyKernel(n),
    args: [
      {
        shape: [n, n],
        dtype: "float32",
        data: Float32Array.from({ length: n * n }, (_, i) => (i % 4099) * 0.5),
      },
      { shape: [n, n], dtype: "float32" },
    ],
    ok: copied,
    limitMs: 10_000,
  },
  {
    name: "bulk_pipeline (4 MiB f32, 32 CTAs x 32 threads, 8 KiB tiles x 3 stages)",
    fn: (l) => l.makeBulkPipeline(pipeCfg),
    args: [
      {
        shape: [pipeCfg.elements / 2048, 2048],
        dtype: "float32",
        data: Float32Array.from({ length: pipeCfg.elements }, (_, i) => (i % 65521) * 0.25 - 1000),
      },
      { shape: [pipeCfg.elements / 2048, 2048], dtype: "float32" },
    ],
    ok: copied,
    limitMs: 10_000,
  },
  {
    name: "gemm_simt (128x128x64 f16 -> f32, 4 CTAs x 256 threads, fma.rn.f32)",
    fn: (l) => l.makeGemm(gemmDims.m, gemmDims.n, gemmDims.k),
    args: [
      { shape: [gemmDims.m, gemmDims.k], dtype: "float16", data: gemmA },
      { shape: [gemmDims.k, gemmDims.n], dtype: "float16", data: gemmB },
      { shape: [gemmDims.m, gemmDims.n], dtype: "float32" },
    ],
    ok: gemmOk,
    limitMs: 10_000,
  },
];

interface Row {
  cold: number;
  median: number;
  /** Median process CPU time (user + system) of the warm launches: less sensitive to other load. */
  cpu: number;
  min: number;
  max: number;
  ok: boolean;
}

function measure(lib: Lib, c: Case, hazards?: string): Row {
  const fn = c.fn(lib);
  const args = () =>
    c.args.map((x) =>
      x.data
        ? lib.simTensor(x.data, { shape: x.shape, dtype: x.dtype })
        : lib.simZeros(x.shape, x.dtype),
    );
  const opts = hazards ? { hazards } : {};
  const same = (a: unknown[]): boolean =>
    c.ok((a as { toBytes(): Uint8Array }[]).map((t) => t.toBytes()));
  let a = args();
  let t0 = performance.now();
  lib.runSim(lib.verify(fn), a, opts);
  const cold = performance.now() - t0;
  let ok = same(a);
  const vf = lib.verify(fn);
  const times: number[] = [];
  const cpus: number[] = [];
  for (let i = 0; i < WARM; i++) {
    a = args();
    // The last launch's tensors are garbage now: collect them here, not inside the next timing.
    gc?.();
    const c0 = process.cpuUsage();
    t0 = performance.now();
    lib.runSim(vf, a, opts);
    times.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpus.push((c.user + c.system) / 1000);
    ok &&= same(a);
  }
  times.sort((x, y) => x - y);
  cpus.sort((x, y) => x - y);
  return {
    cold,
    median: times[times.length >> 1]!,
    cpu: cpus[cpus.length >> 1]!,
    min: times[0]!,
    max: times.at(-1)!,
    ok,
  };
}

const libs: Lib[] = [];
if (values.baseline) {
  const dir = resolve(values.baseline);
  if (!existsSync(join(dir, "node_modules"))) {
    console.error(`--baseline ${dir}: no node_modules there (run npm ci --ignore-scripts in it)`);
    process.exit(2);
  }
  libs.push(await load(dir, "old"));
}
libs.push(await load(here, "new"));

const ms = (x: number) => x.toFixed(1);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc)
  console.error(
    "note: no gc() (run node with --expose-gc and --import tsx): launches are timed without a collection before each",
  );
let failed = false;
console.log(
  `| case | sim | hazards | first launch ms | warm median ms | warm min–max ms | warm median CPU ms | speed-up (warm median) | speed-up (CPU) |`,
);
console.log(`| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |`);
for (const c of cases.filter((x) => values.only === undefined || x.name.includes(values.only))) {
  // This tree first, then the baseline, so neither runs while the other's garbage is collected
  // (with --expose-gc, a full collection between them).
  const rows: { lib: Lib; mode: string; r: Row }[] = [];
  for (const lib of [...libs].reverse()) {
    for (const mode of lib.offMode ? ["throw", "off"] : ["throw"]) {
      gc?.();
      rows.push({ lib, mode, r: measure(lib, c, mode === "throw" ? undefined : mode) });
    }
  }
  // Print old, then new with tracking on, then off.
  const rank = (x: { lib: Lib; mode: string }) =>
    (x.lib.label === "old" ? 0 : 2) + (x.mode === "off" ? 1 : 0);
  rows.sort((x, y) => rank(x) - rank(y));
  const oldRow = rows.find((x) => x.lib.label === "old")?.r;
  const oldWarm = oldRow?.median;
  const onRow = rows.find((x) => x.lib.label === "new" && x.mode === "throw")!.r;
  const onWarm = onRow.median;
  for (const { lib, mode, r } of rows) {
    const pass = r.ok && r.cold < c.limitMs;
    failed ||= !pass;
    const up =
      lib.label === "new" && mode === "throw" && oldWarm !== undefined
        ? `${(oldWarm / r.median).toFixed(1)}×`
        : lib.label === "new" && mode === "off"
          ? `tracking costs ${(onWarm / r.median).toFixed(2)}×`
          : "";
    const upCpu =
      lib.label === "new" && mode === "throw" && oldRow !== undefined
        ? `${(oldRow.cpu / r.cpu).toFixed(1)}×`
        : lib.label === "new" && mode === "off"
          ? `tracking costs ${(onRow.cpu / r.cpu).toFixed(2)}×`
          : "";
    console.log(
      `| ${c.name} | ${lib.label} | ${mode === "throw" ? "on" : "off"} | ${ms(r.cold)} | ${ms(r.median)} | ${ms(r.min)}–${ms(r.max)} | ${ms(r.cpu)} | ${up}${r.ok ? "" : " WRONG RESULT"}${r.cold < c.limitMs ? "" : ` over ${c.limitMs} ms`} | ${upCpu} |`,
    );
  }
}
process.exitCode = failed ? 1 : 0;
