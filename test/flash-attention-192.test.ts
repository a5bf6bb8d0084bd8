// makeFlashAttention's larger tiles at head dim 64 (FlashAttention-3's, hopper/tile_size.h):
// `blockM` 192, three consumer warpgroups of 64 query rows (512 threads, setmaxnreg 32 / 160, the
// ping-pong a ring over three named barriers), and `blockN` 192, KV blocks of 192 keys. On the
// simulator against float64 (examples/flash_attention.ts's checkFlashAttention: within the bound,
// the simulator's hazard checks throwing on the first, every row written): sequence lengths that 192 divides and does not (a
// partial last query tile, its rows past seq_q not stored; a partial last KV block, its keys past
// seq_k masked), causal (bottom-right aligned, longest tiles first) and not, GQA, LSE, each
// schedule; the `dynamic` and varlen builds with 192-row tiles; the option errors; and ptxas -v
// for sm_90a: 512 threads at launch (128 registers), no spills (P cast a column pair at a time).
import { describe, expect, it } from "vitest";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { compile, sim, tensor, type DeviceTensor } from "tirx-ts";
import { findPtxas } from "@tirx-ts/runtime-cuda";
import { makeFlashAttention, type FlashAttentionSizes } from "../examples/flash_attention.js";
import {
  attentionError,
  attentionInputs,
  attentionReference,
  type AttentionCase,
} from "./util/attention-reference.js";
import { errorOf } from "./util/error-of.js";
import { ptxasUsage, simulated } from "./util/flash-attention-sim.js";

const BASE = { batch: 1, heads: 1, headDim: 64, dtype: "float16", blockM: 192 } as const;

const dev = sim();
const host = (t: DeviceTensor) => t.toArray() as Float32Array;

describe("flash_attention forward, 192-row query tiles and 192-key blocks at head dim 64", () => {
  it("blockM 192, seq_q 250 (a partial second tile) on 128 keys, LSE, the overlap schedule: within the bound, every row written", () => {
    simulated({ ...BASE, seqQ: 250, seqK: 128, lse: true, schedule: "overlap" });
  });

  it("blockM 192, causal, 192 queries on 384 keys (bottom-right; 3 KV blocks: the 2-stage ring turns), bfloat16, the ping-pong ring (the default schedule)", () => {
    simulated({ ...BASE, seqQ: 192, seqK: 384, dtype: "bfloat16", causal: true });
  });

  it("blockM 192 and blockN 192 (serial, the default), causal, 200 queries on 200 keys: the partial tile first, the partial block masked, LSE", () => {
    simulated({ ...BASE, blockN: 192, seqQ: 200, seqK: 200, causal: true, lse: true });
  });

  it("blockN 192 with 128-row tiles, 128 queries on 200 keys (a partial second block), LSE, the ping-pong of two", () => {
    simulated({ ...BASE, blockM: 128, blockN: 192, seqQ: 128, seqK: 200, lse: true });
  });

  it("blockM 192, varlen: 130 and 70 queries on 100 and 200 keys, causal (bottom-right per sequence), LSE", () => {
    simulated(
      {
        ...BASE,
        batch: 2,
        seqQ: 200,
        seqK: 300,
        causal: true,
        lse: true,
        varlen: { maxSeqQ: 130 },
      },
      [130, 70],
      [100, 200],
    );
  });

  it("blockM 192, dynamic: seq_q 100 on seq_k 77, causal, GQA 2 heads on 1, LSE, grid ⌈100 / 192⌉ = 1", () => {
    const s: FlashAttentionSizes = {
      ...BASE,
      heads: 2,
      kvHeads: 1,
      seqQ: 192,
      seqK: 192,
      causal: true,
      lse: true,
      dynamic: true,
    };
    const run = compile(makeFlashAttention(s), { target: "cuda", arch: "sm_90a" });
    expect(run.verified.entry.launch.block).toEqual([512, 1, 1]);
    const c: AttentionCase = { ...s, seqQ: 100, seqK: 77, kvHeads: 1 };
    const { q, k, v } = attentionInputs(c, dev, 11);
    const nan = (shape: number[], dtype: "float16" | "float32") =>
      tensor(new Float32Array(shape.reduce((a, b) => a * b)).fill(NaN), {
        shape,
        dtype,
        device: dev,
      });
    const o = nan([1, 100, 2, 64], "float16");
    const lse = nan([1, 2, 100], "float32");
    run(q, k, v, o, 1, 100, 77, lse);
    const err = attentionError(
      c,
      attentionReference(c, host(q), host(k), host(v)),
      host(o),
      host(lse),
    );
    expect(err.o).toBeLessThanOrEqual(1);
    expect(err.lse).toBeLessThanOrEqual(1);
  });

  it("option errors (TX9001): blockM, blockN, 192 rows off head dim 64, 192 × 192 overlapped, short sequences", () => {
    const big = { ...BASE, seqQ: 4096, seqK: 4096 } as const;
    const cases: [FlashAttentionSizes, RegExp][] = [
      [{ ...big, blockM: 256 as never }, /blockM \(query rows per CTA\) is 128 or 192, got 256/],
      [{ ...big, headDim: 128 }, /blockM 192 .* head dim 64 only, got head dim 128/],
      [
        { ...big, blockM: 128, headDim: 128, blockN: 64 },
        /blockN .* is 128, 176 or 192 at head dim 128, got 64/,
      ],
      [
        { ...big, blockM: 128, headDim: 256, blockN: 128 },
        /blockN .* is 64 or 80 at head dim 256, got 128/,
      ],
      [{ ...big, blockN: 64 as never }, /blockN .* is 128 or 192 at head dim 64, got 64/],
      [{ ...big, blockN: 192, schedule: "pingpong" }, /"serial" schedule only/],
      [{ ...big, seqQ: 100 }, /integers ≥ 192 and ≥ 128 .* got 100 and 4096/],
      [
        { ...big, blockM: 128, blockN: 192, seqK: 130 },
        /integers ≥ 128 and ≥ 192 .* got 4096 and 130/,
      ],
      [{ ...big, seqQ: 150, varlen: { maxSeqQ: 100 } }, /integers ≥ 192 and ≥ 128/],
    ];
    for (const [s, message] of cases) {
      const e = errorOf(() => makeFlashAttention(s));
      expect([e.code, e.message]).toEqual(["TX9001", expect.stringMatching(message)]);
    }
    // The 128-row build keeps its multiples of 128.
    expect(errorOf(() => makeFlashAttention({ ...big, blockM: 128, seqQ: 200 })).message).toMatch(
      /seq_q a positive multiple of 128 and seq_k of 128, got 200 and/,
    );
  });
});

describe("PTX of the 192-row and 192-key builds (sm_90a)", () => {
  const ptxas = findPtxas();
  const build = (s: Partial<FlashAttentionSizes>): string =>
    compileToPtx(
      makeFlashAttention({
        ...BASE,
        batch: 4,
        heads: 32,
        seqQ: 4096,
        seqK: 4096,
        dtype: "bfloat16",
        ...s,
      } as FlashAttentionSizes),
      { arch: "sm_90a" },
    ).text;

  it("512 threads at launch, setmaxnreg 32 / 160, the ping-pong ring over named barriers 8, 9, 10", () => {
    const text = build({ causal: true, schedule: "pingpong" });
    expect(text).toMatch(/\.maxntid 512, 1, 1/);
    expect(text).toMatch(/setmaxnreg\.dec\.sync\.aligned\.u32 32;/);
    expect(text).toMatch(/setmaxnreg\.inc\.sync\.aligned\.u32 160;/);
    for (const id of [8, 9, 10]) {
      expect(text).toMatch(new RegExp(`bar\\.sync ${id}, 256;`));
      expect(text).toMatch(new RegExp(`bar\\.arrive ${id}, 256;`));
    }
    // 192-key blocks with two consumers: setmaxnreg 24 / 240.
    const n192 = build({ blockM: 128, blockN: 192 });
    expect(n192).toMatch(/\.maxntid 384, 1, 1/);
    expect(n192).toMatch(/setmaxnreg\.inc\.sync\.aligned\.u32 240;/);
  });

  it.skipIf(ptxas === undefined)(
    "ptxas -v: no spills at 192 × 128 (ping-pong causal, overlap, dynamic), 192 × 192 (serial) and 128 × 192 (ping-pong, causal); 128 registers at launch with 512 threads, 168 with 384",
    () => {
      const builds: [Partial<FlashAttentionSizes>, number][] = [
        [{ causal: true, lse: true }, 128],
        [{ schedule: "overlap" }, 128],
        [{ blockN: 192 }, 128],
        [{ blockM: 128, blockN: 192, causal: true }, 168],
        [{ dynamic: true }, 128],
      ];
      for (const [s, launchRegs] of builds) {
        const u = ptxasUsage(ptxas!, build(s));
        expect(u, JSON.stringify(s)).toEqual({
          registers: launchRegs,
          spillStores: 0,
          spillLoads: 0,
        });
      }
    },
  );
});
