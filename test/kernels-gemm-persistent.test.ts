// The GEMM's two-consumer tile configurations on the simulated device: the GEMM_CONFIGS rows of
// 128-row tiles (128 × 256, 128 × 128) at m 70 (the second consumer stores nothing past row 69),
// and a persistent grid of 2 CTAs walking 6 tiles (3 turns: the ring's phases wrap) through
// makeGemm, each against the float64 reference of test/util/gemm-reference.ts.
import { describe, expect, test } from "vitest";
import { compile, gemm, sim, tensor } from "tirx-ts";
import { GEMM_CONFIGS, makeGemm, pickGemmConfig } from "@tirx-ts/kernels";
import {
  checkGemm,
  gemmReference,
  gemmWorst,
  randomTensor,
  uniform,
} from "./util/gemm-reference.js";

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

describe("makeGemm's persistent grid", () => {
  test("2 CTAs walk 6 tiles of 64 × 64 in 3 turns (k 72: two K-tiles, a 2-stage ring)", () => {
    const [m, n, k] = [130, 72, 72];
    const { main } = makeGemm({
      ...{ m, n, k, dtype: "float16", outDtype: "float32", ctas: 2 },
      config: { bm: 64, bn: 64, stages: 2 },
    });
    const rnd = uniform(9);
    const a = randomTensor([m, k], "float16", dev, rnd);
    const b = randomTensor([k, n], "float16", dev, rnd);
    const d = tensor.zeros([m, n], "float32", dev);
    compile(main, { target: "cuda" })(a, b, d);
    const host = (t: typeof a) => t.toArray() as Float32Array;
    const r = gemmReference({ m, n, k, outDtype: "float32" }, { a: host(a), b: host(b) });
    const { ratio, at } = gemmWorst(host(d), r, n);
    expect(ratio, at).toBeLessThanOrEqual(1);
  });
});
