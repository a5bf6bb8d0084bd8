// examples/flash_attention.ts beyond its example size: the causal mask on the simulator against
// float64, huge equal logits (bf16 Q = K = V = 133120, logits 1.1e12 taken in float32: exactly
// 133120 out, row 0 seeing one key), and its PTX assembles for sm_90a at each head dim.
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

  it("assembles for sm_90a: head dims 64, 128, 256, causal and not", () => {
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
  });
});
