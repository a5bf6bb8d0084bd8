// jitTargetOf: an architecture-specific PTX module (.target sm_90a) is JIT-compiled for
// CU_TARGET_COMPUTE_90A (CU_COMPUTE_ACCELERATED_TARGET_BASE 0x10000 + 90, cuda.h), and its cached
// cubin is keyed by that arch; other modules keep the context's device target.
import { describe, expect, it } from "vitest";
import { jitTargetOf } from "../src/arch.js";
import { findPtxas, ptxasCompile, ptxasTag } from "../src/ptxas.js";

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

describe("the toolkit's ptxas", () => {
  it("is found on PATH or through TIRX_PTXAS, and TIRX_PTXAS=off turns it off", () => {
    expect(findPtxas({ TIRX_PTXAS: "off", PATH: "/usr/local/bin" })).toBeUndefined();
    expect(findPtxas({ PATH: "/nonexistent" })).toBeUndefined();
    const onPath = findPtxas({ PATH: process.env["PATH"] ?? "" });
    if (onPath) expect(findPtxas({ TIRX_PTXAS: onPath, PATH: "" })).toBe(onPath);
  });
  const ptxas = findPtxas();
  it.skipIf(!ptxas)("compiles sm_90a PTX to a cubin (an ELF image), and refuses bad PTX", () => {
    const ptx = [
      ".version 8.0",
      ".target sm_90a",
      ".address_size 64",
      ".visible .entry k() { setmaxnreg.inc.sync.aligned.u32 232; ret; }",
      "",
    ].join("\n");
    const cubin = ptxasCompile(ptxas!, ptx, "sm_90a");
    expect(Array.from(cubin!.subarray(0, 4))).toEqual([0x7f, 0x45, 0x4c, 0x46]);
    expect(ptxasCompile(ptxas!, ".version 8.0\n.target sm_90a\nbogus", "sm_90a")).toBeUndefined();
    expect(ptxasTag(ptxas!)).toMatch(/^ptxas(\d+\.\d+\.\d+)?$/);
  });
});
