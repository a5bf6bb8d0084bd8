import { describe, expect, it } from "vitest";
import { CU_RESULT_NAMES, CudaError, cuResultName } from "../src/index.js";

describe("CUresult names", () => {
  it("maps the codes of cuda.h (CUDA 13.0)", () => {
    expect(cuResultName(0)).toBe("CUDA_SUCCESS");
    expect(cuResultName(1)).toBe("CUDA_ERROR_INVALID_VALUE");
    expect(cuResultName(100)).toBe("CUDA_ERROR_NO_DEVICE");
    expect(cuResultName(218)).toBe("CUDA_ERROR_INVALID_PTX");
    expect(cuResultName(222)).toBe("CUDA_ERROR_UNSUPPORTED_PTX_VERSION");
    expect(cuResultName(700)).toBe("CUDA_ERROR_ILLEGAL_ADDRESS");
    expect(cuResultName(716)).toBe("CUDA_ERROR_MISALIGNED_ADDRESS");
    expect(cuResultName(719)).toBe("CUDA_ERROR_LAUNCH_FAILED");
    expect(cuResultName(999)).toBe("CUDA_ERROR_UNKNOWN");
  });

  it("names an unknown code by its number", () => {
    expect(cuResultName(12345)).toBe("CUDA_ERROR_12345");
  });

  it("has one name per code and every name is a CUDA_ name", () => {
    const names = Object.values(CU_RESULT_NAMES);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toMatch(/^CUDA_(SUCCESS|ERROR_[A-Z0-9_]+)$/);
  });
});

describe("CudaError", () => {
  it("carries the call, the driver's name, the code and the JIT log", () => {
    const e = new CudaError(
      "cuModuleLoadDataEx",
      218,
      "CUDA_ERROR_INVALID_PTX",
      "a PTX JIT compilation failed",
      {
        log: "ptxas application ptx input, line 26; error   : Not a name of any known instruction: 'frobnicate'",
      },
    );
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe("CudaError");
    expect(e.code).toBe(218);
    expect(e.errorName).toBe("CUDA_ERROR_INVALID_PTX");
    expect(e.call).toBe("cuModuleLoadDataEx");
    expect(e.message).toMatchInlineSnapshot(`
      "cuModuleLoadDataEx failed with CUDA_ERROR_INVALID_PTX (218): a PTX JIT compilation failed
      ptxas application ptx input, line 26; error   : Not a name of any known instruction: 'frobnicate'"
    `);
  });

  it("names the context of the call", () => {
    const e = new CudaError("cuCtxSynchronize", 700, "CUDA_ERROR_ILLEGAL_ADDRESS", undefined, {
      context: 'after kernel "copy"',
    });
    expect(e.message).toBe(
      'cuCtxSynchronize failed with CUDA_ERROR_ILLEGAL_ADDRESS (700) (after kernel "copy")',
    );
    expect(e.log).toBeUndefined();
  });
});
