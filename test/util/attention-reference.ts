// A float64 reference of attention for the tests of the `attention` library call
// (test/kernels-attention.test.ts on the simulator, test/gpu/kernels-attention.test.ts on a GPU),
// with the bounds of examples/flash_attention.ts's checkFlashAttention.
import type { DeviceLike, DeviceTensor } from "tirx-ts";
import { randomTensor, uniform } from "./gemm-reference.js";
import { attentionFloat64 } from "../../examples/flash_attention.js";

/** The sizes and options of one attention case (q [batch, seqQ, heads, hd], k and v [batch, seqK, kvHeads, hd]). */
export interface AttentionCase {
  readonly batch: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly seqQ: number;
  readonly seqK: number;
  readonly headDim: number;
  readonly dtype: "float16" | "bfloat16";
  readonly causal?: boolean;
  readonly scale?: number;
  readonly window?: readonly [number, number];
}

/** Q, K and V of `c` on `dev`: fixed pseudo-random values in [-1, 1) (LCG seeded by `seed`). */
export function attentionInputs(
  c: AttentionCase,
  dev: DeviceLike,
  seed = 7,
): { q: DeviceTensor & Disposable; k: DeviceTensor & Disposable; v: DeviceTensor & Disposable } {
  const rnd = uniform(seed);
  const make = (seq: number, h: number) =>
    randomTensor([c.batch, seq, h, c.headDim], c.dtype, dev, rnd);
  return { q: make(c.seqQ, c.heads), k: make(c.seqK, c.kvHeads), v: make(c.seqK, c.kvHeads) };
}

/**
 * O [batch, seqQ, heads, hd] and LSE [batch, heads, seqQ] in float64 from the host values of Q,
 * K and V (as the device holds them, rounded to the 16-bit dtype): O = softmax(Q·Kᵀ · scale) · V
 * over the keys each row sees (bottom-right aligned: causal j ≤ i + seqK − seqQ; a window
 * i + seqK − seqQ − left ≤ j ≤ i + seqK − seqQ + right),
 * query head h reading KV head ⌊h / (heads / kvHeads)⌋; a row that sees no key has O = 0 and
 * LSE = −inf. The examples' reference (attentionFloat64 of examples/flash_attention.ts, which
 * checkFlashAttention uses), each batch a sequence.
 */
export function attentionReference(
  c: AttentionCase,
  Q: ArrayLike<number>,
  K: ArrayLike<number>,
  V: ArrayLike<number>,
): { o: Float64Array; lse: Float64Array } {
  const { batch, heads, seqQ, seqK, headDim } = c;
  // Causal is the window [-1, 0]; both aligned bottom-right (shifted by seqK − seqQ).
  const [left, right] = c.window ?? (c.causal ? [-1, 0] : [-1, -1]);
  const shift = seqK - seqQ;
  const sees = (i: number, j: number) =>
    (left === -1 || j >= i + shift - left) && (right === -1 || j <= i + shift + right);
  const seqs = Array.from({ length: batch }, (_, b) => ({
    qOff: b * seqQ,
    lenQ: seqQ,
    kOff: b * seqK,
    lenK: seqK,
    sees,
  }));
  const { o, lse } = attentionFloat64(
    Q,
    K,
    V,
    seqs,
    { heads, kvHeads: c.kvHeads, headDim },
    c.scale ?? 1 / Math.sqrt(headDim),
    { length: batch * heads * seqQ, index: (b, h, i) => (b * heads + h) * seqQ + i },
  );
  return { o, lse };
}

/**
 * The worst error of O and LSE against the reference, as a fraction of checkFlashAttention's
 * bounds (inputs in [-1, 1)): O within 2 ulp of 1.0 in the dtype (2^-9 float16, 2^-6 bfloat16:
 * P is rounded to the dtype before P·V, exp2 is ex2.approx), LSE within 2^-18 · max(1, |LSE|),
 * and exactly −inf for a row that sees no key (Infinity when not). At most 1 passes.
 */
export function attentionError(
  c: AttentionCase,
  ref: { o: Float64Array; lse: Float64Array },
  O: ArrayLike<number>,
  L?: ArrayLike<number>,
): { o: number; lse: number } {
  const bound = (c.dtype === "float16" ? 2 ** -10 : 2 ** -7) * 2;
  let wo = 0;
  for (let i = 0; i < ref.o.length; i++) {
    const e = Math.abs(O[i]! - ref.o[i]!) / bound;
    wo = Number.isNaN(e) ? Infinity : Math.max(wo, e);
  }
  let wl = 0;
  if (L) {
    for (let i = 0; i < ref.lse.length; i++) {
      const r = ref.lse[i]!;
      const got = L[i]!;
      if (r === -Infinity) {
        if (got !== -Infinity) wl = Infinity;
        continue;
      }
      const e = Math.abs(got - r) / (2 ** -18 * Math.max(1, Math.abs(r)));
      wl = Number.isNaN(e) ? Infinity : Math.max(wl, e);
    }
  }
  return { o: wo, lse: wl };
}
