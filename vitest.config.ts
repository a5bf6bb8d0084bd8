import { configDefaults, defineConfig } from "vitest/config";

/**
 * Files that change process-wide state another file would see: a stub libcuda loaded into the
 * driver binding (launch-stub), a mocked code generator (runtime-cuda's compile test), and the
 * GPU tests, which must find the real driver or none. They run isolated (a fresh module graph per
 * file); every other file shares its worker's modules, which saves re-importing the compiler for
 * each of them (about a third of the suite's time on a 2-core machine).
 */
const ISOLATED = [
  "test/gpu/**/*.test.ts",
  "test/launch-stub.test.ts",
  "packages/runtime-cuda/test/**/*.test.ts",
];

const shared = {
  // Tests pin their schedules (runSim's simSeed): a TIRX_SIM_SEED in the shell does not leak in.
  env: { TIRX_SIM_SEED: "" },
  setupFiles: ["test/util/ptxas-setup.ts"],
  testTimeout: 60_000,
  hookTimeout: 60_000,
};

export default defineConfig({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    // One test file per core (vitest's default leaves one core idle: on a 2-core machine the
    // suite ran in one worker, 1.7x longer).
    maxWorkers: "100%",
    projects: [
      {
        extends: true,
        test: {
          ...shared,
          name: "shared",
          include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...ISOLATED],
          isolate: false,
        },
      },
      { extends: true, test: { ...shared, name: "isolated", include: ISOLATED, isolate: true } },
    ],
  },
});
