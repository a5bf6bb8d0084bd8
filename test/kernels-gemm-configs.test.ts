// The GEMM's one-consumer tile configurations on the simulated device: the GEMM_CONFIGS rows of
// 64-row tiles (64 × 128, and 64 × 128 split over 4 CTAs per tile whose float32 partials meet in
// a workspace by red.global.add, then the epilogue kernel) at one small odd size, against the
// float64 reference of test/util/gemm-reference.ts; and the picker's choice. The 128-row rows
// and the persistent grid: kernels-gemm-persistent.test.ts. Every configuration also verifies at
// tile-multiple sizes whose tile rows are not a multiple of the grouped order's 8.
import { describe, expect, test } from "vitest";
import { gemm, sim } from "tirx-ts";
import { GEMM_CONFIGS, GEMM_TUNE_EXTRA, makeGemm, pickGemmConfig } from "@tirx-ts/kernels";
import { verify } from "@tirx-ts/core";
import { checkGemm } from "./util/gemm-reference.js";

const dev = sim();

describe("every GEMM_CONFIGS row on the simulator against float64", () => {
  for (const row of GEMM_CONFIGS.filter((r) => r.config.bm === 64)) {
    test(`${row.name} at m 70, n 40, k 200 (bias, ReLU)`, () => {
      const { ratio, at } = checkGemm(gemm, dev, {
        ...{ m: 70, n: 40, k: 200, dtype: "bfloat16", transB: true, outDtype: "float32" },
        ...{ bias: "float32", activation: "relu", config: row.config },
      });
      expect(ratio, at).toBeLessThanOrEqual(1);
    });
  }
});

describe("pickGemmConfig", () => {
  test("small m takes one consumer warpgroup, split over K when D has few tiles; large takes 128 × 256", () => {
    const pick = (m: number, n: number, k: number) => pickGemmConfig({ m, n, k, inBytes: 2 }).name;
    expect([
      pick(16, 4096, 4096),
      pick(16, 14336, 4096),
      pick(128, 4096, 4096),
      pick(8192, 8192, 8192),
    ]).toEqual(["m64-splitk4", "m64", "m128-n128", "m128-n256"]);
  });
});

describe("every configuration verifies at tile-multiple sizes whatever its grouped tile order", () => {
  // The persistent grid walks tiles GROUP (8) tile rows at a time; with m / bm not a multiple
  // of 8 the last group is shorter, and D's unguarded stores (m and n tile multiples) were
  // refused as TX2006 (gemm() at m 1152, 1536, … on an H200): the tile's row and column are
  // clamped where the verifier cannot tie them to the group.
  const rows = [...GEMM_CONFIGS, ...GEMM_TUNE_EXTRA];
  for (const { name, config } of rows) {
    test(`${name}: m = 12 · bm, n = 3 · bn, k 256 builds and verifies`, () => {
      // overlap (promoting float8 only): float8 with per-tensor scales.
      const k = makeGemm({
        ...{ m: 12 * config.bm, n: 3 * config.bn, k: 256, transB: true, config },
        ...(config.overlap === true
          ? { dtype: "float8_e4m3" as const, scales: true }
          : { dtype: "bfloat16" as const }),
      });
      expect(() => verify(k.main)).not.toThrow();
    });
  }
  test("m = 9 · 128 on 128 × 192 tiles, n = 16 · 192, float8 promoted: the sizes of the H200 report", () => {
    const k = makeGemm({
      ...{ m: 1152, n: 3072, k: 512, dtype: "float8_e4m3", transB: true, scales: true },
      config: { bm: 128, bn: 192, stages: 5 },
    });
    expect(() => verify(k.main)).not.toThrow();
  });
});
