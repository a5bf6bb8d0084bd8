// On a GPU: examples/flash_attention.ts with its options (GQA / MQA `kvHeads`, a sliding `window`,
// the `lse` output, causal with seq_q ≠ seq_k, variable-length batches, the 192-row and 192-key
// tiles at head dim 64) at sizes past the simulator's, each against the float64 reference of
// checkFlashAttention or checkFlashAttentionVarlen (O within its stated bound, rows that see no
// key exactly 0 and LSE −inf, varlen padding rows untouched).
// Skipped, with the reason printed, where no CUDA driver loads.
import { describe, expect, test } from "vitest";
import { cuda, cudaAvailable } from "tirx-ts";
import {
  checkFlashAttention,
  checkFlashAttentionVarlen,
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
  // Causal with seq_q ≠ seq_k, bottom-right aligned: keys past the queries (shift +512), and
  // queries past the keys (shift −512: rows 0-511 see no key).
  {
    batch: 2,
    heads: 4,
    seqQ: 1024,
    seqK: 1536,
    headDim: 128,
    dtype: "float16",
    causal: true,
    lse: true,
  },
  {
    batch: 1,
    heads: 4,
    kvHeads: 1,
    seqQ: 1536,
    seqK: 1024,
    headDim: 64,
    dtype: "bfloat16",
    causal: true,
    lse: true,
  },
  // FlashAttention-3's tiles at head dim 64: 192 query rows (three consumers, the ping-pong
  // ring) on 1024 queries (a partial last tile), causal, GQA 4 on 2; 192 × 192 (serial) on
  // lengths 192 divides neither of (a partial tile and KV block); 128 × 192 (two consumers).
  {
    batch: 2,
    heads: 4,
    kvHeads: 2,
    seqQ: 1024,
    seqK: 1024,
    headDim: 64,
    dtype: "bfloat16",
    causal: true,
    lse: true,
    blockM: 192,
  },
  {
    batch: 2,
    heads: 2,
    seqQ: 1000,
    seqK: 1100,
    headDim: 64,
    dtype: "float16",
    lse: true,
    blockM: 192,
    blockN: 192,
  },
  {
    batch: 1,
    heads: 4,
    seqQ: 512,
    seqK: 1000,
    headDim: 64,
    dtype: "bfloat16",
    causal: true,
    blockN: 192,
  },
  // The wider KV blocks of head dims 128 (176, 192) and 256 (80): partial last blocks.
  { batch: 2, heads: 4, seqQ: 1024, seqK: 1024, headDim: 128, dtype: "bfloat16", blockN: 176 },
  {
    batch: 1,
    heads: 4,
    seqQ: 768,
    seqK: 1000,
    headDim: 128,
    dtype: "float16",
    causal: true,
    lse: true,
    blockN: 192,
  },
  { batch: 2, heads: 2, seqQ: 1024, seqK: 1024, headDim: 256, dtype: "bfloat16", blockN: 80 },
];

/** A varlen case: sizes and options, then the sequences' query and key lengths. */
interface VarlenCase {
  readonly s: FlashAttentionSizes;
  readonly lensQ: readonly number[];
  readonly lensK: readonly number[];
}

const VARLEN: readonly VarlenCase[] = [
  // Lengths 1000, 4096, 37 at head dim 128, float16 and bfloat16, causal and not, with LSE.
  ...(["float16", "bfloat16"] as const).flatMap((dtype) =>
    [false, true].map((causal): VarlenCase => ({
      s: {
        batch: 3,
        heads: 2,
        seqQ: 5200,
        seqK: 5200,
        headDim: 128,
        dtype,
        causal,
        lse: true,
        varlen: { maxSeqQ: 4096 },
      },
      lensQ: [1000, 4096, 37],
      lensK: [1000, 4096, 37],
    })),
  ),
  // Different key lengths, causal bottom-right (sequence 1: its first 300 rows see no key;
  // sequence 3 has no keys at all, and 129 rows: two query tiles), GQA 4 on 2, head dim 64.
  {
    s: {
      batch: 4,
      heads: 4,
      kvHeads: 2,
      seqQ: 3000,
      seqK: 3000,
      headDim: 64,
      dtype: "bfloat16",
      causal: true,
      lse: true,
      varlen: { maxSeqQ: 1500 },
    },
    lensQ: [700, 1500, 1, 129],
    lensK: [1200, 1200, 300, 0],
  },
  // A window bounded both sides (bottom-right aligned), MQA at head dim 256 (64-key blocks).
  {
    s: {
      batch: 3,
      heads: 2,
      kvHeads: 1,
      seqQ: 2400,
      seqK: 2400,
      headDim: 256,
      dtype: "float16",
      window: [300, 40],
      lse: true,
      varlen: { maxSeqQ: 1111 },
    },
    lensQ: [1111, 513, 640],
    lensK: [900, 1000, 333],
  },
];

describe.skipIf(!probe.ok)("flash_attention options on the GPU against float64", () => {
  test.each(CASES.map((s) => [JSON.stringify(s), s] as const))("%s", (_name, s) => {
    const r = checkFlashAttention(cuda(0), makeFlashAttention(s), s);
    console.log(`flash_attention ${JSON.stringify(s)}: ${r.summary}`);
    expect(r.ok, r.summary).toBe(true);
  });
  test.each(VARLEN.map((c) => [`${JSON.stringify(c.s)} q ${c.lensQ} k ${c.lensK}`, c] as const))(
    "varlen %s",
    (_name, { s, lensQ, lensK }) => {
      // Sequences above 1024 rows compared at a sample of rows (the float64 reference of all
      // 4096² took 18-36 s a case alone, past the 60 s timeout beside the other GPU files).
      const r = checkFlashAttentionVarlen(cuda(0), makeFlashAttention(s), s, lensQ, lensK, 1024);
      console.log(`flash_attention varlen ${JSON.stringify(s)}: ${r.summary}`);
      expect(r.ok, r.summary).toBe(true);
    },
  );
});
