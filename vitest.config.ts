import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    setupFiles: ["test/util/ptxas-setup.ts"],
    // Tests pin their schedules (runSim's simSeed): a TIRX_SIM_SEED in the shell does not leak in.
    env: { TIRX_SIM_SEED: "" },
    // One test file per core (vitest's default leaves one core idle: on a 2-core machine the
    // suite ran in one worker, 1.7x longer).
    maxWorkers: "100%",
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
