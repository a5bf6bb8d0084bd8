// The GEMM's two-consumer tile configurations on the simulated device: the GEMM_CONFIGS rows of
// 128-row tiles (128 × 256, 128 × 128) at m 70 (the second consumer stores nothing past row 69),
// and a persistent grid of 2 CTAs walking 6 tiles split in 2 over K (12 units, 6 turns: the
// ring's phases wrap; the float32 workspace, then the epilogue kernel), of 4 CTAs walking 6 tiles
// (a partial last turn), and 10 tile rows (the grouped order's second, partial group of 8) through
// makeGemm, each against the float64 reference of test/util/gemm-reference.ts.
import { describe, expect, test } from "vitest";
import { gemm, sim } from "tirx-ts";
import { GEMM_CONFIGS, GEMM_TUNE_EXTRA, type GemmConfig } from "@tirx-ts/kernels";
import { checkGemm, checkMakeGemm } from "./util/gemm-reference.js";

const dev = sim();

describe("every GEMM_CONFIGS row on the simulator against float64", () => {
  for (const row of GEMM_CONFIGS.filter((r) => r.config.bm === 128)) {
    test(`${row.name} at m 70, n 40, k 72 (bias, ReLU)`, () => {
      const { ratio, at } = checkGemm(gemm, dev, {
        ...{ m: 70, n: 40, k: 72, dtype: "bfloat16", transB: true, outDtype: "float32" },
        ...{ bias: "float32", activation: "relu", config: row.config },
      });
      expect(ratio, at).toBeLessThanOrEqual(1);
    });
  }
});

describe("every GEMM_TUNE_EXTRA row on the simulator against float64", () => {
  // n 200: 128 × 192 and 64 × 256 tiles end in a partial column tile; k 136 gives split-K 2
  // uneven slices (3 K-tiles of 64).
  // A row with overlap (promoting float8 only) runs on float8 with per-tensor scales at k 392:
  // 4 K-tiles of 128 (the last partial), two pairs.
  // A row that differs from an earlier one only in its ring depth builds the same kernel but for
  // the ring's length (2-stage rings, which wrap most, are tested below): one of them runs.
  const shape = (c: GemmConfig): string => JSON.stringify({ ...c, stages: 0 });
  const rows = GEMM_TUNE_EXTRA.filter(
    (r, i) => GEMM_TUNE_EXTRA.findIndex((x) => shape(x.config) === shape(r.config)) === i,
  );
  for (const row of rows) {
    const fp8 = row.config.overlap === true;
    test(`${row.name} at m 70, n 200, k ${fp8 ? "392, float8" : 136} (bias, GELU)`, () => {
      const { ratio, at } = checkGemm(gemm, dev, {
        ...{ m: 70, n: 200, k: fp8 ? 392 : 136, transB: true, outDtype: "bfloat16" },
        ...(fp8 ? { dtype: "float8_e4m3", scales: [0.5, 2] as const } : { dtype: "bfloat16" }),
        ...{ bias: "float32", activation: "gelu", config: row.config },
      });
      expect(ratio, at).toBeLessThanOrEqual(1);
    });
  }
});

describe("makeGemm's persistent grid", () => {
  test("2 CTAs walk 6 tiles of 64 × 64 split in 2 over K: 12 units in 6 turns, a 2-stage ring", () => {
    const { ratio, at, built } = checkMakeGemm(
      dev,
      {
        ...{ m: 130, n: 72, k: 72, dtype: "float16", outDtype: "bfloat16", ctas: 2, alpha: 0.5 },
        config: { bm: 64, bn: 64, stages: 2, splitK: 2 },
      },
      9,
    );
    expect(built.config.splitK).toBe(2);
    expect(ratio, at).toBeLessThanOrEqual(1);
  });

  test("4 CTAs walk 6 tiles: the units are no multiple of the CTAs (2 turns, the second partial)", () => {
    const { ratio, at } = checkMakeGemm(
      dev,
      {
        ...{ m: 130, n: 72, k: 72, dtype: "float16", outDtype: "bfloat16", ctas: 4 },
        config: { bm: 64, bn: 64, stages: 2 },
      },
      9,
    );
    expect(ratio, at).toBeLessThanOrEqual(1);
  });

  test("10 tile rows: the grouped order's second group of 8 rows, partial (m 600, 64 × 64 tiles)", () => {
    const { ratio, at } = checkMakeGemm(
      dev,
      {
        ...{ m: 600, n: 130, k: 64, dtype: "float16", outDtype: "float32", transB: true },
        config: { bm: 64, bn: 64, stages: 2 },
      },
      9,
    );
    expect(ratio, at).toBeLessThanOrEqual(1);
  });
});
