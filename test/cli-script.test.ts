// Issue 12's acceptance, as a user runs it: `tirx build examples/copy_async.ts --emit script >
// s.ts && tirx build s.ts --emit ptx` gives the PTX instructions of the original (comments
// aside, which name source lines). The first command runs the built CLI as a process (`npm test`
// builds first); the two builds of PTX run the CLI's main in this process with the same argv and
// cwd (the repository root), which saves a process start-up each.
import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, expect, test } from "vitest";
import { main } from "../packages/tirx-ts/src/cli.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const bin = fileURLToPath(new URL("../packages/tirx-ts/bin/tirx.js", import.meta.url));
// In the repository root, as in the issue, so that the printed `import ... from "tirx-ts"` resolves.
const printed = `${root}.script-accept.ts`;
const bad = `${root}.script-bad.ts`;
afterAll(() => {
  rmSync(printed, { force: true });
  rmSync(bad, { force: true });
});

function tirx(...args: string[]): string {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: "utf8" });
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  return r.stdout;
}

/** `tirx ...args` through the CLI's main in this process: its stdout; stderr empty, exit 0. */
async function tirxHere(...args: string[]): Promise<string> {
  expect(process.cwd()).toBe(root.replace(/\/$/, ""));
  let out = "";
  let err = "";
  const code = await main(args, {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    color: false,
  });
  expect(err).toBe("");
  expect(code).toBe(0);
  return out;
}

const instructions = (ptx: string): string[] =>
  ptx
    .split("\n")
    .map((l) => l.replace(/\s*\/\/.*$/, ""))
    .filter((l) => l.trim() !== "");

test("--emit script prints a module whose PTX is the original's", async () => {
  const script = tirx("build", "examples/copy_async.ts", "--emit", "script");
  expect(script).toContain("T.prim_func(function copy_async(");
  writeFileSync(printed, script);
  const again = instructions(await tirxHere("build", printed, "--emit", "ptx"));
  const original = instructions(await tirxHere("build", "examples/copy_async.ts", "--emit", "ptx"));
  expect(again).toEqual(original);
  expect(original.filter((l) => /cp\.async\.cg\.shared\.global/.test(l))).toHaveLength(4);
});

test("a script-mode error is reported at the operator, with a code frame and a hint", () => {
  writeFileSync(
    bad,
    [
      'import { script as T, type Tensor } from "tirx-ts";',
      "",
      'export const bad = T.prim_func(function bad(A: Tensor<[128], "float32">) {',
      "  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });",
      '  const i = T.cuda.thread_idx("x");',
      "  A[i] = A[i] ** 2;",
      "});",
      "",
    ].join("\n"),
  );
  const r = spawnSync(process.execPath, [bin, "build", bad], { cwd: root, encoding: "utf8" });
  expect(r.status).toBe(1);
  expect(r.stderr).toMatchInlineSnapshot(`
    ".script-bad.ts:6:15: error TX1020 [script/unsupported-syntax]: script mode does not support the operator **
      5 |   const i = T.cuda.thread_idx("x");
    > 6 |   A[i] = A[i] ** 2;
        |               ^^
      7 | });
      note: multiply, or call a T.* math function
    "
  `);
});
