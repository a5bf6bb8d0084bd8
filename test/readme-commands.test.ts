// Every command the READMEs show works as written on a fresh clone, as CI runs it: no GPU
// (TIRX_DEVICE=sim), ptxas on PATH, `npm ci` already run. Each ```sh command runs with bash at
// the repository root and must exit 0; a plain block starting with `$ cmd` must print what it
// shows. Afterwards the tree has no new file that git or prettier would see (a documented
// command must not leave a file that breaks `npm test`), and what the commands wrote is removed.
// The ```ts blocks that are whole programs (they start with an import) are type-checked and run.
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as prettier from "prettier";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { verify, type PrimFunc } from "@tirx-ts/core";
import { cudaAvailable } from "@tirx-ts/runtime-cuda";
import { main } from "../packages/tirx-ts/src/cli.js";
import {
  codeBlocks,
  packagingBlock,
  root,
  runSh,
  shCommands,
  type CodeBlock,
  type ShRun,
} from "./util/readme.js";

/**
 * Commands of the READMEs that this test does not run, with the reason. Matched against each
 * `&&`-separated part of a command (its trailing comment dropped); the rest of the line runs.
 */
const NOT_RUN: Readonly<Record<string, string>> = {
  "npm ci":
    "the suite runs where `npm ci` already ran (CI's first step); here it would delete node_modules under the running tests",
  "npm test": "the suite itself, which cannot run inside itself",
};

/**
 * The packaging block (npm pack, then npm install into your project) runs in
 * test/packaging.test.ts, which takes it from README.md: it installs the tarballs into a fresh
 * project outside the repository (10-20 s), which that test already does.
 */
const PACKAGING = packagingBlock();

const READMES = [
  "README.md",
  ...readdirSync(join(root, "packages"))
    .map((p) => `packages/${p}/README.md`)
    .filter((f) => existsSync(join(root, f))),
];
const blocks: CodeBlock[] = READMES.flatMap(codeBlocks);
const ENV = { TIRX_DEVICE: "sim" };

/**
 * `npx X`, for X a bin of the repository's node_modules/.bin (tirx, tsx), runs that file, as npx
 * does from the repository root, without npm's second of start-up per command (a dozen commands
 * here). The quick start's command runs with the real npx, so npx itself is tried too; any other
 * X goes to the real npx.
 */
const npxShim = (() => {
  const dir = mkdtempSync(join(tmpdir(), "tirx-npx-"));
  const real = runSh("command -v npx", root).stdout.trim();
  writeFileSync(
    join(dir, "npx"),
    [
      "#!/usr/bin/env bash",
      `bin=${JSON.stringify(join(root, "node_modules", ".bin"))}/"$1"`,
      'if [[ -x "$bin" ]]; then shift; exec "$bin" "$@"; fi',
      `exec ${JSON.stringify(real)} "$@"`,
      "",
    ].join("\n"),
    { mode: 0o755 },
  );
  return { dir, env: { ...ENV, PATH: `${dir}:${process.env["PATH"] ?? ""}` } };
})();
afterAll(() => rmSync(npxShim.dir, { recursive: true, force: true }));

/**
 * The command that runs `npx tirx` as a process (through the npx shim and bin/tirx.js, the built
 * CLI): the cheapest one, so the bin's wiring is tried; the quick start's `npx tsx` runs as a
 * process too. Every other `npx tirx ...` part runs in this process through the CLI's `main`
 * with the same argv, at the repository root (the shell's cwd), saving a second of start-up each
 * on a busy machine.
 */
const AS_PROCESS = /^npx tirx layout --builtin /;

/**
 * The words of a shell command part: whitespace-separated, a word either "..." or plain, a
 * trailing ` # comment` dropped, `>` a word of its own. Returns undefined for anything else
 * (single quotes, `$`, pipes, globs, `;`, a quote inside a word), which then runs in bash.
 */
function shellWords(part: string): string[] | undefined {
  const words: string[] = [];
  const text = part.replace(/\s+#[^"]*$/, "").trim();
  for (const m of text.matchAll(/"([^"]*)"(?=\s|$)|(\S+)/g)) {
    const w = m[1] ?? m[2]!;
    if (m[2] !== undefined && /["'$`\\|;&<*?(){}]/.test(w)) return undefined;
    if (m[1] !== undefined && /[$`\\]/.test(w)) return undefined;
    if (m[2] !== undefined && w.includes(">") && w !== ">") return undefined;
    words.push(w);
  }
  return words;
}

/**
 * Run the `&&`-separated `command` as bash would at the repository root, each `npx tirx ARGS
 * [> FILE]` part through the CLI's `main(ARGS)` in this process (TIRX_DEVICE=sim meanwhile),
 * any other part in bash with `env`. Stops at the first part that fails, as `&&` does.
 */
async function runParts(command: string, env: Record<string, string>): Promise<ShRun> {
  expect(process.cwd(), "the CLI resolves paths from the repository root").toBe(
    root.replace(/\/$/, ""),
  );
  let stdout = "";
  let stderr = "";
  for (const part of command.split(/\s+&&\s+/)) {
    const words = shellWords(part);
    if (words === undefined || words[0] !== "npx" || words[1] !== "tirx") {
      const r = runSh(part, root, env);
      stdout += r.stdout;
      stderr += r.stderr;
      if (r.status !== 0) return { status: r.status, stdout, stderr };
      continue;
    }
    const at = words.indexOf(">");
    const argv = words.slice(2, at < 0 ? undefined : at);
    let out = "";
    const saved = process.env["TIRX_DEVICE"];
    process.env["TIRX_DEVICE"] = "sim";
    let status: number;
    try {
      status = await main(argv, {
        out: (t) => void (out += t),
        err: (t) => void (stderr += t),
        color: false,
      });
    } finally {
      if (saved === undefined) delete process.env["TIRX_DEVICE"];
      else process.env["TIRX_DEVICE"] = saved;
    }
    if (at < 0) stdout += out;
    else writeFileSync(join(root, words[at + 1]!), out);
    if (status !== 0) return { status, stdout, stderr };
  }
  return { status: 0, stdout, stderr };
}

/** `command` without the parts NOT_RUN lists; "" when nothing is left. */
function runnable(command: string): string {
  const parts = command.split(/\s+&&\s+/);
  const keep = parts.filter((p) => !(p.replace(/\s+#.*$/s, "").trim() in NOT_RUN));
  return keep.join(" && ");
}

/** Paths git reports as untracked (`??`) or ignored (`!!`), for before/after comparisons. */
function strays(): Set<string> {
  const r = runSh("git status --porcelain --ignored --untracked-files=normal", root);
  expect(r.status, r.stderr).toBe(0);
  return new Set(
    r.stdout
      .split("\n")
      .filter((l) => l.startsWith("?? ") || l.startsWith("!! "))
      .map((l) => l.slice(3)),
  );
}

/**
 * Every file under `path` (itself when it is a file or a link). Other test files running beside
 * this one create and delete their own scratch files (under ignored folders such as
 * test/.printed/) while it walks: a path gone by the time it is read holds no file.
 */
function filesUnder(path: string): string[] {
  const full = join(root, path);
  const st = lstatSync(full, { throwIfNoEntry: false });
  if (!st) return [];
  if (!st.isDirectory()) return [path];
  let names: string[];
  try {
    names = readdirSync(full);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw e;
  }
  return names.flatMap((f) => filesUnder(join(path, f)));
}

const before = strays();
const outExisted = existsSync(join(root, "out"));
// The author's own files in out/ (the README's place for scratch files), kept as they are.
const outBefore = new Set(outExisted ? filesUnder("out") : []);
const outTop = new Set(outExisted ? readdirSync(join(root, "out")) : []);
const results = new Map<string, ShRun>();

afterAll(() => {
  // What the commands wrote goes; a folder the author had before stays, with their files.
  if (!outExisted) rmSync(join(root, "out"), { recursive: true, force: true });
  else {
    // New entries of out/ go whole (a layout folder with its pictures); new files inside the
    // author's own folders go one by one.
    for (const name of readdirSync(join(root, "out"))) {
      const p = join("out", name);
      if (!outTop.has(name)) rmSync(join(root, p), { recursive: true, force: true });
      else for (const f of filesUnder(p)) if (!outBefore.has(f)) rmSync(join(root, f));
    }
  }
});

describe("the READMEs' sh commands, as written", () => {
  const isPackaging = (b: CodeBlock): boolean =>
    b.file === PACKAGING.file && b.line === PACKAGING.line;
  const sh = blocks.filter((b) => b.lang === "sh" && !isPackaging(b));

  test("the blocks are there: the quick start, the command line, the packaging loop", () => {
    expect(sh.length).toBeGreaterThanOrEqual(2);
    expect(blocks.filter((b) => b.lang === "sh" && isPackaging(b)).length).toBe(1);
  });

  const commands = sh.flatMap((b) =>
    shCommands(b).map((c) => ({ where: `${b.file}:${c.line}`, text: c.text })),
  );
  test("one tirx command runs as a process, the quick start's too; the others have simple words", () => {
    expect(commands.filter((c) => AS_PROCESS.test(runnable(c.text))).length).toBe(1);
    for (const { text } of commands) {
      for (const part of runnable(text).split(/\s+&&\s+/)) {
        if (part.startsWith("npx tirx ")) expect(shellWords(part), part).toBeDefined();
      }
    }
  });
  test.each(commands)("$where: $text", async ({ text }) => {
    const cmd = runnable(text);
    if (cmd === "") return; // only NOT_RUN parts (see its reasons)
    const r =
      cmd.includes("examples/copy_async.ts") && cmd.startsWith("npx tsx")
        ? runSh(cmd, root, ENV)
        : AS_PROCESS.test(cmd)
          ? runSh(cmd, root, npxShim.env)
          : await runParts(cmd, npxShim.env);
    results.set(text, r);
    expect(r.status, `${cmd}\n${r.stderr}`).toBe(0);
  });

  test("the main example ran on the simulated device, assembled and matched", () => {
    const [key] = [...results.keys()].filter((k) => k.includes("npx tsx examples/copy_async.ts"));
    expect(key, "the quick start runs examples/copy_async.ts").toBeDefined();
    const r = results.get(key!)!;
    expect(r.stdout).toContain("ptxas -arch=sm_80: assembled");
    expect(r.stdout).toContain("ptxas -arch=sm_90: assembled");
    expect(r.stdout).toContain("copy_async on the simulated device: 4096 of 4096 elements match");
    expect(r.stderr).toContain("tirx-ts: running on the simulated device");
  });

  test("the commands left no file that git or prettier sees; what they wrote is ignored by both", async () => {
    const after = strays();
    const added = [...after].filter((p) => !before.has(p));
    const untracked = [...runSh("git status --porcelain", root).stdout.split("\n")]
      .filter((l) => l.startsWith("?? "))
      .map((l) => l.slice(3))
      .filter((p) => !before.has(p));
    expect(untracked, "new files git would show").toEqual([]);
    // The documented outputs (out/) are among what appeared (or out/ was there already, the
    // author's), and prettier's check skips everything in it.
    if (!outExisted) expect(added).toContain("out/");
    const written = [...added, ...(outExisted ? ["out/"] : [])].flatMap(filesUnder);
    for (const f of written) {
      const info = await prettier.getFileInfo(join(root, f), {
        ignorePath: [join(root, ".gitignore"), join(root, ".prettierignore")],
      });
      expect(info.ignored, `prettier --check would read ${f}`).toBe(true);
    }
  });
});

test("outputs under the names tirx --help shows (trace.json, layout-<kernel>/) are ignored by git and prettier too", async () => {
  for (const f of ["trace.json", "sub/trace.json", "bulk.trace.json", "layout-gemm_mma/a.svg"]) {
    const info = await prettier.getFileInfo(join(root, f), {
      ignorePath: [join(root, ".gitignore"), join(root, ".prettierignore")],
    });
    expect(info.ignored, `prettier ignores ${f}`).toBe(true);
    expect(runSh(`git check-ignore -q ${f}`, root).status, `git ignores ${f}`).toBe(0);
  }
});

describe("the README's shown command output", () => {
  const shown = blocks.filter((b) => b.lang === "" && b.text.startsWith("$ "));
  test("there is one", () => expect(shown.length).toBeGreaterThan(0));
  test.each(shown.map((b) => ({ where: `${b.file}:${b.line}`, b })))("$where", async ({ b }) => {
    const [first, ...rest] = b.text.split("\n");
    const r = await runParts(first!.slice(2), npxShim.env);
    // An error block: `tirx build` of a kernel with errors exits 1 (README, "Exit codes").
    expect(r.status).toBe(1);
    expect(r.stderr.trimEnd()).toBe(rest.join("\n").trimEnd());
  });
});

test("the README's tile-layer excerpt is examples/tile/softmax.ts's kernel, line for line", () => {
  const excerpt = blocks.find(
    (b) => b.file === "README.md" && b.lang === "ts" && b.text.includes("T.tile.cta.sum("),
  );
  expect(excerpt, "README.md shows a T.tile kernel").toBeDefined();
  const lines = (text: string): string[] =>
    text
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "");
  const example = lines(readFileSync(join(root, "examples", "tile", "softmax.ts"), "utf8"));
  const shown = lines(excerpt!.text);
  const at = example.indexOf(shown[0]!);
  expect(at, `examples/tile/softmax.ts has ${shown[0]}`).toBeGreaterThanOrEqual(0);
  expect(example.slice(at, at + shown.length)).toEqual(shown);
});

const isPrimFunc = (x: unknown): x is PrimFunc =>
  typeof x === "object" && x !== null && (x as { kind?: unknown }).kind === "PrimFunc";

/** The ```ts blocks that are whole programs: their first line of code is an import. */
const programs = blocks.filter(
  (b) => b.lang === "ts" && /^import\b/.test(b.text.replace(/^(\s*\/\/.*\n)*/, "")),
);
const dir = join(root, "test", ".printed", "readme");
const fileOf = (b: CodeBlock): string => join(dir, `${b.file.replace(/[/.]/g, "_")}_${b.line}.ts`);

describe("the READMEs' whole-program ts blocks", () => {
  beforeAll(() => {
    mkdirSync(dir, { recursive: true });
    for (const b of programs) writeFileSync(fileOf(b), `${b.text}\n`);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("they type-check under the repository's strict options", () => {
    expect(programs.map((b) => `${b.file}:${b.line}`)).toEqual([
      expect.stringMatching(/^README\.md:\d+$/),
      expect.stringMatching(/^README\.md:\d+$/),
      // attention(), run by test/packaging.test.ts from the installed tarballs.
      expect.stringMatching(/^README\.md:\d+$/),
      // gemm() on the simulated device.
      expect.stringMatching(/^README\.md:\d+$/),
      expect.stringMatching(/^packages\/dsl\/README\.md:\d+$/),
      expect.stringMatching(/^packages\/runtime-cuda\/README\.md:\d+$/),
    ]);
    const config = ts.readConfigFile(join(root, "tsconfig.base.json"), ts.sys.readFile).config as {
      compilerOptions: object;
    };
    const { options } = ts.convertCompilerOptionsFromJson(config.compilerOptions, root);
    const program = ts.createProgram(programs.map(fileOf), {
      ...options,
      noEmit: true,
      composite: false,
      declaration: false,
      declarationMap: false,
      sourceMap: false,
    });
    const errors = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.formatDiagnostic(d, ts.createCompilerHost({})));
    expect(errors).toEqual([]);
  });

  test("the README's kernel runs as a program and prints its check; tirx build prints only PTX", async () => {
    const b = programs.find((p) => p.file === "README.md" && p.text.includes("run(a, b);"))!;
    const r = runSh(`npx tsx ${JSON.stringify(fileOf(b))}`, root, { TIRX_DEVICE: "sim" });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^copy_async on .+: b equals a$/m);
    // Loaded by `tirx build` for its kernels, the file launches nothing and prints nothing.
    let out = "";
    const code = await main(["build", fileOf(b)], {
      out: (s: string) => void (out += s),
      err: () => undefined,
    });
    expect(code).toBe(0);
    expect(out).not.toContain("copy_async on");
    expect(out).toContain(".entry copy_async");
    expect(out.trimStart().startsWith("//")).toBe(true);
  });

  test("the script-mode kernel and the dsl package's kernel build and verify", async () => {
    const script = programs.find((p) => p.file === "README.md" && p.text.includes("T.prim_func"))!;
    const dsl = programs.find((p) => p.file === "packages/dsl/README.md")!;
    const mod = (await import(fileOf(script))) as Record<string, unknown>;
    const kernels = Object.values(mod).filter(isPrimFunc);
    expect(kernels.length).toBe(1);
    verify(kernels[0]!);
    await import(fileOf(dsl));
  });

  test("the runtime-cuda package's program runs where a GPU is (type-checked above everywhere)", async () => {
    const cuda = programs.find((p) => p.file === "packages/runtime-cuda/README.md")!;
    if (!cudaAvailable().ok) return;
    await import(fileOf(cuda));
  });
});
