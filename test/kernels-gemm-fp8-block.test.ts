// gemm() with float8 block scales (DeepSeek-V3's fine-grained scaling: a's scales [m, ⌈k/128⌉],
// b's [⌈n/128⌉, ⌈k/128⌉]) on the simulated device, against the float64 reference of the same
// scaling (test/util/gemm-reference.ts: Σ_kb sA·sB·Σ_{x in kb} a·b, the bound with 3 float32
// roundings per K block): several K blocks and a partial last one (k 300: blocks of 128, 128,
// 44), n blocks that straddle a tile (bn 192: the second tile's columns 192 … 383 lie in blocks
// 1 and 2), split-K, and the shapes gemm() refuses (TX9002).
import { describe, expect, test } from "vitest";
import { gemm, sim, tensor } from "tirx-ts";
import { makeGemm } from "@tirx-ts/kernels";
import { checkGemm, type GemmSpec } from "./util/gemm-reference.js";
import { errorOf } from "./util/error-of.js";

const dev = sim();

describe("gemm() with float8 block scales on the simulator against float64", () => {
  const cases: readonly (GemmSpec & { name: string })[] = [
    {
      name: "e4m3, m 20, n 200, k 300, bn 192: a partial K block, an n block across two tiles",
      ...{ m: 20, n: 200, k: 300, dtype: "float8_e4m3", transB: true, outDtype: "float32" },
      ...{ blockScales: true, config: { bm: 64, bn: 192, stages: 2 } },
    },
    {
      name: "e5m2 × e4m3, split-K 2, bias → bfloat16",
      ...{ m: 20, n: 72, k: 300, dtype: "float8_e5m2", dtypeB: "float8_e4m3", transB: true },
      ...{ outDtype: "bfloat16", bias: "float32", blockScales: true },
      config: { bm: 64, bn: 64, stages: 2, splitK: 2 },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const { ratio, at } = checkGemm(gemm, dev, c);
      expect(ratio, at).toBeLessThanOrEqual(1);
    });
  }

  test("scale tensors of other shapes are TX9002 naming both forms", () => {
    const a = tensor.zeros([20, 300], "float8_e4m3", dev);
    const b = tensor.zeros([136, 300], "float8_e4m3", dev);
    const f32 = (shape: number[]) => tensor.zeros(shape, "float32", dev);
    const e = errorOf(() => gemm(a, b, { transB: true, scaleA: f32([20, 3]), scaleB: f32([1]) }));
    expect(e.code).toBe("TX9002");
    expect(e.message).toMatch(/scaleB must be .*scaleA \[20, 3\] and scaleB \[2, 3\]/);
    expect(e.span?.file).toMatch(/kernels-gemm-fp8-block\.test\.ts$/);
    const e2 = errorOf(() =>
      gemm(a, b, { transB: true, scaleA: f32([20, 2]), scaleB: f32([2, 3]) }),
    );
    expect(e2.code).toBe("TX9002");
    expect(e2.message).toMatch(/scaleA must be float32 \[20, 3\]/);
  });

  test("block scales with 16-bit inputs are TX9001", () => {
    const base = { m: 16, n: 16, k: 32, dtype: "float16", scales: "block" } as const;
    const e = errorOf(() => makeGemm({ ...base, config: { bm: 64, bn: 64, stages: 2 } }));
    expect(e.code).toBe("TX9001");
    expect(e.message).toMatch(/scales of float8 inputs/);
  });
});
