import { describe, expect, it, vi } from "vitest";
import { TirxError, mkBuffer, type DeviceTensor, type PrimFunc } from "@tirx-ts/core";

// The code generator is stubbed: these tests cover what compileCuda does before the driver.
vi.mock("@tirx-ts/codegen-ptx", () => ({
  compileToPtx: vi.fn((fn: PrimFunc, opts: { arch?: string } = {}) => ({
    text: `// PTX of ${fn.name}\n`,
    entry: fn.name,
    version: "8.0",
    target: opts.arch ?? "sm_80",
    staticSharedBytes: 0,
    dynamicSharedBytes: 0,
    launch: { grid: [1, 1, 1], block: [32, 1, 1], dynamicSharedBytes: 0 },
    params: fn.params,
    tensorMaps: [],
  })),
}));

const { compileCuda, median } = await import("../src/index.js");

const A = mkBuffer("A", [4], "float32", "global");
const fn: PrimFunc = {
  kind: "PrimFunc",
  name: "scale",
  params: [
    { kind: "buffer", name: "A", buffer: A },
    { kind: "scalar", name: "n", var: { kind: "Var", name: "n", id: 77, dtype: "int32" } },
  ],
  body: { kind: "Seq", stmts: [] },
};

const simTensor: DeviceTensor = {
  device: { kind: "sim", name: "sim" },
  shape: [4],
  dtype: "float32",
  nbytes: 16,
  toArray: () => new Float32Array(4),
  toBytes: () => new Uint8Array(16),
  dispose: () => {},
};

function thrown(f: () => void): TirxError {
  try {
    f();
  } catch (e) {
    if (e instanceof TirxError) return e;
    throw e;
  }
  throw new Error("did not throw");
}

describe("compileCuda", () => {
  it("exposes the PTX text and module; the target defaults to sm_80", () => {
    const run = compileCuda(fn);
    expect(run.ptx).toBe("// PTX of scale\n");
    expect(run.module.entry).toBe("scale");
    expect(run.module.target).toBe("sm_80");
    expect(run.fn).toBe(fn);
    expect(compileCuda(fn, { arch: "sm_90" }).module.target).toBe("sm_90");
  });

  it("checks the argument count before touching a device (TX5001)", () => {
    expect(thrown(() => compileCuda(fn)(simTensor)).code).toBe("TX5001");
  });

  it("refuses tensors on another device (TX5004)", () => {
    const e = thrown(() => compileCuda(fn)(simTensor, 4));
    expect(e.code).toBe("TX5004");
    expect(e.text).toBe('kernel "scale" runs on CUDA, but its tensors live on sim (sim)');
    expect(thrown(() => compileCuda(fn).launchAsync(simTensor, 4)).code).toBe("TX5004");
  });
});

describe("median", () => {
  it("takes the middle sample", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });
});
