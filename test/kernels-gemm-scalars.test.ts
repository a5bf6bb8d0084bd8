// gemm()'s α and β are launch arguments: one kernel for every α ≠ 1 and every β ∉ {0, 1}, counted
// (gemmBuildStats.kernels and the runtime's compile cache), not timed. On the simulator, odd sizes
// (m 17, n 40, k 136) against the float64 reference at each value, with and without split-K (the
// finishing kernel takes them), and the same bits as makeGemm's build with the values as
// constants; β = 0 keeps its own kernel that reads no C (a NaN there does not reach D), β without c
// is refused at any value; the builder's alphaAtLaunch / betaAtLaunch errors.
import { describe, expect, test } from "vitest";
import { compile, gemm, makeGemm, sim, tensor, type DeviceTensor } from "tirx-ts";
import { checkGemm, randomTensor, type GemmSpec } from "./util/gemm-reference.js";
import { uniformFrom } from "./util/lcg.js";
import { counted } from "./util/counted.js";
import { errorOf } from "./util/error-of.js";

const dev = sim();
const host = (t: DeviceTensor) => Array.from(t.toArray() as Float32Array);

const base = {
  ...{ m: 17, n: 40, k: 24, dtype: "float16", transB: true, outDtype: "float32" },
  ...{ c: "float16", bias: "bfloat16", activation: "relu" },
} as const satisfies GemmSpec;

describe("gemm(): α and β at launch", () => {
  for (const [label, config] of [
    ["one pass", { bm: 64, bn: 64, stages: 2 }],
    ["split-K 2 (the finishing kernel takes α and β)", { bm: 64, bn: 64, stages: 2, splitK: 2 }],
  ] as const) {
    test(`${label}: α 0.75, β −1.5, then α −3, β 0.25 and α 2, β 4 build and compile nothing more; each within the float64 bound`, () => {
      const values = [
        [0.75, -1.5],
        [-3, 0.25],
        [2, 4],
      ] as const;
      for (const [i, [alpha, beta]] of values.entries()) {
        const r = counted(() => checkGemm(gemm, dev, { ...base, k: 136, alpha, beta, config }));
        expect(r.value.ratio, `α ${alpha}, β ${beta}: ${r.value.at}`).toBeLessThanOrEqual(1);
        if (i > 0) expect([r.built, r.compiled], `α ${alpha}, β ${beta}`).toEqual([0, 0]);
      }
    });
  }

  test("the same bits as makeGemm with α and β constants", () => {
    const rnd = uniformFrom(3);
    const a = randomTensor([17, 24], "float16", dev, rnd);
    const b = randomTensor([40, 24], "float16", dev, rnd);
    const c = randomTensor([17, 40], "float16", dev, rnd);
    const config = { bm: 64, bn: 64, stages: 2 } as const;
    const [alpha, beta] = [0.3, -0.7];
    const d = gemm(a, b, { transB: true, outDtype: "float32", c, alpha, beta, config });
    const k = makeGemm({
      ...{ m: 17, n: 40, k: 24, dtype: "float16", transB: true, outDtype: "float32" },
      ...{ c: "float16", alpha, beta, config },
    });
    const want = tensor.zeros([17, 40], "float32", dev);
    compile(k.main)(a, b, want, c);
    expect(host(d)).toEqual(host(want));
  });

  test("β = 0 is its own kernel, which reads no C: a NaN in C does not reach D", () => {
    const rnd = uniformFrom(4);
    const a = randomTensor([17, 24], "float16", dev, rnd);
    const b = randomTensor([40, 24], "float16", dev, rnd);
    const c = tensor(new Float32Array(17 * 40).fill(Number.NaN), {
      shape: [17, 40],
      dtype: "float16",
      device: dev,
    });
    const opts = {
      transB: true,
      outDtype: "float32",
      c,
      config: { bm: 64, bn: 64, stages: 2 },
    } as const;
    // A β ≠ 0 reads C: NaN everywhere. Then β = 0 after it: not that kernel launched with 0
    // (0 · NaN is NaN), but one that reads no C, so D is A·B.
    expect(host(gemm(a, b, { ...opts, beta: 0.5 })).every(Number.isNaN)).toBe(true);
    const zero = gemm(a, b, { ...opts, beta: 0 });
    const plain = gemm(a, b, { transB: true, outDtype: "float32", config: opts.config });
    expect(host(zero)).toEqual(host(plain));
    expect(host(zero).every(Number.isFinite)).toBe(true);
  });

  test("TX9001: β without c, whatever its value (1, the default, included)", () => {
    const a = tensor.zeros([16, 16], "float16", dev);
    const b = tensor.zeros([16, 16], "float16", dev);
    for (const beta of [1, 2, 0]) {
      const e = errorOf(() => gemm(a, b, { beta }));
      expect(e.code, `β ${beta}`).toBe("TX9001");
      expect(e.message).toMatch(/beta scales C: give c/);
      // k = 0 (the epilogue of a zero product) checks it too.
      const e0 = errorOf(() =>
        gemm(tensor.zeros([16, 0], "float16", dev), tensor.zeros([0, 16], "float16", dev), {
          beta,
        }),
      );
      expect(e0.code, `k 0, β ${beta}`).toBe("TX9001");
    }
  });
});

describe("makeGemm: alphaAtLaunch and betaAtLaunch", () => {
  const s = {
    m: 17,
    n: 40,
    k: 24,
    dtype: "float16",
    transB: true,
    config: { bm: 64, bn: 64, stages: 2 },
  } as const;

  test("the kernels take the float32 scalars alpha, beta after the epilogue's tensors (split-K: the finishing kernel)", () => {
    const names = (f: { params: readonly { name: string }[] }) => f.params.map((p) => p.name);
    const k = makeGemm({
      ...s,
      c: "float16",
      bias: "float32",
      alphaAtLaunch: true,
      betaAtLaunch: true,
    });
    expect(names(k.main)).toEqual(["A", "B", "D", "C", "bias", "alpha", "beta"]);
    const sk = makeGemm({ ...s, k: 136, config: { ...s.config, splitK: 2 }, alphaAtLaunch: true });
    expect(names(sk.main)).toEqual(["A", "B", "W"]);
    expect(names(sk.finish!)).toEqual(["W", "D", "alpha"]);
  });

  test("TX9001: a value with its AtLaunch, betaAtLaunch without c, a non-boolean", () => {
    for (const [spec, message] of [
      [
        { alpha: 2, alphaAtLaunch: true },
        /give alpha \(a constant of the kernel\) or alphaAtLaunch/,
      ],
      [{ c: "float16", beta: 2, betaAtLaunch: true }, /give beta .* or betaAtLaunch/],
      [{ betaAtLaunch: true }, /beta scales C: give c .* with betaAtLaunch/],
      [{ alphaAtLaunch: 1 }, /alphaAtLaunch is a boolean, got 1/],
    ] as const) {
      const e = errorOf(() => makeGemm({ ...s, ...(spec as object) }));
      expect(e.code, e.message).toBe("TX9001");
      expect(e.message).toMatch(message);
    }
  });
});
