import { configDefaults, defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { BUILT_MODULE, builtPackageModules, packagesBuilt } from "./test/util/built-packages.js";

/**
 * glibc malloc settings for the workers (forked from this process after it read this file) and
 * the processes they start: blocks up to 32 MiB come from the heap and freed memory stays there
 * (up to 256 MiB), instead of each large block being mapped afresh and faulted in page by page.
 * The simulator allocates its shadow arrays (megabytes) per compiled kernel; on the 2-core
 * machine the simulator-heavy files took 20% fewer page faults and 3-5% less CPU. A value set
 * in the environment is kept.
 */
const MALLOC = {
  MALLOC_MMAP_THRESHOLD_: String(32 << 20),
  MALLOC_TRIM_THRESHOLD_: String(256 << 20),
  MALLOC_TOP_PAD_: String(64 << 20),
};
for (const [name, value] of Object.entries(MALLOC)) process.env[name] ??= value;

/**
 * Files that change process-wide state another file would see: a stub libcuda loaded into the
 * driver binding (launch-stub, allocated-bytes, unavailable, launch-shim) and a mocked code generator
 * (runtime-cuda's compile test). They
 * run isolated (a fresh module graph per file), in workers of their own, so the GPU tests (which
 * must find the real driver or none) never meet the stub. Every other file shares its worker's
 * modules, which saves re-importing the compiler for each of them (about a third of the suite's
 * time on a 2-core machine; the GPU files alone, skipped where no driver loads, spent 15 s of a
 * 2-core machine importing it).
 */
const ISOLATED = [
  "test/launch-stub.test.ts",
  "packages/runtime-cuda/test/compile.test.ts",
  // A stub libcuda (TIRX_LIBCUDA) in the driver binding, and a binding that found none.
  "packages/runtime-cuda/test/allocated-bytes.test.ts",
  "packages/runtime-cuda/test/unavailable.test.ts",
  "packages/runtime-cuda/test/launch-shim.test.ts",
];

/**
 * The isolated files that mock a package (vi.mock), which reaches the modules that import it
 * only through Vite's module runner: such a file imports the package sources it tests itself
 * (e.g. `../src/index.js`), which take the mock, and every package by name as built (a built
 * package's own imports do not see the mock: a file that needs that must import the importing
 * package's sources by path, or the project must take the sources again). The other
 * isolated files take the built packages like the shared ones (a fresh process per file loads
 * each package's dist folder afresh): a fresh clone's first run had transformed and imported the
 * sources for each of them (the four files, cold: 10.9-12.9 → 8.3-9.2 CPU-s, 2-core machine).
 */
const MOCKED = ["packages/runtime-cuda/test/compile.test.ts"];

/**
 * The slowest files, in the order they start (seconds each took in a full run on the 2-core
 * machine, 2026-12-03, both workers busy, import and setup included; the lab's and packaging's
 * wall time, most of it Chromium's and npm's).
 * Vitest runs the files it has timings for longest first, but a fresh clone has none, and it
 * then runs the largest files first: these short files that spawn npm, tsx or ptxas would start
 * last and leave one core idle for their whole length at the end of the run. Most of the lab's
 * and packaging's time is Chromium's and npm's, about a core: the lab comes first and
 * packaging after three files that keep a core busy, so that each has such a file beside it on
 * the other worker rather than each other (run together first, both took 51-56 s).
 */
const SLOWEST = [
  "packages/lab/test/lab-browser.test.ts", // 24 s: vite build, Chromium, every example
  "test/diff/ops-cpu.test.ts", // 26 s: 1403 op × dtype cases built, run twice, assembled
  "test/flash-attention.test.ts", // 13 s: the forward on the simulator, 9 builds for ptxas
  "test/examples.test.ts", // 8 s
  "test/packaging.test.ts", // 21 s: npm pack, npm install, tsx
  "test/flash-attention-persistent.test.ts", // 14 s
  "test/readme-commands.test.ts", // 13 s: the README's commands
  "test/mutation.test.ts", // 9 s: with the replay tests
  "test/flash-attention-192.test.ts", // 9 s
  "test/flash-attention-backward-256.test.ts", // 9 s: the hd 256 backward, three cases
  "test/diff/wgmma-cpu.test.ts", // 8 s
  "packages/dsl/test/robustness.test.ts", // 8 s
  "test/printer-roundtrip.test.ts", // 7 s: every example's pipeline stages, a node child
  "test/range-checks.test.ts", // 6 s
  "test/flash-attention-wide-blocks.test.ts", // 6 s
  "test/cli.test.ts", // 6 s: tirx processes
  "test/tune-cache-hit.test.ts", // 6 s: four node processes
  "test/flash-attention-backward-varlen.test.ts", // 6 s
  "test/flash-attention-backward.test.ts", // 5 s
  "test/kernels-gemm-persistent.test.ts", // 5 s
  "test/kernels-attention.test.ts", // 4 s
  "test/printer-property.test.ts", // 4 s: both printers on 300 random functions
];

/**
 * Vitest's order, with the isolated projects' files (ISOLATED) moved first and then the files of
 * SLOWEST (in SLOWEST's order). Vitest's pool keeps a worker of the shared project for the next
 * file only while the file at the head of its queue is of that project too: an isolated file in
 * the middle of the queue (where vitest's own order put them, after SLOWEST) ended both shared
 * workers, and two new ones imported the compiler and compiled its code (JIT) again for the rest
 * of the run, while a core waited for the isolated files, each in a process of its own, to start
 * (fresh clone, 2-core machine: one core idle 6-8 s, both 3-4 s). First, they take a second or
 * two beside the start of the lab's file, and the two shared workers run every other file.
 */
class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification): number => {
      if (f.project.name !== "shared") return -1;
      const i = SLOWEST.findIndex((s) => f.moduleId.endsWith(`/${s}`));
      return i < 0 ? SLOWEST.length : i;
    };
    // Across the projects (a stable sort).
    return [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}

const shared = {
  // Tests pin their schedules (runSim's simSeed): a TIRX_SIM_SEED in the shell does not leak in.
  env: { TIRX_SIM_SEED: "" },
  // A 64 MiB young generation per semi-space (V8's default is 16): the compiler and simulator
  // allocate short-lived objects fast, and fewer scavenges promote fewer of them. Profiles of
  // four heavy files (printer-roundtrip, range-checks, mma/ptx, dsl robustness) on the 2-core
  // machine: garbage collection 8.6-9.0 s → 6.0-6.4 s of CPU (32 and 128 MiB gave no more).
  // V8's optimizing compiler (TurboFan) spent 18% of the suite's CPU (70 of 381 CPU-s, perf, a
  // fresh clone on the 2-core machine): the workers run a great deal of code (the compiler, the
  // simulator, every kernel builder) a few hundred times each, and the default thresholds
  // optimize most of it, with big inlined graphs, for a few hundred calls. An 8× interrupt budget
  // (a function tiers up to TurboFan after 8× the bytecode executed) and a smaller inlining budget
  // (300 bytecode bytes per function instead of 920) leave that code in the baseline tiers while
  // the hot simulator loops still optimize. Eight heavy files (ops-cpu, flash-attention, mutation,
  // range-checks, dsl robustness, examples, wgmma-cpu, flash-attention-persistent): 94 → 67-78
  // CPU-s; the whole suite on a fresh clone: vitest 223 → 184 s (411 → 341 CPU-s). Maglev
  // (--maglev, not yet V8's default in Node 20) gave no more on the whole suite.
  execArgv: [
    "--max-semi-space-size=64",
    "--interrupt-budget=540672",
    "--max-inlined-bytecode-size-cumulative=300",
  ],
  setupFiles: ["test/util/ptxas-setup.ts"],
  testTimeout: 60_000,
  hookTimeout: 60_000,
};

/** The packages' TypeScript sources (their exports' "source" condition) through Vite's module runner. */
const SOURCE_CONDITIONS = {
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
};

/**
 * Whether the tests load the built packages (test/util/built-packages.ts): every package built
 * and not older than its sources, as `npm test` leaves them (`tsc -b && vitest run`). Otherwise
 * (a fresh clone before its first build, an edit not built yet, a machine with the dependencies
 * but no build) every project takes the sources.
 */
const BUILT = packagesBuilt();
// Once per run (the file is read again for each project).
if (!BUILT && process.env["TIRX_TEST_SOURCES_NOTED"] === undefined) {
  process.env["TIRX_TEST_SOURCES_NOTED"] = "1";
  console.log(
    "vitest.config.ts: packages/*/dist missing or older than src; the tests run the packages' TypeScript sources (npm test builds first)",
  );
}

export default defineConfig({
  test: {
    // One test file per core (vitest's default leaves one core idle: on a 2-core machine the
    // suite ran in one worker, 1.7x longer).
    maxWorkers: "100%",
    sequence: { sequencer: SlowestFirst },
    // Transformed modules kept on disk (node_modules/.experimental-vitest-cache, keyed by each
    // file's content and this config): a run after the first transforms only what changed. The
    // transforms ran in vitest's main process beside both workers, 6 of its 9 s of CPU for a
    // quarter of the suite.
    experimental: { fsModuleCache: true },
    projects: [
      {
        extends: true,
        ...(BUILT
          ? {
              // The packages as built (test/util/built-packages.ts): Node loads
              // packages/*/dist itself, and a test's import of a package's source file gets the
              // built module.
              plugins: [builtPackageModules()],
            }
          : SOURCE_CONDITIONS),
        test: {
          ...shared,
          ...(BUILT ? { server: { deps: { external: [BUILT_MODULE] } } } : {}),
          name: "shared",
          include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...ISOLATED],
          isolate: false,
        },
      },
      // The file's own imports of a package's sources through Vite's module runner (no plugin
      // redirects them to the build), so that its vi.mock of a package reaches the modules that
      // import it; the packages it imports by name as built, as the shared project takes them,
      // the mocked one replaced. A fresh clone's first run transformed every package's sources
      // for compile.test.ts (380 files in vitest's process: 4.4 → 2.6 CPU-s, 2-core machine).
      {
        extends: true,
        ...(BUILT ? {} : SOURCE_CONDITIONS),
        test: {
          ...shared,
          ...(BUILT ? { server: { deps: { external: [BUILT_MODULE] } } } : {}),
          name: "isolated",
          include: MOCKED,
          isolate: true,
        },
      },
      // The other isolated files, on the packages as the shared project takes them.
      {
        extends: true,
        ...(BUILT ? { plugins: [builtPackageModules()] } : SOURCE_CONDITIONS),
        test: {
          ...shared,
          ...(BUILT ? { server: { deps: { external: [BUILT_MODULE] } } } : {}),
          name: "isolated-built",
          include: ISOLATED.filter((f) => !MOCKED.includes(f)),
          isolate: true,
        },
      },
    ],
  },
});
