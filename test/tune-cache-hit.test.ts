// A tuned call whose tuning is cached, in a new process (issue 24: its first launch within 50 ms
// of the same call with its config given): the cache hit builds only the cached choice and
// compiles nothing until a kernel is launched. Counted, not timed, in fresh processes on the
// simulator with an injected measure: gemm() at the m bucket's top builds one kernel (the tuning's
// check of the choice is the kernel it launches) and compiles it once, at the launch; at another
// m of the bucket, the choice at the top (its hash checked) and the call's own kernel; a choice
// whose recorded hash differs is tuned again. autotune checks a cache hit's recorded shared
// memory against the limits without compiling, and compiles the choice when its kernel is read.
import { spawnSync } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { autotune, gemmChoice, sim, tensor, type GemmConfig, type PrimFunc } from "tirx-ts";
import { repoRoot, tuneChildDir } from "./util/tune-child-dir.js";
import { readTuneCache, type TuneCacheEntry } from "@tirx-ts/runtime";

const root = repoRoot;
// A fresh folder in the repository for the child processes; ptxas off while the file runs.
const base = tuneChildDir("tune-cache-hit");

/** The compile cache of the child's `tirx-ts` (the built packages): its size counts compilations. */
const compiledModule = JSON.stringify(join(root, "packages", "runtime", "dist", "compile.js"));

/** Run `body` (an ES module's text after the imports) in a new Node process; its JSON output. */
function child<R>(name: string, imports: string, body: string, cacheRoot: string): R {
  const file = join(base, `${name}.mjs`);
  writeFileSync(file, `${imports}\nimport { COMPILED } from ${compiledModule};\n${body}`);
  const p = spawnSync(process.execPath, [file], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, TIRX_CACHE_DIR: cacheRoot, TIRX_TUNE: "", TIRX_PTXAS: "off" },
  });
  expect(p.status, p.stderr).toBe(0);
  return JSON.parse(p.stdout) as R;
}

describe("gemm() tuned, the tuning cached, in a new process", () => {
  const dev = sim();
  const [top, n, k] = [64, 72, 40]; // m 64: the top of its bucket (gemmRowsBucket)
  const cacheRoot = join(base, "gemm");
  const cacheDir = join(cacheRoot, "autotune");
  const fakeUs = (c: GemmConfig): number => (c.bm === 128 && c.bn === 128 ? 1 : 2 + c.bn / 64);
  let tuned: ReturnType<typeof gemmChoice>;

  beforeAll(() => {
    const a = tensor.zeros([top, k], "bfloat16", dev);
    const b = tensor.zeros([n, k], "bfloat16", dev);
    tuned = gemmChoice(a, b, {
      transB: true,
      tune: { cacheDir, progress: false, measure: fakeUs },
    });
    expect(tuned.source).toBe("tuned");
  });

  /** The child: a tuned call at m rows, its choice, then (with `launch`) the call itself. */
  const run = (m: number, launch: boolean, root = cacheRoot) =>
    child<{
      source: string;
      config: GemmConfig;
      measured: number;
      builtByChoice: number;
      compiledByChoice: number;
      built: number;
      compiled: number;
    }>(
      `gemm-${m}-${launch}-${root === cacheRoot ? "same" : "other"}`,
      `import { gemm, gemmChoice, sim, tensor } from "tirx-ts";
import { gemmBuildStats } from "@tirx-ts/kernels";`,
      `const dev = sim();
const a = tensor.zeros([${m}, ${k}], "bfloat16", dev);
const b = tensor.zeros([${n}, ${k}], "bfloat16", dev);
let measured = 0;
const fakeUs = ${fakeUs.toString()};
const opts = { transB: true, tune: { cacheDir: ${JSON.stringify(join(root, "autotune"))}, progress: false, measure: (c) => (measured++, fakeUs(c)) } };
const c = gemmChoice(a, b, opts);
const builtByChoice = gemmBuildStats.kernels;
const compiledByChoice = COMPILED.size;
if (${launch}) gemm(a, b, opts);
process.stdout.write(JSON.stringify({ source: c.source, config: c.config, measured, builtByChoice, compiledByChoice, built: gemmBuildStats.kernels, compiled: COMPILED.size }));
`,
      root,
    );

  test("at the bucket's top m: one kernel built (the choice, checked against the file), compiled once at the launch", () => {
    const got = run(top, true);
    expect(got.source).toBe("cache");
    expect(got.config).toEqual(tuned.config);
    expect(got.measured).toBe(0);
    expect([got.builtByChoice, got.compiledByChoice]).toEqual([1, 0]);
    expect([got.built, got.compiled]).toEqual([1, 1]);
  });

  test("at another m of the bucket: the choice at the top m and the call's own kernel, nothing compiled by the choice", () => {
    const got = run(40, false);
    expect([got.source, got.measured]).toEqual(["cache", 0]);
    expect([got.builtByChoice, got.compiledByChoice]).toEqual([2, 0]);
  });

  test("a choice whose kernel differs from the tuning's (its recorded hash changed) is tuned again", () => {
    const other = join(base, "gemm-changed");
    cpSync(cacheRoot, other, { recursive: true });
    const file = tunedFile(join(other, "autotune"));
    const entry = JSON.parse(readFileSync(file, "utf8")) as TuneCacheEntry;
    const chosen = JSON.stringify(entry.config);
    const candidates = entry.candidates.map((c) =>
      JSON.stringify(c.config) === chosen ? { ...c, hash: `0${c.hash!.slice(1)}` } : c,
    );
    writeFileSync(file, JSON.stringify({ ...entry, candidates }));
    const got = run(top, false, other);
    expect(got.source).toBe("tuned");
    expect(got.measured).toBe(tuned.candidates!.length);
    expect(got.builtByChoice).toBe(tuned.candidates!.length);
  });
});

/** The one cache file of a folder. */
function tunedFile(dir: string): string {
  const files = spawnSync("ls", [dir], { encoding: "utf8" })
    .stdout.split("\n")
    .filter((f) => f.endsWith(".json"));
  expect(files.length).toBe(1);
  return join(dir, files[0]!);
}

// A[i] += 1 through 4 · block float32 of shared memory (16 · block bytes), `block` threads: a
// module that this process and the child both import, so that both build the same IR.
const FAMILY = `import { T } from "tirx-ts";
export const CONFIGS = [{ block: 32 }, { block: 64 }];
export const make = (c) =>
  T.function("hit_inc", { A: T.Tensor([c.block], "float32") }, ({ A }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: c.block }) });
    const s = T.alloc_shared([c.block * 4], "float32");
    const tid = T.cuda.thread_idx("x");
    s.set([tid], A.get([tid]));
    A.set([tid], s.get([tid]).add(1));
  });
`;
const familyFile = join(base, "family.mjs");
writeFileSync(familyFile, FAMILY);
const fam = (await import(familyFile)) as {
  readonly CONFIGS: readonly { readonly block: number }[];
  readonly make: (c: { readonly block: number }) => PrimFunc;
};

describe("autotune's cache hit with the choice's fit recorded", () => {
  const us = (c: { block: number }): number => 1000 / c.block; // block 64 fastest
  const cacheRoot = join(base, "family");
  const dir = join(cacheRoot, "autotune");
  const common = { key: "hit", name: "hit_inc", device: sim(), progress: false } as const;

  beforeAll(() => {
    const r = autotune(fam.make, fam.CONFIGS, { ...common, cacheDir: dir, measure: us });
    expect([r.source, r.config.block]).toEqual(["tuned", 64]);
    const entry = (readTuneCache(r.cacheFile!) as { entry: TuneCacheEntry }).entry;
    expect(entry.candidates.map((c) => c.sharedBytes)).toEqual([32 * 16, 64 * 16]);
    expect(entry.candidates.map((c) => c.threads)).toEqual([32, 64]);
    expect(entry.candidates.every((c) => typeof c.target === "string")).toBe(true);
  });

  test("the choice is built alone, and compiled when the result's kernel is read, not before", () => {
    const got = child<{
      source: string;
      built: number;
      before: number;
      after: number;
      out: number;
    }>(
      "family-hit",
      `import { autotune, sim, tensor } from "tirx-ts";
import { CONFIGS, make } from ${JSON.stringify(familyFile)};`,
      `let built = 0;
const r = autotune((c) => (built++, make(c)), CONFIGS, { key: "hit", name: "hit_inc", device: sim(), cacheDir: ${JSON.stringify(dir)}, progress: false, measure: () => { throw new Error("timed"); } });
const before = COMPILED.size;
const a = tensor.zeros([64], "float32", sim());
r.kernel(a);
process.stdout.write(JSON.stringify({ source: r.source, built, before, after: COMPILED.size, out: a.toArray()[63] }));
`,
      cacheRoot,
    );
    expect(got).toEqual({ source: "cache", built: 1, before: 0, after: 1, out: 1 });
  });

  test("the recorded shared memory is checked against the limits: over them, a new tuning", () => {
    const other = join(base, "family-limits", "autotune");
    cpSync(dir, other, { recursive: true });
    const limits = { sharedBytes: 768 };
    const r = autotune(fam.make, fam.CONFIGS, { ...common, cacheDir: other, measure: us, limits });
    expect([r.source, r.config.block]).toEqual(["tuned", 32]);
    expect(r.why).toContain(
      "the cached config no longer fits (shared memory: 1024 bytes per CTA (as tuned) exceed the limits.sharedBytes option, 768 bytes)",
    );
  });
});
