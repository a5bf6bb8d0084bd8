import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    setupFiles: ["test/util/ptxas-setup.ts"],
    // Tests pin their schedules (runSim's simSeed): a TIRX_SIM_SEED in the shell does not leak in.
    env: { TIRX_SIM_SEED: "" },
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
