// Issue 12's acceptance, as a user runs it: `tirx build examples/copy_async.ts --emit script >
// s.ts && tirx build s.ts --emit ptx` gives the PTX instructions of the original (comments
// aside, which name source lines). Runs the built CLI (`npm test` builds first).
import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, expect, test } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const bin = fileURLToPath(new URL("../packages/tirx-ts/bin/tirx.js", import.meta.url));
// In the repository root, as in the issue, so that the printed `import ... from "tirx-ts"` resolves.
const printed = `${root}.script-accept.ts`;
afterAll(() => rmSync(printed, { force: true }));

function tirx(...args: string[]): string {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: "utf8" });
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  return r.stdout;
}

const instructions = (ptx: string): string[] =>
  ptx
    .split("\n")
    .map((l) => l.replace(/\s*\/\/.*$/, ""))
    .filter((l) => l.trim() !== "");

test("--emit script prints a module whose PTX is the original's", () => {
  const script = tirx("build", "examples/copy_async.ts", "--emit", "script");
  expect(script).toContain("T.prim_func(function copy_async(");
  writeFileSync(printed, script);
  const again = instructions(tirx("build", printed, "--emit", "ptx"));
  const original = instructions(tirx("build", "examples/copy_async.ts", "--emit", "ptx"));
  expect(again).toEqual(original);
  expect(original.filter((l) => /cp\.async\.cg\.shared\.global/.test(l))).toHaveLength(4);
});
