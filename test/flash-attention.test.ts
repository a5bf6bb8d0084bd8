// examples/flash_attention.ts beyond its example size: the causal mask on the simulator against
// float64, huge equal logits (bf16 Q = K = V = 133120, logits 1.1e12 taken in float32: exactly
// 133120 out, row 0 seeing one key), GQA with a sliding window and LSE (rows that see no key: O
// exactly 0, LSE −inf), option errors, and its PTX assembles for sm_90a at each head dim.
import { describe, expect, it } from "vitest";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { compile, sim, tensor } from "tirx-ts";
import {
  checkFlashAttention,
  makeFlashAttention,
  type FlashAttentionSizes,
} from "../examples/flash_attention.js";
import { assembleLater } from "./util/ptxas-deferred.js";

describe("flash_attention forward", () => {
  it("causal, head dim 128, bfloat16, two query tiles: within the stated bound of float64, no reports", () => {
    const s: FlashAttentionSizes = {
      batch: 1,
      heads: 1,
      seqQ: 256,
      seqK: 256,
      headDim: 128,
      dtype: "bfloat16",
      causal: true,
    };
    const r = checkFlashAttention(sim(), makeFlashAttention(s), s);
    expect(r.ok, r.summary).toBe(true);
  });

  it("GQA (4 heads on 2 KV heads), window [30, -20], LSE, seq_q 384 > seq_k 256: within the bound of float64, empty rows 0 and -inf", () => {
    // Query i sees keys i − 30 … i − 20: rows 0-19 and 286-383 see none, row 255 none in KV
    // block 0 (its running max stays -inf there); tile 0 skips KV block 1 and tile 2 block 0,
    // blocks crossing both edges are masked. Query head h reads KV head ⌊h / 2⌋ (h mod 2 fails).
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
    };
    const r = checkFlashAttention(sim(), makeFlashAttention(s), s);
    expect(r.ok, r.summary).toBe(true);
    expect(r.summary).toContain(`${4 * (20 + 98)} rows see no key`);
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
      "flash_attention: window is [left, right], two integers (-1: unbounded), got [1.5,0]",
    );
    expect(() => makeFlashAttention({ ...base, causal: true, window: [16, 0] })).toThrow(
      "flash_attention: give causal or window, not both (causal is window [-1, 0])",
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

  it("assembles for sm_90a: head dims 64, 128, 256, causal and not; GQA + window + LSE", () => {
    for (const headDim of [64, 128, 256] as const) {
      for (const causal of [false, true]) {
        const s = {
          batch: 2,
          heads: 8,
          seqQ: 1024,
          seqK: 1024,
          headDim,
          dtype: "float16",
          causal,
        } as const;
        const ptx = compileToPtx(makeFlashAttention(s), { arch: "sm_90a" }).text;
        expect(ptx).toMatch(/wgmma\.mma_async.*\.f32\.f16\.f16 \{/);
        expect(ptx).toMatch(/cp\.async\.bulk\.tensor/);
        assembleLater(ptx, "sm_90a", `fa hd${headDim} ${causal}`);
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
  });
});
