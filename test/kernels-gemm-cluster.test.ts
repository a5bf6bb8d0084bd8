// makeGemm's config.cluster 2 (kernel.ts, tile.ts): the CTAs of a cluster take vertically
// adjacent tiles and multicast halves of B's K-tiles into each other, on the simulated device
// against the float64 reference of test/util/gemm-reference.ts: a K-major B (two row halves)
// and an MN-major one (64-column blocks split between the ranks, 3 of them on 192-column tiles),
// an odd count of tile rows (the last pair's second tile past m), split-K, float8 with
// per-tensor and with block scales (each scale load), and a persistent grid of one cluster
// whose ring wraps; then the PTX and the configuration's errors.
import { describe, expect, test } from "vitest";
import { gemm, sim } from "tirx-ts";
import { makeGemm, type GemmSizes } from "@tirx-ts/kernels";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";
import { errorOf } from "./util/error-of.js";
import { findPtxas } from "./util/ptxas.js";
import { ptxasUsage } from "./util/flash-attention-sim.js";
import { checkGemm, checkMakeGemm, type GemmSpec } from "./util/gemm-reference.js";

const ptxOf = (s: GemmSizes): string => compileToPtx(makeGemm(s).main, { arch: "sm_90a" }).text;
const count = (text: string, re: RegExp): number =>
  text.split("\n").filter((l) => re.test(l.trim())).length;

const dev = sim();

describe("gemm() with config.cluster 2 on the simulator against float64", () => {
  const cases: readonly (GemmSpec & { name: string })[] = [
    {
      name: "bfloat16 A·Bᵀ, m 200 (4 tile rows of 64: two pairs), n 72, k 136: B's row halves multicast",
      ...{ m: 200, n: 72, k: 136, dtype: "bfloat16", transB: true, outDtype: "float32" },
      config: { bm: 64, bn: 64, stages: 2, cluster: 2 },
    },
    {
      name: "float16 A·B (MN-major B), m 70 (one tile row: the pair's second tile past m), n 200 on 128-column tiles (a column block each), bias + GELU",
      ...{ m: 70, n: 200, k: 72, dtype: "float16", outDtype: "bfloat16" },
      ...{ bias: "float32", activation: "gelu" },
      config: { bm: 64, bn: 128, stages: 2, cluster: 2 },
    },
    {
      name: "bfloat16 Aᵀ·B, m 300 on 128-row tiles (3 tile rows: pairs 0-1 and 2-past-m), 256-column tiles (2 column blocks each), split-K 2",
      ...{ m: 300, n: 264, k: 200, dtype: "bfloat16", transA: true, outDtype: "float32" },
      config: { bm: 128, bn: 256, stages: 2, cluster: 2, splitK: 2 },
    },
    {
      name: "float8 e4m3 with per-tensor scales, m 140, n 96, k 392 (promoted K-tiles)",
      ...{ m: 140, n: 96, k: 392, dtype: "float8_e4m3", transB: true, outDtype: "bfloat16" },
      ...{ scales: [0.5, 2] as const },
      config: { bm: 64, bn: 96, stages: 2, cluster: 2 },
    },
    ...(["global", "tma", "shared"] as const).map((scaleLoad) => ({
      // k 300: 3 K blocks, A's scales transposed for "tma" and "shared"; k 512 for "tma": 4 K
      // blocks, A's scales as given (a [128, 4] box a stage).
      name: `float8 block scales, scaleLoad "${scaleLoad}", m 150 on 128-row tiles (the pair's second tile partial), n 136, k ${scaleLoad === "tma" ? 512 : 300}`,
      ...{ m: 150, n: 136, k: scaleLoad === "tma" ? 512 : 300 },
      ...{ dtype: "float8_e4m3" as const, transB: true },
      outDtype: "float32" as const,
      ...{ blockScales: true, seed: 7 },
      config: { bm: 128, bn: 128, stages: 2, cluster: 2, scaleLoad } as const,
    })),
  ];
  for (const c of cases) {
    test(c.name, () => {
      const { ratio, at } = checkGemm(gemm, dev, c);
      expect(ratio, at).toBeLessThanOrEqual(1);
    });
  }

  test("one cluster of 2 CTAs walks 6 pairs of 64 × 64 tiles in 6 turns: the 2-stage ring wraps", () => {
    const { ratio, at, built } = checkMakeGemm(
      dev,
      {
        ...{ m: 260, n: 190, k: 200, dtype: "bfloat16", transB: true, outDtype: "float32" },
        ...{ ctas: 2, config: { bm: 64, bn: 64, stages: 2, cluster: 2 } },
      },
      13,
    );
    expect(built.config.cluster).toBe(2);
    expect(ratio, at).toBeLessThanOrEqual(1);
  });
});

describe("config.cluster 2: the PTX (sm_90a, ptxas) and the errors", () => {
  const big = (over: Partial<GemmSizes>): GemmSizes => ({
    ...{ m: 8192, n: 8192, k: 8192, dtype: "float8_e4m3", transB: true, scales: true },
    config: { bm: 128, bn: 192, stages: 5, cluster: 2 },
    ...over,
  });
  const ptxas = findPtxas();

  test("8192³ float8 on 128 × 192 tiles: a cluster of 2 in the entry, B's half multicast, remote arrivals, the cluster barrier", () => {
    const text = ptxOf(big({}));
    assembleLater(text, "sm_90a", "gemm cluster 2 fp8");
    expect(count(text, /^\.reqnctapercluster 2, 1, 1/)).toBe(1);
    // Per stage: A's tile to this CTA alone, B's half (96 of 192 rows) into both CTAs.
    const loads = text.split("\n").filter((l) => /^\s*cp\.async\.bulk\.tensor/.test(l));
    expect(loads.map((l) => l.trim().split(" ")[0])).toEqual([
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster",
    ]);
    // The full barrier expects the whole stage: A's 128 and B's 192 rows of 128 bytes.
    expect(text).toContain(`${(128 + 192) * 128};`);
    // Consumer threads 0 and 1 of each warpgroup free the stage in CTA 0 and CTA 1.
    expect(count(text, /^mbarrier\.arrive\..*shared::cluster/)).toBe(1);
    // After the barriers' init, and before the exit.
    expect(count(text, /^barrier\.cluster\.arrive/)).toBe(2);
    expect(count(text, /^barrier\.cluster\.wait/)).toBe(2);
  });

  test.skipIf(ptxas === undefined)(
    'ptxas -v: per-tensor 128 × 192 × 5 and block-scaled 128 × 192 × 4 ("shared") with cluster 2 do not spill',
    () => {
      const block = big({
        scales: "block",
        config: { bm: 128, bn: 192, stages: 4, cluster: 2, scaleLoad: "shared" },
      });
      for (const [name, s] of [
        ["per-tensor", big({})],
        ["block", block],
      ] as const) {
        expect(ptxasUsage(ptxas!, ptxOf(s)), name).toEqual({
          registers: 168,
          spillStores: 0,
          spillLoads: 0,
        });
      }
    },
  );

  test("errors: cluster other than 1 or 2, fewer CTAs than a cluster, an MN-major B split unevenly", () => {
    const small: GemmSizes = {
      ...{ m: 64, n: 192, k: 64, dtype: "bfloat16" },
      config: { bm: 64, bn: 128, stages: 2, cluster: 2 },
    };
    const message = (s: GemmSizes): string => errorOf(() => makeGemm(s)).message;
    expect(
      message({ ...small, config: { ...small.config, cluster: 4 as 2 } }),
    ).toMatchInlineSnapshot(
      `"TX9001 [kernels/config] gemm: config.cluster is 1 or 2 (CTAs per cluster; 2 multicasts B's K-tiles to a pair of vertically adjacent tiles), got 4"`,
    );
    expect(message({ ...small, ctas: 1 })).toMatchInlineSnapshot(
      `"TX9001 [kernels/config] gemm: config.cluster 2 needs ctas ≥ 2 (the persistent grid is whole clusters), got ctas 1"`,
    );
    expect(message({ ...small, config: { ...small.config, bn: 192 } })).toMatchInlineSnapshot(
      `"TX9001 [kernels/config] gemm: config.cluster 2 splits B's K-tile between the cluster's CTAs: with an MN-major B (transB false) in 64-column blocks, bn must be a multiple of 128, got 192"`,
    );
    expect(() =>
      makeGemm({ ...small, transB: true, config: { ...small.config, bn: 192 } }),
    ).not.toThrow();
  });
});
