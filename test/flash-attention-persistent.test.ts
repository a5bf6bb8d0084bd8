// makeFlashAttention's persistent grid (`ctas`): min(ctas, units) CTAs, each running the units
// (query tile, head, batch) x, x + grid, … with the producer loading the next unit's first K block
// and Q (its own qFull / qEmpty pair) while the consumers finish the unit before, the K/V ring and
// the ping-pong's turns running on across units. On the simulator, at small sizes with several
// units per CTA (and CTAs with fewer units than others), each against the one-CTA-a-unit build
// on the same inputs: O and LSE the same bits, no hazard report from either launch, every row
// written, and both within checkFlashAttention's bound of float64. Cases: causal (longest first)
// with LSE and query tiles that see no KV block, at 192-row tiles (the ping-pong a ring of three
// consumers) with GQA; a window unbounded on the left ordered in L2 sections with a smaller last
// section (a long K, few blocks read); head dim 128, not causal, the serial schedule; a window
// bounded on both sides with 192-key blocks and the overlap schedule. Then the option's errors,
// and the PTX of the bench's size (16 × 16 × 1024, ctas 132) at each head dim through ptxas -v
// for sm_90a: no spills.
import { describe, expect, it } from "vitest";
import { emitPtx } from "@tirx-ts/codegen-ptx";
import { verify } from "@tirx-ts/core";
import { findPtxas } from "@tirx-ts/runtime-cuda";
import { compile, sim, tensor, type DeviceTensor } from "tirx-ts";
import { makeFlashAttention, type FlashAttentionSizes } from "../examples/flash_attention.js";
import {
  attentionError,
  attentionInputs,
  attentionReference,
  type AttentionCase,
} from "./util/attention-reference.js";
import { errorOf } from "./util/error-of.js";
import { ptxasUsage } from "./util/flash-attention-sim.js";

const dev = sim();
const host = (t: DeviceTensor) => t.toArray() as Float32Array;

/**
 * Run the build of `s` without and with `ctas` on the same inputs (seed `seed`), O and LSE
 * starting as NaN: both launches report no hazard ("collect": every report, not the first), O
 * and LSE are equal byte for byte, the persistent build wrote every element (no NaN left: a row
 * that sees no key is 0 and its LSE −inf), and O and LSE are within checkFlashAttention's bounds
 * of float64. Returns the persistent build's grid.
 */
function sameBits(s: FlashAttentionSizes, ctas: number, seed: number): number[] {
  const c: AttentionCase = { ...s, kvHeads: s.kvHeads ?? s.heads };
  const { q, k, v } = attentionInputs(c, dev, seed);
  const run = (fn: ReturnType<typeof makeFlashAttention>) => {
    const nan = (shape: number[], dtype: "float16" | "bfloat16" | "float32") =>
      tensor(new Float32Array(shape.reduce((a, b) => a * b)).fill(NaN), {
        shape,
        dtype,
        device: dev,
      });
    const o = nan([s.batch, s.seqQ, s.heads, s.headDim], s.dtype);
    const lse = nan([s.batch, s.heads, s.seqQ], "float32");
    const c = compile(fn, { target: "cuda", arch: "sm_90a", hazards: "collect" });
    const r = c(q, k, v, o, ...(s.lse ? [lse] : []));
    expect(r.reports.map((e) => e.message)).toEqual([]);
    return { o, lse, vf: c.verified };
  };
  const persistent = makeFlashAttention({ ...s, ctas });
  const one = run(makeFlashAttention(s));
  const many = run(persistent);
  expect(Buffer.from(many.o.toBytes()).equals(Buffer.from(one.o.toBytes()))).toBe(true);
  expect(Buffer.from(many.lse.toBytes()).equals(Buffer.from(one.lse.toBytes()))).toBe(true);
  const O = host(many.o);
  const L = s.lse ? host(many.lse) : undefined;
  expect(O.some(Number.isNaN) || (L?.some(Number.isNaN) ?? false)).toBe(false);
  const err = attentionError(c, attentionReference(c, host(q), host(k), host(v)), O, L);
  expect(err.o).toBeLessThanOrEqual(1);
  expect(err.lse).toBeLessThanOrEqual(1);
  return many.vf.entry.launch.grid.map(Number);
}

describe("flash_attention forward, persistent grid (ctas)", () => {
  it("causal + LSE, 192-row tiles (a ring of three consumers), GQA 2 heads on 1, 384 queries on 192 keys: 4 units on 3 CTAs (1, 1, 2: the second turn snakes back), tile 0 of each head sees no KV block", () => {
    // Causal bottom-right: query i sees keys j ≤ i − 192, so query tile 0 (rows 0-191) reads no
    // KV block (O = 0, LSE −inf) and tile 1 both blocks. Longest first: units 0, 1 are tile 1 of
    // heads 0, 1 and units 2, 3 tile 0; CTA 0 runs units 0 and 3.
    const s: FlashAttentionSizes = {
      ...{ batch: 1, heads: 2, kvHeads: 1, seqQ: 384, seqK: 192, headDim: 64 },
      ...{ dtype: "float16", blockM: 192, causal: true, lse: true },
    };
    expect(sameBits(s, 3, 5)).toEqual([3, 1, 1]);
  });

  it("window [-1, -40960] (longest first) on a long K, LSE, the ping-pong of two: sections of 2 of the 3 heads, the last of 1; 6 units on 4 CTAs (1, 1, 2, 2: the second turn snakes back)", () => {
    // K and V of one head (2 · 41088 keys · 64 · 2 bytes = 10.03 MiB): those of the 4 CTAs'
    // heads (40.1 MiB) do not all stay in L2 (40 MiB at most), so the order goes by sections; 32
    // MiB fits three heads: the L2 section is 2 heads (a power of two), so units 0-3 are heads
    // 0-1 (tile 1, then tile 0) and units 4-5 head 2. Bottom-right aligned (seq_k − seq_q =
    // 40832), query i sees keys j ≤ i + 40832 − 40960 = i − 128: tile 1 one KV block, tile 0
    // none.
    const s: FlashAttentionSizes = {
      ...{ batch: 1, heads: 3, seqQ: 256, seqK: 41088, headDim: 64, dtype: "bfloat16" },
      ...{ window: [-1, -40960], lse: true },
    };
    expect(sameBits(s, 4, 6)).toEqual([4, 1, 1]);
  });

  it("head dim 128, not causal, the serial schedule, 2 batches: 4 units on 3 CTAs (2, 1, 1)", () => {
    const s: FlashAttentionSizes = {
      ...{ batch: 2, heads: 1, seqQ: 256, seqK: 128, headDim: 128, dtype: "bfloat16" },
      schedule: "serial",
    };
    expect(sameBits(s, 3, 7)).toEqual([3, 1, 1]);
  });

  it("window [40, 20] (bounded on both sides: the first KV block varies by tile), 192-key blocks, the overlap schedule: 3 units on 2 CTAs (2, 1)", () => {
    // Query i sees keys i − 40 … i + 20: tile 0 reads KV block 0, tile 1 blocks 0-1, tile 2
    // block 1 only.
    const s: FlashAttentionSizes = {
      ...{ batch: 1, heads: 1, seqQ: 384, seqK: 384, headDim: 64, dtype: "float16" },
      ...{ window: [40, 20], blockN: 192, schedule: "overlap", lse: true },
    };
    expect(sameBits(s, 2, 8)).toEqual([2, 1, 1]);
  });

  it("option errors (TX9001): ctas not a positive integer, ctas with dynamic or varlen", () => {
    const base: FlashAttentionSizes = {
      ...{ batch: 2, heads: 4, seqQ: 1024, seqK: 1024, headDim: 128, dtype: "bfloat16" },
    };
    const cases: [FlashAttentionSizes, RegExp][] = [
      [
        { ...base, ctas: 0 },
        /ctas \(the persistent grid's CTAs at most\) is a positive integer, got 0/,
      ],
      [{ ...base, ctas: 1.5 }, /is a positive integer, got 1\.5/],
      [{ ...base, ctas: "132" as unknown as number }, /is a positive integer, got "132"/],
      [
        { ...base, ctas: 132, dynamic: true },
        /ctas \(a persistent grid\) is offered with static sizes only, not with dynamic: .*known at launch only/,
      ],
      [
        { ...base, ctas: 132, varlen: { maxSeqQ: 512 } },
        /ctas \(a persistent grid\) is offered with static sizes only, not with varlen: .*cuSeqlensQ/,
      ],
    ];
    for (const [s, message] of cases) {
      const e = errorOf(() => makeFlashAttention(s));
      expect([e.code, e.message]).toEqual(["TX9001", expect.stringMatching(message)]);
    }
  });
});

describe("PTX of the persistent builds at the bench's size (16 × 16 × 1024, ctas 132, sm_90a)", () => {
  const ptxas = findPtxas();
  const build = (s: Partial<FlashAttentionSizes>): { ptx: string; grid: number[] } => {
    const fn = makeFlashAttention({
      ...{ batch: 16, heads: 16, seqQ: 1024, seqK: 1024, headDim: 128, dtype: "bfloat16" },
      ctas: 132,
      ...s,
    } as FlashAttentionSizes);
    // One verification for both: compileToPtx is emitPtx of verify.
    const vf = verify(fn);
    return { ptx: emitPtx(vf, { arch: "sm_90a" }).text, grid: vf.entry.launch.grid.map(Number) };
  };

  it.skipIf(ptxas === undefined)(
    "a 1-D grid of 132 CTAs, qEmpty counting one arrive per consumer; ptxas -v: no spills at head dims 64 (192-row tiles, ping-pong ring of three), 128 (causal LSE ping-pong) and 256 (overlap)",
    () => {
      const builds: [Partial<FlashAttentionSizes>, number, number][] = [
        [{ headDim: 64, blockM: 192, causal: true }, 128, 3],
        [{ causal: true, lse: true }, 168, 2],
        [{ headDim: 256, schedule: "overlap" }, 168, 2],
      ];
      for (const [s, launchRegs, consumers] of builds) {
        const { ptx, grid } = build(s);
        expect(grid).toEqual([132, 1, 1]);
        // The unit comes from blockIdx.x alone.
        expect(ptx).not.toMatch(/%ctaid\.[yz]/);
        // Q's empty barrier beside the ring's four, each counting one arrive per consumer.
        const inits = ptx.match(/mbarrier\.init\.shared::cta\.b64 \[[^\]]+\], \d+;/g) ?? [];
        expect(inits.filter((l) => l.endsWith(`, ${consumers};`)).length).toBe(5);
        expect(ptxasUsage(ptxas!, ptx), JSON.stringify(s)).toEqual({
          registers: launchRegs,
          spillStores: 0,
          spillLoads: 0,
        });
      }
    },
  );
});
