// On a GPU: the FlashAttention backward (@tirx-ts/kernels' makeFlashAttentionBackward, run by
// examples/flash_attention_backward.ts after the forward with LSE) at sizes past the simulator's,
// each against the float64 gradients of referenceGradients within gradientBound (rows of queries
// that see no key and of keys no query sees exactly 0). Skipped, with the reason printed, where no
// CUDA driver loads.
import { describe, expect, test } from "vitest";
import { cuda, cudaAvailable, type FlashAttentionSizes } from "tirx-ts";
import { checkFlashAttentionBackward } from "../../examples/flash_attention_backward.js";

const probe = cudaAvailable();
if (!probe.ok) {
  console.log(`test/gpu/flash-attention-backward: skipped, no CUDA driver (${probe.reason})`);
}

const CASES: readonly FlashAttentionSizes[] = [
  { batch: 2, heads: 2, seqQ: 512, seqK: 512, headDim: 128, dtype: "bfloat16" },
  { batch: 1, heads: 4, seqQ: 768, seqK: 768, headDim: 128, dtype: "float16", causal: true },
  { batch: 1, heads: 2, seqQ: 384, seqK: 640, headDim: 64, dtype: "float16" },
  // GQA 4 on 2 with a window bounded on both sides (queries 0-29 see no key, keys past 481 no
  // query).
  {
    batch: 1,
    heads: 4,
    kvHeads: 2,
    seqQ: 512,
    seqK: 512,
    headDim: 64,
    dtype: "bfloat16",
    window: [60, -30],
  },
];

describe.skipIf(!probe.ok)("flash_attention backward on the GPU against float64", () => {
  test.each(CASES.map((s) => [JSON.stringify(s), s] as const))(
    "%s",
    (_name, s) => {
      const r = checkFlashAttentionBackward(cuda(0), s);
      console.log(`flash_attention backward ${JSON.stringify(s)}: ${r.summary}`);
      expect(r.ok, r.summary).toBe(true);
    },
    120_000,
  );
});
