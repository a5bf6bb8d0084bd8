// gemm() of @tirx-ts/kernels on the simulated device, for sizes that are not tile multiples:
// the four layouts (NN, NT, TN, TT: transA reads a stored [k, m], transB b stored [n, k]) at
// m 17, n 40, k 24 (A's rows with transA are 17 elements, 34 bytes: gemm() reads a zero-padded
// copy, TMA's 16-byte pitch), one row (m 1) with k 88 (two K-tiles, the second cut by the
// tensor's edge: TMA fills zeros) and each output dtype, against a float64 reference of the
// rounded inputs within test/util/gemm-reference.ts's bound (float32 accumulation and the
// output's rounding). A launch with a simulator report would throw (compile's hazards "throw").
import { describe, expect, test } from "vitest";
import { gemm, sim } from "tirx-ts";
import { checkGemm, type GemmSpec } from "./util/gemm-reference.js";

const dev = sim();
/** The small configuration: one consumer warpgroup, 64 × 64 tiles, a 2-stage ring. */
const small = { bm: 64, bn: 64, stages: 2 } as const;

describe("gemm() on the simulator: layouts and odd sizes against float64", () => {
  const cases: readonly (GemmSpec & { name: string })[] = [
    { name: "NN bfloat16 → float32", m: 17, n: 40, k: 24, dtype: "bfloat16", outDtype: "float32" },
    {
      name: "NT bfloat16 → bfloat16",
      m: 17,
      n: 40,
      k: 24,
      dtype: "bfloat16",
      transB: true,
      outDtype: "bfloat16",
    },
    {
      name: "TN float16 → float16 (A padded)",
      m: 17,
      n: 40,
      k: 24,
      dtype: "float16",
      transA: true,
      outDtype: "float16",
    },
    {
      name: "TT bfloat16 → float32 (A padded)",
      m: 17,
      n: 40,
      k: 24,
      dtype: "bfloat16",
      transA: true,
      transB: true,
      outDtype: "float32",
    },
    {
      name: "NT one row, k 88 (a K-tile cut by the edge)",
      m: 1,
      n: 64,
      k: 88,
      dtype: "bfloat16",
      transB: true,
      outDtype: "float32",
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const { ratio, at, d } = checkGemm(gemm, dev, { ...c, config: small });
      expect([d.shape, d.dtype]).toEqual([[c.m, c.n], c.outDtype]);
      expect(ratio, at).toBeLessThanOrEqual(1);
    });
  }
});
