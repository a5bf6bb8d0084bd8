// How long the front doors take to refuse IR deeper than MAX_EXPR_DEPTH (TX2013): the builder on
// a chain of n adds (it stops at the add that crosses the limit), and verify, compileToPtx,
// printFunc and runSim on a chain of n levels built without the builder (each measures the depth
// in one linear walk first). Wall and process CPU time (CPU time is less sensitive to other work
// on a shared machine), the median of --runs runs. test/passes.test.ts checks the same refusals
// by counting reads of the chain's nodes (10x the levels: at most 12x the reads).
// Run: tsx -C source bench/deep-ir.ts [--runs 5]
import { parseArgs } from "node:util";
import { intImm, type Expr, type Stmt } from "@tirx-ts/core";
import { T, compileToPtx, printFunc, verify } from "tirx-ts";
import { runSim } from "@tirx-ts/runtime-sim";

const { values } = parseArgs({ options: { runs: { type: "string", default: "5" } } });
const RUNS = Number(values.runs);

const chain = (n: number) =>
  T.function("chain", { A: T.Tensor([4], "int32") }, ({ A }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
    let e = A.get([0]);
    for (let i = 0; i < n; i++) e = e.add(1);
    A.set([0], e);
  });

const deep = (n: number) => {
  const fn = chain(1);
  const entry = (fn.body.kind === "Seq" ? fn.body.stmts[0] : fn.body) as Extract<
    Stmt,
    { kind: "DeviceEntry" }
  >;
  const store = entry.body.kind === "Seq" ? entry.body.stmts.at(-1)! : entry.body;
  let e = (store as { value: Expr }).value;
  for (let i = 0; i < n; i++) e = { kind: "Binary", op: "add", a: e, b: intImm(1), dtype: e.dtype };
  return { ...fn, body: { ...entry, body: { ...store, value: e } as Stmt } };
};

/** Median wall and CPU milliseconds of `f`, which must throw TX2013 (exit code 1 otherwise). */
function time(f: () => unknown): { wall: number; cpu: number } {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    let refused = false;
    try {
      f();
    } catch (e) {
      if ((e as { code?: string }).code !== "TX2013") throw e;
      refused = true;
    }
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
    if (!refused) {
      console.log("a front door accepted IR deeper than MAX_EXPR_DEPTH");
      process.exitCode = 1;
    }
  }
  const mid = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;
  return { wall: mid(wall), cpu: mid(cpu) };
}

console.log(`| door | levels | wall median of ${RUNS} (ms) | CPU median (ms) |`);
console.log(`|---|---|---|---|`);
for (const n of [20_000, 200_000]) {
  const fn = deep(n);
  const rows: [string, () => unknown][] = [
    ["builder (n adds)", () => chain(n)],
    ["verify", () => verify(fn)],
    ["compileToPtx", () => compileToPtx(fn)],
    ["printFunc", () => printFunc(fn)],
    ["runSim(verify(...))", () => runSim(verify(fn), [])],
  ];
  for (const [name, f] of rows) {
    const t = time(f);
    console.log(`| ${name} | ${n} | ${t.wall.toFixed(1)} | ${t.cpu.toFixed(1)} |`);
  }
}
