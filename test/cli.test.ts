// The `tirx` command. Most cases run `main` in-process (the kernel file itself is loaded the way
// the CLI always loads it: bundled by esbuild and imported natively, with `tirx-ts` from the built
// package); one spawns the real command, as a user runs it (`npm test` builds first).
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, test } from "vitest";
import { main } from "../packages/tirx-ts/src/cli.js";
import { assemblePtx } from "./util/ptxas.js";
import { lineOf } from "./kernels/seed.js";

const root = fileURLToPath(new URL("..", import.meta.url));
// The CLI's bundle cache goes to a folder of this test run, not the user's ~/.cache.
const cacheDir = mkdtempSync(join(tmpdir(), "tirx-cli-test-cache-"));
process.env["TIRX_CACHE_DIR"] = cacheDir;
afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));
const bin = fileURLToPath(new URL("../packages/tirx-ts/bin/tirx.js", import.meta.url));

/** Run the CLI in-process, from the repository root; paths are relative to it. */
async function tirx(...args: string[]) {
  let out = "";
  let err = "";
  const cwd = process.cwd();
  process.chdir(root);
  try {
    const code = await main(args, {
      out: (t) => void (out += t),
      err: (t) => void (err += t),
      color: false,
    });
    return { code, out, err };
  } finally {
    process.chdir(cwd);
  }
}
const count = (text: string, re: RegExp) => text.split("\n").filter((l) => re.test(l)).length;

describe("tirx build", () => {
  test("prints the seed kernel's PTX, which ptxas assembles for sm_80 and sm_90", async () => {
    const { code, out, err } = await tirx("build", "examples/copy_async.ts", "--emit", "ptx");
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(count(out, /^\s*cp\.async\.cg\.shared\.global \[[^\]]+\], \[[^\]]+\], 16;$/)).toBe(4);
    expect(count(out, /^\s*cp\.async\.commit_group;$/)).toBe(1);
    expect(count(out, /^\s*cp\.async\.wait_group 0;$/)).toBe(1);
    expect(count(out, /^\s*bar\.sync 0;$/)).toBe(1);
    assemblePtx(out, "sm_80");
    assemblePtx(out, "sm_90");
  });

  test("--arch sm_90 sets the target; --emit ir prints the IR; --kernel selects", async () => {
    expect((await tirx("build", "examples/copy_async.ts", "--arch", "sm_90")).out).toContain(
      ".target sm_90",
    );
    const ir = await tirx(
      "build",
      "examples/copy_async.ts",
      "--emit",
      "ir",
      "--kernel",
      "copy_async",
    );
    expect(ir.code).toBe(0);
    expect(ir.out).toMatch(/export const copy_async = T\.prim_func\(function copy_async\(/);
  });

  test("without --arch the target is the lowest the kernel needs (sm_90a for wgmma, sm_90 for TMA)", async () => {
    const hopper = await tirx("build", "examples/gemm_hopper.ts");
    expect(hopper.err).toBe("");
    expect(hopper.code).toBe(0);
    expect(hopper.out).toContain(".target sm_90a");
    const tma = await tirx("build", "examples/tma_transpose.ts");
    expect(tma.code).toBe(0);
    expect(tma.out).toContain(".target sm_90\n");
    expect((await tirx("build", "examples/copy_async.ts")).out).toContain(".target sm_80\n");
  });

  test("a contract violation exits 1 with the code, the rule and a code frame of the author's line", async () => {
    const { code, err } = await tirx("build", "test/fixtures/bad_chunk.ts");
    const line = await lineOf(
      fileURLToPath(new URL("./fixtures/bad_chunk.ts", import.meta.url)),
      "// BAD",
    );
    expect(code).toBe(1);
    expect(err).toContain(`test/fixtures/bad_chunk.ts:${line}:`);
    expect(err).toContain("error TX3007 [cp-async/cg-16]");
    expect(err).toMatch(new RegExp(`^> +${line} \\| .*// BAD$`, "m"));
  });

  test("a kernel with three independent errors prints all three, sorted, each with its code frame, and a count; exit 1", async () => {
    const file = fileURLToPath(new URL("./fixtures/three_errors.ts", import.meta.url));
    const lines = [
      await lineOf(file, "// ERROR 1"),
      await lineOf(file, "// ERROR 2"),
      await lineOf(file, "// ERROR 3"),
    ];
    const { code, out, err } = await tirx("build", "test/fixtures/three_errors.ts");
    expect(code).toBe(1);
    expect(out).toBe("");
    const heads = err.split("\n").filter((l) => /: error TX\d{4} /.test(l));
    expect(heads.map((h) => /:(\d+):\d+: error (TX\d{4})/.exec(h)!.slice(1))).toEqual([
      [String(lines[0]), "TX2006"],
      [String(lines[1]), "TX2012"],
      [String(lines[2]), "TX3007"],
    ]);
    for (const [i, line] of lines.entries()) {
      expect(err).toMatch(new RegExp(`^> +${line} \\| .*// ERROR ${i + 1}`, "m"));
    }
    expect(err.endsWith('\n\ntirx: 3 errors in kernel "three_errors"\n')).toBe(true);
  });

  test("the errors of several kernels print together; once one fails nothing more goes to stdout", async () => {
    const dir = join(root, "test", ".printed", "cli-many");
    mkdirSync(dir, { recursive: true });
    const kernel = (
      name: string,
      index: string,
    ) => `export const ${name} = T.function("${name}", { B: T.Tensor([32], "float32") }, ({ B }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
  B.set([${index}], T.float32(1));
});
`;
    const t = 'T.cuda.thread_idx("x")';
    const file = join(dir, "many.ts");
    writeFileSync(
      file,
      'import { T } from "tirx-ts";\n' +
        kernel("a_good", t) +
        kernel("b_bad", `${t}.add(1)`) +
        kernel("c_good", t) +
        kernel("d_bad", `${t}.add(2)`),
    );
    try {
      const { code, out, err } = await tirx("build", file);
      expect(code).toBe(1);
      // Kernels build in the order of the module's exports (by name): the PTX of the kernel before
      // the first failure is printed, as a build that stopped there printed it.
      expect(out).toContain(".entry a_good(");
      expect(out).not.toContain("c_good");
      const rel = relative(root, file);
      const heads = err.split("\n").filter((l) => l.includes(": error TX"));
      expect(heads).toHaveLength(2);
      const [one, two] = [await lineOf(file, ".add(1)"), await lineOf(file, ".add(2)")];
      expect(heads[0]).toMatch(
        new RegExp(`^${rel}:${one}:\\d+: error TX2006 .*elements 1\\.\\.32`),
      );
      expect(heads[1]).toMatch(
        new RegExp(`^${rel}:${two}:\\d+: error TX2006 .*elements 2\\.\\.33`),
      );
      expect(err.endsWith('tirx: 2 errors in kernels "b_bad", "d_bad"\n')).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a file that does not parse exits 1 with its location and a code frame, not a stack trace", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tirx-cli-"));
    const file = join(dir, "broken.ts");
    writeFileSync(file, "// a comment\nexport const x = ;\n");
    const { code, err } = await tirx("build", file);
    rmSync(dir, { recursive: true, force: true });
    expect(code).toBe(1);
    expect(err).toContain(
      `${file}:2:18: error TX8004 [cli/load]: cannot load the file: Unexpected ";"`,
    );
    expect(err).toMatch(/^> +2 \| export const x = ;$/m);
    expect(err).not.toContain("    at ");
  });

  test("usage errors exit 2; kernel errors exit 1", async () => {
    expect((await tirx()).code).toBe(2);
    expect((await tirx("build", "no/such/file.ts")).code).toBe(2);
    expect((await tirx("build", "examples/copy_async.ts", "--emit", "sass")).code).toBe(2);
    expect((await tirx("build", "examples/copy_async.ts", "--bogus")).code).toBe(2);
    // An arch that is not a target at all is a usage error...
    const arch = await tirx("build", "examples/copy_async.ts", "--arch", "sm_70");
    expect(arch.code).toBe(2);
    expect(arch.err).toContain('unknown --arch "sm_70"; accepted: sm_80,');
    // ...one the kernel is too new for is the kernel's error (TX5006 and friends).
    const bulk = await tirx("build", "examples/bulk_copy.ts", "--arch", "sm_80");
    expect(bulk.code).toBe(1);
    expect(bulk.err).toMatch(/error TX\d{4} .*needs sm_90/);
  });

  test("every usage error says why: commands, files", async () => {
    const cases: [string[], string][] = [
      [[], "no command given; expected build, trace or layout\n"],
      [["biuld", "examples/copy_async.ts"], 'unknown command "biuld"; expected build'],
      [["build"], "build: no kernel file given\n"],
      [["build", "a.ts", "b.ts"], "build: one kernel file expected, got 2\n"],
      [["trace", "a.ts", "b.ts", "c.ts"], "trace: one kernel file expected, got 3\n"],
    ];
    for (const [args, reason] of cases) {
      const r = await tirx(...args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(
        r.err.startsWith(`tirx: error TX8001 [cli/usage]: ${reason}`),
        r.err.split("\n")[0],
      ).toBe(true);
      expect(r.err).toContain("usage: tirx build");
    }
  });

  test("--kernel with a name the file lacks is a usage error listing the file's kernels", async () => {
    const r = await tirx("build", "examples/gemm_mma.ts", "--kernel", "nope");
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      'tirx: error TX8007 [cli/kernel-choice]: examples/gemm_mma.ts exports no kernel named "nope"; its kernels: gemm_mma, gemm_mma_odd\n',
    );
    expect((await tirx("trace", "examples/copy_async.ts", "--kernel", "nope")).code).toBe(2);
  });

  test("a too-old --arch names the target the kernel needs, which then builds", async () => {
    const old = await tirx("build", "examples/gemm_hopper.ts", "--arch", "sm_80");
    expect(old.code).toBe(1);
    expect(old.err).toContain("(command line: --arch sm_90a)");
    expect(old.err).not.toMatch(/--arch sm_90\b(?!a)/);
    const again = await tirx("build", "examples/gemm_hopper.ts", "--arch", "sm_90a");
    expect(again.code, again.err).toBe(0);
  });

  test('a kernel file in a package without "type": "module" gets its own file:line:col, code frame, and loads once', async () => {
    // Inside the repository (so that `tirx-ts` resolves), in a gitignored folder.
    const dir = join(root, "test", ".printed", "cli-cjs");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "package.json"), '{ "type": "commonjs" }\n');
    const file = join(dir, "bad_cjs.ts");
    const body = readFileSync(join(root, "test", "fixtures", "bad_chunk.ts"), "utf8");
    writeFileSync(
      file,
      body.replace(
        'import { T } from "tirx-ts";',
        'import { T } from "tirx-ts";\n(globalThis as { __tirxLoads?: number }).__tirxLoads =\n  ((globalThis as { __tirxLoads?: number }).__tirxLoads ?? 0) + 1;',
      ),
    );
    try {
      const line = await lineOf(file, "// BAD");
      const g = globalThis as { __tirxLoads?: number };
      const before = g.__tirxLoads ?? 0;
      const { code, err } = await tirx("build", file);
      expect(g.__tirxLoads).toBe(before + 1);
      expect(code).toBe(1);
      expect(err).toContain(`${relative(root, file)}:${line}:15: error TX3007`);
      expect(err).toMatch(new RegExp(`^> +${line} \\| .*// BAD$`, "m"));
      expect(err).not.toContain("%0A");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a kernel file and the files it imports are bundled again when they change (the bundle cache)", async () => {
    const dir = join(root, "test", ".printed", "cli-cache");
    const cache = mkdtempSync(join(tmpdir(), "tirx-cli-cache-"));
    mkdirSync(dir, { recursive: true });
    process.env["TIRX_CACHE_DIR"] = cache;
    const kernel = (name: string) => `import { T } from "tirx-ts";
import { BLOCK } from "./block.js";
export const k = T.function("${name}", { A: T.Tensor([BLOCK], "float32") }, ({ A }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: BLOCK }) });
  A.set([T.cuda.thread_idx("x")], T.float32(0));
});
`;
    try {
      writeFileSync(join(dir, "block.ts"), "export const BLOCK: number = 32;\n");
      writeFileSync(join(dir, "k.ts"), kernel("first"));
      const a = await tirx("build", join(dir, "k.ts"));
      expect(a.code, a.err).toBe(0);
      expect(a.out).toContain(".entry first(");
      expect(readdirSync(join(cache, "bundles")).length).toBe(1);
      // The bundle's text is run on a hit, so it is written 0o644 and read back only while no
      // one else can write it: a bundle made writable by others, its text replaced, is not run.
      const [name] = readdirSync(join(cache, "bundles"));
      const bundle = join(cache, "bundles", name!);
      expect(statSync(bundle).mode & 0o777).toBe(0o644);
      const entry = JSON.parse(readFileSync(bundle, "utf8")) as { text: string };
      writeFileSync(bundle, JSON.stringify({ ...entry, text: 'throw new Error("PLANTED")' }));
      chmodSync(bundle, 0o666);
      const planted = await tirx("build", join(dir, "k.ts"));
      expect([planted.code, planted.err]).toEqual([0, expect.not.stringContaining("PLANTED")]);
      expect(planted.out).toContain(".entry first(");
      writeFileSync(join(dir, "k.ts"), kernel("second_name"));
      const b = await tirx("build", join(dir, "k.ts"));
      expect(b.out).toContain(".entry second_name(");
      writeFileSync(join(dir, "block.ts"), "export const BLOCK: number = 64;\n");
      const c = await tirx("build", join(dir, "k.ts"));
      expect(c.out).toContain(".maxntid 64, 1, 1");
    } finally {
      process.env["TIRX_CACHE_DIR"] = cacheDir;
      rmSync(dir, { recursive: true, force: true });
      rmSync(cache, { recursive: true, force: true });
    }
  });

  test("the installed command: --version, and exit codes through the process", () => {
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: "utf8" });
    const v = run("--version");
    expect(v.status).toBe(0);
    const pkg = JSON.parse(
      readFileSync(join(root, "packages", "tirx-ts", "package.json"), "utf8"),
    ) as { version: string };
    expect(v.stdout).toBe(`tirx-ts ${pkg.version}\n`);
    expect(run("build").status).toBe(2);
    const bad = run("build", "test/fixtures/bad_chunk.ts");
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain("error TX3007 [cp-async/cg-16]");
  });

  test("--emit ir --after PASS prints that stage; an unknown pass is a usage error", async () => {
    const tiles = await tirx(
      "build",
      "examples/copy_async.ts",
      "--emit",
      "ir",
      "--after",
      "lower-tile",
    );
    expect(tiles.code).toBe(0);
    expect(tiles.out).toMatch(/^\/\/ IR of "copy_async" after lower-tile$/m);
    expect(count(tiles.out, /\/\/ TileOp: cp\.async, chunk 16 bytes/)).toBe(1);
    const storage = await tirx(
      "build",
      "examples/copy_async.ts",
      "--emit",
      "ir",
      "--after",
      "storage",
    );
    expect(storage.out).toMatch(/^\/\/ shared: \.shared smem_shared \(8192 bytes/m);
    const bad = await tirx("build", "examples/copy_async.ts", "--emit", "ir", "--after", "unrol");
    expect(bad.code).toBe(2);
    expect(bad.err).toContain(
      'unknown pass "unrol"; --after takes one of: verify, lower-tile, axis-checks, tile-storage, unroll, simplify, swizzle, upcast-half, storage',
    );
    expect((await tirx("build", "examples/copy_async.ts", "--after", "unroll")).code).toBe(2);
  });

  test("the printed IR is a T module: built again, it gives the same PTX instructions", async () => {
    // Inside the repository (so that `tirx-ts` resolves), in a gitignored folder.
    const dir = join(root, "test", ".printed", "cli");
    mkdirSync(dir, { recursive: true });
    const instructions = (ptx: string): string[] =>
      ptx
        .split("\n")
        .map((l) => l.replace(/\/\/.*$/, "").trim())
        .filter((l) => l !== "");
    const original = await tirx("build", "examples/copy_async.ts", "--emit", "ptx");
    expect(original.code).toBe(0);
    expect(instructions(original.out).filter((l) => l.startsWith("cp.async")).length).toBe(6);
    try {
      for (const after of [
        [],
        ["--after", "verify"],
        ["--after", "lower-tile"],
        ["--after", "storage"],
      ]) {
        const ir = await tirx("build", "examples/copy_async.ts", "--emit", "ir", ...after);
        expect(ir.code, ir.err).toBe(0);
        const file = join(dir, `cli_copy_async_${after[1] ?? "written"}.ts`);
        writeFileSync(file, ir.out);
        const again = await tirx("build", file, "--emit", "ptx");
        expect(again.err).toBe("");
        expect(instructions(again.out)).toEqual(instructions(original.out));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("tirx layout", () => {
  test("writes one SVG per cp.async tile.apply and ldmatrix of gemm_mma, none with bank conflicts", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tirx-layout-"));
    try {
      const { code, out, err } = await tirx(
        "layout",
        "examples/gemm_mma.ts",
        "--kernel",
        "gemm_mma",
        "--out",
        dir,
      );
      expect(err).toBe("");
      expect(code).toBe(0);
      const files = readdirSync(dir).sort();
      expect(files.map((f) => f.replace(/L\d+/, "L#")).sort()).toEqual([
        "gemm_mma-L#-cp.svg",
        "gemm_mma-L#-cp.svg",
        "gemm_mma-L#-ldmatrix.svg",
        "gemm_mma-L#-ldmatrix.svg",
      ]);
      expect(count(out, /\(0 from bank conflicts\)$/)).toBe(4);
      for (const f of files) expect(readFileSync(join(dir, f), "utf8")).toMatch(/^<svg /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("prints the run's hazard reports as diagnostics and exits 1, the pictures written all the same", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tirx-layout-"));
    try {
      const { code, out, err } = await tirx(
        "layout",
        "test/fixtures/hazard_no_wait.ts",
        "--kernel",
        "no_wait",
        "--out",
        dir,
      );
      expect(code).toBe(1);
      expect(readdirSync(dir)).toHaveLength(1);
      expect(out).toMatch(/no_wait-L\d+-cp\.svg: cp\.async/);
      const src = readFileSync("test/fixtures/hazard_no_wait.ts", "utf8").split("\n");
      const line = src.findIndex((l) => l.includes("// HAZARD")) + 1;
      expect(err).toMatch(
        new RegExp(
          `test/fixtures/hazard_no_wait\\.ts:${line}:\\d+: error TX6001 \\[hazard/async-pending\\]`,
        ),
      );
      expect(err).toMatch(
        /hazard reports? \(\d+ distinct\) in the simulated run of "no_wait"; the pictures are of this run\n$/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a kernel with nothing to draw says so, creates no folder and exits 0 (gemm_hopper)", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "tirx-layout-")), "pictures");
    try {
      const { code, out, err } = await tirx(
        "layout",
        "examples/gemm_hopper.ts",
        "--kernel",
        "gemm_hopper",
        "--out",
        dir,
      );
      expect(err).toBe("");
      expect(code).toBe(0);
      expect(out).toBe(
        `tirx layout: nothing to draw: "gemm_hopper" executed no cp.async tile.apply, ldmatrix or stmatrix (the instructions layout draws) in the simulated launch; no SVG written, ${dir} not created\n`,
      );
      expect(existsSync(dir)).toBe(false);
    } finally {
      rmSync(join(dir, ".."), { recursive: true, force: true });
    }
  });

  test("a kernel with a hazard and nothing to draw prints the reports without speaking of pictures", async () => {
    const src = join(root, "test", ".printed", "cli-layout-hazard");
    mkdirSync(src, { recursive: true });
    const file = join(src, "hz.ts");
    // Every thread writes the one shared element, then reads it, with no barrier.
    writeFileSync(
      file,
      `import { T } from "tirx-ts";
export const hz = T.function("hz", { B: T.Tensor([64], "int32") }, ({ B }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
  const tid = T.cuda.thread_idx("x");
  const s = T.alloc_shared([1], "int32", { name: "s" });
  s.set([0], tid);
  B.set([tid], s.get([0]));
});
`,
    );
    const dir = join(src, "pictures");
    try {
      const { code, out, err } = await tirx("layout", file, "--kernel", "hz", "--out", dir);
      expect(code).toBe(1);
      expect(out).toMatch(
        /^tirx layout: nothing to draw: "hz" .*; no SVG written, .* not created\n$/,
      );
      expect(existsSync(dir)).toBe(false);
      expect(err).toMatch(/: error TX60\d\d \[hazard\//);
      expect(err).toMatch(
        /\ntirx: \d+ hazard reports? \(\d+ distinct\) in the simulated run of "hz"; no picture was drawn\n$/,
      );
      expect(err).not.toContain("the pictures are");
    } finally {
      rmSync(src, { recursive: true, force: true });
    }
  });
});
