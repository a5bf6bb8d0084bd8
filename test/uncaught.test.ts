// An uncaught TirxError in a user's script prints as a diagnostic (importing `tirx-ts` installs the
// handler); other errors keep Node's own report. Runs the built package in a child process.
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, test } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
// Inside the repository (so that `tirx-ts` resolves), in a gitignored folder.
const dir = join(root, "test", ".printed", "uncaught");
mkdirSync(dir, { recursive: true });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KERNEL = `import { T, compile } from "tirx-ts";
const k = T.function("k", { A: T.Tensor([128, 32], "float16") }, ({ A }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
  const s = T.alloc_shared([128, 32], "float16");
  const v = { w: 4, t: 32, v: 4 };
  const d = s.rearrange("(w t) (r v) -> w t r v", v);
  T.cuda.tile.apply(T.ptx["cp.async.cg.shared.global"], d, A.rearrange("(w t) (r v) -> w t r v", v), { chunk_bytes: 8, scope: "cta" });
});
`;

function run(name: string, text: string) {
  const file = join(dir, name);
  writeFileSync(file, text);
  const r = spawnSync(process.execPath, [file], { cwd: root, encoding: "utf8" });
  return { code: r.status, err: r.stderr };
}

test("an uncaught TirxError prints file:line:col, the code and a code frame, and exits 1", () => {
  for (const [name, tail] of [
    ["thrown.mjs", "compile(k);\n"],
    ["rejected.mjs", "await Promise.resolve().then(() => compile(k));\n"],
  ] as const) {
    const { code, err } = run(name, KERNEL + tail);
    expect(code, err).toBe(1);
    expect(err).toContain(`test/.printed/uncaught/${name}:7:15: error TX3007 [cp-async/cg-16]`);
    expect(err).toMatch(/^> +7 \| +T\.cuda\.tile\.apply/m);
    expect(err).not.toContain("    at ");
  }
});

test("other errors, and a program with its own handler, keep Node's behavior", () => {
  const other = run("other.mjs", `import "tirx-ts";\nthrow new RangeError("mine");\n`);
  expect(other.code).toBe(1);
  expect(other.err).toContain("RangeError: mine");
  expect(other.err).toContain("    at ");
  const own = run(
    "own.mjs",
    KERNEL +
      `process.on("uncaughtException", (e) => { console.error("own:", e.code); process.exit(3); });\ncompile(k);\n`,
  );
  expect(own.code).toBe(3);
  expect(own.err).toContain("own: TX3007");
});

test("an uncaught error of a kernel with several errors prints all of them, sorted, with a count", () => {
  // Line 7 (the tile.apply) breaks the cp.async contract; line 8 stores past B's 64 elements.
  const kernel = KERNEL.replace(
    '{ A: T.Tensor([128, 32], "float16") }, ({ A }) => {',
    '{ A: T.Tensor([128, 32], "float16"), B: T.Tensor([64], "float32") }, ({ A, B }) => {',
  ).replace(/\n\}\);\n$/, '\n  B.set([T.cuda.thread_idx("x")], T.float32(0));\n});\n');
  expect(kernel.split("\n")[7]).toContain("B.set(");
  const { code, err } = run("several.mjs", kernel + "compile(k);\n");
  expect(code, err).toBe(1);
  const heads = err.split("\n").filter((l) => l.includes(": error TX"));
  expect(heads.map((h) => /several\.mjs:(\d+):\d+: error (TX\d{4})/.exec(h)?.slice(1))).toEqual([
    ["7", "TX3007"],
    ["8", "TX2006"],
  ]);
  expect(err).toMatch(/^> +8 \| +B\.set/m);
  expect(err).toContain("\n\n2 errors\n");
  expect(err).not.toContain("    at ");
});
