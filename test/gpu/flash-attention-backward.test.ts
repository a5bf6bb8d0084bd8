// On a GPU: the FlashAttention backward (@tirx-ts/kernels' makeFlashAttentionBackward, run by
// examples/flash_attention_backward.ts after the forward with LSE) at sizes past the simulator's,
// each against the float64 gradients of referenceGradients within gradientBound (rows of queries
// that see no key and of keys no query sees exactly 0); and packed variable-length batches
// (varlen: checkFlashAttentionBackwardVarlen, per sequence, every 7th row of each sequence's
// queries and keys compared, gradient rows outside every sequence untouched). Skipped, with the
// reason printed, where no CUDA driver loads.
import { describe, expect, test } from "vitest";
import { cuda, cudaAvailable, type FlashAttentionSizes } from "tirx-ts";
import {
  checkFlashAttentionBackward,
  checkFlashAttentionBackwardVarlen,
} from "../../examples/flash_attention_backward.js";

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
  // Head dim 256 (backward-wide.ts: a CTA per 64 keys, dKᵀ and dVᵀ split over the head dim).
  { batch: 2, heads: 2, seqQ: 512, seqK: 512, headDim: 256, dtype: "bfloat16", causal: true },
  // GQA 4 on 2, seq_q ≠ seq_k, a window bounded on both sides, bottom-right aligned (query i
  // sees keys i + 156 … i + 276).
  {
    batch: 1,
    heads: 4,
    kvHeads: 2,
    seqQ: 384,
    seqK: 640,
    headDim: 256,
    dtype: "float16",
    window: [100, 20],
  },
];

// backwardMma "rs" (Sᵀ with the keys as wgmma M, dV and dK from registers): the head dim 128
// cases and the GQA window case at 64 again.
const RS_CASES = [CASES[0]!, CASES[1]!, CASES[3]!].map((s): FlashAttentionSizes => ({
  ...s,
  backwardMma: "rs",
}));

describe.skipIf(!probe.ok)("flash_attention backward on the GPU against float64", () => {
  test.each([...CASES, ...RS_CASES].map((s) => [JSON.stringify(s), s] as const))(
    "%s",
    (_name, s) => {
      const r = checkFlashAttentionBackward(cuda(0), s);
      console.log(`flash_attention backward ${JSON.stringify(s)}: ${r.summary}`);
      expect(r.ok, r.summary).toBe(true);
    },
    120_000,
  );
});

/** A varlen case: the sizes (totals with padding rows), the sequences' lengths, the call. */
interface VarlenCase {
  readonly s: FlashAttentionSizes;
  readonly lensQ: readonly number[];
  readonly lensK: readonly number[];
  readonly library?: boolean;
}

const VARLEN: readonly VarlenCase[] = [
  // Head dim 128, causal (bottom-right per sequence: sequence 0's 700 queries on 900 keys see
  // them all by the last row), GQA 2 on 1; a sequence with no queries (64 keys: dK = dV = 0) and
  // one with no keys (33 queries: dQ = 0).
  {
    s: {
      batch: 5,
      heads: 2,
      kvHeads: 1,
      seqQ: 2400,
      seqK: 2560,
      headDim: 128,
      dtype: "bfloat16",
      causal: true,
      varlen: { maxSeqQ: 1100, maxSeqK: 1024 },
    },
    lensQ: [700, 517, 0, 1100, 33],
    lensK: [900, 517, 64, 1024, 0],
  },
  // Head dim 64, no mask, through attentionBackward; a 1-query sequence, maxSeqK past the
  // longest (its last key tiles exit at once).
  {
    s: {
      batch: 4,
      heads: 2,
      seqQ: 2432,
      seqK: 2963,
      headDim: 64,
      dtype: "float16",
      varlen: { maxSeqQ: 1500, maxSeqK: 1300 },
    },
    lensQ: [1500, 1, 640, 257],
    lensK: [1024, 300, 640, 999],
    library: true,
  },
  // A window bounded on both sides (bottom-right per sequence), GQA 4 on 2, bfloat16.
  {
    s: {
      batch: 3,
      heads: 4,
      kvHeads: 2,
      seqQ: 2333,
      seqK: 2300,
      headDim: 64,
      dtype: "bfloat16",
      window: [100, 50],
      varlen: { maxSeqQ: 1200, maxSeqK: 1300 },
    },
    lensQ: [800, 333, 1200],
    lensK: [600, 333, 1300],
  },
  // Head dim 256, causal, GQA 4 on 2, float16, through attentionBackward; a sequence with no
  // keys (17 queries: dQ = 0), maxSeqK not a multiple of 64.
  {
    s: {
      batch: 4,
      heads: 4,
      kvHeads: 2,
      seqQ: 1700,
      seqK: 1800,
      headDim: 256,
      dtype: "float16",
      causal: true,
      varlen: { maxSeqQ: 900, maxSeqK: 1000 },
    },
    lensQ: [900, 333, 400, 17],
    lensK: [1000, 300, 480, 0],
    library: true,
  },
];

describe.skipIf(!probe.ok)("flash_attention backward, varlen, on the GPU against float64", () => {
  // The first (head dim 128, causal, GQA) again with backwardMma "rs".
  const rs: VarlenCase = { ...VARLEN[0]!, s: { ...VARLEN[0]!.s, backwardMma: "rs" } };
  test.each([...VARLEN, rs].map((c) => [JSON.stringify(c), c] as const))(
    "%s",
    (_name, c) => {
      const r = checkFlashAttentionBackwardVarlen(cuda(0), c.s, c.lensQ, c.lensK, {
        every: 7,
        ...(c.library ? { library: true } : {}),
      });
      console.log(`flash_attention backward varlen ${JSON.stringify(c)}: ${r.summary}`);
      expect(r.ok, r.summary).toBe(true);
    },
    180_000,
  );
});
