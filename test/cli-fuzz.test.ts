// Fuzzing the `tirx` command line (in-process, fixed seed): random argument vectors of commands,
// kernel files and files that are none (folders, missing paths, text, files that throw, do not
// parse or await forever), and options with good, bad, missing and repeated values. Every
// outcome is a success with output, or a coded diagnostic with exit 1 or 2 (by its code): never
// a Node stack trace, a TypeError/RangeError/plain Error, an internal error, a hang or a silent
// exit 0.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, expect, test } from "vitest";
import { assembleLater } from "./util/ptxas-deferred.js";
import { CLI_FILES, printedDir, runCli, writeCliFiles } from "./util/cli-files.js";

const cacheDir = mkdtempSync(join(tmpdir(), "tirx-cli-fuzz-cache-"));
const savedCache = process.env["TIRX_CACHE_DIR"];
process.env["TIRX_CACHE_DIR"] = cacheDir;
const dir = printedDir("cli-fuzz");
writeCliFiles(dir);
afterAll(() => {
  if (savedCache === undefined) delete process.env["TIRX_CACHE_DIR"];
  else process.env["TIRX_CACHE_DIR"] = savedCache;
  rmSync(cacheDir, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
});

/** Diagnostics about the caller's command line and paths, which exit 2. */
const USAGE_CODES = new Set(["TX8001", "TX8002", "TX8003", "TX8007"]);

const command = fc.constantFrom("build", "trace", "layout", "biuld", "");
const file = fc.constantFrom(...Object.values(CLI_FILES), "/dev/null", "-");
const option = fc.oneof(
  fc.tuple(
    fc.constant("--kernel"),
    fc.constantFrom("one", "first", "second", "vadd", "racy", "never", "nope", ""),
  ),
  fc.tuple(fc.constant("--emit"), fc.constantFrom("ptx", "ir", "script", "sass")),
  fc.tuple(fc.constant("--after"), fc.constantFrom("verify", "lower-tile", "storage", "unrol")),
  fc.tuple(fc.constant("--arch"), fc.constantFrom("sm_80", "sm_90", "sm_90a", "sm_70")),
  fc.tuple(
    fc.constant("--out"),
    fc.constantFrom(
      ".",
      "out.json",
      "pictures",
      "no/such/folder/x.json",
      CLI_FILES.one,
      `${CLI_FILES.one}/x.json`,
      "/proc/self/stat",
    ),
  ),
  fc.tuple(
    fc.constant("--args"),
    fc.constantFrom("n=40", "n=-1", "n=1.5", "q=3", "n=1e999", "garbage", "n=1,n=2", ""),
  ),
  fc.constantFrom(["--kernel"], ["--bogus"], ["-h"], ["--version"], ["--"], ["extra.ts"]),
);
/** Any argument vector: a command and a file (mostly first), then options of any command. */
const anyArgv = fc
  .tuple(
    fc.option(command, { freq: 6 }),
    fc.option(file, { freq: 6 }),
    fc.array(option, { maxLength: 4 }),
  )
  .map(([cmd, f, opts]) => [
    ...(cmd === null ? [] : [cmd]),
    ...(f === null ? [] : [f]),
    ...opts.flat(),
  ]);

/** A kernel file, the good ones more often. */
const kernelFile = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(CLI_FILES.one, CLI_FILES.two, CLI_FILES.symbolic) },
  { weight: 2, arbitrary: fc.constantFrom(CLI_FILES.hazard, CLI_FILES.awaitsTimer) },
  { weight: 1, arbitrary: file },
);
/** The kernels of each kernel file. */
const KERNELS: Readonly<Record<string, readonly string[]>> = {
  [CLI_FILES.one]: ["one"],
  [CLI_FILES.two]: ["first", "second"],
  [CLI_FILES.symbolic]: ["vadd"],
  [CLI_FILES.hazard]: ["racy"],
  [CLI_FILES.awaitsTimer]: ["after_timer"],
};
/** A kernel file and, mostly, the name of one of its kernels (else another name, or none). */
const fileAndKernel = kernelFile.chain((f) =>
  fc.tuple(
    fc.constant(f),
    fc.option(
      fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(...(KERNELS[f] ?? ["one"])) },
        { weight: 1, arbitrary: fc.constantFrom("one", "vadd", "nope") },
      ),
      { freq: 4 },
    ),
  ),
);
/** An argument vector made of one command's own options, each at most once. */
const commandArgv = fc.oneof(
  fc
    .tuple(
      fileAndKernel,
      fc.option(fc.constantFrom("ptx", "ir", "script")),
      fc.option(fc.constantFrom("verify", "lower-tile", "storage")),
      fc.option(fc.constantFrom("sm_80", "sm_90", "sm_90a")),
    )
    .map(([[f, k], emit, after, arch]) => [
      "build",
      f,
      ...(k === null ? [] : ["--kernel", k]),
      ...(emit === null ? [] : ["--emit", emit]),
      ...(after === null || emit === "ptx" ? [] : ["--after", after]),
      ...(arch === null ? [] : ["--arch", arch]),
    ]),
  fc
    .tuple(
      fc.constantFrom("trace", "layout"),
      fileAndKernel,
      fc.option(fc.constantFrom("out.json", "pictures", ".", "no/such/folder/x.json")),
      fc.option(fc.constantFrom("n=40", "n=3", "n=0", "q=3", "n=-1")),
    )
    .map(([cmd, [f, k], out, args]) => [
      cmd,
      f,
      ...(k === null ? [] : ["--kernel", k]),
      ...(out === null ? [] : ["--out", out]),
      ...(args === null ? [] : ["--args", args]),
    ]),
);
const argv = fc.oneof({ weight: 2, arbitrary: commandArgv }, { weight: 1, arbitrary: anyArgv });

/** The PTX modules of a build's output (one per kernel), each with its target. */
function modules(out: string): { text: string; arch: string }[] {
  return out
    .split(/^(?=\/\/\n\/\/ Generated by)/m)
    .filter((m) => m.includes(".version"))
    .map((text) => ({ text, arch: /^\.target (sm_\w+)/m.exec(text)?.[1] ?? "sm_80" }));
}

test("every argument vector gives output or a coded diagnostic with the right exit code", async () => {
  const kinds = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(argv, async (args) => {
      const out = join(dir, "out.json");
      rmSync(out, { force: true });
      const r = await runCli(args, dir);
      const where = `tirx ${args.join(" ")}\n${r.err}`;
      expect(r.err, where).not.toMatch(/^\s+at /m);
      expect(r.err, where).not.toMatch(/\b(TypeError|RangeError|ReferenceError|InternalError)\b/);
      expect(r.err, where).not.toMatch(/^tirx: internal error/m);
      if (r.code === 0) {
        // trace --out writes its file and prints one line naming it; anything else prints.
        const at = args.indexOf("--out");
        if (args[0] === "trace" && at >= 0) {
          expect(statSync(join(dir, args[at + 1]!)).size, where).toBeGreaterThan(0);
        }
        expect(r.out, where).not.toBe("");
        for (const m of modules(r.out)) assembleLater(m.text, m.arch, "cli-fuzz");
        kinds.set("ok", (kinds.get("ok") ?? 0) + 1);
        return;
      }
      const codes = [...r.err.matchAll(/error (TX\d{4}) \[[\w.-]+\/[\w.-]+\]: /g)].map(
        (m) => m[1]!,
      );
      expect(codes.length, where).toBeGreaterThan(0);
      const first = codes[0]!;
      expect(r.code, where).toBe(USAGE_CODES.has(first) ? 2 : 1);
      kinds.set(first, (kinds.get(first) ?? 0) + 1);
    }),
    { seed: 42, numRuns: 80, timeout: 30_000 },
  );
  // The seed reaches successes, usage errors, file errors and load errors alike.
  for (const k of ["ok", "TX8001", "TX8002", "TX8004"])
    expect(kinds.get(k) ?? 0).toBeGreaterThan(0);
  expect(existsSync(join(dir, CLI_FILES.one))).toBe(true);
  expect(readFileSync(join(dir, CLI_FILES.one), "utf8")).toContain("T.function");
});
