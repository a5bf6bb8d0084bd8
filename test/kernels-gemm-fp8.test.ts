// gemm() with float8 inputs on the simulated device: e4m3 × e4m3 and e5m2 × e4m3 (both operands
// K-major: a [m, k], b [n, k] with transB) with per-tensor scales (torch._scaled_mm's scale_a ·
// scale_b multiplies the product before the rest of the epilogue), against the float64
// reference of test/util/gemm-reference.ts; and the layouts float8 cannot take (wgmma has no
// transposed float8 operand) refused with TX9001 naming the fix.
import { describe, expect, test } from "vitest";
import { gemm, sim, tensor } from "tirx-ts";
import {
  gemmTileRegisterBudget,
  gemmTileRegisters,
  gemmTuneCandidates,
  gemmTuneKey,
  makeGemm,
} from "@tirx-ts/kernels";
import { checkGemm, type GemmSpec } from "./util/gemm-reference.js";
import { errorOf } from "./util/error-of.js";
import { assembleLater } from "./util/ptxas-deferred.js";
import { compileToPtx } from "@tirx-ts/codegen-ptx";

const dev = sim();
const small = { bm: 64, bn: 64, stages: 2 } as const;

describe("gemm() with float8 inputs on the simulator against float64", () => {
  const cases: readonly (GemmSpec & { name: string })[] = [
    {
      name: "float8 e4m3 × e4m3 with scales 0.5 and 3 → bfloat16",
      ...{ m: 17, n: 40, k: 48, dtype: "float8_e4m3", transB: true, outDtype: "bfloat16" },
      scales: [0.5, 3],
    },
    {
      name: "float8 e5m2 × e4m3 with scales, bias and residual → float32",
      ...{ m: 17, n: 40, k: 40, dtype: "float8_e5m2", dtypeB: "float8_e4m3", transB: true },
      ...{ outDtype: "float32", scales: [0.25, 2], bias: "float16", residual: "float32" },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const { ratio, at } = checkGemm(gemm, dev, { ...c, config: small });
      expect(ratio, at).toBeLessThanOrEqual(1);
    });
  }

  test("an MN-major float8 operand is TX9001 naming the K-major layout", () => {
    const a = tensor.zeros([16, 32], "float8_e4m3", dev);
    const b = tensor.zeros([32, 16], "float8_e4m3", dev);
    const e = errorOf(() => gemm(a, b));
    expect(e.code).toBe("TX9001");
    expect(e.message).toMatch(/float8 operands must be K-major .*transB true.*transpose/);
    expect(e.span?.file).toMatch(/kernels-gemm-fp8\.test\.ts$/);
    const base = { m: 16, n: 16, k: 32, dtype: "float8_e4m3", config: small } as const;
    expect(errorOf(() => makeGemm({ ...base, transA: true, transB: true })).code).toBe("TX9001");
  });
});

describe("float8 accumulation: promoted per K-tile by default, fastAccum on request", () => {
  const sizes = {
    m: 64,
    n: 64,
    k: 512,
    dtype: "float8_e4m3",
    transB: true,
    scales: true,
    config: small,
  } as const;
  /** The PTX of the main kernel's float32 adds (the promotion adds acc += tmp per K-tile). */
  const adds = (ptx: string): number => (ptx.match(/^\s*add(\.rn)?\.f32\s/gm) ?? []).length;

  test("the default sums each K-tile in a second register tile and adds it to the accumulator", () => {
    const promoted = compileToPtx(makeGemm(sizes).main, { arch: "sm_90a" }).text;
    const fast = compileToPtx(makeGemm({ ...sizes, fastAccum: true }).main, {
      arch: "sm_90a",
    }).text;
    assembleLater(promoted, "sm_90a", "gemm float8 promoted");
    assembleLater(fast, "sm_90a", "gemm float8 fastAccum");
    // bn 64: 32 accumulator slots per thread (64 × 64 over 128 threads), one add each in the
    // K loop's body; nothing else differs in the float32 adds.
    expect(adds(promoted) - adds(fast)).toBe(32);
  });

  test("both are within the float64 reference's bound on the simulator, and fastAccum's key differs", () => {
    const c = {
      m: 17,
      n: 40,
      k: 300,
      dtype: "float8_e4m3",
      transB: true,
      outDtype: "float32",
      scales: [0.5, 2],
      config: small,
    } as const;
    for (const fastAccum of [false, true]) {
      const { ratio, at } = checkGemm(gemm, dev, { ...c, fastAccum });
      expect(ratio, at).toBeLessThanOrEqual(1);
    }
    const key = (fastAccum: boolean) =>
      JSON.stringify(gemmTuneKey({ ...sizes, fastAccum, outDtype: "bfloat16" }));
    expect(key(true)).not.toBe(key(false));
  });

  test("fastAccum is refused with 16-bit inputs, with block scales, and when not a boolean", () => {
    const e16 = errorOf(() =>
      makeGemm({ ...sizes, dtype: "bfloat16", scales: false, fastAccum: true }),
    );
    expect(e16.code).toBe("TX9001");
    expect(e16.message).toMatch(/fastAccum is for float8 inputs/);
    const eb = errorOf(() => makeGemm({ ...sizes, scales: "block", fastAccum: true }));
    expect(eb.code).toBe("TX9001");
    expect(eb.message).toMatch(/not offered with scales "block"/);
    const a = tensor.zeros([16, 32], "float8_e4m3", dev);
    const b = tensor.zeros([16, 32], "float8_e4m3", dev);
    const eo = errorOf(() => gemm(a, b, { transB: true, fastAccum: 1 as unknown as boolean }));
    expect(eo.code).toBe("TX9001");
    expect(eo.message).toMatch(/fastAccum is a boolean/);
  });
});

describe("register tiles of sums within the consumers' registers (makeGemm's rule)", () => {
  const base = { m: 8192, n: 8192, k: 8192, dtype: "float8_e4m3", transB: true } as const;

  test("promoted float8 takes bn ≤ 192 beside one or two consumer warpgroups; fastAccum and 16-bit inputs take 256", () => {
    // Two tiles of bn / 2: 256 at bn 256, 224 at bn 224, over setmaxnreg 232's 200.
    for (const [scales, bn] of [
      ["tensor", 256],
      ["tensor", 224],
      ["block", 256],
    ] as const) {
      for (const bm of [64, 128] as const) {
        const e = errorOf(() => makeGemm({ ...base, scales, config: { bm, bn, stages: 3 } }));
        expect([e.code, e.message]).toEqual([
          "TX9001",
          expect.stringMatching(
            new RegExp(
              `bm ${bm}, bn ${bn} needs ${bn} float32 registers .* over the 200 .*; bn 192 fits$`,
            ),
          ),
        ]);
      }
    }
    // One tile: the accumulator's 128.
    const ok = [
      { ...base, scales: "tensor", fastAccum: true, config: { bm: 128, bn: 256, stages: 3 } },
      { ...base, dtype: "bfloat16", config: { bm: 128, bn: 256, stages: 3 } },
      { ...base, scales: "block", config: { bm: 128, bn: 192, stages: 3 } },
      { ...base, scales: "block", config: { bm: 192, bn: 128, stages: 3 } },
    ] as const;
    for (const s of ok) {
      const text = compileToPtx(makeGemm(s).main, { arch: "sm_90a" }).text;
      assembleLater(text, "sm_90a", `${s.dtype} bm ${s.config.bm} bn ${s.config.bn}`);
    }
  });

  test("gemmTileRegisters counts the accumulator, a promoted K-tile's sums and overlap's second tile; the budget is setmaxnreg's less 32", () => {
    expect(gemmTileRegisters({ bm: 128, bn: 256, stages: 3 }, false)).toBe(128);
    expect(gemmTileRegisters({ bm: 128, bn: 192, stages: 3 }, true)).toBe(192);
    expect(gemmTileRegisters({ bm: 192, bn: 128, stages: 3, overlap: true }, true)).toBe(192);
    expect([64, 128, 192].map((bm) => gemmTileRegisterBudget(bm as 64 | 128 | 192))).toEqual([
      200, 200, 128,
    ]);
    // gemm()'s tuning tries no configuration the rule refuses.
    for (const promoted of [false, true]) {
      const shape = { m: 8192, n: 8192, k: 8192, inBytes: 1 as const, kMajorB: true, promoted };
      for (const c of gemmTuneCandidates(shape))
        expect(gemmTileRegisters(c, promoted)).toBeLessThanOrEqual(gemmTileRegisterBudget(c.bm));
    }
  });
});
