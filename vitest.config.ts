import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    setupFiles: ["test/util/ptxas-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
