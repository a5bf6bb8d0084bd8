// The `tirx` command against files that are not what it needs: every failure is a coded
// diagnostic with the CLI's exit code (2 for the command line and its paths, 1 for a file that
// does not load), never a Node stack trace, and never a silent exit 0.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, test } from "vitest";
import { assembleLater } from "./util/ptxas-deferred.js";
import { CLI_FILES, printedDir, runCli, writeCliFiles, type CliRun } from "./util/cli-files.js";

const cacheDir = mkdtempSync(join(tmpdir(), "tirx-cli-files-cache-"));
const savedCache = process.env["TIRX_CACHE_DIR"];
process.env["TIRX_CACHE_DIR"] = cacheDir;
const dir = printedDir("cli-files");
writeCliFiles(dir);
afterAll(() => {
  if (savedCache === undefined) delete process.env["TIRX_CACHE_DIR"];
  else process.env["TIRX_CACHE_DIR"] = savedCache;
  rmSync(cacheDir, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
});
const bin = fileURLToPath(new URL("../packages/tirx-ts/bin/tirx.js", import.meta.url));

const tirx = (...args: string[]): Promise<CliRun> => runCli(args, dir);

/** A failure as the CLI must print it: one coded diagnostic, no stack frames. */
function expectDiagnostic(r: CliRun, code: string, exit: number): void {
  expect(r.code, r.err).toBe(exit);
  expect(r.err).toMatch(new RegExp(`error ${code} \\[cli/[a-z-]+\\]: `));
  expect(r.err).not.toMatch(/^\s+at /m);
}

describe("the kernel file", () => {
  test("missing, a folder, a dangling link, not TypeScript or JavaScript, under a file: TX8002, exit 2", async () => {
    const cases: [string, RegExp][] = [
      [CLI_FILES.missing, /missing\.ts: no such file$/m],
      [CLI_FILES.folder, /folder\.ts: is a folder, not a kernel file$/m],
      [CLI_FILES.dangling, /dangling\.ts: a symbolic link to a file that does not exist$/m],
      [CLI_FILES.text, /notes\.txt: a kernel file is TypeScript or JavaScript \(.*\), not \.txt$/m],
      [CLI_FILES.json, /data\.json: a kernel file is TypeScript or JavaScript .*, not \.json$/m],
      [CLI_FILES.underFile, /one\.ts\/inside\.ts: cannot be read: a part of the path is a file/m],
      ["/dev/null", /\/dev\/null: is not a regular file/m],
    ];
    for (const [file, why] of cases) {
      for (const cmd of ["build", "trace", "layout"]) {
        const r = await tirx(cmd, file);
        expectDiagnostic(r, "TX8002", 2);
        expect(r.err).toMatch(why);
      }
    }
  });

  test("a syntax error or a throwing top level: TX8004 at its line with a code frame, exit 1", async () => {
    const syntax = await tirx("build", CLI_FILES.syntax);
    expectDiagnostic(syntax, "TX8004", 1);
    expect(syntax.err).toContain(`syntax.ts:1:18: error TX8004 [cli/load]: cannot load the file`);
    expect(syntax.err).toMatch(/^> 1 \| export const x = ;$/m);
    const throws = await tirx("build", CLI_FILES.throws);
    expectDiagnostic(throws, "TX8004", 1);
    expect(throws.err).toContain(
      "throws.ts:1:7: error TX8004 [cli/load]: cannot load the file: this kernel file fails on purpose",
    );
    const value = await tirx("build", CLI_FILES.throwsValue);
    expectDiagnostic(value, "TX8004", 1);
    expect(value.err).toContain("cannot load the file: 42");
    // A missing package: at the file's import of it, naming the file, not the bundle's
    // temporary copy (it named /tmp/tirx-load-…/missing_package.mjs).
    const pkg = await tirx("build", CLI_FILES.missingPackage);
    expectDiagnostic(pkg, "TX8004", 1);
    expect(pkg.err).toContain("missing_package.ts:2:19: error TX8004 [cli/load]");
    expect(pkg.err).toContain("Cannot find package 'tirx-tss-not-installed' imported from");
    expect(pkg.err).toMatch(/imported from \S*missing_package\.ts/);
    expect(pkg.err).not.toContain("tirx-load-");
    // A T.* misuse while loading is that call's own diagnostic.
    const misuse = await tirx("build", CLI_FILES.tirxError);
    expect(misuse.code).toBe(1);
    expect(misuse.err).toMatch(/tirx_error\.ts:2:\d+: error TX1\d{3} /);
  });

  test("no kernels: TX8006, exit 1; a --kernel it lacks or several kernels for trace: TX8007, exit 2", async () => {
    for (const file of [CLI_FILES.noKernels, CLI_FILES.empty]) {
      expectDiagnostic(await tirx("build", file), "TX8006", 1);
    }
    expectDiagnostic(await tirx("build", CLI_FILES.one, "--kernel", "nope"), "TX8007", 2);
    const several = await tirx("trace", CLI_FILES.two);
    expectDiagnostic(several, "TX8007", 2);
    expect(several.err).toContain("exports 2 kernels; name one with --kernel (first, second)");
  });
});

describe("a top-level await", () => {
  test("that never settles is TX8005, exit 1, directly or in an imported file", async () => {
    for (const file of [CLI_FILES.awaitsForever, CLI_FILES.importsAwaitsForever]) {
      const r = await tirx("build", file);
      expectDiagnostic(r, "TX8005", 1);
      expect(r.err).toContain(`${file}: its top-level await never settles`);
      expect(r.out).toBe("");
    }
  });

  test("that waits for a timer loads and builds", async () => {
    const r = await tirx("build", CLI_FILES.awaitsTimer);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain(".entry after_timer(");
    assembleLater(r.out, "sm_80", "after_timer");
  });

  test("the installed command exits 1 with TX8005, where Node alone would exit 0 in silence", () => {
    const r = spawnSync(process.execPath, [bin, "build", CLI_FILES.awaitsForever], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, TIRX_CACHE_DIR: cacheDir },
    });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toContain("error TX8005 [cli/unsettled-await]");
    expect(r.stdout).toBe("");
  });
});

describe("output paths", () => {
  test("trace --out a folder, in a missing folder or under a file: TX8003, exit 2, nothing run", async () => {
    const cases: [string, RegExp][] = [
      [".", /--out \.: is a folder; trace writes one file \(for example --out trace\.json\)/],
      ["no/such/folder/t.json", /its folder .*no\/such\/folder cannot be used: no such file/],
      [`${CLI_FILES.one}/t.json`, /one\.ts is not a folder/],
      [CLI_FILES.one, /--out one\.ts: is the kernel file; the trace would overwrite it/],
    ];
    for (const [out, why] of cases) {
      const r = await tirx("trace", CLI_FILES.one, "--out", out);
      expectDiagnostic(r, "TX8003", 2);
      expect(r.err).toMatch(why);
    }
  });

  test("trace --out a file that cannot be written: TX8003, exit 2", async () => {
    // /proc/self/stat refuses writes even to root.
    const r = await tirx("trace", CLI_FILES.one, "--out", "/proc/self/stat");
    expectDiagnostic(r, "TX8003", 2);
    expect(r.err).toMatch(/--out \/proc\/self\/stat: cannot be written/);
  });

  test("layout --out a file, or under a file: TX8003, exit 2", async () => {
    const file = await tirx("layout", CLI_FILES.one, "--out", CLI_FILES.one);
    expectDiagnostic(file, "TX8003", 2);
    expect(file.err).toContain("--out one.ts: is a file; layout writes a folder of SVG files");
    const under = await tirx("layout", CLI_FILES.one, "--out", `${CLI_FILES.one}/pictures`);
    expectDiagnostic(under, "TX8003", 2);
    expect(under.err).toMatch(/one\.ts is a file$/m);
  });

  test("trace --out writes the trace and says so in one line (as layout names its files); stderr stays empty", async () => {
    const out = join(dir, "written.json");
    const r = await tirx("trace", CLI_FILES.one, "--out", out);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(existsSync(out)).toBe(true);
    const trace = JSON.parse(readFileSync(out, "utf8"));
    expect(trace.otherData.kernel).toBe("one");
    expect(r.out).toBe(
      `${out}: the trace of "one", ${trace.traceEvents.length} events (open it in chrome://tracing or Perfetto)\n`,
    );
  });
});

describe("the command line", () => {
  test("options of another command, given twice or without a value: TX8001, exit 2, with the synopsis", async () => {
    const cases: [string[], string][] = [
      [["build", CLI_FILES.one, "--out", "x.json"], "build takes no --out (trace and layout do)"],
      [["build", CLI_FILES.one, "--args", "n=1"], "build takes no --args (trace and layout do)"],
      [["trace", CLI_FILES.one, "--emit", "ir"], "trace takes no --emit (build does)"],
      [["layout", CLI_FILES.one, "--arch", "sm_90"], "layout takes no --arch (build does)"],
      [["build", CLI_FILES.one, "--kernel", "one", "--kernel", "one"], "--kernel is given more"],
      [["build", CLI_FILES.one, "--kernel="], "--kernel needs a value"],
      [["build", CLI_FILES.one, "--kernel"], "Option '--kernel <value>' argument missing"],
      [["trace", CLI_FILES.one, "--args", "n=1e999"], "--args: n=1e999 is not a finite number"],
      [["trace", CLI_FILES.one, "--args", "n=1,n=2"], "--args: n is given more than once"],
    ];
    for (const [args, why] of cases) {
      const r = await tirx(...args);
      expectDiagnostic(r, "TX8001", 2);
      expect(r.err).toContain(why);
      expect(r.err).toContain("usage: tirx build");
      // The synopsis, not the whole help under the error's one line.
      expect(r.err).toContain("(tirx --help describes every option)");
      expect(r.err).not.toContain("--emit ptx|ir|script  what to print");
      expect(r.err.split("\n").length).toBeLessThan(12);
    }
  });

  test("--args names the kernel lacks, and extents that are no non-negative integers: TX8001, exit 2", async () => {
    const unknown = await tirx("trace", CLI_FILES.symbolic, "--args", "q=3");
    expectDiagnostic(unknown, "TX8001", 2);
    expect(unknown.err).toContain(
      `--args: "vadd" has no scalar parameter or symbolic dim named q (it has: n)`,
    );
    for (const v of ["-1", "1.5", "1e20"]) {
      const r = await tirx("trace", CLI_FILES.symbolic, "--args", `n=${v}`);
      expectDiagnostic(r, "TX8001", 2);
      expect(r.err).toContain(
        `--args: n is an extent of "A", a non-negative integer, not ${Number(v)}`,
      );
    }
    // An integer extent, but tensors the simulator cannot hold: the kernel's own TX5007.
    const huge = await tirx("trace", CLI_FILES.symbolic, "--args", "n=1000000000000");
    expect(huge.code).toBe(1);
    expect(huge.err).toMatch(/error TX5007 \[runtime\/tensor-data\]/);
    expect(huge.err).not.toMatch(/^\s+at /m);
    const ok = await tirx("trace", CLI_FILES.symbolic, "--args", "n=40");
    expect(ok.err).toBe("");
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out).otherData.arguments).toContain("n=40");
  });

  test("a reader that stops reading ends the command quietly", () => {
    const r = spawnSync(
      "bash",
      ["-c", `"${process.execPath}" "${bin}" build ${CLI_FILES.two} | head -c 1`],
      { cwd: dir, encoding: "utf8", env: { ...process.env, TIRX_CACHE_DIR: cacheDir } },
    );
    expect(r.status).toBe(0);
    expect(r.stderr).toBe("");
  });
});
