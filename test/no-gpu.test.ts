// Asking for a GPU where none is usable (TIRX_DEVICE=cuda without a CUDA driver) is a diagnostic,
// TX5010 at the line that asked, with the fix in a note, not a stack trace. The driver is made
// unloadable with TIRX_LIBCUDA, so this holds on a GPU machine too.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));

test("TIRX_DEVICE=cuda without a driver: npx tsx examples/copy_async.ts prints TX5010 with its fix and exits 1", () => {
  // tsx as a loader in this one process (its CLI starts a second node for the program).
  const r = spawnSync(process.execPath, ["--import", "tsx", "examples/copy_async.ts"], {
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

// An unknown value is a diagnostic too (it was ignored, and the device picked as if unset): TX5012
// from device(), for each value in one plain node process over the built packages (device() keeps
// its first choice for the process, and a test worker may have made one; a refusal is no choice).
// How an uncaught TirxError prints and exits is the TX5010 case above (and uncaught.test.ts).
test("TIRX_DEVICE=gpu and =CUDA: device() throws TX5012 naming sim and cuda, with its fix", () => {
  const child = [
    'import { device } from "@tirx-ts/runtime";',
    "const out = [];",
    'for (const value of ["gpu", "CUDA"]) {',
    "  process.env.TIRX_DEVICE = value;",
    "  try { device(); out.push({ value, chose: true }); }",
    "  catch (e) { out.push({ value, code: e.code, message: e.message, notes: e.notes.map((n) => n.message) }); }",
    "}",
    "process.stdout.write(JSON.stringify(out));",
  ].join("\n");
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", child], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, TIRX_DEVICE: "" },
  });
  expect(r.status, r.stderr).toBe(0);
  const got = JSON.parse(r.stdout) as {
    value: string;
    code?: string;
    message?: string;
    notes?: string[];
  }[];
  expect(got.map((g) => g.value)).toEqual(["gpu", "CUDA"]);
  for (const g of got) {
    expect(g.code, g.value).toBe("TX5012");
    expect(g.message).toContain(`TIRX_DEVICE is "${g.value}"; it takes "sim" or "cuda"`);
    expect(g.notes!.join("\n")).toContain("set TIRX_DEVICE=sim or TIRX_DEVICE=cuda");
  }
  // Nothing was picked, so nothing was said about a choice.
  expect(r.stderr).not.toContain("tirx-ts: running on");
});
