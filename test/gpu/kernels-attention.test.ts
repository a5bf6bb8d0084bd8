// On a GPU: the library call attention(q, k, v, opts) of @tirx-ts/kernels at head dims 64, 128
// and 256, causal (seqQ = seqK, and seqQ > seqK bottom-right aligned) and not, grouped-query, a
// sliding window, negative softmax scales, each O (and LSE) against the float64 reference of
// test/util/attention-reference.ts with examples/flash_attention.ts's bounds; calls again
// without and with LSE give the same O bytes. attentionBackward(q, k, v, o, dO, lse, opts) after
// the forward at head dims 64, 128 and 256, causal and not, grouped-query: dQ, dK and dV against
// the float64 gradients of examples/flash_attention_backward.ts within its bound; a second call
// into `out` gives the same dK and dV bytes (no atomics there). Packed variable-length batches
// (cuSeqlensQ, cuSeqlensK, maxSeqQ) at head dims 64, 128 and 256, causal, a window and no mask,
// sequences of 0 to 1000 rows: each sequence's O and LSE against the reference of that sequence
// alone, padding rows of `out` untouched, a second call the same O bytes.
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
import { uniformFrom } from "../util/lcg.js";

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
  // Negative softmax scales (attention()'s negative launch-scale kernel set: +inf mask, running
  // minimum): causal, and grouped-query with a window.
  {
    batch: 1,
    heads: 2,
    kvHeads: 2,
    seqQ: 512,
    seqK: 512,
    headDim: 128,
    dtype: "bfloat16",
    causal: true,
    scale: -0.0625,
  },
  {
    batch: 1,
    heads: 4,
    kvHeads: 2,
    seqQ: 384,
    seqK: 448,
    headDim: 64,
    dtype: "float16",
    window: [64, 32],
    scale: -0.3,
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
  // Head dim 256 (a CTA per 64 keys, dKᵀ and dVᵀ split over the head dim), causal, grouped-query.
  {
    batch: 2,
    heads: 4,
    kvHeads: 2,
    seqQ: 384,
    seqK: 384,
    headDim: 256,
    dtype: "bfloat16",
    causal: true,
  },
  // A negative softmax scale (the backward's negative launch-scale kernel set), causal.
  {
    batch: 1,
    heads: 2,
    kvHeads: 2,
    seqQ: 384,
    seqK: 384,
    headDim: 128,
    dtype: "float16",
    causal: true,
    scale: -0.15,
  },
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
      { ...c, headDim: c.headDim as 64 | 128 | 256 },
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

/** A packed variable-length case: sequence b of lensQ[b] queries on lensK[b] keys. */
interface VarlenCase {
  readonly lensQ: readonly number[];
  readonly lensK: readonly number[];
  /** Rows after the last sequence in q (and O) and in k, v. */
  readonly padQ: number;
  readonly padK: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly headDim: number;
  readonly dtype: "float16" | "bfloat16";
  readonly causal?: boolean;
  /** Bottom-right aligned per sequence, as the reference aligns it by the sequence's lengths. */
  readonly window?: readonly [number, number];
}

const VARLEN_CASES: readonly VarlenCase[] = [
  // Sequence 2 (77 queries on 76 keys): causal row 0 sees no key; sequence 0's one row sees all
  // 200 keys; sequence 3 spans five query tiles.
  {
    lensQ: [1, 300, 77, 513],
    lensK: [200, 300, 76, 600],
    padQ: 5,
    padK: 3,
    heads: 4,
    kvHeads: 2,
    headDim: 64,
    dtype: "float16",
    causal: true,
  },
  // A sequence with no queries, one with no keys (its rows: O 0, LSE −inf), one of 1000 queries.
  {
    lensQ: [0, 129, 1000],
    lensK: [10, 0, 700],
    padQ: 0,
    padK: 9,
    heads: 2,
    kvHeads: 2,
    headDim: 128,
    dtype: "bfloat16",
  },
  {
    lensQ: [300, 211],
    lensK: [300, 211],
    padQ: 1,
    padK: 0,
    heads: 2,
    kvHeads: 1,
    headDim: 128,
    dtype: "float16",
    window: [30, 10],
  },
  {
    lensQ: [200, 64],
    lensK: [250, 100],
    padQ: 0,
    padK: 0,
    heads: 2,
    kvHeads: 2,
    headDim: 256,
    dtype: "float16",
    causal: true,
  },
];

describe.skipIf(!probe.ok)("attention() on a packed variable-length batch on the GPU", () => {
  test.each(VARLEN_CASES.map((c) => [JSON.stringify(c), c] as const))("%s", (_name, c) => {
    const dev = cuda(0);
    const { heads, kvHeads, headDim: D, dtype } = c;
    const cum = (lens: readonly number[]) =>
      lens.reduce((a, n) => [...a, a[a.length - 1]! + n], [0]);
    const cuQ = cum(c.lensQ);
    const cuK = cum(c.lensK);
    const batch = c.lensQ.length;
    const totalQ = cuQ[batch]! + c.padQ;
    const totalK = cuK[batch]! + c.padK;
    const rnd = uniformFrom(7);
    const packed = (rows: number, h: number) =>
      tensor(Float32Array.from({ length: rows * h * D }, rnd), {
        shape: [rows, h, D],
        dtype,
        device: dev,
      });
    const ints = (a: number[]) =>
      tensor(Int32Array.from(a), { shape: [a.length], dtype: "int32", device: dev });
    const q = packed(totalQ, heads);
    const k = packed(totalK, kvHeads);
    const v = packed(totalK, kvHeads);
    const MARK = 7;
    const out = tensor(new Float32Array(totalQ * heads * D).fill(MARK), {
      shape: [totalQ, heads, D],
      dtype,
      device: dev,
    });
    const opts: AttentionOptions = {
      cuSeqlensQ: ints(cuQ),
      cuSeqlensK: ints(cuK),
      maxSeqQ: Math.max(...c.lensQ),
      ...(c.causal ? { causal: true } : {}),
      ...(c.window ? { window: c.window } : {}),
    };
    const { lse } = attention(q, k, v, { ...opts, lse: true, out });
    const host = (t: DeviceTensor) => t.toArray() as Float32Array;
    const [Q, K, V, O, L] = [q, k, v, out, lse].map(host) as Float32Array[];
    const worst = { o: 0, lse: 0 };
    for (let b = 0; b < batch; b++) {
      const lenQ = c.lensQ[b]!;
      // Sequence b alone as a batch of one: the reference's causal and window are bottom-right
      // aligned by its own lengths (the varlen convention, and FlashAttention's dense one).
      const one: AttentionCase = {
        batch: 1,
        heads,
        kvHeads,
        seqQ: lenQ,
        seqK: c.lensK[b]!,
        headDim: D,
        dtype,
        ...(c.causal ? { causal: true } : {}),
        ...(c.window ? { window: c.window } : {}),
      };
      const rows = (x: Float32Array, cu: number[], h: number) =>
        x.subarray(cu[b]! * h * D, cu[b + 1]! * h * D);
      const ref = attentionReference(
        one,
        rows(Q!, cuQ, heads),
        rows(K!, cuK, kvHeads),
        rows(V!, cuK, kvHeads),
      );
      // LSE [heads, totalQ]: sequence b's rows of each head, as the reference's [1, heads, lenQ].
      const l = Float32Array.from(
        { length: heads * lenQ },
        (_, e) => L![Math.floor(e / lenQ) * totalQ + cuQ[b]! + (e % lenQ)]!,
      );
      const err = attentionError(one, ref, rows(O!, cuQ, heads), l);
      worst.o = Math.max(worst.o, err.o);
      worst.lse = Math.max(worst.lse, err.lse);
    }
    console.log(
      `attention varlen ${JSON.stringify(c)}: O worst ${worst.o.toFixed(3)}, LSE worst ${worst.lse.toFixed(3)} of the bounds`,
    );
    expect(worst.o).toBeLessThanOrEqual(1);
    expect(worst.lse).toBeLessThanOrEqual(1);
    // Rows of no sequence keep the marker.
    expect(O!.subarray(cuQ[batch]! * heads * D).every((x) => x === MARK)).toBe(true);
    // Again into a new O, without LSE (another kernel): the same bytes in the sequences' rows.
    const again = attention(q, k, v, opts);
    const used = cuQ[batch]! * heads * D * 2;
    expect(
      Buffer.from(again.o.toBytes().subarray(0, used)).equals(
        Buffer.from(out.toBytes().subarray(0, used)),
      ),
    ).toBe(true);
    for (const t of [q, k, v, out, lse, again.o, opts.cuSeqlensQ!, opts.cuSeqlensK!]) t.dispose();
  });
});
