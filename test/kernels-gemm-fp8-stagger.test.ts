// config.stagger (kernel.ts's header): consumer warpgroup c > 0 starts each unit's K loop once
// warpgroup c − 1's first K-tile has completed, on named barrier 1 + c. On the simulated device
// against the float64 reference of the same scaling: block scales with each scale load, three
// consumer warpgroups, per-tensor scales in a cluster of 2, and persistent grids whose units take
// turns (the barrier reused by every unit; none with fewer K-tiles than stages); the PTX (the
// barriers, only where a unit has at least as many K-tiles as stages) through ptxas -v; the
// configuration's errors.
import { describe, expect, test } from "vitest";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { gemm, sim } from "tirx-ts";
import { makeGemm, type GemmSizes } from "@tirx-ts/kernels";
import { checkGemm, checkMakeGemm, type GemmSpec } from "./util/gemm-reference.js";
import { errorOf } from "./util/error-of.js";
import { findPtxas } from "./util/ptxas.js";
import { wgmmaLoop } from "./util/ptx-lines.js";
import { ptxasUsage } from "./util/flash-attention-sim.js";

const dev = sim();

describe("gemm() with config.stagger on the simulator against float64", () => {
  // One tile a case (sizes that are not tile multiples), 3 K-tiles.
  const base = { m: 100, n: 180, k: 300, dtype: "float8_e4m3", transB: true } as const;
  const cases: readonly (GemmSpec & { name: string })[] = [
    {
      name: 'block scales, "global", 128 × 192 tiles (two consumer warpgroups), 3 K-tiles over 2 stages',
      ...{ ...base, outDtype: "float32", blockScales: true },
      config: { bm: 128, bn: 192, stages: 2, stagger: true },
    },
    {
      name: 'block scales, "shared", 192 × 128 tiles (three: barriers 2 and 3), 3 K-tiles over 3 stages, bias → bfloat16',
      ...{ ...base, m: 150, n: 120, outDtype: "bfloat16", bias: "float32", blockScales: true },
      seed: 7,
      config: { bm: 192, bn: 128, stages: 3, scaleLoad: "shared", stagger: true },
    },
    {
      name: "per-tensor scales, e5m2 × e4m3, 128 × 192 tiles in a cluster of 2 (B multicast to the two tile rows)",
      ...{ ...base, m: 200, dtype: "float8_e5m2", dtypeB: "float8_e4m3", outDtype: "float32" },
      ...{ scales: [0.5, 3] as const, seed: 11 },
      config: { bm: 128, bn: 192, stages: 2, cluster: 2, stagger: true },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const { ratio, at } = checkGemm(gemm, dev, c);
      expect(ratio, at).toBeLessThanOrEqual(1);
    });
  }

  test('a persistent grid of 2 CTAs, 4 units of 2 K-tiles each ("tma", split-K 2): every unit waits on the barrier', () => {
    const { ratio, at, built } = checkMakeGemm(
      dev,
      {
        ...{ m: 130, n: 150, k: 496, dtype: "float8_e4m3", transB: true, scales: "block" },
        ...{ ctas: 2, outDtype: "float32" },
        config: { bm: 128, bn: 192, stages: 2, splitK: 2, scaleLoad: "tma", stagger: true },
      },
      23,
    );
    expect(built.config).toMatchObject({ splitK: 2, stagger: true });
    expect(ratio, at).toBeLessThanOrEqual(1);
  });

  test("one CTA, 2 units of 2 K-tiles over 4 stages: no barrier (consumer 0 would reach the next unit's first K-tile, and arrive again, before consumer 1 synced)", () => {
    const { ratio, at } = checkMakeGemm(
      dev,
      {
        ...{ m: 100, n: 384, k: 256, dtype: "float8_e4m3", transB: true, scales: "block" },
        ...{ ctas: 1, outDtype: "float32" },
        config: { bm: 128, bn: 192, stages: 4, stagger: true },
      },
      29,
    );
    expect(ratio, at).toBeLessThanOrEqual(1);
  });
});

describe("config.stagger: the PTX and the errors", () => {
  const sizes = (config: GemmSizes["config"], k = 8192): GemmSizes => ({
    ...{ m: 8192, n: 8192, k, dtype: "float8_e4m3", transB: true, scales: "block", config },
  });
  const ptxOf = (s: GemmSizes): string => compileToPtx(makeGemm(s).main, { arch: "sm_90a" }).text;
  /** The consumers' K loop (the innermost loop that issues wgmmas). */
  const kLoop = (text: string): string[] => {
    const body = wgmmaLoop(text);
    expect(body).toBeDefined();
    return body!;
  };
  const named = (text: string): string[] =>
    text
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => /^bar\.(sync|arrive) [2-9]/.test(l));

  test("consumer c − 1 arrives and consumer c syncs on barrier 1 + c, once each a unit; none without stagger or with fewer K-tiles than stages", () => {
    const two = { bm: 128, bn: 192, stages: 4, stagger: true } as const;
    // The K loop's first pair of K-tiles (it is unrolled by 2) runs before the loop, the arrival
    // after its K-tile 0's wait; the loop itself has no barrier and no test of the K-tile.
    expect(named(ptxOf(sizes(two)))).toEqual(["bar.sync 2, 256;", "bar.arrive 2, 256;"]);
    expect(kLoop(ptxOf(sizes(two))).filter((l) => /^bar\./.test(l))).toEqual([]);
    const three = { bm: 192, bn: 128, stages: 4, scaleLoad: "shared", stagger: true } as const;
    expect(named(ptxOf(sizes(three))).sort()).toEqual([
      "bar.arrive 2, 256;",
      "bar.arrive 3, 256;",
      "bar.sync 2, 256;",
      "bar.sync 3, 256;",
    ]);
    expect(named(ptxOf(sizes({ ...two, stagger: false })))).toEqual([]);
    // k 384: 3 K-tiles a unit, 4 stages.
    expect(named(ptxOf(sizes(two, 384)))).toEqual([]);
    expect(named(ptxOf(sizes(two, 512)))).toHaveLength(2);
    // Per-tensor scales: the K loop not unrolled, its first K-tile before it.
    const perTensor = { ...sizes({ bm: 128, bn: 192, stages: 5, stagger: true }), scales: true };
    expect(named(ptxOf(perTensor))).toEqual(["bar.sync 2, 256;", "bar.arrive 2, 256;"]);
    expect(kLoop(ptxOf(perTensor)).filter((l) => /^bar\./.test(l))).toEqual([]);
    // The loop is the one without stagger, but for its index arithmetic (the unit's first
    // K-tile's position, computed before it): the same wgmmas, waits, FMAs / adds and arrivals.
    const ops = (text: string): string[] =>
      kLoop(text)
        .map((l) => l.split(/\s/)[0]!)
        .filter((op) => /^(wgmma|fma|add\.f32|mbarrier|ld\.shared|mul\.rn)/.test(op));
    for (const s of [sizes(two), perTensor]) {
      expect(ops(ptxOf(s))).toEqual(ops(ptxOf({ ...s, config: { ...s.config, stagger: false } })));
    }
  });

  const ptxas = findPtxas();
  test.skipIf(ptxas === undefined)(
    'ptxas -v (sm_90a): no spills with stagger at 8192³, 128 × 192 "shared" and 192 × 128',
    () => {
      const shared = { bm: 128, bn: 192, stages: 4, scaleLoad: "shared", stagger: true } as const;
      expect(ptxasUsage(ptxas!, ptxOf(sizes(shared)))).toEqual({
        registers: 168,
        spillStores: 0,
        spillLoads: 0,
      });
      expect(
        ptxasUsage(ptxas!, ptxOf(sizes({ bm: 192, bn: 128, stages: 4, stagger: true }))),
      ).toEqual({
        registers: 128,
        spillStores: 0,
        spillLoads: 0,
      });
    },
  );

  test("stagger needs a boolean, promoted float8, two or three consumer warpgroups and no overlap (TX9001)", () => {
    const f8 = { m: 256, n: 256, k: 1024, dtype: "float8_e4m3", transB: true } as const;
    const cfg = { bm: 128, bn: 128, stages: 4, stagger: true } as const;
    const cases: [GemmSizes, RegExp][] = [
      [
        { ...f8, config: { ...cfg, stagger: 1 as unknown as boolean } },
        /config\.stagger is true or false, got 1/,
      ],
      [
        { ...f8, dtype: "bfloat16", transB: false, config: cfg },
        /config\.stagger .* needs float8 inputs that promote .* got bfloat16/,
      ],
      [{ ...f8, scales: true, fastAccum: true, config: cfg }, /config\.stagger .* got fastAccum/],
      [
        { ...f8, scales: "block", config: { ...cfg, bm: 64 } },
        /two or three consumer warpgroups \(bm 128 or 192\) .* got bm 64/,
      ],
      [{ ...f8, scales: "block", config: { ...cfg, overlap: true } }, /no overlap, got overlap/],
    ];
    for (const [s, re] of cases) {
      const e = errorOf(() => makeGemm(s));
      expect([e.code, e.message]).toEqual(["TX9001", expect.stringMatching(re)]);
    }
    expect(makeGemm({ ...f8, scales: "block", config: cfg }).config.stagger).toBe(true);
    expect(
      makeGemm({ ...f8, scales: "block", config: { ...cfg, stagger: false } }).config,
    ).not.toHaveProperty("stagger");
  });
});
