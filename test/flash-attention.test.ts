// examples/flash_attention.ts beyond its example size: the causal mask on the simulator against
// float64 (seq_q = seq_k, and bottom-right aligned for seq_q ≠ seq_k), huge equal logits (bf16
// Q = K = V = 133120, logits 1.1e12 taken in float32: exactly 133120 out, row 0 seeing one key),
// GQA with a sliding window and LSE (rows that see no key: O exactly 0, LSE −inf), varlen batches
// of odd lengths (causal and not, padding rows left alone), a negative scale whose exponents span
// hundreds, option errors, and its PTX assembles for sm_90a at each head dim, varlen too.
import { describe, expect, it } from "vitest";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { compile, sim, tensor } from "tirx-ts";
import {
  attentionFloat64,
  makeFlashAttention,
  type FlashAttentionSizes,
} from "../examples/flash_attention.js";
import { assembleLater } from "./util/ptxas-deferred.js";
import { simulated } from "./util/flash-attention-sim.js";
import { uniformFrom } from "./util/lcg.js";

describe("flash_attention forward", () => {
  it("causal, head dim 128, bfloat16, two query tiles of two batches (the grid dealt longest first: query tile 1 of both, then 0), the ping-pong schedule: within the stated bound of float64, no reports", () => {
    const s: FlashAttentionSizes = {
      batch: 2,
      heads: 1,
      seqQ: 256,
      seqK: 256,
      headDim: 128,
      dtype: "bfloat16",
      causal: true,
      schedule: "pingpong",
    };
    simulated(s);
  });

  it("GQA (4 heads on 2 KV heads), window [30, -20], LSE, seq_q 384 > seq_k 256, the overlap schedule: within the bound of float64, empty rows 0 and -inf", () => {
    // Bottom-right aligned (seq_k − seq_q = −128): query i sees keys i − 158 … i − 148. Rows
    // 0-147 see none (tile 0 reads no KV block at all), tile 1 reads block 0 only, tile 2 both
    // blocks, each crossing both edges (masked). Query head h reads KV head ⌊h / 2⌋ (h mod 2
    // fails).
    const s: FlashAttentionSizes = {
      batch: 1,
      heads: 4,
      kvHeads: 2,
      seqQ: 384,
      seqK: 256,
      headDim: 64,
      dtype: "float16",
      window: [30, -20],
      lse: true,
      schedule: "overlap",
    };
    expect(simulated(s)).toContain(`${4 * 148} rows see no key`);
  });

  it("a negative scale (−16) with logits spanning hundreds in the exponent: the running max is of scale · S, so no exp2 overflows", () => {
    // With scale < 0 the largest scaled logit is scale · min(S): taking scale · max(S) there
    // would make every exponent ≥ 0 and their sum overflow float32 (logits over [-1, 1) inputs
    // at head dim 64 span about ±8; times 16 · log2 e that is ±185).
    // (Every schedule shares the softmax; the default, ping-pong, runs here.)
    const s: FlashAttentionSizes = {
      ...{ batch: 1, heads: 1, seqQ: 128, seqK: 256, headDim: 64, dtype: "bfloat16" },
      ...{ scale: -16, lse: true },
    };
    simulated(s);
  });

  it("a negative scale with causal masking: masked logits are +inf before the scaling, not NaN", () => {
    const s: FlashAttentionSizes = {
      ...{ batch: 1, heads: 1, seqQ: 128, seqK: 128, headDim: 64, dtype: "float16" },
      ...{ scale: -0.5, causal: true, lse: true },
    };
    simulated(s);
  });

  it("causal with seq_q ≠ seq_k, bottom-right aligned: 256 queries on 128 keys, rows 0-127 see none, LSE", () => {
    // Query i sees keys j ≤ i − 128: query tile 0 reads no KV block (O = 0 and LSE −inf from an
    // empty loop), tile 1 one block crossing the diagonal.
    const s: FlashAttentionSizes = {
      batch: 1,
      heads: 1,
      seqQ: 256,
      seqK: 128,
      headDim: 64,
      dtype: "float16",
      causal: true,
      lse: true,
    };
    expect(simulated(s)).toContain("128 rows see no key");
  });

  it("varlen: 3 sequences of 1, 130, 77 queries on 200, 50, 76 keys, LSE, padding rows: within the bound of float64, padding untouched", () => {
    // Packed Q [216, 1, 64] (8 padding rows), K and V [330, 1, 64] (4): sequence 0's second KV
    // block reads sequence 1's keys (masked), sequence 2's tiles run past the tensors' ends
    // (TMA fills zeros), sequence 1's second query tile is partial and the grid's second tile of
    // sequences 0 and 2 exits at once.
    const s: FlashAttentionSizes = {
      batch: 3,
      heads: 1,
      seqQ: 216,
      seqK: 330,
      headDim: 64,
      dtype: "float16",
      lse: true,
      varlen: { maxSeqQ: 130 },
    };
    expect(simulated(s, [1, 130, 77], [200, 50, 76])).not.toContain("see no key");
  });

  it("varlen causal (bottom-right per sequence), GQA 2 heads on 1, bfloat16, LSE, ping-pong: rows that see no key exactly 0 and -inf", () => {
    // Sequence 1 (130 queries, 50 keys): query i sees keys j ≤ i − 80, rows 0-79 none; sequence 2
    // (77 on 76): row 0 none; sequence 0 (1 on 200): its one row sees every key.
    const s: FlashAttentionSizes = {
      batch: 3,
      heads: 2,
      kvHeads: 1,
      seqQ: 216,
      seqK: 330,
      headDim: 64,
      dtype: "bfloat16",
      causal: true,
      lse: true,
      varlen: { maxSeqQ: 130 },
      schedule: "pingpong",
    };
    expect(simulated(s, [1, 130, 77], [200, 50, 76])).toContain(`${2 * (80 + 1)} rows see no key`);
  });

  it("varlen window [20, 3] (bottom-right per sequence), the overlap schedule: 100 queries on 40 keys, 77 on 150", () => {
    // Sequence 0 (shift −60): query i sees keys i − 80 … i − 57, rows 0-56 none; sequence 1
    // (shift 73): keys i + 53 … i + 76, under its 150.
    const s: FlashAttentionSizes = {
      batch: 2,
      heads: 1,
      seqQ: 180,
      seqK: 190,
      headDim: 64,
      dtype: "float16",
      window: [20, 3],
      lse: true,
      varlen: { maxSeqQ: 100 },
      schedule: "overlap",
    };
    expect(simulated(s, [100, 77], [40, 150])).toContain("57 rows see no key");
  });

  it("the float64 reference of sampled rows (the GPU varlen checks' `sampleAbove`) equals the full one on those rows and computes no other", () => {
    const rows = 300;
    const D = 16;
    const rnd = uniformFrom(3);
    const [Q, K, V] = [0, 1, 2].map(() => Float64Array.from({ length: rows * D }, rnd));
    const sees = (i: number, j: number): boolean => j <= i;
    const checks = (i: number): boolean => i < 128 || i >= rows - 128 || i % 7 === 0;
    const run = (sampled: boolean) =>
      attentionFloat64(
        Q!,
        K!,
        V!,
        [{ qOff: 0, lenQ: rows, kOff: 0, lenK: rows, sees, ...(sampled ? { checks } : {}) }],
        { heads: 1, kvHeads: 1, headDim: D },
        0.25,
        { length: rows, index: (_b, _h, i) => i },
      );
    const full = run(false);
    const part = run(true);
    let compared = 0;
    for (let i = 0; i < rows; i++) {
      const o = Array.from(part.o.subarray(i * D, (i + 1) * D));
      if (checks(i)) {
        compared++;
        expect(o).toEqual(Array.from(full.o.subarray(i * D, (i + 1) * D)));
        expect(part.lse[i]).toBe(full.lse[i]);
      } else {
        expect(o).toEqual(new Array<number>(D).fill(0));
        expect(part.lse[i]).toBeNaN();
      }
    }
    // The first and last 128 rows, and the multiples of 7 between (133, 140, …, 168).
    expect(compared).toBe(128 + 128 + 6);
  });

  it("varlen errors: a malformed varlen, packed totals under one tile", () => {
    const base: FlashAttentionSizes = {
      batch: 2,
      heads: 1,
      seqQ: 300,
      seqK: 300,
      headDim: 64,
      dtype: "float16",
    };
    expect(() => makeFlashAttention({ ...base, varlen: { maxSeqQ: 0 } })).toThrow(
      "flash_attention: varlen is { maxSeqQ }, the longest sequence's query rows, an integer in 1 … seq_q (300), got { maxSeqQ: 0 }",
    );
    expect(() => makeFlashAttention({ ...base, varlen: { maxSeqQ: 301 } })).toThrow(/varlen is/);
    expect(() => makeFlashAttention({ ...base, seqQ: 100, varlen: { maxSeqQ: 60 } })).toThrow(
      "flash_attention: with varlen, seq_q and seq_k are the packed row counts of Q and K, integers ≥ 128 and ≥ 128 respectively (a tile's TMA box fits in the tensor: pad the packed tensors), got 100 and 300",
    );
  });

  it("option errors: kvHeads not dividing heads, a malformed window, window with causal, non-boolean lse", () => {
    const base: FlashAttentionSizes = {
      batch: 1,
      heads: 4,
      seqQ: 128,
      seqK: 128,
      headDim: 64,
      dtype: "float16",
    };
    expect(() => makeFlashAttention({ ...base, kvHeads: 3 })).toThrow(
      "flash_attention: kvHeads must be a positive integer dividing heads (4), got 3",
    );
    expect(() => makeFlashAttention({ ...base, kvHeads: 0 })).toThrow(/kvHeads must be/);
    expect(() =>
      makeFlashAttention({ ...base, window: [1.5, 0] as unknown as [number, number] }),
    ).toThrow(
      "flash_attention: window is [left, right], two integers (-1: unbounded), got [1.5, 0]",
    );
    expect(() => makeFlashAttention({ ...base, causal: true, window: [16, 0] })).toThrow(
      "flash_attention: give causal or window, not both (causal is window [-1, 0])",
    );
    expect(() => makeFlashAttention({ ...base, schedule: "fast" as unknown as "serial" })).toThrow(
      'flash_attention: schedule is "serial", "overlap" or "pingpong", got "fast"',
    );
    expect(() => makeFlashAttention({ ...base, lse: 1 as unknown as boolean })).toThrow(
      "flash_attention: lse is a boolean, got 1",
    );
  });

  for (const [dtype, value] of [["bfloat16", 133120]] as const) {
    it(`${dtype} Q = K = V = ${value}: huge equal logits give exactly V (causal row 0 sees one key)`, () => {
      const s: FlashAttentionSizes = {
        batch: 1,
        heads: 1,
        seqQ: 128,
        seqK: 128,
        headDim: 64,
        dtype,
        causal: true,
      };
      const dev = sim();
      const x = () =>
        tensor(new Float32Array(128 * 64).fill(value), {
          shape: [1, 128, 1, 64],
          dtype,
          device: dev,
        });
      const [q, k, v] = [x(), x(), x()];
      const o = tensor.zeros([1, 128, 1, 64], dtype, dev);
      compile(makeFlashAttention(s), { target: "cuda", arch: "sm_90a" })(q, k, v, o);
      const out = o.toArray() as Float32Array;
      expect(out.every((y) => y === value)).toBe(true);
    });
  }

  it("O's 64-row blocks inside their sequence are stored from shared memory by TMA (no st.global of O in dense static builds); dynamic builds store a partial block, and varlen every block, under guards", () => {
    // Each build's PTX made once (the hd 256 build is read twice below).
    const built = new Map<string, string>();
    const ptx = (s: Partial<FlashAttentionSizes>): string => {
      const key = JSON.stringify(s);
      let text = built.get(key);
      if (text === undefined) {
        text = compileToPtx(
          makeFlashAttention({
            ...{ batch: 2, heads: 2, seqQ: 256, seqK: 256, headDim: 128, dtype: "bfloat16" },
            ...s,
          } as FlashAttentionSizes),
          { arch: "sm_90a" },
        ).text;
        built.set(key, text);
      }
      return text;
    };
    const count = (t: string, re: RegExp) => (t.match(re) ?? []).length;
    const store = /cp\.async\.bulk\.tensor\.\dd\.global\.shared::cta\.tile\.bulk_group/g;
    // hd 128: a slot of its own (sO) beside Q and the ring; one store per 64-column block per
    // consumer (two blocks at hd 128, four at 256); the CTA waits for them before it exits.
    const builds: Partial<FlashAttentionSizes>[] = [
      {},
      { causal: true, ctas: 3 },
      { headDim: 256, blockN: 80 },
    ];
    for (const s of builds) {
      const t = ptx(s);
      const blocks = (s.headDim ?? 128) / 64;
      expect(count(t, store), JSON.stringify(s)).toBe(blocks);
      expect(count(t, /st\.global/g), JSON.stringify(s)).toBe(0);
      expect(count(t, /cp\.async\.bulk\.wait_group 0;/g), JSON.stringify(s)).toBe(1);
      expect(t.includes("fence.proxy.async"), JSON.stringify(s)).toBe(true);
    }
    // A persistent grid writes the slot once per unit: the store before must have read it.
    expect(count(ptx({ ctas: 3 }), /cp\.async\.bulk\.wait_group\.read 0;/g)).toBe(1);
    // hd 256 with 80-key blocks has no room for a slot: the consumer's rows of Q's tile (no
    // wait for a read: one unit per CTA).
    expect(ptx({ headDim: 256, blockN: 80 })).not.toMatch(/wait_group\.read/);
    // dynamic (any lengths): the TMA store for 64-row blocks wholly inside the sequence, each
    // thread's guarded stores for a partial one.
    const d = ptx({ dynamic: true, causal: true });
    expect(count(d, store)).toBe(2);
    expect(count(d, /st\.global/g)).toBeGreaterThan(0);
    // varlen: each thread's own rows under guards, no TMA store.
    const v = ptx({ batch: 3, seqQ: 216, seqK: 330, varlen: { maxSeqQ: 130 }, headDim: 64 });
    expect(count(v, store)).toBe(0);
    expect(count(v, /st\.global/g)).toBeGreaterThan(0);
  });

  it("assembles for sm_90a: head dims 64, 128, 256, causal and not, each schedule; GQA + window + LSE", () => {
    // Each schedule at two head dims (serial, the default, also in the builds below).
    const schedules = {
      64: ["overlap", "pingpong"],
      128: ["pingpong", "overlap"],
      256: ["serial", "overlap"],
    } as const;
    for (const headDim of [64, 128, 256] as const) {
      for (const causal of [false, true]) {
        const schedule = schedules[headDim][causal ? 1 : 0];
        const s = {
          batch: 2,
          heads: 8,
          seqQ: 1024,
          seqK: 1024,
          headDim,
          dtype: "float16",
          causal,
          schedule,
        } as const;
        const ptx = compileToPtx(makeFlashAttention(s), { arch: "sm_90a" }).text;
        expect(ptx).toMatch(/wgmma\.mma_async.*\.f32\.f16\.f16 \{/);
        expect(ptx).toMatch(/cp\.async\.bulk\.tensor/);
        // The overlapped schedules wait for one of two wgmma groups; ping-pong's turns are
        // named barriers 8 and 9.
        expect(/wgmma\.wait_group\.sync\.aligned 1;/.test(ptx)).toBe(schedule !== "serial");
        expect(/bar\.sync 8, 256;/.test(ptx)).toBe(schedule === "pingpong");
        assembleLater(ptx, "sm_90a", `fa hd${headDim} ${causal} ${schedule}`);
      }
    }
    // The options: GQA (8 heads on 2), a window bounded on both sides, LSE.
    const o = {
      batch: 2,
      heads: 8,
      kvHeads: 2,
      seqQ: 1024,
      seqK: 1024,
      headDim: 128,
      dtype: "bfloat16",
      window: [256, 0],
      lse: true,
    } as const;
    const ptx = compileToPtx(makeFlashAttention(o), { arch: "sm_90a" }).text;
    expect(ptx).toMatch(/lg2\.approx/);
    assembleLater(ptx, "sm_90a", "fa gqa window lse");
    // Varlen (the simulator runs it at head dim 64): causal with LSE at 128, a window with GQA
    // at 256.
    for (const headDim of [128, 256] as const) {
      const v: FlashAttentionSizes = {
        batch: 4,
        heads: 8,
        kvHeads: headDim === 256 ? 2 : 8,
        seqQ: 5000,
        seqK: 6000,
        headDim,
        dtype: "bfloat16",
        causal: headDim === 128,
        lse: headDim === 128,
        ...(headDim === 256 ? { window: [200, 100] as const } : {}),
        varlen: { maxSeqQ: 2000 },
      };
      const text = compileToPtx(makeFlashAttention(v), { arch: "sm_90a" }).text;
      expect(text).toMatch(/cp\.async\.bulk\.tensor\.3d/);
      assembleLater(text, "sm_90a", `fa varlen hd${headDim}`);
    }
  });
});
