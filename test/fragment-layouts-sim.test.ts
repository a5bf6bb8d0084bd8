// Every built-in fragment layout (mma.sync m16n8k16 f16/bf16, m16n8k8 tf32, m16n8k32 s8 A/B/C;
// wgmma m64nNk16 D for N = 16, 64 and its register A) against the simulated tensor cores, element
// by element (test/diff/fragment-cases.ts): registers filled through the A/B/C layouts, every
// accumulator register read back through the D layout, on inputs whose D elements are all
// distinct (each names its [row, col]) and on distinct operands with the exact product. Each
// layout is also a bijection onto (thread, slot). Every kernel's PTX assembles (sm_80 for
// mma.sync, sm_90a for wgmma). test/gpu/fragment-layouts.test.ts runs the same kernels on a GPU.
import { describe, expect, it } from "vitest";
import { sim } from "tirx-ts";
import { parseTileLayout } from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";
import { fragmentCases, fragmentMismatches, runFragmentCase } from "./diff/fragment-cases.js";

const cases = fragmentCases();

describe("built-in fragment layouts on the simulator", () => {
  it("covers each instruction with both value sets", () => {
    expect(cases.map((c) => c.id)).toHaveLength(16);
    for (const c of cases) {
      assembleLater(compileToPtx(c.fn, { arch: c.arch }).text, c.arch, c.id);
      // Identifying inputs: every D element distinct.
      if (c.values === "identify") expect(new Set(c.want).size).toBe(c.want.length);
      // The D layout maps every [row, col] to its own register, and every register is used.
      expect(c.d.threads * c.d.slots).toBe(c.d.rows * c.d.cols);
    }
  });

  it.each(cases.map((c) => [c.id, c] as const))("%s", (_, c) => {
    const out = runFragmentCase(c, sim());
    const bad = fragmentMismatches(c, out);
    expect(bad.slice(0, 8), bad.slice(0, 8).join("\n")).toEqual([]);
  });

  it("catches a wrong layout and names the element the register holds", () => {
    const c = cases.find((x) => x.id === "mma.m16n8k16.fp16.identify")!;
    const out = runFragmentCase(c, sim());
    // The C/D layout with its two slot iters swapped: c1 would be [g + 8, 2t], c2 [g, 2t + 1].
    const wrong = {
      ...c,
      d: { ...c.d, layout: parseTileLayout("S[(2, 8, 4, 2) : (1, 4@laneid, 1@laneid, 2)]") },
    };
    const bad = fragmentMismatches(wrong, out);
    expect(bad).toHaveLength(64);
    expect(bad[0]).toBe(
      "mma.m16n8k16.fp16.identify: thread 0 slot 1: the layout says D[8, 0] = 129, the register holds 3 (D[0, 1])",
    );
  });
});
