// FlashAttention backward on Hopper: dQ, dK and dV of O = softmax(Q·Kᵀ · scale) · V, float16 or
// bfloat16. The kernels are `makeFlashAttentionBackward` of @tirx-ts/kernels
// (packages/kernels/src/attention/backward.ts: a preprocessing kernel for Δ = rowsum(dO ∘ O), the
// main kernel, a CTA per 128 keys with two consumer warpgroups, and a postprocessing kernel for
// dQ). This file runs the forward (with its LSE output) and the backward at a small size on the
// simulator (or the GPU) and compares the gradients with a float64 reference.
// Run: npx tsx examples/flash_attention_backward.ts
import {
  backwardScratch,
  compile,
  device,
  explainTile,
  isMain,
  makeFlashAttention,
  makeFlashAttentionBackward,
  runAsMain,
  tensor,
  type DeviceLike,
  type DeviceTensor,
  type ExampleResult,
  type FlashAttentionBackward,
  type FlashAttentionSizes,
  type PrimFunc,
} from "tirx-ts";

export { makeFlashAttentionBackward, type FlashAttentionBackward };

/** The example's size: one batch, two heads, 128 queries and keys (one CTA per head), causal. */
export const EXAMPLE: FlashAttentionSizes = {
  batch: 1,
  heads: 2,
  seqQ: 128,
  seqK: 128,
  headDim: 64,
  dtype: "float16",
  causal: true,
};
export const flash_attention_bwd = makeFlashAttentionBackward(EXAMPLE);
/** The three kernels at the example's size (examples/script/flash_attention_backward.ts's twins). */
export const flash_attention_bwd_pre = flash_attention_bwd.preprocess;
export const flash_attention_bwd_main = flash_attention_bwd.main;
export const flash_attention_bwd_post = flash_attention_bwd.postprocess;

/**
 * The relative bound of the gradients: every element of dQ, dK and dV within `bound · max|ref|`
 * of the float64 reference of the same tensor (ref: exact softmax from the 16-bit Q, K, V and
 * dO). P and dS are rounded to the 16-bit dtype before their products, O (in Δ = rowsum(dO ∘ O))
 * is the forward's 16-bit output, and exp2 is ex2.approx: relative errors of 2^-11 (float16) or
 * 2^-8 (bfloat16) per term, amplified where dP − Δ cancels; the bound is 2^-9 and 2^-6.
 */
export function gradientBound(dtype: "float16" | "bfloat16"): number {
  return dtype === "float16" ? 2 ** -9 : 2 ** -6;
}

/** Host float64 gradients of attention for bshd Q [b, sq, h, d], K, V [b, sk, hk, d], dO. */
export function referenceGradients(
  s: FlashAttentionSizes,
  Q: Float32Array,
  K: Float32Array,
  V: Float32Array,
  dO: Float32Array,
): {
  dQ: Float64Array;
  dK: Float64Array;
  dV: Float64Array;
  /** Per element of dQ / dK and dV: 1 where its query row sees no key / its key no query. */
  unseenQ: Uint8Array;
  unseenK: Uint8Array;
} {
  const { batch, heads, seqQ, seqK, headDim: D } = s;
  const kvHeads = s.kvHeads ?? heads;
  const scale = s.scale ?? 1 / Math.sqrt(D);
  const [left, right] = s.window ?? (s.causal ? [-1, 0] : [-1, -1]);
  const sees = (i: number, j: number) =>
    (left === -1 || j >= i - left) && (right === -1 || j <= i + right);
  const qa = (b: number, i: number, h: number) => ((b * seqQ + i) * heads + h) * D;
  const ka = (b: number, j: number, h: number) => ((b * seqK + j) * kvHeads + h) * D;
  const dQ = new Float64Array(Q.length);
  const dK = new Float64Array(K.length);
  const dV = new Float64Array(V.length);
  const unseenQ = new Uint8Array(Q.length).fill(1);
  const unseenK = new Uint8Array(K.length).fill(1);
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < heads; h++) {
      const hk = Math.floor(h / (heads / kvHeads));
      for (let i = 0; i < seqQ; i++) {
        const logit = new Float64Array(seqK).fill(-Infinity);
        for (let j = 0; j < seqK; j++) {
          if (!sees(i, j)) continue;
          let d = 0;
          for (let x = 0; x < D; x++) d += Q[qa(b, i, h) + x]! * K[ka(b, j, hk) + x]!;
          logit[j] = d * scale;
        }
        const mx = Math.max(...logit);
        if (mx === -Infinity) continue;
        const p = logit.map((z) => Math.exp(z - mx));
        const sum = p.reduce((a, z) => a + z, 0);
        for (let j = 0; j < seqK; j++) p[j]! /= sum;
        // dP_j = dO_i · v_j; Δ = Σ_j P_j dP_j; dS_j = P_j (dP_j − Δ).
        const dP = new Float64Array(seqK);
        let delta = 0;
        for (let j = 0; j < seqK; j++) {
          if (p[j] === 0) continue;
          let d = 0;
          for (let x = 0; x < D; x++) d += dO[qa(b, i, h) + x]! * V[ka(b, j, hk) + x]!;
          dP[j] = d;
          delta += p[j]! * d;
        }
        for (let j = 0; j < seqK; j++) {
          if (p[j] === 0) continue;
          const ds = p[j]! * (dP[j]! - delta) * scale;
          unseenQ.fill(0, qa(b, i, h), qa(b, i, h) + D);
          unseenK.fill(0, ka(b, j, hk), ka(b, j, hk) + D);
          for (let x = 0; x < D; x++) {
            dQ[qa(b, i, h) + x]! += ds * K[ka(b, j, hk) + x]!;
            dK[ka(b, j, hk) + x]! += ds * Q[qa(b, i, h) + x]!;
            dV[ka(b, j, hk) + x]! += p[j]! * dO[qa(b, i, h) + x]!;
          }
        }
      }
    }
  }
  return { dQ, dK, dV, unseenQ, unseenK };
}

/**
 * Run the forward (`lse: true`) and the backward kernels of sizes `s` on `dev`, on fixed random
 * Q, K, V and dO in [-1, 1), and compare dQ, dK and dV with {@link referenceGradients} within
 * {@link gradientBound}; the dQ row of a query that sees no key, and the dK and dV rows of a key
 * that no query sees, must be exactly 0.
 */
export function checkFlashAttentionBackward(
  dev: DeviceLike,
  s: FlashAttentionSizes,
  kernels: FlashAttentionBackward = makeFlashAttentionBackward(s),
): ExampleResult {
  const { batch, heads, seqQ, seqK, headDim: D, dtype: dt } = s;
  const kvHeads = s.kvHeads ?? heads;
  let seed = 11;
  const rnd = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  const make = (shape: number[]) =>
    tensor(Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, rnd), {
      shape,
      dtype: dt,
      device: dev,
    });
  const qShape = [batch, seqQ, heads, D];
  const kShape = [batch, seqK, kvHeads, D];
  const rowShape = [batch, heads, seqQ];
  const q = make(qShape);
  const k = make(kShape);
  const v = make(kShape);
  const dO = make(qShape);
  const o = tensor.zeros(qShape, dt, dev);
  const lse = tensor.zeros(rowShape, "float32", dev);
  // The scratch tensors as the kernels declare them (dQacc is blocked; see backwardScratch).
  const scratch = backwardScratch(kernels);
  const delta = tensor.zeros(scratch.Delta.shape, scratch.Delta.dtype, dev);
  const lse2 = tensor.zeros(scratch.LSE2.shape, scratch.LSE2.dtype, dev);
  const dQacc = tensor.zeros(scratch.dQacc.shape, scratch.dQacc.dtype, dev);
  const dQ = tensor.zeros(qShape, dt, dev);
  const dK = tensor.zeros(kShape, dt, dev);
  const dV = tensor.zeros(kShape, dt, dev);
  const opts = { target: "cuda", arch: "sm_90a" } as const;
  compile(makeFlashAttention({ ...s, lse: true }), opts)(q, k, v, o, lse);
  compile(kernels.preprocess, opts)(o, dO, lse, delta, lse2, dQacc);
  compile(kernels.main, opts)(q, k, v, dO, lse2, delta, dQacc, dK, dV);
  compile(kernels.postprocess, opts)(dQacc, dQ);
  const host = (x: DeviceTensor) => x.toArray() as Float32Array;
  const ref = referenceGradients(s, host(q), host(k), host(v), host(dO));
  const bound = gradientBound(dt);
  const worst: string[] = [];
  let ok = true;
  const outputs: Uint8Array[] = [];
  let unseen = 0;
  for (const [name, got, want, zero] of [
    ["dQ", dQ, ref.dQ, ref.unseenQ],
    ["dK", dK, ref.dK, ref.unseenK],
    ["dV", dV, ref.dV, ref.unseenK],
  ] as const) {
    const g = host(got);
    const scaleOf = want.reduce((a, x) => Math.max(a, Math.abs(x)), 0) || 1;
    let w = 0;
    for (let e = 0; e < g.length; e++) {
      if (zero[e]) {
        unseen++;
        if (g[e] !== 0) w = NaN;
        continue;
      }
      const err = Math.abs(g[e]! - want[e]!);
      w = Number.isNaN(err) ? NaN : Math.max(w, err / (bound * scaleOf));
    }
    if (!(w <= 1)) ok = false;
    worst.push(`${name} ${w.toFixed(3)}`);
    outputs.push(got.toBytes());
  }
  for (const x of [q, k, v, dO, o, lse, delta, lse2, dQacc, dQ, dK, dV]) x.dispose();
  return {
    ok,
    outputs,
    summary: `worst error of the bound (${bound} · max|ref| per tensor) against float64: ${worst.join(", ")}${unseen ? `; ${unseen} elements of unseen rows exactly 0` : ""}`,
    approximate: "exp2 is ex2.approx; P and dS are rounded to the 16-bit dtype",
  };
}

/**
 * Run at the example's size on `dev` against float64; `main` stands in for the main kernel (the
 * script-mode twin's, examples/script/flash_attention_backward.ts), the pre- and postprocessing
 * kernels are this file's.
 */
export function runExample(
  dev: DeviceLike = device(),
  main: PrimFunc = flash_attention_bwd_main,
): ExampleResult {
  return checkFlashAttentionBackward(dev, EXAMPLE, { ...flash_attention_bwd, main });
}

if (isMain(import.meta.url)) {
  for (const line of explainTile(flash_attention_bwd.main)) console.error(line);
  runAsMain("flash_attention_backward", runExample);
}
