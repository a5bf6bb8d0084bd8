// The compute examples' PTX, as the compute-foundation issue accepts it: softmax reduces with
// shfl.sync.bfly and keeps everything in registers; no example touches .local memory; their
// global and shared accesses are 16-byte vectors; every module assembles for sm_80 and sm_90.
import { describe, expect, it } from "vitest";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { softmax } from "../examples/softmax.js";
import { gemm_simt } from "../examples/gemm_simt.js";
import { reduce_rows } from "../examples/reduce_rows.js";
import { vector_add } from "../examples/vector_add.js";
import { assembleMerged } from "./util/ptx-merge.js";

const ptx = (fn: Parameters<typeof compileToPtx>[0], arch = "sm_90"): string =>
  compileToPtx(fn, { arch }).text;

describe("compute examples", () => {
  it("softmax: warp butterflies, ex2.approx, 16-byte accesses, no .local", () => {
    const text = ptx(softmax);
    expect(text).toContain("shfl.sync.bfly.b32");
    expect(text).toContain("ex2.approx.ftz.f32");
    expect(text).toContain("ld.global.v4.b32");
    expect(text).toContain("st.global.v4.b32");
    expect(text).not.toMatch(/\.local/);
  });

  it("gemm_simt: a 4x4 accumulator in registers, fma.rn, shared vectors, no .local", () => {
    const text = ptx(gemm_simt);
    expect(text).not.toMatch(/\.local/);
    // 16 fma per k-step, 32 k-steps per K-tile, in the unrolled K-tile loop body.
    expect(text.match(/fma\.rn\.f32/g)?.length).toBe(512);
    expect(text).toContain("ld.shared.v4.b32");
    expect(text).toContain("cp.async.cg.shared.global");
    expect(text).toContain("st.global.v4.f32");
  });

  it("reduce_rows and vector_add: 16-byte global loads, no .local", () => {
    for (const fn of [reduce_rows, vector_add]) {
      const text = ptx(fn);
      expect(text).toContain("ld.global.v4.f32");
      expect(text).not.toMatch(/\.local/);
    }
    expect(ptx(reduce_rows)).toContain("shfl.sync.bfly.b32");
  });

  it("every compute example assembles for sm_80 and sm_90", async () => {
    const fns = { softmax, gemm_simt, reduce_rows, vector_add };
    for (const arch of ["sm_80", "sm_90"]) {
      const mods = Object.entries(fns).map(([name, fn]) => ({ name, text: ptx(fn, arch) }));
      expect(await assembleMerged(mods, arch)).toEqual([]);
    }
  });
});
