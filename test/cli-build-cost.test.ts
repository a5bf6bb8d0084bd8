// What `tirx build` costs per statement of a builder kernel, counted, not timed: stack captures
// (one per T.* call), span resolutions (V8's position lookups, which walk the position table of
// the author's function from its start: before spans were resolved lazily, every T.* call
// resolved its position and formatted a source-mapped stack, and a 30,000-statement kernel
// built in minutes) and source-map lookups. Long bodies run in arrows of 64 statements, so that
// each lookup walks a short table (see packages/dsl/test/span-chunks.test.ts). Timings are in
// bench/cli-build.ts.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { spanCounters } from "@tirx-ts/dsl";
import { main } from "../packages/tirx-ts/src/cli.js";
import { assembleLater } from "./util/ptxas-deferred.js";
import { printedDir } from "./util/cli-files.js";

// The CLI's bundle cache goes to a folder of this test run, not the user's ~/.cache.
const cacheDir = mkdtempSync(join(tmpdir(), "tirx-cli-cost-cache-"));
const savedCache = process.env["TIRX_CACHE_DIR"];
process.env["TIRX_CACHE_DIR"] = cacheDir;
const dir = printedDir("cli-build-cost");
afterAll(() => {
  if (savedCache === undefined) delete process.env["TIRX_CACHE_DIR"];
  else process.env["TIRX_CACHE_DIR"] = savedCache;
  rmSync(cacheDir, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
});

/** A kernel of `n` straight-line statements, each `A.set([t], T.float32(i))` on its own line. */
function kernelText(n: number): { text: string; firstLine: number } {
  const head = [
    `import { T } from "tirx-ts";`,
    `export const straight = T.function("straight", { A: T.Tensor([32], "float32") }, ({ A }) => {`,
    `  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });`,
    `  const t = T.cuda.thread_idx("x");`,
  ];
  const body = Array.from({ length: n }, (_, i) => `  A.set([t], T.float32(${i}));`);
  return { text: [...head, ...body, `});`, ``].join("\n"), firstLine: head.length + 1 };
}

async function build(n: number) {
  const { text, firstLine } = kernelText(n);
  const file = join(dir, `straight_${n}.ts`);
  writeFileSync(file, text);
  const before = { ...spanCounters };
  let out = "";
  let err = "";
  const code = await main(["build", file], {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    color: false,
  });
  if (code === 0) assembleLater(out, "sm_80", `straight_${n}`);
  return {
    code,
    out,
    err,
    firstLine,
    lines: text.split("\n"),
    captures: spanCounters.captures - before.captures,
    resolutions: spanCounters.resolutions - before.resolutions,
    mappings: spanCounters.mappings - before.mappings,
  };
}

test("tirx build captures a stack once per T.* call and resolves at most one span per statement", async () => {
  const sizes = [40, 80, 400];
  // A first build first: what the process captures once (on first use of a module) is not a
  // statement's cost, and would show as a difference between the first two sizes.
  expect((await build(1)).code).toBe(0);
  const runs = [];
  for (const n of sizes) runs.push(await build(n));
  for (const r of runs) {
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
  }
  const [a, b, c] = runs as [(typeof runs)[0], (typeof runs)[0], (typeof runs)[0]];
  // Exactly linear: the same number of captures for every added statement (A.set and
  // T.float32 each capture once).
  const perStatement = (b.captures - a.captures) / (sizes[1]! - sizes[0]!);
  expect(perStatement).toBe(2);
  expect(c.captures - a.captures).toBe(perStatement * (sizes[2]! - sizes[0]!));
  // A build reads the span of each statement (its PTX comment) and no other: at most one
  // resolution per added statement, and a mapping at most per resolution.
  expect(c.resolutions - a.resolutions).toBeLessThanOrEqual(sizes[2]! - sizes[0]!);
  expect(c.mappings).toBeLessThanOrEqual(c.resolutions);
  // 10x the statements (40 -> 400) costs at most 10x the resolutions plus the fixed part.
  expect(c.resolutions).toBeLessThanOrEqual(10 * a.resolutions);
});

test("the lazily resolved spans still name each statement's line and column", async () => {
  // 1,100 statements: the bundle's long body runs in arrows of 64 (chunkLongBlocks), and the
  // source map takes the lines that adds.
  const n = 1100;
  const r = await build(n);
  expect(r.code, r.err).toBe(0);
  const comments = r.out
    .split("\n")
    .map((l) => /\/\/ Store at straight_1100\.ts:(\d+):(\d+)$/.exec(l.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [Number(m[1]), Number(m[2])]);
  // V8 places a method call at its property name: `set` on each statement's line.
  const expected = Array.from({ length: n }, (_, i) => {
    const line = r.firstLine + i;
    return [line, r.lines[line - 1]!.indexOf("set(") + 1];
  });
  expect(comments).toEqual(expected);
});
