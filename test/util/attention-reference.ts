// A float64 reference of attention for the tests of the `attention` library call
// (test/kernels-attention.test.ts on the simulator, test/gpu/kernels-attention.test.ts on a GPU),
// with the bounds of examples/flash_attention.ts's checkFlashAttention.
import { tensor, type DeviceLike, type DeviceTensor } from "tirx-ts";

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
  let s = seed;
  const rnd = (): number => ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  const make = (seq: number, h: number) =>
    tensor(Float32Array.from({ length: c.batch * seq * h * c.headDim }, rnd), {
      shape: [c.batch, seq, h, c.headDim],
      dtype: c.dtype,
      device: dev,
    });
  return { q: make(c.seqQ, c.heads), k: make(c.seqK, c.kvHeads), v: make(c.seqK, c.kvHeads) };
}

/**
 * O [batch, seqQ, heads, hd] and LSE [batch, heads, seqQ] in float64 from the host values of Q,
 * K and V (as the device holds them, rounded to the 16-bit dtype): O = softmax(Q·Kᵀ · scale) · V
 * over the keys each row sees (causal: j ≤ i + seqK − seqQ; a window: i − left ≤ j ≤ i + right),
 * query head h reading KV head ⌊h / (heads / kvHeads)⌋; a row that sees no key has O = 0 and
 * LSE = −inf.
 */
export function attentionReference(
  c: AttentionCase,
  Q: ArrayLike<number>,
  K: ArrayLike<number>,
  V: ArrayLike<number>,
): { o: Float64Array; lse: Float64Array } {
  const { batch, heads, kvHeads, seqQ, seqK, headDim: D } = c;
  const scale = c.scale ?? 1 / Math.sqrt(D);
  // Causal: the window [-1, 0] aligned bottom-right (shifted by seqK − seqQ); a window: absolute.
  const [left, right] = c.window ?? (c.causal ? [-1, 0] : [-1, -1]);
  const shift = c.causal ? seqK - seqQ : 0;
  const sees = (i: number, j: number) =>
    (left === -1 || j >= i + shift - left) && (right === -1 || j <= i + shift + right);
  const o = new Float64Array(batch * seqQ * heads * D);
  const lse = new Float64Array(batch * heads * seqQ);
  const at = (b: number, i: number, h: number, seq: number, nh: number) =>
    ((b * seq + i) * nh + h) * D;
  const p = new Float64Array(seqK);
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < heads; h++) {
      const hk = Math.floor(h / (heads / kvHeads));
      for (let i = 0; i < seqQ; i++) {
        const qi = at(b, i, h, seqQ, heads);
        let mx = -Infinity;
        for (let j = 0; j < seqK; j++) {
          if (!sees(i, j)) {
            p[j] = -Infinity;
            continue;
          }
          const kj = at(b, j, hk, seqK, kvHeads);
          let d = 0;
          for (let x = 0; x < D; x++) d += Q[qi + x]! * K[kj + x]!;
          p[j] = d * scale;
          mx = Math.max(mx, p[j]!);
        }
        if (mx === -Infinity) {
          lse[(b * heads + h) * seqQ + i] = -Infinity;
          continue;
        }
        let sum = 0;
        for (let j = 0; j < seqK; j++) sum += p[j] = Math.exp(p[j]! - mx);
        for (let j = 0; j < seqK; j++) {
          if (p[j] === 0) continue;
          const vj = at(b, j, hk, seqK, kvHeads);
          for (let x = 0; x < D; x++) o[qi + x] = o[qi + x]! + (p[j]! * V[vj + x]!) / sum;
        }
        lse[(b * heads + h) * seqQ + i] = mx + Math.log(sum);
      }
    }
  }
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
