// Simulator speed, old and new interleaved launch by launch: the cases of bench/sim-speed.ts
// (seed copy_async, a 1024 x 1024 row copy, bulk_pipeline at 4 MiB, gemm_simt 128 x 128 x 64),
// each ROUNDS rounds of one timed batch of K launches per side, the sides alternating which
// goes first; fresh tensors per launch, a full garbage collection before each batch. On a shared
// machine whose load changes from minute to minute, the minimum CPU time per launch over the
// rounds is the figure that compares (load only adds time; both sides meet the same load in
// turn); the medians are printed too.
// Run: node --expose-gc --conditions=source --import tsx bench/sim-ab.ts --baseline DIR
// [--rounds 61] [--k 1] [--only NAME] [--hazards throw|off]
// Make a baseline as for bench/sim-speed.ts: git archive <commit> | tar -x -C DIR && (cd DIR &&
// npm ci --ignore-scripts)
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadSimTree, type SimTree } from "./sim-tree.js";

const { values } = parseArgs({
  options: {
    baseline: { type: "string" },
    rounds: { type: "string", default: "61" },
    k: { type: "string", default: "1" },
    only: { type: "string" },
    hazards: { type: "string" },
  },
});
if (!values.baseline) {
  console.error("--baseline DIR is required");
  process.exit(2);
}
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  console.error("run node with --expose-gc and --import tsx (see the header)");
  process.exit(2);
}
const ROUNDS = Number(values.rounds);
const K = Number(values.k);
const here = resolve(fileURLToPath(new URL("..", import.meta.url)));

type Lib = SimTree;

/** The simulator of the tree at `root`. */
const load = (root: string): Promise<Lib> => loadSimTree(root, root);

/** A tensor argument: its values or, without `data`, zeros. */
interface Arg {
  shape: number[];
  dtype: string;
  data?: Float32Array;
}

const n = 1024;
const pipeCfg = { elements: 1 << 20, tileBytes: 8192, stages: 3, grid: 32 };
const g = { m: 128, n: 128, k: 64 };
const cases: { name: string; fn: (l: Lib) => unknown; args: Arg[] }[] = [
  {
    name: "seed",
    fn: (l) => l.seedKernel,
    args: [
      {
        shape: [128, 32],
        dtype: "float16",
        data: Float32Array.from({ length: 4096 }, (_, i) => i % 97),
      },
      { shape: [128, 32], dtype: "float16" },
    ],
  },
  {
    name: "rowcopy",
    fn: (l) => l.rowCopyKernel(n),
    args: [
      {
        shape: [n, n],
        dtype: "float32",
        data: Float32Array.from({ length: n * n }, (_, i) => (i % 4099) * 0.5),
      },
      { shape: [n, n], dtype: "float32" },
    ],
  },
  {
    name: "bulk",
    fn: (l) => l.makeBulkPipeline(pipeCfg),
    args: [
      {
        shape: [pipeCfg.elements / 2048, 2048],
        dtype: "float32",
        data: Float32Array.from({ length: pipeCfg.elements }, (_, i) => (i % 65521) * 0.25 - 1000),
      },
      { shape: [pipeCfg.elements / 2048, 2048], dtype: "float32" },
    ],
  },
  {
    name: "gemm",
    fn: (l) => l.makeGemm(g.m, g.n, g.k),
    args: [
      {
        shape: [g.m, g.k],
        dtype: "float16",
        data: Float32Array.from({ length: g.m * g.k }, (_, i) => ((i * 7) % 13) / 8 - 0.75),
      },
      {
        shape: [g.k, g.n],
        dtype: "float16",
        data: Float32Array.from({ length: g.k * g.n }, (_, i) => ((i * 5) % 11) / 8 - 0.625),
      },
      { shape: [g.m, g.n], dtype: "float32" },
    ],
  },
];

const libs = [await load(resolve(values.baseline)), await load(here)] as const;
const opts = values.hazards ? { hazards: values.hazards } : {};
const median = (a: readonly number[]): number => [...a].sort((x, y) => x - y)[a.length >> 1]!;
const f = (x: number): string => x.toFixed(2);
console.log(
  `| case | rounds × launches | old min CPU ms | new min CPU ms | ratio (min) | old median CPU ms | new median CPU ms | ratio (median) |`,
);
console.log(`| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |`);
for (const c of cases.filter((x) => values.only === undefined || x.name === values.only)) {
  const vfs = libs.map((l) => l.verify(c.fn(l)));
  const fresh = (l: Lib): unknown[] =>
    c.args.map((x) =>
      x.data
        ? l.simTensor(x.data, { shape: x.shape, dtype: x.dtype })
        : l.simZeros(x.shape, x.dtype),
    );
  for (let i = 0; i < 3; i++) libs.forEach((l, k) => l.runSim(vfs[k], fresh(l), opts));
  const cpu: [number[], number[]] = [[], []];
  for (let r = 0; r < ROUNDS; r++) {
    for (const k of r % 2 === 0 ? [0, 1] : [1, 0]) {
      const l = libs[k]!;
      const batch = Array.from({ length: K }, () => fresh(l));
      gc();
      const c0 = process.cpuUsage();
      for (const a of batch) l.runSim(vfs[k], a, opts);
      const d = process.cpuUsage(c0);
      cpu[k as 0 | 1].push((d.user + d.system) / 1000 / K);
    }
  }
  const [mo, mn] = [Math.min(...cpu[0]), Math.min(...cpu[1])];
  const [dO, dN] = [median(cpu[0]), median(cpu[1])];
  console.log(
    `| ${c.name}${values.hazards ? ` (${values.hazards})` : ""} | ${ROUNDS} × ${K} | ${f(mo)} | ${f(mn)} | ${f(mo / mn)} | ${f(dO)} | ${f(dN)} | ${f(dO / dN)} |`,
  );
}
