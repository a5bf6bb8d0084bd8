// gemm()'s fused epilogue on the simulated device at odd sizes (m 17, n 40 or 41, k 24 or 40),
// each step against the float64 reference of test/util/gemm-reference.ts within its bound: a
// bias per column with GELU (tanh approximation) and a residual, α·AB + β·C with ReLU, SiLU with
// an odd n (the last column pair holds one column); empty m, n or k as torch.matmul. Float8 with
// scales: kernels-gemm-fp8.test.ts.
import { describe, expect, test } from "vitest";
import { gemm, gemmChoice, sim, tensor } from "tirx-ts";
import { errorOf } from "./util/error-of.js";
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

// Empty dimensions, as torch.matmul: m or n of 0 gives an empty D and launches nothing; k of 0
// gives the epilogue of a zero product (α·0 + β·C, bias, activation, residual, the cast).
describe("gemm() with an empty dimension", () => {
  const kZero: readonly (GemmSpec & { name: string })[] = [
    {
      name: "k 0: β·C + bias, GELU, residual → bfloat16",
      ...{ m: 17, n: 40, k: 0, dtype: "bfloat16", transB: true, outDtype: "bfloat16" },
      ...{ beta: 0.5, c: "float32", bias: "float32", activation: "gelu", residual: "bfloat16" },
    },
    {
      name: "k 0: float8 with block scales → float32 (bias only)",
      ...{ m: 9, n: 130, k: 0, dtype: "float8_e4m3", transB: true, outDtype: "float32" },
      ...{ bias: "float16", blockScales: true },
    },
    {
      name: "k 0: float8 with per-tensor scales → float16 (zeros)",
      ...{ m: 5, n: 24, k: 0, dtype: "float8_e5m2", transB: true, outDtype: "float16" },
      ...{ scales: [2, 0.5] as const },
    },
  ];
  for (const c of kZero) {
    test(c.name, () => {
      const { ratio, at } = checkGemm(gemm, dev, c);
      expect(ratio, at).toBeLessThanOrEqual(1);
    });
  }

  test("m or n of 0: an empty D of the output dtype, or out itself; gemmChoice says no kernel", () => {
    for (const [m, n] of [
      [0, 8],
      [8, 0],
    ] as const) {
      const a = tensor.zeros([m, 16], "float16", dev);
      const b = tensor.zeros([16, n], "float16", dev);
      const d = gemm(a, b, { outDtype: "float32" });
      expect([d.shape, d.dtype]).toEqual([[m, n], "float32"]);
      const out = tensor.zeros([m, n], "float16", dev);
      expect(gemm(a, b, { out })).toBe(out);
      const e = errorOf(() => gemmChoice(a, b));
      expect([e.code, e.message]).toEqual(["TX9001", expect.stringMatching(/D is empty/)]);
    }
    // Shapes are still checked: a bias of the wrong length is TX9002.
    const bias = tensor.zeros([3], "float32", dev);
    const e = errorOf(() =>
      gemm(tensor.zeros([0, 16], "float16", dev), tensor.zeros([16, 8], "float16", dev), { bias }),
    );
    expect(e.code).toBe("TX9002");
  });

  test("k 0: gemmChoice is that of the k 1 call gemm() makes", () => {
    const a = tensor.zeros([17, 0], "float16", dev);
    const b = tensor.zeros([0, 40], "float16", dev);
    const one = gemmChoice(
      tensor.zeros([17, 1], "float16", dev),
      tensor.zeros([1, 40], "float16", dev),
    );
    expect(gemmChoice(a, b).config).toEqual(one.config);
  });
});

describe("the activations on a NaN sum", () => {
  test('"relu" is max.f32 with 0, so a NaN row becomes 0 (CUDA\'s fmaxf); no activation, "gelu" and "silu" keep NaN', () => {
    // Row 0 sums NaN · 1 + 1 · 1; row 1 sums 2 · 1 + (−3) · 1 = −1.
    const a = tensor(Float32Array.of(NaN, 1, 2, -3), {
      shape: [2, 2],
      dtype: "float16",
      device: dev,
    });
    const b = tensor(Float32Array.of(1, 1, 1, 1), { shape: [2, 2], dtype: "float16", device: dev });
    const run = (activation?: "relu" | "gelu" | "silu"): number[] =>
      Array.from(
        gemm(a, b, {
          outDtype: "float32",
          config: small,
          ...(activation ? { activation } : {}),
        }).toArray() as Float32Array,
      );
    expect(run()).toEqual([NaN, NaN, -1, -1]);
    expect(run("relu")).toEqual([0, 0, 0, 0]);
    for (const act of ["gelu", "silu"] as const) expect(run(act).slice(0, 2)).toEqual([NaN, NaN]);
  });
});
