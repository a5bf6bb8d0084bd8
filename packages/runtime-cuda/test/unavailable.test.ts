import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { isTirxError, type TirxError } from "@tirx-ts/core";
import {
  CudaUnavailableError,
  cuda,
  cudaAvailable,
  cudaZeros,
  driver,
  libraryPath,
} from "../src/index.js";

const saved = process.env["TIRX_LIBCUDA"];

afterEach(() => {
  if (saved === undefined) delete process.env["TIRX_LIBCUDA"];
  else process.env["TIRX_LIBCUDA"] = saved;
});

describe("without a CUDA driver", () => {
  it("names libcuda.so.1 and the loader's reason", () => {
    process.env["TIRX_LIBCUDA"] = "/nonexistent/libcuda.so.1";
    expect(libraryPath()).toBe("/nonexistent/libcuda.so.1");
    let err: unknown;
    try {
      driver();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CudaUnavailableError);
    const e = err as CudaUnavailableError;
    expect(e.name).toBe("CudaUnavailableError");
    expect(e.library).toBe("/nonexistent/libcuda.so.1");
    expect(e.text).toMatch(
      /^CUDA is unavailable: cannot load the NVIDIA driver library \/nonexistent\/libcuda\.so\.1: /,
    );
    expect(e.reason).toMatch(/No such file or directory|cannot open/);
  });

  it("is a TirxError TX5010 at the caller's line, with the simulated device as the fix", () => {
    process.env["TIRX_LIBCUDA"] = "/nonexistent/libcuda.so.1";
    let err: unknown;
    try {
      driver(); // @driver-call
    } catch (e) {
      err = e;
    }
    expect(isTirxError(err)).toBe(true);
    const e = err as TirxError;
    expect(e.code).toBe("TX5010");
    expect(e.rule).toBe("device/unavailable");
    expect(e.span?.file).toBe(fileURLToPath(import.meta.url));
    const lines = readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n");
    expect(e.span?.line).toBe(lines.findIndex((l) => l.endsWith("// @driver-call")) + 1);
    expect(e.notes.map((n) => n.message).join("\n")).toMatch(/simulated device.*TIRX_DEVICE=sim/);
  });

  it("cudaAvailable() reports the reason instead of throwing", () => {
    process.env["TIRX_LIBCUDA"] = "/nonexistent/libcuda.so.1";
    const r = cudaAvailable();
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain("/nonexistent/libcuda.so.1");
  });

  it("a library without the driver's symbols is refused with the missing name", () => {
    process.env["TIRX_LIBCUDA"] = "libc.so.6";
    expect(() => driver()).toThrow(CudaUnavailableError);
    expect(() => driver()).toThrow(/does not export cuInit/);
    expect(cudaAvailable().ok).toBe(false);
  });

  it("devices and tensors throw CudaUnavailableError, not a crash", () => {
    process.env["TIRX_LIBCUDA"] = "/nonexistent/libcuda.so.1";
    expect(() => cuda(0)).toThrow(CudaUnavailableError);
    expect(() => cudaZeros([4], "float32")).toThrow(CudaUnavailableError);
  });

  it("cudaAvailable() never throws with the default library", () => {
    delete process.env["TIRX_LIBCUDA"];
    expect(libraryPath()).toBe("libcuda.so.1");
    const r = cudaAvailable();
    expect(typeof r.ok).toBe("boolean");
    if (!r.ok) expect(r.reason.length).toBeGreaterThan(0);
  });

  it("cuda() refuses a bad ordinal before touching the driver", () => {
    expect(() => cuda(-1)).toThrow(RangeError);
    expect(() => cuda(1.5)).toThrow(RangeError);
  });
});

describe("tensor data checks come before the driver", () => {
  it("refuses data that does not fit the shape (TX5007)", async () => {
    const { cudaTensor } = await import("../src/index.js");
    expect(() => cudaTensor([1, 2], { shape: [3], dtype: "float32" })).toThrow(
      /TX5007.*expected 3 elements of float32, got 2/,
    );
    expect(() => cudaTensor([1], { shape: [-1], dtype: "float32" })).toThrow(
      /TX5007.*non-negative integers/,
    );
    expect(() => cudaTensor([1], { shape: [1], dtype: "float8" as never })).toThrow(
      /TX5007.*unknown dtype/,
    );
  });
});
