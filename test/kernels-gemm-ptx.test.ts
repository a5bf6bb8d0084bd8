// makeGemm's PTX for sm_90a, assembled by ptxas: the default large-shape configuration
// (128 × 256 tiles, 4 stages, two consumer warpgroups) with a bias and GELU at 4096³ (A · Bᵀ:
// K-major B) and with an MN-major B (NN: B [k, n], the descriptor's transpose bit), and the
// split-K kernels; and gemm()'s tensor (TX9002) and option (TX9001) errors, at the caller's line.
import { describe, expect, test } from "vitest";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { gemm, sim, tensor } from "tirx-ts";
import { GEMM_CONFIGS, makeGemm, type GemmSizes } from "@tirx-ts/kernels";
import type { PrimFunc } from "@tirx-ts/core";
import { assembleLater } from "./util/ptxas-deferred.js";
import { errorOf } from "./util/error-of.js";

const ptx = (fn: PrimFunc): string => compileToPtx(fn, { arch: "sm_90a" }).text;
const lines = (text: string, re: RegExp): string[] =>
  [...new Set(text.split("\n").filter((l) => re.test(l)))].map((l) => l.trim());
const count = (text: string, re: RegExp): number =>
  text.split("\n").filter((l) => re.test(l)).length;
const large = GEMM_CONFIGS.find((r) => r.when === undefined)!.config;

describe("makeGemm's PTX (sm_90a, ptxas)", () => {
  test("128 × 256 tiles, bias and GELU, A · Bᵀ: TMA boxes, m64n256k16, tanh.approx", () => {
    const s: GemmSizes = {
      ...{ m: 4096, n: 4096, k: 4096, dtype: "bfloat16", transB: true, config: large },
      ...{ bias: "float32", activation: "gelu" },
    };
    const text = ptx(makeGemm(s).main);
    assembleLater(text, "sm_90a", "gemm 128x256 bias gelu");
    expect(lines(text, /wgmma\.mma_async|cp\.async\.bulk\.tensor/).map((l) => l.split(" ")[0]))
      .toMatchInlineSnapshot(`
      [
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
      ]
    `);
    // Four k16 steps per 64-wide K-tile; one tanh per accumulator (64 × 256 / 128 threads).
    expect(count(text, /wgmma\.mma_async/)).toBe(4);
    expect(count(text, /tanh\.approx\.f32/)).toBe(128);
    // GELU's constants as PyTorch's gelu(approximate="tanh") defines them, √(2/π) and
    // 0.044715·√(2/π), float32 (PTX's 0f form): a wrong digit is below the numeric tests' bound.
    const f32 = (x: number) => {
      const b = new DataView(new ArrayBuffer(4));
      b.setFloat32(0, x);
      return `0f${b.getUint32(0).toString(16).toUpperCase().padStart(8, "0")}`;
    };
    const k = Math.sqrt(2 / Math.PI);
    for (const c of [f32(k), f32(k * 0.044715)]) expect(text, c).toContain(c);
    // Whole tiles (4096 is a multiple of 128 and 256): no guard per element, and each pair of
    // bfloat16 columns is one 4-byte store.
    expect(count(text, /st\.global/)).toBe(64);
    expect(count(text, /st\.global\.b32/)).toBe(64);
    // One bias load per column this thread stores (64 of them), shared by its two rows; GELU
    // reads its argument through one binding (it read the bias and recomputed v at each of its 4
    // uses before: 512 loads).
    expect(count(text, /ld\.global/)).toBe(64);
  });

  test("NN (B [k, n], MN-major) and split-K kernels assemble", () => {
    const nn = makeGemm({
      ...{ m: 200, n: 72, k: 136, dtype: "float16", outDtype: "float32" },
      config: { bm: 128, bn: 128, stages: 4 },
    });
    const split = makeGemm({
      ...{ m: 16, n: 64, k: 512, dtype: "bfloat16", transB: true, residual: "bfloat16" },
      config: { bm: 64, bn: 64, stages: 4, splitK: 4 },
    });
    const text = ptx(nn.main);
    assembleLater(text, "sm_90a", "gemm NN 128x128");
    assembleLater(ptx(split.main), "sm_90a", "gemm split-K main");
    assembleLater(ptx(split.finish!), "sm_90a", "gemm split-K epilogue");
    expect(split.config.splitK).toBe(4);
    // B's 128-column tile is two 64-column boxes of an MN-major operand.
    expect(count(text, /cp\.async\.bulk\.tensor/)).toBe(3);
    expect(ptx(split.main)).toMatch(/red\.global\.add\.f32/);
  });
});

describe("gemm()'s errors", () => {
  const dev = sim();
  const t = (shape: number[], dtype = "bfloat16") => tensor.zeros(shape, dtype as "bfloat16", dev);
  const a = t([17, 24]);
  const b = t([24, 40]);
  test("tensors that disagree are TX9002 at the caller's line", () => {
    const cases: readonly [() => unknown, RegExp][] = [
      [() => gemm({} as never, b), /a must be a device tensor \[m, k\]/],
      [() => gemm(a, t([32, 40])), /a's k \(24.*b's k \(32, of \[32, 40\]\) differ \(at /],
      [
        () => gemm(a, b, { transB: true }),
        /a's k \(24.*b's k \(40.*stored \[n, k\]\) differ; b read as \[k, n\] would agree: pass transB: false \(at /,
      ],
      // B given [n, k] (a weight) without transB, and A given [k, m] without transA.
      [
        () => gemm(a, t([40, 24])),
        /differ; b read as \[n, k\] would agree: pass transB: true \(at /,
      ],
      [
        () => gemm(t([24, 17]), b),
        /differ; a read as \[k, m\] would agree: pass transA: true \(at /,
      ],
      [() => gemm(t([17, 24], "float32"), b), /a's dtype must be one of float16/],
      [() => gemm(a, b, { bias: t([17]) }), /bias must be \[n\] = \[40\]/],
      [() => gemm(a, b, { c: t([40, 17]) }), /c must be \[m, n\] = \[17, 40\]/],
      [
        () => gemm(a, b, { out: t([17, 40], "float16"), outDtype: "float32" }),
        /out's dtype must be outDtype \(float32\)/,
      ],
      [
        () => gemm(a, b, { out: t([17, 40], "int32") }),
        /out's dtype is D's, one of float32, float16, bfloat16 \(without outDtype, out's own sets D's\), got int32/,
      ],
    ];
    for (const [f, re] of cases) {
      const e = errorOf(f);
      expect([e.code, e.message]).toEqual(["TX9002", expect.stringMatching(re)]);
      expect(e.span?.file).toMatch(/kernels-gemm-ptx\.test\.ts$/);
    }
  });
  test("options the kernel does not offer are TX9001", () => {
    const s = tensor(Float32Array.of(1), { shape: [1], dtype: "float32", device: dev });
    const cases: readonly [() => unknown, RegExp][] = [
      [() => gemm(a, b, { bais: s } as never), /no option "bais"; did you mean "bias"\?/],
      [() => gemm(a, b, { scaleA: s }), /scaleA given without scaleB/],
      [() => gemm(a, b, { scaleA: s, scaleB: s }), /scales of float8 inputs/],
      [() => gemm(a, b, { beta: 2 }), /beta scales C: give c/],
      [() => gemm(a, b, { activation: "tanh" as never }), /activation is "relu", "gelu" or "silu"/],
      [
        () => gemm(a, b, { config: { bm: 64, bn: 96, stages: 2 } }),
        /config\.bn is a multiple of 64 in 64 … 256 \(.*MN-major B\), got 96/,
      ],
      [
        // K-major B: 32-column steps, and nothing between them.
        () => gemm(a, t([40, 24]), { transB: true, config: { bm: 64, bn: 112, stages: 2 } }),
        /config\.bn is a multiple of 32 in 64 … 256 with a K-major B .*, got 112/,
      ],
      [
        () => gemm(a, b, { config: { bm: 128, bn: 256, stages: 8 } }),
        /over 232448; at most 4 stages/,
      ],
      [
        () => gemm(a, b, { config: { cluster: 2 } as never }),
        /config needs bm, bn and stages .*, missing bm, bn, stages/,
      ],
      [() => gemm(a, b, { config: null as never }), /config is \{ bm, bn, stages, bk\?, cluster\?/],
    ];
    for (const [f, re] of cases) {
      const e = errorOf(f);
      expect([e.code, e.message]).toEqual(["TX9001", expect.stringMatching(re)]);
    }
  });
});
