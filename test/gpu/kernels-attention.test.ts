// On a GPU: the library call attention(q, k, v, opts) of @tirx-ts/kernels at head dims 64, 128
// and 256, causal (seqQ = seqK, and seqQ > seqK bottom-right aligned) and not, grouped-query, a
// sliding window, each O (and LSE) against the float64 reference of
// test/util/attention-reference.ts with examples/flash_attention.ts's bounds; calls again
// without and with LSE give the same O bytes. attentionBackward(q, k, v, o, dO, lse, opts) after
// the forward at head dims 64 and 128, causal and not, grouped-query: dQ, dK and dV against the
// float64 gradients of examples/flash_attention_backward.ts within its bound; a second call into
// `out` gives the same dK and dV bytes (no atomics there).
// Skipped, with the reason printed, where no CUDA driver loads.
import { describe, expect, test } from "vitest";
import {
  attention,
  attentionBackward,
  cuda,
  cudaAvailable,
  tensor,
  type AttentionOptions,
  type DeviceTensor,
} from "tirx-ts";
import { gradientBound, referenceGradients } from "../../examples/flash_attention_backward.js";
import {
  attentionError,
  attentionInputs,
  attentionReference,
  type AttentionCase,
} from "../util/attention-reference.js";

const probe = cudaAvailable();
if (!probe.ok) {
  console.log(`test/gpu/kernels-attention: skipped, no CUDA driver (${probe.reason})`);
}

const CASES: readonly AttentionCase[] = [
  // Causal bottom-right aligned with seqQ > seqK: query rows 0-127 see no key (O 0, LSE -inf).
  {
    batch: 1,
    heads: 2,
    kvHeads: 2,
    seqQ: 384,
    seqK: 256,
    headDim: 64,
    dtype: "float16",
    causal: true,
  },
  { batch: 2, heads: 4, kvHeads: 4, seqQ: 512, seqK: 512, headDim: 64, dtype: "float16" },
  {
    batch: 1,
    heads: 4,
    kvHeads: 2,
    seqQ: 768,
    seqK: 768,
    headDim: 128,
    dtype: "bfloat16",
    causal: true,
  },
  {
    batch: 1,
    heads: 4,
    kvHeads: 1,
    seqQ: 384,
    seqK: 640,
    headDim: 256,
    dtype: "float16",
    scale: 0.05,
  },
  {
    batch: 1,
    heads: 2,
    kvHeads: 2,
    seqQ: 512,
    seqK: 512,
    headDim: 256,
    dtype: "bfloat16",
    causal: true,
  },
  {
    batch: 1,
    heads: 4,
    kvHeads: 2,
    seqQ: 512,
    seqK: 512,
    headDim: 128,
    dtype: "float16",
    window: [100, 50],
  },
];

describe.skipIf(!probe.ok)("attention() on the GPU against float64", () => {
  test.each(CASES.map((c) => [JSON.stringify(c), c] as const))("%s", (_name, c) => {
    const dev = cuda(0);
    const { q, k, v } = attentionInputs(c, dev);
    const opts: AttentionOptions = {
      ...(c.causal ? { causal: true } : {}),
      ...(c.scale !== undefined ? { scale: c.scale } : {}),
      ...(c.window ? { window: c.window } : {}),
    };
    const { o, lse } = attention(q, k, v, { ...opts, lse: true });
    const host = (t: DeviceTensor) => t.toArray() as Float32Array;
    const ref = attentionReference(c, host(q), host(k), host(v));
    const err = attentionError(c, ref, host(o), host(lse));
    console.log(
      `attention ${JSON.stringify(c)}: O worst ${err.o.toFixed(3)}, LSE worst ${err.lse.toFixed(3)} of the bounds`,
    );
    expect(err.o).toBeLessThanOrEqual(1);
    expect(err.lse).toBeLessThanOrEqual(1);
    // Again, without LSE (another kernel) and then with it (the compiled one): the same O.
    const again = attention(q, k, v, opts);
    const third = attention(q, k, v, { ...opts, lse: true });
    expect(Buffer.from(third.o.toBytes()).equals(Buffer.from(o.toBytes()))).toBe(true);
    expect(Buffer.from(again.o.toBytes()).equals(Buffer.from(o.toBytes()))).toBe(true);
    for (const t of [q, k, v, o, lse, again.o, third.o, third.lse]) t.dispose();
  });
});

const BACKWARD_CASES: readonly AttentionCase[] = [
  {
    batch: 1,
    heads: 2,
    kvHeads: 2,
    seqQ: 512,
    seqK: 512,
    headDim: 128,
    dtype: "float16",
    causal: true,
  },
  { batch: 2, heads: 2, kvHeads: 2, seqQ: 256, seqK: 384, headDim: 128, dtype: "bfloat16" },
  // Grouped-query: 4 query heads on 2 KV heads (dK and dV sum over each group).
  {
    batch: 1,
    heads: 4,
    kvHeads: 2,
    seqQ: 384,
    seqK: 384,
    headDim: 128,
    dtype: "float16",
    causal: true,
    scale: 0.1,
  },
  { batch: 1, heads: 4, kvHeads: 1, seqQ: 256, seqK: 256, headDim: 64, dtype: "bfloat16" },
];

describe.skipIf(!probe.ok)("attentionBackward() on the GPU against float64", () => {
  test.each(BACKWARD_CASES.map((c) => [JSON.stringify(c), c] as const))("%s", (_name, c) => {
    const dev = cuda(0);
    const { q, k, v } = attentionInputs(c, dev);
    const dO = attentionInputs({ ...c, kvHeads: c.heads }, dev, 23).q;
    // The forward call's mask and scale, given to both calls.
    const opts: Pick<AttentionOptions, "causal" | "scale"> = {
      ...(c.causal ? { causal: true } : {}),
      ...(c.scale !== undefined ? { scale: c.scale } : {}),
    };
    const { o, lse } = attention(q, k, v, { ...opts, lse: true });
    const g = attentionBackward(q, k, v, o, dO, lse, opts);
    const host = (t: DeviceTensor) => t.toArray() as Float32Array;
    const ref = referenceGradients(
      { ...c, headDim: c.headDim as 64 | 128 },
      host(q),
      host(k),
      host(v),
      host(dO),
    );
    const bound = gradientBound(c.dtype);
    const worst: string[] = [];
    for (const [name, got, want] of [
      ["dq", g.dq, ref.dQ],
      ["dk", g.dk, ref.dK],
      ["dv", g.dv, ref.dV],
    ] as const) {
      const x = host(got);
      const top = want.reduce((a, w) => Math.max(a, Math.abs(w)), 0) || 1;
      let w = 0;
      for (let e = 0; e < x.length; e++) {
        const err = Math.abs(x[e]! - want[e]!) / (bound * top);
        w = Number.isNaN(err) ? Infinity : Math.max(w, err);
      }
      worst.push(`${name} ${w.toFixed(3)}`);
      expect(w, `${name}: worst error as a fraction of the bound`).toBeLessThanOrEqual(1);
    }
    console.log(`attentionBackward ${JSON.stringify(c)}: worst of the bound ${worst.join(", ")}`);
    // Again, into given tensors (the compiled kernels): dK and dV bit for bit.
    const dk = tensor.empty(k.shape, k.dtype, dev);
    const dv = tensor.empty(k.shape, k.dtype, dev);
    const again = attentionBackward(q, k, v, o, dO, lse, { ...opts, out: { dk, dv } });
    expect(again.dk).toBe(dk);
    expect(Buffer.from(dk.toBytes()).equals(Buffer.from(g.dk.toBytes()))).toBe(true);
    expect(Buffer.from(dv.toBytes()).equals(Buffer.from(g.dv.toBytes()))).toBe(true);
    for (const t of [q, k, v, dO, o, lse, g.dq, g.dk, g.dv, again.dq, dk, dv]) t.dispose();
  });
});
