// gemm()'s fused epilogue on the simulated device at odd sizes (m 17, n 40 or 41, k 24 or 40),
// each step against the float64 reference of test/util/gemm-reference.ts within its bound: a
// bias per column with GELU (tanh approximation) and a residual, α·AB + β·C with ReLU, SiLU with
// an odd n (the last column pair holds one column). Float8 with scales: kernels-gemm-fp8.test.ts.
import { describe, expect, test } from "vitest";
import { gemm, sim } from "tirx-ts";
import { checkGemm, type GemmSpec } from "./util/gemm-reference.js";

const dev = sim();
const small = { bm: 64, bn: 64, stages: 2 } as const;

describe("gemm() epilogues on the simulator against float64", () => {
  const cases: readonly (GemmSpec & { name: string })[] = [
    {
      name: "bias (float32), GELU, residual (bfloat16) → bfloat16",
      ...{ m: 17, n: 40, k: 24, dtype: "bfloat16", transB: true, outDtype: "bfloat16" },
      ...{ bias: "float32", activation: "gelu", residual: "bfloat16" },
    },
    {
      name: "α·AB + β·C (float16), bias (bfloat16), ReLU → float32",
      ...{ m: 17, n: 40, k: 24, dtype: "float16", outDtype: "float32" },
      ...{ alpha: 0.75, beta: -1.5, c: "float16", bias: "bfloat16", activation: "relu" },
    },
    {
      name: "SiLU with n odd (41 columns; B's rows padded to 48) → float16",
      ...{ m: 17, n: 41, k: 24, dtype: "float16", outDtype: "float16", activation: "silu" },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const { ratio, at } = checkGemm(gemm, dev, { ...c, config: small });
      expect(ratio, at).toBeLessThanOrEqual(1);
    });
  }
});
