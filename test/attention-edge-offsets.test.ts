// Mask edges that land next to a block boundary, and grouped-query heads with more than one KV
// head, on the simulated device against float64 (mutation testing found the suite blind to both):
// - forward (attention()): the causal shift seqK − seqQ of 1 and the window [-1, 62], where the KV
//   block range and a 64-key chunk's "some key hidden" test change at a block's first key or a
//   chunk's corner;
// - backward (attentionBackward()): the windows [65, 1] and [-1, 62], where the query-block range of
//   a key tile (from either edge) and a block's corner test change by one;
// - backward with 4 query heads on 2 KV heads (query head h reads KV head ⌊h / 2⌋; with one KV
//   head every mapping agrees), dense and a packed variable-length batch.
import { describe, expect, test } from "vitest";
import { attention, sim, type DeviceTensor } from "tirx-ts";
import {
  attentionBackwardErrors,
  attentionError,
  attentionInputs,
  attentionReference,
  type AttentionCase,
} from "./util/attention-reference.js";
import { checkFlashAttentionBackwardVarlen } from "../examples/flash_attention_backward.js";

const dev = sim();
const host = (t: DeviceTensor) => t.toArray() as Float32Array;
// One head for the mask cases: every head masks alike (the grouped-query cases set their own).
const base = { batch: 1, heads: 1, kvHeads: 1, headDim: 64, dtype: "float16" } as const;

/** The mask options of a case. */
const maskOf = (c: AttentionCase) => ({
  ...(c.causal ? { causal: true } : {}),
  ...(c.window ? { window: c.window } : {}),
});

/** attention()'s O and LSE errors as fractions of their bounds. */
function forwardError(c: AttentionCase): { o: number; lse: number } {
  const { q, k, v } = attentionInputs(c, dev);
  const r = attention(q, k, v, { ...maskOf(c), lse: true });
  return attentionError(
    c,
    attentionReference(c, host(q), host(k), host(v)),
    host(r.o),
    host(r.lse!),
  );
}

/** attentionBackward()'s worst gradient error as a fraction of its bound. */
const backwardError = (c: AttentionCase): number => {
  const e = attentionBackwardErrors(c, dev);
  return Math.max(e.dq, e.dk, e.dv);
};

describe("forward: mask edges next to a block boundary", () => {
  const cases: readonly (AttentionCase & { name: string })[] = [
    // The KV block range: the last row's right edge on a block's first key.
    { name: "causal, 128 queries on 129 keys", ...base, seqQ: 128, seqK: 129, causal: true },
    // A 64-key chunk whose only hidden key is its corner.
    { name: "window [-1, 62]", ...base, seqQ: 128, seqK: 128, window: [-1, 62] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const e = forwardError(c);
      expect(e.o, "O").toBeLessThanOrEqual(1);
      expect(e.lse, "LSE").toBeLessThanOrEqual(1);
    });
  }
});

describe("backward: mask edges next to a block boundary", () => {
  const cases: readonly (AttentionCase & { name: string })[] = [
    // A key tile's query-block range from the left edge and from the right edge.
    { name: "window [65, 1], seq 256", ...base, seqQ: 256, seqK: 256, window: [65, 1] },
    // A block's corner test.
    { name: "window [-1, 62], seq 128", ...base, seqQ: 128, seqK: 128, window: [-1, 62] },
  ];
  for (const c of cases) {
    test(c.name, () => expect(backwardError(c)).toBeLessThanOrEqual(1));
  }
});

describe("backward: 4 query heads on 2 KV heads", () => {
  test("causal, seq 128", () => {
    const c = { ...base, heads: 4, kvHeads: 2, seqQ: 128, seqK: 128, causal: true };
    expect(backwardError(c)).toBeLessThanOrEqual(1);
  });

  test("a packed batch of [100, 60] queries on [128, 90] keys, causal", () => {
    const r = checkFlashAttentionBackwardVarlen(
      dev,
      {
        ...{ batch: 2, heads: 4, kvHeads: 2, seqQ: 160, seqK: 218, headDim: 64 },
        ...{ dtype: "float16", causal: true, varlen: { maxSeqQ: 100, maxSeqK: 128 } },
      },
      [100, 60],
      [128, 90],
      { library: true },
    );
    expect(r.ok, r.summary).toBe(true);
  });
});
