// On a GPU: examples/flash_attention.ts with its options (GQA / MQA `kvHeads`, a sliding `window`,
// the `lse` output) at sizes past the simulator's, each against the float64 reference of
// checkFlashAttention (O within its stated bound, rows that see no key exactly 0 and LSE −inf).
// Skipped, with the reason printed, where no CUDA driver loads.
import { describe, expect, test } from "vitest";
import { cuda, cudaAvailable } from "tirx-ts";
import {
  checkFlashAttention,
  makeFlashAttention,
  type FlashAttentionSizes,
} from "../../examples/flash_attention.js";

const probe = cudaAvailable();
if (!probe.ok) {
  console.log(`test/gpu/flash-attention-options: skipped, no CUDA driver (${probe.reason})`);
}

const CASES: readonly FlashAttentionSizes[] = [
  // GQA 8 on 2, a left window of 256 keys plus the diagonal, LSE.
  {
    batch: 2,
    heads: 8,
    kvHeads: 2,
    seqQ: 1024,
    seqK: 1024,
    headDim: 128,
    dtype: "bfloat16",
    window: [256, 0],
    lse: true,
  },
  // MQA at head dim 256 (64-key blocks), a window bounded both sides.
  {
    batch: 1,
    heads: 4,
    kvHeads: 1,
    seqQ: 512,
    seqK: 512,
    headDim: 256,
    dtype: "float16",
    window: [100, 50],
    lse: true,
  },
  // Rows 0-199 see no key; seq_q > seq_k.
  {
    batch: 1,
    heads: 2,
    seqQ: 640,
    seqK: 384,
    headDim: 64,
    dtype: "float16",
    window: [-1, -200],
    lse: true,
  },
  // Causal with LSE (the window [-1, 0]).
  {
    batch: 1,
    heads: 4,
    kvHeads: 2,
    seqQ: 768,
    seqK: 768,
    headDim: 128,
    dtype: "bfloat16",
    causal: true,
    lse: true,
  },
];

describe.skipIf(!probe.ok)("flash_attention options on the GPU against float64", () => {
  test.each(CASES.map((s) => [JSON.stringify(s), s] as const))("%s", (_name, s) => {
    const r = checkFlashAttention(cuda(0), makeFlashAttention(s), s);
    console.log(`flash_attention ${JSON.stringify(s)}: ${r.summary}`);
    expect(r.ok, r.summary).toBe(true);
  });
});
