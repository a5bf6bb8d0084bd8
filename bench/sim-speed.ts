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
import {
  GEMM_A,
  GEMM_B,
  GEMM_DIMS,
  loadSimTree,
  SIM_CASES,
  simArgs,
  type SimCase,
  type SimTree,
} from "./sim-tree.js";

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

/** A case of bench/sim-tree.ts with its result check and its first-launch limit. */
interface Case extends SimCase {
  /** Whether the arguments after a launch hold the right result (their bytes). */
  ok: (bytes: Uint8Array[]) => boolean;
  limitMs: number;
}

/** A copy kernel's check: the output (argument 1) equals the input (argument 0). */
const copied = (b: Uint8Array[]): boolean => Buffer.from(b[0]!).equals(b[1]!);

/** gemm_simt's check: C (argument 2, float32) equals the float64 product (exact here: K·|a·b| < 2^24 ulps). */
function gemmOk(b: Uint8Array[]): boolean {
  const { m, n, k } = GEMM_DIMS;
  const c = new Float32Array(b[2]!.buffer, b[2]!.byteOffset, m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let acc = 0;
      for (let p = 0; p < k; p++) acc += GEMM_A[i * k + p]! * GEMM_B[p * n + j]!;
      if (c[i * n + j] !== acc) return false;
    }
  }
  return true;
}

const checks: Record<SimCase["key"], Pick<Case, "ok" | "limitMs">> = {
  seed: { ok: copied, limitMs: 100 },
  rowcopy: { ok: copied, limitMs: 10_000 },
  bulk: { ok: copied, limitMs: 10_000 },
  gemm: { ok: gemmOk, limitMs: 10_000 },
};
const cases: Case[] = SIM_CASES.map((c) => ({ ...c, ...checks[c.key] }));

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
  const args = () => simArgs(lib, c);
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
