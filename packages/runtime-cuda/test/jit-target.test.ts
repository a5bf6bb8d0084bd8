// jitTargetOf: an architecture-specific PTX module (.target sm_90a) is JIT-compiled for
// CU_TARGET_COMPUTE_90A (CU_COMPUTE_ACCELERATED_TARGET_BASE 0x10000 + 90, cuda.h), and its cached
// cubin is keyed by that arch; other modules keep the context's device target.
import { describe, expect, it } from "vitest";
import { jitTargetOf } from "../src/arch.js";

describe("jitTargetOf", () => {
  it("sm_90a PTX asks for CU_TARGET_COMPUTE_90A", () => {
    const ptx = "//\n// Generated\n//\n\n.version 8.0\n.target sm_90a\n.address_size 64\n";
    expect(jitTargetOf(ptx)).toEqual({ target: 0x10000 + 90, arch: "sm_90a" });
  });
  it("other targets, and a .target inside a comment, leave the device's", () => {
    expect(jitTargetOf(".version 8.0\n.target sm_90\n")).toBeUndefined();
    expect(jitTargetOf(".version 7.8\n.target sm_80\n")).toBeUndefined();
    expect(jitTargetOf("// .target sm_90a\n.target sm_90\n")).toBeUndefined();
  });
});
