// makeGemm's 192-row tiles: three consumer warpgroups (512 threads) under setmaxnreg 32 / 160
// (the register file's 64K: 128 · 32 + 384 · 160; PTX ISA, setmaxnreg). On the simulated device
// against float64 with rows in the third consumer (m 140: rows 128 … 139), for block-scaled float8
// with each scale load and for a 16-bit MN-major A (each consumer's 64-column block of the
// stage); the main kernel's PTX at 8192³ through ptxas -v: no spills at 128 registers; and the
// configuration rule (bn ≤ 128 with three consumers).
import { describe, expect, test } from "vitest";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { gemm, sim } from "tirx-ts";
import { makeGemm, type GemmSizes } from "@tirx-ts/kernels";
import { checkGemm, type GemmSpec } from "./util/gemm-reference.js";
import { errorOf } from "./util/error-of.js";
import { findPtxas } from "./util/ptxas.js";
import { mbarrierInitCounts } from "./util/ptx-lines.js";
import { ptxasUsage } from "./util/flash-attention-sim.js";

const dev = sim();

describe("192-row tiles on the simulator against float64", () => {
  const cases: readonly (GemmSpec & { name: string })[] = [
    {
      name: 'block-scaled e4m3, scaleLoad "tma", m 140, n 136 (two n blocks), k 300',
      ...{ m: 140, n: 136, k: 300, dtype: "float8_e4m3", transB: true, outDtype: "float32" },
      ...{ blockScales: true, config: { bm: 192, bn: 128, stages: 2, scaleLoad: "tma" } },
    },
    {
      name: "bfloat16, A stored [k, m] (transA), m 140, n 72, k 136, bias and SiLU",
      ...{ m: 140, n: 72, k: 136, dtype: "bfloat16", transA: true, outDtype: "bfloat16" },
      ...{ bias: "float32", activation: "silu", config: { bm: 192, bn: 64, stages: 3 } },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const { ratio, at } = checkGemm(gemm, dev, c);
      expect(ratio, at).toBeLessThanOrEqual(1);
    });
  }
});

describe("192-row tiles: PTX and configuration", () => {
  const big: GemmSizes = {
    ...{ m: 8192, n: 8192, k: 8192, dtype: "float8_e4m3", transB: true, scales: "block" },
    config: { bm: 192, bn: 128, stages: 4 },
  };
  let text: string | undefined;
  const ptxOf = (): string => (text ??= compileToPtx(makeGemm(big).main, { arch: "sm_90a" }).text);

  test("512 threads; setmaxnreg.dec 32 for the producer, .inc 160 for the consumers; 3 arrivals empty a stage", () => {
    const t = ptxOf();
    expect(t).toMatch(/\.maxntid 512, 1, 1/);
    expect(t.match(/setmaxnreg\.\w+\.sync\.aligned\.u32 \d+/g)).toEqual([
      "setmaxnreg.dec.sync.aligned.u32 32",
      "setmaxnreg.inc.sync.aligned.u32 160",
    ]);
    expect(mbarrierInitCounts(t)).toEqual([
      ...Array<string>(4).fill("1"),
      ...Array<string>(4).fill("3"),
    ]);
  });

  const ptxas = findPtxas();
  test.skipIf(ptxas === undefined)(
    "ptxas -v (sm_90a): 128 registers at launch (512 threads), no spills, block-scaled at 8192³",
    () => {
      expect(ptxasUsage(ptxas!, ptxOf())).toEqual({
        registers: 128,
        spillStores: 0,
        spillLoads: 0,
      });
    },
  );

  test("bm 192 with bn over 128 is TX9001 naming the register budget", () => {
    const e = errorOf(() => makeGemm({ ...big, config: { bm: 192, bn: 192, stages: 4 } }));
    expect([e.code, e.message]).toEqual([
      "TX9001",
      expect.stringMatching(
        /config\.bm 192 \(three consumer warpgroups at setmaxnreg 160\) takes bn ≤ 128, got 192/,
      ),
    ]);
    const b = errorOf(() => makeGemm({ ...big, config: { bm: 96 as 64, bn: 128, stages: 4 } }));
    expect(b.message).toMatch(/config\.bm is 64, 128 or 192/);
    // A field of the wrong type is shown as given: a string keeps its quotes.
    for (const [config, re] of [
      [{ bm: "64" as never, bn: 128, stages: 4 }, /config\.bm is 64, 128 or 192 .*got "64"$/],
      [{ bm: 128, bn: "128" as never, stages: 4 }, /config\.bn is a multiple .*got "128"$/],
      [{ bm: 128, bn: 128, stages: "4" as never }, /config\.stages is an integer .*got "4"$/],
      [{ bm: 128, bn: 128, stages: 4, splitK: "2" as never }, /config\.splitK .*got "2"$/],
    ] as const) {
      expect(errorOf(() => makeGemm({ ...big, config })).message).toMatch(re);
    }
  });
});
