// A float64 reference of attention for the tests of the `attention` library call
// (test/kernels-attention.test.ts on the simulator, test/gpu/kernels-attention.test.ts on a GPU),
// with the bounds of examples/flash_attention.ts's checkFlashAttention, and attentionBackward's
// check against float64 gradients (examples/flash_attention_backward.ts's reference and bound).
import {
  attentionBackward,
  tensor,
  type AttentionBackwardOptions,
  type AttentionGradients,
  type DeviceLike,
  type DeviceTensor,
} from "tirx-ts";
import { randomTensor } from "./gemm-reference.js";
import { uniformFrom } from "./lcg.js";
import { attentionFloat64 } from "../../examples/flash_attention.js";
import { gradientBound, referenceGradients } from "../../examples/flash_attention_backward.js";

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
  const rnd = uniformFrom(seed);
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

/** The inputs of a backward check: Q, K, V, dO, and O and LSE from the float64 forward. */
export interface BackwardInputs {
  readonly q: DeviceTensor;
  readonly k: DeviceTensor;
  readonly v: DeviceTensor;
  readonly dO: DeviceTensor;
  readonly o: DeviceTensor;
  readonly lse: DeviceTensor;
}

/** The gradients a backward produced. */
export interface Gradients {
  readonly dq: DeviceTensor;
  readonly dk: DeviceTensor;
  readonly dv: DeviceTensor;
}

/**
 * A backward of case `c` on `dev` against float64 gradients: Q, K, V from
 * {@link attentionInputs} (`seed`), dO the values of another seed (`dOSeed`, default 23) in Q's
 * shape, O and LSE from the float64 forward (O rounded to the dtype, LSE to float32; the backward
 * is what is tested). `run` computes the gradients from them (default: attentionBackward with the
 * case's mask and scale, and `out`). Returns the gradients, each one's worst error as a fraction
 * of gradientBound · max|ref| (examples/flash_attention_backward.ts; Infinity for a NaN, or for a
 * nonzero gradient against a reference of zeros): at most 1 passes; and `unseen`, the count of
 * elements of rows that see no key (dQ) or no query (dK, dV), which must be exactly 0 (Infinity
 * when one is not). The tensors it made are the caller's (the simulator frees them with `dev`).
 */
export function attentionBackwardErrors(
  c: AttentionCase,
  dev: DeviceLike,
  opts: {
    readonly seed?: number;
    readonly dOSeed?: number;
    readonly out?: AttentionBackwardOptions["out"];
    readonly run?: (x: BackwardInputs) => Gradients;
  } = {},
): {
  dq: number;
  dk: number;
  dv: number;
  unseen: number;
  grads: Gradients;
  inputs: BackwardInputs;
} {
  const host = (t: DeviceTensor) => t.toArray() as Float32Array;
  const { q, k, v } = attentionInputs(c, dev, opts.seed);
  const dO = attentionInputs({ ...c, kvHeads: c.heads }, dev, opts.dOSeed ?? 23).q;
  const fwd = attentionReference(c, host(q), host(k), host(v));
  const o = tensor(Float32Array.from(fwd.o), { shape: q.shape, dtype: c.dtype, device: dev });
  const lse = tensor(Float32Array.from(fwd.lse), {
    shape: [c.batch, c.heads, c.seqQ],
    dtype: "float32",
    device: dev,
  });
  const inputs = { q, k, v, dO, o, lse };
  const grads =
    opts.run?.(inputs) ??
    attentionBackward(q, k, v, o, dO, lse, {
      ...(c.causal ? { causal: true } : {}),
      ...(c.window ? { window: c.window } : {}),
      ...(c.scale !== undefined ? { scale: c.scale } : {}),
      ...(opts.out ? { out: opts.out } : {}),
    });
  const ref = referenceGradients(
    { ...c, headDim: c.headDim as 64 },
    host(q),
    host(k),
    host(v),
    host(dO),
  );
  let unseen = 0;
  const worst = (got: DeviceTensor, want: Float64Array, zero: Uint8Array): number => {
    const x = host(got);
    let top = 0;
    for (let e = 0; e < x.length; e++) if (!zero[e]) top = Math.max(top, Math.abs(want[e]!));
    let w = 0;
    for (let e = 0; e < x.length; e++) {
      if (zero[e]) {
        unseen = x[e] === 0 ? unseen + 1 : Infinity;
        continue;
      }
      // A reference of zeros bounds nothing: the gradient must be exactly 0 then.
      const err =
        top === 0
          ? x[e] === 0
            ? 0
            : Infinity
          : Math.abs(x[e]! - want[e]!) / (gradientBound(c.dtype) * top);
      w = Number.isNaN(err) ? Infinity : Math.max(w, err);
    }
    return w;
  };
  return {
    dq: worst(grads.dq, ref.dQ, ref.unseenQ),
    dk: worst(grads.dk, ref.dK, ref.unseenK),
    dv: worst(grads.dv, ref.dV, ref.unseenK),
    unseen,
    grads,
    inputs,
  };
}
