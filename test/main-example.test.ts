// The README's main command, as a user runs it on a machine without a GPU.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));

test("npx tsx examples/copy_async.ts runs on the simulated device and all 4096 elements match", () => {
  const tsx = fileURLToPath(new URL("../node_modules/tsx/dist/cli.mjs", import.meta.url));
  const r = spawnSync(process.execPath, [tsx, "examples/copy_async.ts"], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, TIRX_DEVICE: "sim" },
  });
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout).toContain("ptxas -arch=sm_80: assembled");
  expect(r.stdout).toContain("ptxas -arch=sm_90: assembled");
  expect(r.stdout).toContain("copy_async on the simulated device: 4096 of 4096 elements match");
  expect(r.stderr).toContain("tirx-ts: running on the simulated device");
});
