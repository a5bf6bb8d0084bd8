// Float8 GEMMs with config.overlap (a K-tile pair's wgmmas issued into two register tiles of
// sums, the first pair member promoted while the second's wgmmas run; kernel.ts's header):
// gemm() on the simulated device against the float64 reference of the same scaling
// (test/util/gemm-reference.ts) with block scales by ld.global and by TMA and with per-tensor
// scales, at an odd and an even number of K-tiles per unit (an odd last K-tile runs alone),
// split-K, one and two consumer warpgroups; the PTX through ptxas -v (no wgmma serialized, no
// spills); and the configuration's errors.
import { describe, expect, test } from "vitest";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { gemm, sim } from "tirx-ts";
import { makeGemm, type GemmSizes } from "@tirx-ts/kernels";
import { checkGemm, type GemmSpec } from "./util/gemm-reference.js";
import { errorOf } from "./util/error-of.js";
import { findPtxas } from "./util/ptxas.js";
import { ptxasVerbose } from "./util/flash-attention-sim.js";

const dev = sim();

describe("gemm() with config.overlap on the simulator against float64", () => {
  const cases: readonly (GemmSpec & { name: string })[] = [
    {
      name: "block scales by TMA, m 20, n 136, k 300 (3 K-tiles: a pair and a lone last), 64 × 128 tiles",
      ...{ m: 20, n: 136, k: 300, dtype: "float8_e4m3", transB: true, outDtype: "float32" },
      ...{ blockScales: true, seed: 3 },
      config: { bm: 64, bn: 128, stages: 3, scaleLoad: "tma", overlap: true },
    },
    {
      name: "block scales by TMA as given (12 K blocks), m 20, n 136, k 1536 split-K 2: the second slice starts at K block 6, in its box of 4 from 4",
      ...{ m: 20, n: 136, k: 1536, dtype: "float8_e4m3", transB: true, outDtype: "float32" },
      ...{ blockScales: true, seed: 4 },
      config: { bm: 64, bn: 128, stages: 3, splitK: 2, scaleLoad: "tma", overlap: true },
    },
    {
      name: "block scales by ld.global, m 70 on two consumer warpgroups, k 1024 split-K 2 (4 K-tiles a slice: two pairs) → bfloat16",
      ...{ m: 70, n: 64, k: 1024, dtype: "float8_e4m3", transB: true, outDtype: "bfloat16" },
      ...{ blockScales: true, seed: 5 },
      config: { bm: 128, bn: 64, stages: 2, splitK: 2, overlap: true },
    },
    {
      name: "per-tensor scales, e5m2 × e4m3, m 33, n 72, k 384 (3 K-tiles), bias",
      ...{ m: 33, n: 72, k: 384, dtype: "float8_e5m2", dtypeB: "float8_e4m3", transB: true },
      ...{ outDtype: "float32", bias: "float32", scales: [0.5, 3] as const, seed: 7 },
      config: { bm: 64, bn: 128, stages: 2, overlap: true },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const { ratio, at } = checkGemm(gemm, dev, c);
      expect(ratio, at).toBeLessThanOrEqual(1);
    });
  }
});

describe("config.overlap: the PTX and the configuration's errors", () => {
  const ptxas = findPtxas();
  test.skipIf(ptxas === undefined)(
    "ptxas -v (sm_90a) at 8192³ on 128 × 128 tiles: no wgmma serialized (C7514), no spills, with each scale load and per-tensor",
    () => {
      const base = { m: 8192, n: 8192, k: 8192, dtype: "float8_e4m3", transB: true } as const;
      const variants: GemmSizes[] = [
        { ...base, scales: "block", config: { bm: 128, bn: 128, stages: 6, overlap: true } },
        {
          ...base,
          scales: "block",
          config: { bm: 128, bn: 128, stages: 6, scaleLoad: "tma", overlap: true },
        },
        { ...base, scales: true, config: { bm: 128, bn: 128, stages: 6, overlap: true } },
        // Three consumer warpgroups (setmaxnreg 160): the widest tiles overlap takes there.
        { ...base, scales: "block", config: { bm: 192, bn: 64, stages: 6, overlap: true } },
      ];
      for (const v of variants) {
        const text = compileToPtx(makeGemm(v).main, { arch: "sm_90a" }).text;
        // Pairs: two commit groups, then wait_group 1 and wait_group 0.
        expect(text.match(/wgmma\.wait_group\.sync\.aligned 1;/g)?.length).toBe(1);
        const log = ptxasVerbose(ptxas!, text);
        expect(log).not.toMatch(/C7514|serialized/);
        expect(log).toMatch(/0 bytes spill stores, 0 bytes spill loads/);
      }
    },
  );

  test("overlap with register tiles over the consumers' registers, 16-bit inputs, fastAccum or a non-boolean is TX9001", () => {
    const base = { m: 256, n: 256, k: 256, dtype: "float8_e4m3", transB: true } as const;
    const cases: [GemmSizes, RegExp][] = [
      [
        { ...base, scales: "block", config: { bm: 128, bn: 192, stages: 4, overlap: true } },
        /bm 128, bn 192, overlap needs 288 float32 registers .* over the 200 .*; bn 128 fits, and bn 192 without overlap/,
      ],
      [
        // Three consumer warpgroups: 3 · 64 registers over setmaxnreg 160's 128.
        { ...base, scales: "block", config: { bm: 192, bn: 128, stages: 4, overlap: true } },
        /bm 192, bn 128, overlap needs 192 float32 registers .* over the 128 .*; bn 64 fits, and bn 128 without overlap/,
      ],
      [
        { ...base, dtype: "bfloat16", config: { bm: 128, bn: 128, stages: 4, overlap: true } },
        /got bfloat16/,
      ],
      [
        {
          ...base,
          scales: true,
          fastAccum: true,
          config: { bm: 128, bn: 128, stages: 4, overlap: true },
        },
        /got fastAccum/,
      ],
      [
        { ...base, scales: true, config: { bm: 128, bn: 128, stages: 4, overlap: 1 as never } },
        /config\.overlap is true or false/,
      ],
    ];
    for (const [sizes, re] of cases) {
      const e = errorOf(() => makeGemm(sizes));
      expect([e.code, e.message]).toEqual(["TX9001", expect.stringMatching(re)]);
    }
  });
});
