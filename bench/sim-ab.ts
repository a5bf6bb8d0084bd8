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
import { loadSimTree, SIM_CASES, simArgs, type SimTree } from "./sim-tree.js";

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

const libs = [await load(resolve(values.baseline)), await load(here)] as const;
const opts = values.hazards ? { hazards: values.hazards } : {};
const median = (a: readonly number[]): number => [...a].sort((x, y) => x - y)[a.length >> 1]!;
const f = (x: number): string => x.toFixed(2);
console.log(
  `| case | rounds × launches | old min CPU ms | new min CPU ms | ratio (min) | old median CPU ms | new median CPU ms | ratio (median) |`,
);
console.log(`| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |`);
for (const c of SIM_CASES.filter((x) => values.only === undefined || x.key === values.only)) {
  const vfs = libs.map((l) => l.verify(c.fn(l)));
  const fresh = (l: Lib): unknown[] => simArgs(l, c);
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
    `| ${c.key}${values.hazards ? ` (${values.hazards})` : ""} | ${ROUNDS} × ${K} | ${f(mo)} | ${f(mn)} | ${f(mo / mn)} | ${f(dO)} | ${f(dN)} | ${f(dO / dN)} |`,
  );
}
