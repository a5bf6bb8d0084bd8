// The GEMM's one-consumer tile configurations on the simulated device: the GEMM_CONFIGS rows of
// 64-row tiles (64 × 128, and 64 × 128 split over 4 CTAs per tile whose float32 partials meet in
// a workspace by red.global.add, then the epilogue kernel) at one small odd size, against the
// float64 reference of test/util/gemm-reference.ts; and the picker's choice. The 128-row rows
// and the persistent grid: kernels-gemm-persistent.test.ts.
import { describe, expect, test } from "vitest";
import { gemm, sim } from "tirx-ts";
import { GEMM_CONFIGS, pickGemmConfig } from "@tirx-ts/kernels";
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
