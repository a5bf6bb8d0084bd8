// Asking for a GPU where none is usable (TIRX_DEVICE=cuda without a CUDA driver) is a diagnostic,
// TX5010 at the line that asked, with the fix in a note, not a stack trace. The driver is made
// unloadable with TIRX_LIBCUDA, so this holds on a GPU machine too.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const tsx = fileURLToPath(new URL("../node_modules/tsx/dist/cli.mjs", import.meta.url));

test("TIRX_DEVICE=cuda without a driver: npx tsx examples/copy_async.ts prints TX5010 with its fix and exits 1", () => {
  const r = spawnSync(process.execPath, [tsx, "examples/copy_async.ts"], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, TIRX_DEVICE: "cuda", TIRX_LIBCUDA: "/nonexistent/libcuda.so.1" },
  });
  expect(r.status, r.stderr).toBe(1);
  // The line of examples/copy_async.ts that asked for the device.
  const src = readFileSync(`${root}examples/copy_async.ts`, "utf8").split("\n");
  const line = src.findIndex((l) => l.includes('runAsMain("copy_async", runExample);')) + 1;
  expect(line).toBeGreaterThan(0);
  const col = src[line - 1]!.indexOf("runAsMain") + 1;
  expect(r.stderr).toContain(
    `examples/copy_async.ts:${line}:${col}: error TX5010 [device/unavailable]: TIRX_DEVICE=cuda asks for a CUDA GPU, but cannot load the NVIDIA driver library /nonexistent/libcuda.so.1`,
  );
  expect(r.stderr).toMatch(new RegExp(`^> +${line} \\| +runAsMain\\("copy_async"`, "m"));
  expect(r.stderr).toContain(
    "note: unset TIRX_DEVICE, or set TIRX_DEVICE=sim, to use the simulated device",
  );
  expect(r.stderr).not.toContain("    at ");
  expect(r.stderr).not.toContain("CudaUnavailableError");
});

// An unknown value is a diagnostic too (it was ignored, and the device picked as if unset).
test.each(["gpu", "CUDA"])(
  "TIRX_DEVICE=%s: npx tsx examples/copy_async.ts prints TX5012 naming sim and cuda, and exits 1",
  (value) => {
    const r = spawnSync(process.execPath, [tsx, "examples/copy_async.ts"], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, TIRX_DEVICE: value },
    });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toContain(
      `error TX5012 [runtime/device]: TIRX_DEVICE is "${value}"; it takes "sim" or "cuda"`,
    );
    expect(r.stderr).toContain("note: set TIRX_DEVICE=sim or TIRX_DEVICE=cuda");
    expect(r.stderr).not.toContain("    at ");
    expect(r.stdout).not.toContain("match");
  },
);
