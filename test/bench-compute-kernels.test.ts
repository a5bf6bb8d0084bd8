// The tirx-ts hooks of bench/compute.ts: a missing example is "not built yet", a broken one is an
// error, and a kernel whose tensor parameters differ from the benchmark's is refused. Every
// registered example that exists must build at the benchmark's sizes with the right interface.
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { describe, expect, test } from "vitest";
import { T } from "tirx-ts";
import {
  benchKernelEntry,
  benchSizes,
  checkBenchKernel,
  computeKernels,
  repoPath,
  vectorAdd,
} from "../bench/compute-kernels.js";

/** A kernel with vector_add's parameters (A float32 [n] unless `aDtype` says otherwise), optionally an int32 scalar after them. */
function withVectorAddParams(
  n: number,
  aDtype: "float32" | "float16" = "float32",
  withScalar = false,
) {
  const tensors = {
    A: T.Tensor([n], aDtype),
    B: T.Tensor([n], "float32"),
    C: T.Tensor([n], "float32"),
  };
  const params = withScalar ? { ...tensors, len: T.int32 } : tensors;
  // Only the parameters matter here; the body is an empty launch.
  return T.function("vector_add", params, () => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: n / 32, block: 32 }) });
  });
}

describe("checkBenchKernel", () => {
  test("accepts the documented parameters", () => {
    expect(() =>
      checkBenchKernel(vectorAdd, { fn: withVectorAddParams(64) }, { n: 64 }),
    ).not.toThrow();
  });
  test("refuses another shape, dtype or a missing scalar value", () => {
    expect(() => checkBenchKernel(vectorAdd, { fn: withVectorAddParams(64) }, { n: 128 })).toThrow(
      /has shape \[64\], expected \[128\]/,
    );
    expect(() =>
      checkBenchKernel(vectorAdd, { fn: withVectorAddParams(64, "float16") }, { n: 64 }),
    ).toThrow(/is float16, expected float32/);
    expect(() =>
      checkBenchKernel(vectorAdd, { fn: withVectorAddParams(64, "float32", true) }, { n: 64 }),
    ).toThrow(/1 scalar parameters but scalars gives 0/);
    expect(() =>
      checkBenchKernel(
        vectorAdd,
        { fn: withVectorAddParams(64, "float32", true), scalars: [64] },
        { n: 64 },
      ),
    ).not.toThrow();
  });
});

describe("benchKernelEntry.build", () => {
  const dir = mkdtempSync(join(tmpdir(), "bench-hook-"));
  const rel = (f: string) => relative(repoPath("."), join(dir, f));
  const spec = vectorAdd.tensors;

  test("a missing example is not built yet", async () => {
    const e = benchKernelEntry("x", rel("missing.ts"), "bench/cuda/vector_add.cu", spec);
    await expect(e.build({ n: 64 })).resolves.toBeUndefined();
  });
  test("an example that fails to import is an error, not a missing file", async () => {
    writeFileSync(join(dir, "broken.ts"), `import "./nothere.js";\nexport const x = 1;\n`);
    const e = benchKernelEntry("x", rel("broken.ts"), "bench/cuda/vector_add.cu", spec);
    await expect(e.build({ n: 64 })).rejects.toThrow(/exists but failed to import/);
  });
  test("an example without makeBenchKernel is an error", async () => {
    writeFileSync(join(dir, "empty.ts"), `export const x = 1;\n`);
    const e = benchKernelEntry("x", rel("empty.ts"), "bench/cuda/vector_add.cu", spec);
    await expect(e.build({ n: 64 })).rejects.toThrow(/must export makeBenchKernel/);
  });
});

describe("registered examples", () => {
  test.each(computeKernels.map((e) => [e.name, e] as const))("%s", async (_, e) => {
    expect(existsSync(repoPath(e.hand)), e.hand).toBe(true);
    const k = await (e.build as (s: unknown) => Promise<unknown>)(
      benchSizes[e.name as keyof typeof benchSizes],
    );
    expect(k === undefined).toBe(!existsSync(repoPath(e.example)));
  });
});
