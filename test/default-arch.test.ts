// The default PTX target: the lowest target the kernel's instructions need (no `--arch`, no GPU),
// and on a GPU its own target raised to sm_90a when the kernel needs the architecture-specific
// one. "Lowest" is checked against resolveArch itself: the default assembles with ptxas, and
// every accepted target below it is refused.
import { describe, expect, it } from "vitest";
import { isTirxError, verify, type PrimFunc } from "@tirx-ts/core";
import { ARCHS, defaultArch, emitPtx, requiredArch, resolveArch } from "@tirx-ts/codegen-ptx";
import { bulk_copy } from "../examples/bulk_copy.js";
import { copy_async } from "../examples/copy_async.js";
import { gemm_hopper } from "../examples/gemm_hopper.js";
import { gemm_mma } from "../examples/gemm_mma.js";
import { tma_transpose } from "../examples/tma_transpose.js";
import { assemblePtx } from "./util/ptxas.js";

const CASES: [PrimFunc, string][] = [
  [copy_async, "sm_80"],
  [gemm_mma, "sm_80"],
  [bulk_copy, "sm_90"],
  [tma_transpose, "sm_90"],
  [gemm_hopper, "sm_90a"],
];

const refused = (f: () => unknown): boolean => {
  try {
    f();
    return false;
  } catch (e) {
    if (isTirxError(e)) return true;
    throw e;
  }
};

describe("default target", () => {
  it("is the lowest target the kernel needs, and no lower accepted target compiles it", () => {
    for (const [fn, want] of CASES) {
      const vf = verify(fn);
      expect(requiredArch(vf).name, fn.name).toBe(want);
      expect(emitPtx(vf).target, fn.name).toBe(want);
      const i = ARCHS.findIndex((a) => a.name === want);
      for (const lower of ARCHS.slice(0, i)) {
        expect(
          refused(() => resolveArch(lower.name, vf)),
          `${fn.name} on ${lower.name}`,
        ).toBe(true);
      }
    }
  });

  it("the default PTX of TMA and wgmma kernels assembles for its target", () => {
    for (const fn of [tma_transpose, gemm_hopper]) {
      const mod = emitPtx(verify(fn));
      assemblePtx(mod.text, mod.target);
    }
  });

  it("a GPU's own target is kept, raised to sm_90a on sm_90 where the kernel needs it", () => {
    const hopper = verify(gemm_hopper);
    expect(defaultArch(hopper, "sm_90")).toBe("sm_90a");
    expect(defaultArch(verify(bulk_copy), "sm_90")).toBe("sm_90");
    expect(defaultArch(verify(copy_async), "sm_90")).toBe("sm_90");
    expect(defaultArch(verify(copy_async), "sm_86")).toBe("sm_86");
    // A GPU below the kernel's need keeps its target: compiling then names the instruction.
    const bulk = verify(bulk_copy);
    expect(defaultArch(bulk, "sm_80")).toBe("sm_80");
    expect(refused(() => resolveArch(defaultArch(bulk, "sm_80"), bulk))).toBe(true);
  });

  it("a too-old target's refusal suggests the target the whole kernel needs", () => {
    // gemm_hopper's first statement newer than sm_80 is an sm_90 one (mbarrier, TMA); following
    // a note of "sm_90" would only be refused again for its wgmma.
    for (const [fn, want] of CASES) {
      const vf = verify(fn);
      const i = ARCHS.findIndex((a) => a.name === want);
      for (const lower of ARCHS.slice(0, i)) {
        let notes: string[] = [];
        try {
          resolveArch(lower.name, vf);
        } catch (e) {
          if (!isTirxError(e)) throw e;
          notes = e.notes.map((n) => n.message);
        }
        expect(notes, `${fn.name} on ${lower.name}`).toEqual([
          expect.stringContaining(`arch: "${want}" } (command line: --arch ${want})`),
        ]);
      }
    }
  });
});
