// wgmma.mma_async with float8 operands (m64nNk32, SS, K-major; f32 or f16 accumulators) on the
// simulator against an exact float64 reference at 64 × N × 32·steps: products of float8 values
// are exact and so are their sums in float64 (a few significant bits each, over a span of under
// 53 binades), so the simulator, which sums each instruction's products in float64 and rounds
// once to D's type, must equal the reference rounded the same way after each k32 step. The GPU keeps fewer bits while it accumulates; test/gpu/wgmma-fp8.test.ts judges it within
// WGMMA_FP8_BOUND. Also: the PTX (snapshot, ptxas for sm_90a) and the refusals of forms float8
// lacks (TX7004).
import { describe, expect, it } from "vitest";
import { isTirxError, verify } from "@tirx-ts/core";
import { T, explainTile } from "tirx-ts";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { assembleLater } from "./util/ptxas-deferred.js";
import {
  fp8GemmAsyncKernel,
  fp8Reference,
  fp8Values,
  fp8WgmmaKernel,
  type Fp8Wgmma,
} from "./util/wgmma-fp8-kernels.js";
import { errorOf } from "./util/error-of.js";

const CASES: readonly Fp8Wgmma[] = [
  { n: 8, a: "float8_e4m3", b: "float8_e4m3", acc: "float32", swizzle: 1 },
  { n: 8, a: "float8_e5m2", b: "float8_e4m3", acc: "float16", swizzle: 2 },
  { n: 8, a: "float8_e4m3", b: "float8_e5m2", acc: "float32", swizzle: 0 },
];

describe("wgmma float8 (m64nNk32) on the simulator", () => {
  for (const o of CASES) {
    it(`${o.a} × ${o.b} → ${o.acc}, N ${o.n}, swizzle ${o.swizzle}: D equals the exact products' sum, rounded once per k32 step`, () => {
      const { fn, K } = fp8WgmmaKernel(o);
      const av = fp8Values(o.a, 64 * K, 11);
      // Small B values keep e5m2 × e5m2 sums inside float16 when D is float16.
      const bv = fp8Values(o.b, o.n * K, 29).map((v) => (o.acc === "float16" ? v / 2 ** 10 : v));
      const d = simZeros([64, o.n], o.acc);
      const r = runSim(
        verify(fn),
        [
          simTensor(av, { shape: [64, K], dtype: o.a }),
          simTensor(bv, { shape: [o.n, K], dtype: o.b }),
          d,
        ],
        { hazards: "collect" },
      );
      expect(r.reports).toEqual([]);
      const got = Array.from(d.toArray() as ArrayLike<number>);
      const want = fp8Reference(
        av,
        Array.from(simTensor(bv, { shape: [o.n, K], dtype: o.b }).toArray() as ArrayLike<number>),
        o.n,
        K,
        o.acc,
      );
      expect(got).toEqual(want);
      const text = compileToPtx(fn, { arch: "sm_90a" }).text;
      assembleLater(text, "sm_90a", fn.name);
      if (o.swizzle === 2) {
        // The k32 instruction with its types and no transpose immediates, twice (K = 64).
        const lines = text
          .split("\n")
          .filter((l) => l.includes("wgmma.mma_async"))
          .map((l) => l.trim().replace(/\{[^}]*\}/, "{…}"));
        expect(lines).toMatchInlineSnapshot(`
          [
            "wgmma.mma_async.sync.aligned.m64n8k32.f16.e5m2.e4m3 {…}, %rd9, %rd10, %p3, 1, 1;",
            "wgmma.mma_async.sync.aligned.m64n8k32.f16.e5m2.e4m3 {…}, %rd11, %rd12, %p4, 1, 1;",
          ]
        `);
      }
    });
  }

  it("refuses what float8 wgmma lacks: a transpose, A in registers, another shape (TX7004)", () => {
    const codes: string[] = [];
    const attempts: ((acc: ReturnType<typeof T.alloc_local>, d: unknown) => void)[] = [
      (acc, d) =>
        T.ptx.wgmma.mma_async("m64n8k32", "float8_e4m3", acc, 0, d as never, d as never, {
          trans_b: 1,
        }),
      (acc, d) => T.ptx.wgmma.mma_async("m64n8k32", "float8_e4m3", acc, 0, acc, d as never),
      (acc, d) => T.ptx.wgmma.mma_async("m64n8k16", "float8_e4m3", acc, 0, d as never, d as never),
      (acc, d) =>
        T.ptx.wgmma.mma_async("m64n8k16", "float16", acc, 0, d as never, d as never, {
          acc_dtype: "float16",
        }),
    ];
    for (const f of attempts) {
      try {
        T.function("bad", {}, () => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
          const acc = T.alloc_local([4], "float32", { name: "acc" });
          f(acc, T.uint64(0));
        });
      } catch (e) {
        if (isTirxError(e)) codes.push(e.code);
      }
    }
    expect(codes).toEqual(["TX7004", "TX7004", "TX7004", "TX7004"]);
  });

  it("T.tile.wg.gemm_async on float8 tiles: one m64nNk32 per k32 step, D exact per step", () => {
    const { fn, K } = fp8GemmAsyncKernel(16, "float8_e4m3", "float8_e5m2", "64B");
    expect(explainTile(fn).find((l) => l.includes("gemm_async"))).toMatch(
      /wgmma m64n16k32 \.e4m3\.e5m2 ×2 \(SS: A K-major, 64B swizzle: SBO 512 B, k32 step \+32 B; B K-major/,
    );
    const av = fp8Values("float8_e4m3", 64 * K, 7);
    const bv = fp8Values("float8_e5m2", 16 * K, 9);
    const c = simZeros([64, 16], "float32");
    const r = runSim(
      verify(fn),
      [
        simTensor(av, { shape: [64, K], dtype: "float8_e4m3" }),
        simTensor(bv, { shape: [16, K], dtype: "float8_e5m2" }),
        c,
      ],
      { hazards: "collect" },
    );
    expect(r.reports).toEqual([]);
    expect(Array.from(c.toArray() as ArrayLike<number>)).toEqual(
      fp8Reference(av, bv, 16, K, "float32"),
    );
    assembleLater(compileToPtx(fn, { arch: "sm_90a" }).text, "sm_90a", fn.name);
  });

  it("T.tile.wg.gemm_async refuses a transposed float8 operand (TX2022)", () => {
    const e = errorOf(() =>
      T.function("tile_fp8_mn", { B: T.Tensor([64, 16], "float8_e4m3") }, () => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const sA = T.alloc_shared([64, 64], "float8_e4m3", {
          layout: T.swizzle_mode("64B"),
          align: 512,
        });
        const sB = T.alloc_shared([64, 16], "float8_e4m3", { align: 512 });
        const acc = T.alloc_local([64, 16], "float32", {
          layout: T.layout.wgmma_tile_layout("D", 64, 16, "float32"),
        });
        T.tile.wg.gemm_async(acc, sA, sB, { transB: false });
      }),
    );
    expect([e.code, /K-major/.test(e.message)]).toEqual(["TX2022", true]);
  });
});
