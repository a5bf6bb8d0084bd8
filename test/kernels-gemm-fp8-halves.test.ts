// Float8 GEMMs with config.halves (a K-tile's wgmmas issued as two groups of bn / 2 columns into
// two register tiles of sums; wgmma.wait_group 1 retires the first half, whose promotion runs
// while the second half's wgmmas do; kernel.ts's header): gemm() on the simulated device against
// the float64 reference of the same scaling (test/util/gemm-reference.ts) with block scales by
// ld.global, TMA and "shared", and with per-tensor scales, on 64-, 128- and 192-column tiles (a
// 192-column tile's halves meet the 128-column scale blocks at 64 and 128), split-K past the
// last K block, one and two consumer warpgroups; the PTX (the two halves' wgmmas and waits, no
// wgmma serialized, no spills, the registers of the serial promotion); and the errors.
import { describe, expect, test } from "vitest";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { gemm, sim } from "tirx-ts";
import { makeGemm, type GemmSizes } from "@tirx-ts/kernels";
import { checkGemm, type GemmSpec } from "./util/gemm-reference.js";
import { errorOf } from "./util/error-of.js";
import { findPtxas } from "./util/ptxas.js";
import { ptxasUsage, ptxasVerbose } from "./util/flash-attention-sim.js";

const dev = sim();

describe("gemm() with config.halves on the simulator against float64", () => {
  const cases: readonly (GemmSpec & { name: string })[] = [
    {
      name: 'block scales "shared", m 20, n 200, k 300, 64 × 192 tiles: a tile starting a 128-column block and one 64 columns into one, rows past m, a partial K block',
      ...{ m: 20, n: 200, k: 300, dtype: "float8_e4m3", transB: true, outDtype: "float32" },
      ...{ blockScales: true, seed: 11 },
      config: { bm: 64, bn: 192, stages: 2, scaleLoad: "shared", halves: true },
    },
    {
      name: 'block scales "shared", e5m2 × e4m3, m 70 on two consumer warpgroups, split-K 2 past the last K block, 64-column tiles (halves of 32) → bfloat16',
      ...{ m: 70, n: 72, k: 300, dtype: "float8_e5m2", dtypeB: "float8_e4m3", transB: true },
      ...{ outDtype: "bfloat16", blockScales: true, seed: 12 },
      config: { bm: 128, bn: 64, stages: 2, splitK: 2, scaleLoad: "shared", halves: true },
    },
    {
      name: "block scales by ld.global, m 33, n 136, k 1000, 128-column tiles over two n blocks",
      ...{ m: 33, n: 136, k: 1000, dtype: "float8_e4m3", transB: true, outDtype: "float32" },
      ...{ blockScales: true, seed: 13 },
      config: { bm: 64, bn: 128, stages: 3, halves: true },
    },
    {
      name: "block scales by TMA, m 20, n 256, k 640, 256-column tiles (halves of 128, one n block each)",
      ...{ m: 20, n: 256, k: 640, dtype: "float8_e4m3", transB: true, outDtype: "float32" },
      ...{ blockScales: true, seed: 14 },
      config: { bm: 64, bn: 256, stages: 2, scaleLoad: "tma", halves: true },
    },
    {
      name: "per-tensor scales, e4m3, m 33, n 200, k 384, 192-column tiles, bias",
      ...{ m: 33, n: 200, k: 384, dtype: "float8_e4m3", transB: true, outDtype: "float32" },
      ...{ bias: "float32", scales: [0.5, 3] as const, seed: 15 },
      config: { bm: 64, bn: 192, stages: 2, halves: true },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const { ratio, at } = checkGemm(gemm, dev, c);
      expect(ratio, at).toBeLessThanOrEqual(1);
    });
  }
});

describe("config.halves: the PTX and the configuration's errors", () => {
  const base = { m: 8192, n: 8192, k: 8192, dtype: "float8_e4m3", transB: true } as const;
  const ptxOf = (s: GemmSizes): string => compileToPtx(makeGemm(s).main, { arch: "sm_90a" }).text;

  test("each K-tile's wgmmas are two groups of m64n96k32 on 192-column tiles, retired by wait_group 1 and 0", () => {
    const text = ptxOf({
      ...base,
      scales: "block",
      config: { bm: 128, bn: 192, stages: 4, scaleLoad: "shared", halves: true },
    });
    const wgmmas = text.match(/wgmma\.mma_async\.sync\.aligned\.m64n\d+k32/g) ?? [];
    expect(new Set(wgmmas)).toEqual(new Set(["wgmma.mma_async.sync.aligned.m64n96k32"]));
    // 4 k32 steps per half.
    expect(wgmmas.length).toBe(8);
    expect(text.match(/wgmma\.commit_group\.sync\.aligned;/g)?.length).toBe(2);
    expect(text.match(/wgmma\.wait_group\.sync\.aligned 1;/g)?.length).toBe(1);
  });

  const ptxas = findPtxas();
  test.skipIf(ptxas === undefined)(
    "ptxas -v (sm_90a) at 8192³ on 128 × 192 tiles: no wgmma serialized, no spills, the registers of the serial promotion, with each scale load and per-tensor",
    () => {
      const variants: GemmSizes[] = (["global", "tma", "shared"] as const).map((scaleLoad) => ({
        ...base,
        scales: "block",
        config: { bm: 128, bn: 192, stages: 4, scaleLoad, halves: true },
      }));
      variants.push({
        ...base,
        scales: true,
        config: { bm: 128, bn: 192, stages: 5, halves: true },
      });
      for (const v of variants) {
        const text = ptxOf(v);
        const log = ptxasVerbose(ptxas!, text);
        expect(log).not.toMatch(/C7514|serialized/);
        const serial = ptxOf({ ...v, config: { ...v.config!, halves: false } });
        expect(ptxasUsage(ptxas!, text)).toEqual(ptxasUsage(ptxas!, serial));
        expect(ptxasUsage(ptxas!, text)).toMatchObject({ spillStores: 0, spillLoads: 0 });
      }
    },
  );

  test("halves with 16-bit inputs, fastAccum, overlap or a non-boolean is TX9001", () => {
    const small = { m: 256, n: 256, k: 256, dtype: "float8_e4m3", transB: true } as const;
    const cases: [GemmSizes, RegExp][] = [
      [
        { ...small, dtype: "bfloat16", config: { bm: 128, bn: 128, stages: 4, halves: true } },
        /config\.halves .* needs float8 inputs that promote.*got bfloat16/,
      ],
      [
        {
          ...small,
          scales: true,
          fastAccum: true,
          config: { bm: 128, bn: 128, stages: 4, halves: true },
        },
        /got fastAccum/,
      ],
      [
        {
          ...small,
          scales: "block",
          config: { bm: 128, bn: 128, stages: 4, overlap: true, halves: true },
        },
        /and not config\.overlap .* got overlap/,
      ],
      [
        { ...small, scales: true, config: { bm: 128, bn: 128, stages: 4, halves: "yes" as never } },
        /config\.halves is true or false, got "yes"/,
      ],
    ];
    for (const [sizes, re] of cases) {
      const e = errorOf(() => makeGemm(sizes));
      expect([e.code, e.message]).toEqual(["TX9001", expect.stringMatching(re)]);
    }
  });
});
