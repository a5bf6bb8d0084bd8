// Float8 block scales with config.scaleLoad "shared" (kernel.ts's header: A's scales staged by
// TMA with each K-tile as with "tma", B's copied into shared memory once per tile by the consumer
// threads, so that the consumers' K loop has no global load): gemm() on the simulated device
// against the float64 reference of the same scaling (test/util/gemm-reference.ts) at odd sizes;
// a persistent grid of 2 CTAs walking 8 units (4 turns each: both buffers of B's scales reused,
// the next unit's scales loaded before the epilogue and stored after it; a 192-column tile that
// starts a 128-column block and one that starts 64 columns into one; split-K past the last K
// block); the PTX at 8192³ (no ld.global in the innermost loop that issues wgmmas, where "global"
// and "tma" have them) through ptxas -v; the shared-memory budget and the configuration's errors.
import { describe, expect, test } from "vitest";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { gemm, sim } from "tirx-ts";
import {
  gemmScaleTileBytes,
  gemmSharedBytes,
  gemmStageBytes,
  gemmTuneCandidates,
  makeGemm,
  MAX_GEMM_SHARED,
  type GemmScaleLoad,
  type GemmSizes,
} from "@tirx-ts/kernels";
import { checkGemm, checkMakeGemm, type GemmSpec } from "./util/gemm-reference.js";
import { errorOf } from "./util/error-of.js";
import { findPtxas } from "./util/ptxas.js";
import { wgmmaLoop } from "./util/ptx-lines.js";
import { ptxasUsage } from "./util/flash-attention-sim.js";

const dev = sim();

describe('gemm() with block scales and scaleLoad "shared" on the simulator against float64', () => {
  const cases: readonly (GemmSpec & { name: string })[] = [
    {
      name: "e4m3, m 20, n 136, k 300, 64 × 192 tiles: one consumer warpgroup, rows past m, a partial K block, a tile across two n blocks",
      ...{ m: 20, n: 136, k: 300, dtype: "float8_e4m3", transB: true, outDtype: "float32" },
      ...{ blockScales: true, config: { bm: 64, bn: 192, stages: 2, scaleLoad: "shared" } },
    },
    {
      name: "e5m2 × e4m3, m 70 on two consumer warpgroups, split-K 2 past the last K block, bias → bfloat16",
      ...{ m: 70, n: 40, k: 300, dtype: "float8_e5m2", dtypeB: "float8_e4m3", transB: true },
      ...{ outDtype: "bfloat16", bias: "float32", blockScales: true, seed: 9 },
      config: { bm: 128, bn: 64, stages: 2, splitK: 2, scaleLoad: "shared" },
    },
    {
      name: "e4m3, m 140 on three consumer warpgroups, n 136 (two n blocks on 128-column tiles), k 1000: A's scales as given",
      ...{ m: 140, n: 136, k: 1000, dtype: "float8_e4m3", transB: true, outDtype: "float32" },
      ...{
        blockScales: true,
        seed: 5,
        config: { bm: 192, bn: 128, stages: 2, scaleLoad: "shared" },
      },
    },
    {
      name: "e4m3, m 20, n 200, k 700 with overlap (K-tiles in pairs, a lone last), split-K 2, 64 × 128 tiles",
      ...{ m: 20, n: 200, k: 700, dtype: "float8_e4m3", transB: true, outDtype: "float32" },
      ...{ blockScales: true, seed: 3 },
      config: { bm: 64, bn: 128, stages: 3, splitK: 2, scaleLoad: "shared", overlap: true },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const { ratio, at } = checkGemm(gemm, dev, c);
      expect(ratio, at).toBeLessThanOrEqual(1);
    });
  }

  test("a persistent grid of 2 CTAs: 8 units of 128 × 192 tiles split in 2 over K, 4 turns each", () => {
    // m 130: 2 tile rows; n 320: tiles at columns 0 (starting a 128-column block) and 192 (64
    // columns into one; its last 64 columns past n); k 1008: 8 K blocks, slices of 4 (the last
    // K block partial).
    const { ratio, at, built } = checkMakeGemm(
      dev,
      {
        ...{ m: 130, n: 320, k: 1008, dtype: "float8_e4m3", transB: true, scales: "block" },
        ...{ ctas: 2, outDtype: "float32" },
        config: { bm: 128, bn: 192, stages: 2, splitK: 2, scaleLoad: "shared" },
      },
      21,
    );
    expect(built.config.splitK).toBe(2);
    expect(ratio, at).toBeLessThanOrEqual(1);
  });
});

describe('scaleLoad "shared": the PTX, the shared memory and the errors', () => {
  const big = (scaleLoad: GemmScaleLoad, k = 8192): GemmSizes => ({
    ...{ m: 8192, n: 8192, k, dtype: "float8_e4m3", transB: true, scales: "block" },
    config: { bm: 128, bn: 192, stages: 4, scaleLoad },
  });
  const ptxOf = (s: GemmSizes): string => compileToPtx(makeGemm(s).main, { arch: "sm_90a" }).text;
  /** The consumers' K loop (the innermost loop that issues wgmmas). */
  const kLoop = (text: string): string[] => {
    const body = wgmmaLoop(text);
    expect(body).toBeDefined();
    return body!;
  };
  const count = (body: string[], re: RegExp): number => body.filter((l) => re.test(l)).length;

  test("no ld.global in the consumers' K loop; each K-tile's wgmmas issue, then the next K-tile's scales are read (2 of A's, 2 of B's by ld.shared) and multiplied before the wait, and the promotion after it reads no load; the other scale loads have ld.global there", () => {
    const shared = kLoop(ptxOf(big("shared")));
    expect(count(shared, /^ld\.global/)).toBe(0);
    // The loop unrolled by 2: per K-tile 4 wgmmas, then K-tile kt + 1's A scales (its two rows,
    // from its stage) and B's (two n blocks: a 192-column tile spans two, from the tile's
    // buffer) by ld.shared and their 4 products sA · sB, then wgmma.wait_group and the 96 FMAs of
    // the promotion, which read factors formed a K-tile before.
    const waits = shared.flatMap((l, i) => (l.startsWith("wgmma.wait_group") ? [i] : []));
    expect(waits.length).toBe(2);
    const wgmmas = shared.flatMap((l, i) => (l.startsWith("wgmma.mma_async") ? [i] : []));
    expect(wgmmas.length).toBe(8);
    // Nothing read from shared memory and no multiply before the first wgmma of the iteration.
    const before = shared.slice(0, wgmmas[0]);
    expect(count(before, /^ld\.shared/)).toBe(0);
    expect(count(before, /^mul\.rn\.f32/)).toBe(0);
    for (const h of [0, 1]) {
      const issued = shared.slice(wgmmas[4 * h + 3]!, waits[h]);
      expect(count(issued, /^mbarrier\.try_wait/), `K-tile ${h}`).toBe(1);
      expect(count(issued, /^ld\.shared\.f32/), `K-tile ${h}`).toBe(4);
      expect(count(issued, /^mul\.rn\.f32/), `K-tile ${h}`).toBe(4);
      const after = shared.slice(waits[h], h === 0 ? wgmmas[4] : undefined);
      expect(count(after, /^ld\.shared/), `K-tile ${h}`).toBe(0);
      expect(count(after, /^fma\.rn\.f32/), `K-tile ${h}`).toBe(96);
    }
    // "tma": B's scales two K-tiles ahead by ld.global (the loop unrolled by 2); "global": A's too.
    expect(count(kLoop(ptxOf(big("tma"))), /^ld\.global/)).toBe(4);
    expect(count(kLoop(ptxOf(big("global"))), /^ld\.global/)).toBe(8);
  });

  const ptxas = findPtxas();
  test.skipIf(ptxas === undefined)(
    "ptxas -v (sm_90a): no spills at 8192³ and 8192² × 28672 on 128 × 192 tiles, 168 registers at launch",
    () => {
      for (const k of [8192, 28672]) {
        expect(ptxasUsage(ptxas!, ptxOf(big("shared", k))), `k ${k}`).toEqual({
          registers: 168,
          spillStores: 0,
          spillLoads: 0,
        });
      }
    },
  );

  test("B's scales take two buffers of the tile's blocks × its K-tiles beside the ring", () => {
    const c = { bm: 128, bn: 192, stages: 4, scaleLoad: "shared" } as const;
    // k 28672: 224 K blocks; two 128-column blocks; two buffers of float32.
    expect(gemmScaleTileBytes(c, 28672)).toBe(2 * 2 * 224 * 4);
    // Split-K 3: slices of 75 K-tiles.
    expect(gemmScaleTileBytes({ ...c, splitK: 3 }, 28672)).toBe(2 * 2 * 75 * 4);
    // 128 columns meet one block; other scale loads take none.
    expect(gemmScaleTileBytes({ ...c, bn: 128 }, 28672)).toBe(2 * 1 * 224 * 4);
    expect(gemmScaleTileBytes({ ...c, scaleLoad: "tma" }, 28672)).toBe(0);
    // The ring, B's scales, and the static mbarriers (4 "full" and 4 "empty", 32 bytes each).
    expect(gemmSharedBytes(c, 28672)).toBe(4 * gemmStageBytes(c, 28672) + 3584 + 64);
    // The launch asks for the ring and B's scales as dynamic shared memory.
    const mod = compileToPtx(makeGemm(big("shared", 28672)).main, { arch: "sm_90a" });
    expect(mod.launch.dynamicSharedBytes).toBe(gemmSharedBytes(c, 28672) - 64);
  });

  test('"shared" without block scales, and a ring that fits only without B\'s scales, are TX9001', () => {
    const base = { m: 256, n: 256, k: 256, dtype: "float8_e4m3", transB: true } as const;
    const noBlock = errorOf(() =>
      makeGemm({
        ...base,
        scales: true,
        config: { bm: 128, bn: 128, stages: 4, scaleLoad: "shared" },
      }),
    );
    expect([noBlock.code, noBlock.message]).toEqual([
      "TX9001",
      expect.stringMatching(
        /config\.scaleLoad "shared" stages A's block scales .* needs scales "block"/,
      ),
    ]);
    // 5 stages of 128 × 192 tiles with A's scales: 5 · (40960 + 2048) = 215040 bytes, and 96 of
    // mbarriers; at k 2^20 B's scales add 2 · 2 · 8192 · 4 = 131072 (16384 at split-K 8).
    const huge = { ...base, k: 2 ** 20, scales: "block" as const };
    const cfg = { bm: 128, bn: 192, stages: 5 } as const;
    expect(() => makeGemm({ ...huge, config: { ...cfg, scaleLoad: "tma" } })).not.toThrow();
    const over = errorOf(() => makeGemm({ ...huge, config: { ...cfg, scaleLoad: "shared" } }));
    expect([over.code, over.message]).toEqual([
      "TX9001",
      expect.stringMatching(
        /346208 bytes of shared memory \(with A's block scales, and 131072 of B's\), over 232448; at most 2 stages/,
      ),
    ]);
    expect(
      gemmSharedBytes({ ...cfg, scaleLoad: "shared", splitK: 8 }, 2 ** 20),
    ).toBeLessThanOrEqual(MAX_GEMM_SHARED);
    // Within the mbarriers' bytes of the limit: k 139264 (1088 K-tiles) takes 5 · 43008 + 2 · 2
    // · 1088 · 4 = 232448 dynamic bytes, the limit, and 96 of mbarriers: refused by makeGemm
    // (not at verification), and not a tuning candidate.
    const edge = { ...cfg, scaleLoad: "shared" } as const;
    const k = 139264;
    expect(gemmSharedBytes(edge, k)).toBe(MAX_GEMM_SHARED + 96);
    const atEdge = errorOf(() => makeGemm({ ...huge, k, config: edge }));
    expect([atEdge.code, atEdge.message]).toEqual([
      "TX9001",
      expect.stringMatching(/232544 bytes of shared memory .* at most 4 stages/),
    ]);
    const shape = { m: 256, n: 4096, k, inBytes: 1, promoted: true, blockScales: true } as const;
    expect(gemmTuneCandidates(shape)).not.toContainEqual(edge);
    // B's scales alone leave no room for 2 stages: split K.
    const tooLong = errorOf(() => makeGemm({ ...huge, k: 2 ** 22, config: edge }));
    expect(tooLong.message).toMatch(
      /fewer than 2 stages fit beside B's scales: split K \(config\.splitK\) or use "tma"/,
    );
    // A grid of no CTAs, or of a fraction of one, is the configuration's error, not the launch's.
    for (const ctas of [0, 1.5]) {
      const bad = errorOf(() => makeGemm({ ...base, scales: "block", ctas, config: cfg }));
      expect([bad.code, bad.message], String(ctas)).toEqual([
        "TX9001",
        `TX9001 [kernels/config] gemm: ctas (the persistent grid's CTAs) must be a positive integer, got ${ctas}`,
      ]);
    }
    // A bad splitK is named as such, before the shared memory it would size.
    const zero = errorOf(() => makeGemm({ ...huge, config: { ...edge, splitK: 0 } }));
    expect(zero.message).toMatch(/config\.splitK is a positive integer, got 0/);
  });
});
