// Float8 block scales with config.scaleLoad "tma" (A's scales staged by TMA with each K-tile on
// the stage's full mbarrier, DeepGEMM's design; kernel.ts's header): gemm() on the simulated
// device against the float64 reference of the same scaling (test/util/gemm-reference.ts), at odd
// sizes: m, n, k not tile multiples, a partial last K block (k 300: 128, 128, 44), rows past m
// (and past m rounded up to 4) zero-filled by TMA, one and two consumer warpgroups, split-K whose
// last slice runs past the last K block; the transposition of A's scales into the MN-major
// scratch; the main kernel's PTX (sm_90a) at 8192³ on 128 × 192 tiles through ptxas -v: no spills;
// the configuration's errors and the tuning candidates.
import { describe, expect, test } from "vitest";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { compile, gemm, sim, tensor } from "tirx-ts";
import {
  blockScaleShapeMN,
  gemmStageBytes,
  gemmTuneCandidates,
  makeGemm,
  makeScaleTransposeA,
  MAX_GEMM_SHARED,
  type GemmSizes,
} from "@tirx-ts/kernels";
import { checkGemm, type GemmSpec } from "./util/gemm-reference.js";
import { errorOf } from "./util/error-of.js";
import { findPtxas } from "./util/ptxas.js";
import { mbarrierInitCounts } from "./util/ptx-lines.js";
import { ptxasUsage } from "./util/flash-attention-sim.js";

const dev = sim();

describe('gemm() with block scales and scaleLoad "tma" on the simulator against float64', () => {
  const cases: readonly (GemmSpec & { name: string })[] = [
    {
      name: "e4m3, m 20, n 136, k 300, 64 × 192 tiles: rows 20 … 63 past m, a partial K block, a tile across two n blocks",
      ...{ m: 20, n: 136, k: 300, dtype: "float8_e4m3", transB: true, outDtype: "float32" },
      ...{ blockScales: true, config: { bm: 64, bn: 192, stages: 2, scaleLoad: "tma" } },
    },
    {
      name: "e5m2 × e4m3, m 70 (padded to 72) on two consumer warpgroups, split-K 2 past the last K block, bias → bfloat16",
      ...{ m: 70, n: 40, k: 300, dtype: "float8_e5m2", dtypeB: "float8_e4m3", transB: true },
      ...{ outDtype: "bfloat16", bias: "float32", blockScales: true, seed: 9 },
      config: { bm: 128, bn: 64, stages: 2, splitK: 2, scaleLoad: "tma" },
    },
    // k 1000: 8 K blocks, so A's scales go in as given, [70, 8], a [128, 4] box a stage (rows
    // 70 … 127 and the K blocks past the last zero-filled by TMA).
    {
      name: "e4m3, m 70, n 136, k 1000: A's scales as given (8 K blocks), split-K 2, a 128 × 192 tile across two n blocks, a partial K block",
      ...{ m: 70, n: 136, k: 1000, dtype: "float8_e4m3", transB: true, outDtype: "float32" },
      ...{ blockScales: true, seed: 5 },
      config: { bm: 128, bn: 192, stages: 3, splitK: 2, scaleLoad: "tma" },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const { ratio, at } = checkGemm(gemm, dev, c);
      expect(ratio, at).toBeLessThanOrEqual(1);
    });
  }

  test("A's scales transposed into [⌈k/128⌉, m rounded up to 4], zeros past m", () => {
    expect(blockScaleShapeMN(6, 300)).toEqual([3, 8]);
    // One 32 × 32 tile (m 6, 3 K blocks), and partial tiles on both sides (m 70: rows 64-69
    // and the zero columns 70, 71; 40 K blocks: 32 + 8).
    for (const [m, k] of [
      [6, 300],
      [70, 40 * 128],
    ] as const) {
      const [kb, mp] = blockScaleShapeMN(m, k);
      const x = Float32Array.from({ length: m * kb }, (_, i) => i + 1);
      const X = tensor(x, { shape: [m, kb], dtype: "float32", device: dev });
      const Y = tensor.empty([kb, mp], "float32", dev);
      compile(makeScaleTransposeA(m, k), { target: "cuda" })(X, Y);
      // Y[b, i] = X[i, b] = kb·i + b + 1 for i < m; 0 past m.
      const want = Array.from({ length: kb * mp }, (_, e) => {
        const [b, i] = [Math.floor(e / mp), e % mp];
        return i < m ? kb * i + b + 1 : 0;
      });
      expect([...(Y.toArray() as Float32Array)], `m ${m}, k ${k}`).toEqual(want);
    }
  });
});

describe('scaleLoad "tma": the configuration and its PTX', () => {
  const big: GemmSizes = {
    ...{ m: 8192, n: 8192, k: 8192, dtype: "float8_e4m3", transB: true, scales: "block" },
    config: { bm: 128, bn: 192, stages: 5, scaleLoad: "tma" },
  };
  /** The main kernel's PTX at `big`, built once for the two tests that read it. */
  let bigPtx: string | undefined;
  const ptxOf = (): string =>
    (bigPtx ??= compileToPtx(makeGemm(big).main, { arch: "sm_90a" }).text);

  test("one more TMA box per stage, 2 ld.shared and 2 of B's ld.global per K-tile, one arrival per consumer warp", () => {
    const text = ptxOf();
    const ls = text.split("\n").map((l) => l.trim());
    const count = (re: RegExp) => ls.filter((l) => re.test(l)).length;
    // The producer: A's, B's and the scales' boxes, once each in its K loop.
    expect(count(/^cp\.async\.bulk\.tensor\.2d/)).toBe(3);
    // expect_tx: (128 + 192) · 128 bytes of tiles and 128 · 16 of scales (k 8192: 64 K blocks,
    // so A's scales as given, a box of 4 K blocks of each row).
    expect(text).toMatch(
      new RegExp(`mbarrier\\.arrive\\.expect_tx\\S* \\S+, \\[[^\\]]+\\], ${43008}`),
    );
    // The consumers' loop, unrolled by 2: per K-tile the wait, the stage's two A scales by
    // ld.shared, 4 wgmmas, B's two scales (a 192-column tile spans two n blocks) refilled two
    // K-tiles ahead by ld.global (4 before the loop); no ld.global of A's scales.
    const loop = ls
      .filter((l) => /ld\.shared\.f32|ld\.global\.f32|wgmma\.mma_async|bar\.warp\.sync/.test(l))
      .map((l) => l.split(" ")[0]!.replace(/\.(sync\.aligned\.m64n192k32\.f32\.e4m3\.e4m3)$/, ""));
    const wg = "wgmma.mma_async";
    const k = [
      ...["ld.shared.f32", "ld.shared.f32", wg, wg, wg, wg, "bar.warp.sync"],
      ...["ld.global.f32", "ld.global.f32"],
    ];
    expect(loop).toEqual([...Array<string>(4).fill("ld.global.f32"), ...k, ...k]);
    // The empty barriers count 4 arrivals per consumer warpgroup (8), the full ones 1.
    expect(mbarrierInitCounts(text)).toEqual([
      ...Array<string>(5).fill("1"),
      ...Array<string>(5).fill("8"),
    ]);
  });

  const ptxas = findPtxas();
  test.skipIf(ptxas === undefined)(
    "ptxas -v (sm_90a): no spills at 8192³ on 128 × 192 tiles; 168 registers at launch (384 threads, setmaxnreg 40 / 232)",
    () => {
      expect(ptxasUsage(ptxas!, ptxOf())).toEqual({
        registers: 168,
        spillStores: 0,
        spillLoads: 0,
      });
    },
  );

  test('scaleLoad other than "global" / "tma" / "shared", "tma" without block scales, and shared memory are TX9001', () => {
    const base = { m: 256, n: 256, k: 256, dtype: "float8_e4m3", transB: true } as const;
    const bad = errorOf(() =>
      makeGemm({
        ...base,
        scales: "block",
        config: { bm: 128, bn: 128, stages: 4, scaleLoad: "smem" as "tma" },
      }),
    );
    expect([bad.code, bad.message]).toEqual([
      "TX9001",
      expect.stringMatching(/config\.scaleLoad is "global", "tma" or "shared"/),
    ]);
    const noBlock = errorOf(() =>
      makeGemm({
        ...base,
        scales: true,
        config: { bm: 128, bn: 128, stages: 4, scaleLoad: "tma" },
      }),
    );
    expect([noBlock.code, noBlock.message]).toEqual([
      "TX9001",
      expect.stringMatching(/needs scales "block"/),
    ]);
    // 7 stages of 128 × 128 tiles fit without the scales (229376 bytes, 128 of mbarriers) but
    // not with them (7 · (32768 + 512) + 128 = 233088 > 227 KiB).
    const cfg = { bm: 128, bn: 128, stages: 7 } as const;
    expect(7 * gemmStageBytes(cfg)).toBeLessThanOrEqual(MAX_GEMM_SHARED);
    expect(() => makeGemm({ ...base, scales: "block", config: cfg })).not.toThrow();
    const over = errorOf(() =>
      makeGemm({ ...base, scales: "block", config: { ...cfg, scaleLoad: "tma" } }),
    );
    expect([over.code, over.message]).toEqual([
      "TX9001",
      expect.stringMatching(/233088 bytes of shared memory \(with A's block scales\)/),
    ]);
  });

  test("tuning a block-scaled shape tries every candidate with each of the three scale loads", () => {
    const shape = { m: 8192, n: 8192, k: 8192, inBytes: 1, promoted: true } as const;
    const plain = gemmTuneCandidates(shape);
    const both = gemmTuneCandidates({ ...shape, blockScales: true });
    expect(both).toEqual([
      ...plain,
      ...plain.map((c) => ({ ...c, scaleLoad: "tma" })),
      ...plain.map((c) => ({ ...c, scaleLoad: "shared" })),
    ]);
    expect(plain.every((c) => c.scaleLoad === undefined)).toBe(true);
  });
});
