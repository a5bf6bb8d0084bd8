// FlashAttention backward on Hopper: dQ, dK and dV of O = softmax(Q·Kᵀ · scale) · V, float16 or
// bfloat16. The kernels are `makeFlashAttentionBackward` of @tirx-ts/kernels
// (packages/kernels/src/attention/backward.ts: a preprocessing kernel for Δ = rowsum(dO ∘ O), the
// main kernel, a CTA per 128 keys with two consumer warpgroups, and a postprocessing kernel for
// dQ). This file runs the forward (with its LSE output) and the backward at a small size on the
// simulator (or the GPU) and compares the gradients with a float64 reference;
// checkFlashAttentionBackwardVarlen checks packed variable-length batches the same way (the
// kernels' `varlen` option, or attentionBackward with cuSeqlensQ / cuSeqlensK), from a float64
// O and LSE instead of a forward run.
// Run: npx tsx examples/flash_attention_backward.ts
import {
  attentionBackward,
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
 * 2^-8 (bfloat16) per term, amplified where dP − Δ cancels; the bound is 2^-9 and 2^-6, for
 * random inputs (uniform in [-1, 1): within it at scales 0.125 to 50, head dims 64 and 256).
 * Inputs whose gradients nearly cancel, such as identical keys under a large scale (a softmax
 * nearly one-hot over them), have gradients near 0, and the same absolute error exceeds it.
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
  // Bottom-right aligned, as FlashAttention's (causal needs seqQ = seqK here).
  const [left, right] = s.window ?? (s.causal ? [-1, 0] : [-1, -1]);
  const shift = seqK - seqQ;
  const sees = (i: number, j: number) =>
    (left === -1 || j >= i + shift - left) && (right === -1 || j <= i + shift + right);
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
  const rnd = (): number =>
    ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
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
    summary: `worst error against float64, as a fraction of the bound (${bound} · max|ref| per tensor): ${worst.join(", ")}${unseen ? `; ${unseen} elements of unseen rows exactly 0` : ""}`,
    approximate: "exp2 is ex2.approx; P and dS are rounded to the 16-bit dtype",
  };
}

/** One sequence's float64 results for {@link checkFlashAttentionBackwardVarlen}. */
interface VarlenReference {
  /** O [totalQ, heads, hd] and LSE [heads, totalQ] of the sequences' rows (NaN elsewhere). */
  readonly o: Float32Array;
  readonly lse: Float32Array;
  /** Element offset in dQ / dK (and dV) → float64 gradient, for the compared rows. */
  readonly dQ: Map<number, number>;
  readonly dK: Map<number, number>;
  readonly dV: Map<number, number>;
  /** First element offsets of compared rows that see no key (dQ) / no query (dK and dV). */
  readonly unseen: Set<string>;
}

/**
 * Float64 attention of a packed batch (sequence b's queries rows cuQ[b] …, keys rows cuK[b] …):
 * O and LSE of every row (the backward's inputs) and the gradients of the compared rows (`picked`).
 */
function varlenReference(
  s: FlashAttentionSizes,
  lensQ: readonly number[],
  lensK: readonly number[],
  host: { Q: Float32Array; K: Float32Array; V: Float32Array; dO: Float32Array },
  picked: (i: number, n: number) => boolean,
): VarlenReference {
  const { heads, seqQ, headDim: D } = s;
  const { Q, K, V, dO } = host;
  const kvHeads = s.kvHeads ?? heads;
  const group = heads / kvHeads;
  const scale = s.scale ?? 1 / Math.sqrt(D);
  const [left, right] = s.window ?? (s.causal ? [-1, 0] : [-1, -1]);
  const qa = (row: number, h: number) => (row * heads + h) * D;
  const ka = (row: number, h: number) => (row * kvHeads + h) * D;
  const r: VarlenReference = {
    o: new Float32Array(seqQ * heads * D).fill(NaN),
    lse: new Float32Array(heads * seqQ).fill(NaN),
    dQ: new Map(),
    dK: new Map(),
    dV: new Map(),
    unseen: new Set(),
  };
  let q0 = 0;
  let k0 = 0;
  lensQ.forEach((lenQ, b) => {
    const lenK = lensK[b]!;
    const shift = lenK - lenQ;
    const sees = (i: number, j: number) =>
      (left === -1 || j >= i + shift - left) && (right === -1 || j <= i + shift + right);
    // dK and dV of the compared keys of each KV head, summed over its query heads.
    const keyRows: { j: number; hk: number; dk: Float64Array; dv: Float64Array; seen: boolean }[] =
      [];
    for (let j = 0; j < lenK; j++) {
      if (!picked(j, lenK)) continue;
      for (let hk = 0; hk < kvHeads; hk++) {
        keyRows.push({ j, hk, dk: new Float64Array(D), dv: new Float64Array(D), seen: false });
      }
    }
    for (let h = 0; h < heads; h++) {
      const hk = Math.floor(h / group);
      // P, dP and Δ of the whole (sequence, head); O and LSE of each row.
      const P = new Float64Array(lenQ * lenK);
      const dP = new Float64Array(lenQ * lenK);
      const delta = new Float64Array(lenQ);
      const seenQ = new Uint8Array(lenQ);
      for (let i = 0; i < lenQ; i++) {
        const row = P.subarray(i * lenK, (i + 1) * lenK);
        const oAt = qa(q0 + i, h);
        let mx = -Infinity;
        for (let j = 0; j < lenK; j++) {
          let z = -Infinity;
          if (sees(i, j)) {
            const kAt = ka(k0 + j, hk);
            let d = 0;
            for (let x = 0; x < D; x++) d += Q[oAt + x]! * K[kAt + x]!;
            z = d * scale;
          }
          row[j] = z;
          mx = Math.max(mx, z);
        }
        if (mx === -Infinity) {
          // No key: O = 0, LSE = −inf, P = 0.
          row.fill(0);
          r.o.fill(0, oAt, oAt + D);
          r.lse[h * seqQ + q0 + i] = -Infinity;
          continue;
        }
        seenQ[i] = 1;
        let sum = 0;
        for (let j = 0; j < lenK; j++) sum += row[j] = Math.exp(row[j]! - mx);
        r.lse[h * seqQ + q0 + i] = mx + Math.log(sum);
        const o = new Float64Array(D);
        for (let j = 0; j < lenK; j++) {
          const pj = (row[j]! /= sum);
          if (pj === 0) continue;
          const vAt = ka(k0 + j, hk);
          let d = 0;
          for (let x = 0; x < D; x++) {
            const vx = V[vAt + x]!;
            d += dO[oAt + x]! * vx;
            o[x]! += pj * vx;
          }
          dP[i * lenK + j] = d;
          delta[i]! += pj * d;
        }
        r.o.set(o, oAt);
      }
      const dS = (i: number, j: number) =>
        P[i * lenK + j]! * (dP[i * lenK + j]! - delta[i]!) * scale;
      for (let i = 0; i < lenQ; i++) {
        if (!picked(i, lenQ)) continue;
        const at = qa(q0 + i, h);
        if (!seenQ[i]) r.unseen.add(`dQ ${at}`);
        const acc = new Float64Array(D);
        for (let j = 0; j < lenK; j++) {
          if (P[i * lenK + j] === 0) continue;
          const ds = dS(i, j);
          const kAt = ka(k0 + j, hk);
          for (let x = 0; x < D; x++) acc[x]! += ds * K[kAt + x]!;
        }
        acc.forEach((a, x) => r.dQ.set(at + x, a));
      }
      for (const row of keyRows) {
        if (row.hk !== hk) continue;
        for (let i = 0; i < lenQ; i++) {
          const pj = P[i * lenK + row.j]!;
          if (pj === 0) continue;
          row.seen = true;
          const ds = dS(i, row.j);
          const qAt = qa(q0 + i, h);
          for (let x = 0; x < D; x++) {
            row.dk[x]! += ds * Q[qAt + x]!;
            row.dv[x]! += pj * dO[qAt + x]!;
          }
        }
      }
    }
    for (const row of keyRows) {
      const at = ka(k0 + row.j, row.hk);
      if (!row.seen) r.unseen.add(`dK ${at}`);
      row.dk.forEach((x, e) => r.dK.set(at + e, x));
      row.dv.forEach((x, e) => r.dV.set(at + e, x));
    }
    q0 += lenQ;
    k0 += lenK;
  });
  return r;
}

/**
 * The varlen sibling of {@link checkFlashAttentionBackward}: sizes `s` with `varlen: { maxSeqQ,
 * maxSeqK }`, sequence b of `lensQ[b]` queries and `lensK[b]` keys packed one after the other from
 * row 0 (cuSeqlensQ and cuSeqlensK their prefix sums; `s.seqQ` and `s.seqK`, the packed row
 * counts, may leave padding rows after the last sequence). Runs the three backward kernels on
 * fixed random Q, K, V and dO in [-1, 1) with O and LSE computed in float64 on the host (O
 * rounded to the dtype, LSE to float32; both NaN in rows of no sequence, which the kernels must
 * not read), the scratch tensors starting as NaN (every element the main kernel reads must be
 * written by the preprocessing kernel), and compares dQ, dK and dV with float64 gradients per
 * sequence (causal and `window` bottom-right aligned per sequence: query i sees keys i + lenK −
 * lenQ − left ≤ j ≤ i + lenK − lenQ + right, j < lenK) within {@link gradientBound} of each
 * tensor's largest compared magnitude; the rows of queries that see no key and of keys no query
 * sees exactly 0; gradient rows outside every sequence keep their initial −3. `opts.every` > 1
 * compares only rows i of each sequence's queries and keys with i mod every = 0 (and its last
 * row), as a GPU run of long sequences does (the host still computes P, dP and O of every row:
 * 3 · lenQ · lenK · hd per head). `opts.library` launches through the library call
 * attentionBackward (its options from `s`, the gradients written into the marked tensors by its
 * `out`) instead of the kernels themselves (then the scratch tensors are the call's own).
 */
export function checkFlashAttentionBackwardVarlen(
  dev: DeviceLike,
  s: FlashAttentionSizes,
  lensQ: readonly number[],
  lensK: readonly number[],
  opts: { readonly every?: number; readonly library?: boolean } = {},
): ExampleResult {
  const every = opts.every ?? 1;
  const { heads, seqQ, seqK, headDim: D, dtype: dt } = s;
  const kvHeads = s.kvHeads ?? heads;
  const cum = (lens: readonly number[]) => lens.reduce((a, n) => [...a, a[a.length - 1]! + n], [0]);
  const cuQ = cum(lensQ);
  const cuK = cum(lensK);
  let seed = 11;
  const rnd = (): number =>
    ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  const size = (shape: number[]) => shape.reduce((a, b) => a * b, 1);
  const make = (shape: number[]) =>
    tensor(Float32Array.from({ length: size(shape) }, rnd), { shape, dtype: dt, device: dev });
  const of = (x: Float32Array, shape: number[], dtype: string = dt) =>
    tensor(x, { shape, dtype: dtype as typeof dt, device: dev });
  const filled = (shape: number[], value: number, dtype: string = dt) =>
    of(new Float32Array(size(shape)).fill(value), shape, dtype);
  const ints = (a: number[]) =>
    tensor(Int32Array.from(a), { shape: [a.length], dtype: "int32", device: dev });
  const qShape = [seqQ, heads, D];
  const kShape = [seqK, kvHeads, D];
  const MARK = -3;
  const q = make(qShape);
  const k = make(kShape);
  const v = make(kShape);
  const dO = make(qShape);
  const host = (x: DeviceTensor) => x.toArray() as Float32Array;
  const ref = varlenReference(
    s,
    lensQ,
    lensK,
    { Q: host(q), K: host(k), V: host(v), dO: host(dO) },
    (i, n) => i % every === 0 || i === n - 1,
  );
  const o = of(ref.o, qShape);
  const lse = of(ref.lse, [heads, seqQ], "float32");
  const cuSeqlensQ = ints(cuQ);
  const cuSeqlensK = ints(cuK);
  const dQ = filled(qShape, MARK);
  const dK = filled(kShape, MARK);
  const dV = filled(kShape, MARK);
  const scratch: DeviceTensor[] = [];
  if (opts.library) {
    attentionBackward(q, k, v, o, dO, lse, {
      ...(s.causal !== undefined ? { causal: s.causal } : {}),
      ...(s.scale !== undefined ? { scale: s.scale } : {}),
      ...(s.window !== undefined ? { window: s.window } : {}),
      cuSeqlensQ,
      cuSeqlensK,
      maxSeqQ: s.varlen!.maxSeqQ,
      maxSeqK: s.varlen!.maxSeqK!,
      out: { dq: dQ, dk: dK, dv: dV },
    });
  } else {
    const kernels = makeFlashAttentionBackward(s);
    const shapes = backwardScratch(kernels);
    const [delta, lse2, dQacc] = [shapes.Delta, shapes.LSE2, shapes.dQacc].map((x) =>
      filled([...x.shape], NaN, x.dtype),
    ) as unknown as [DeviceTensor, DeviceTensor, DeviceTensor];
    scratch.push(delta, lse2, dQacc);
    const target = { target: "cuda", arch: "sm_90a" } as const;
    compile(kernels.preprocess, target)(o, dO, lse, delta, lse2, dQacc, cuSeqlensQ);
    compile(kernels.main, target)(q, k, v, dO, lse2, delta, dQacc, dK, dV, cuSeqlensQ, cuSeqlensK);
    compile(kernels.postprocess, target)(dQacc, dQ, cuSeqlensQ);
  }
  const bound = gradientBound(dt);
  const worst: string[] = [];
  let ok = true;
  let zeros = 0;
  const got = { dQ: host(dQ), dK: host(dK), dV: host(dV) };
  for (const name of ["dQ", "dK", "dV"] as const) {
    const want = ref[name];
    const g = got[name];
    let scaleOf = 0;
    for (const x of want.values()) scaleOf = Math.max(scaleOf, Math.abs(x));
    scaleOf ||= 1;
    let w = 0;
    for (const [e, r] of want) {
      if (ref.unseen.has(`${name === "dV" ? "dK" : name} ${e - (e % D)}`)) {
        zeros++;
        if (g[e] !== 0) w = NaN;
        continue;
      }
      const err = Math.abs(g[e]! - r);
      w = Number.isNaN(err) ? NaN : Math.max(w, err / (bound * scaleOf));
    }
    if (!(w <= 1)) ok = false;
    worst.push(`${name} ${w.toFixed(3)}`);
  }
  // Rows of no sequence (after the last one) keep the marker.
  let strays = 0;
  for (const [g, cu, nh] of [
    [got.dQ, cuQ, heads],
    [got.dK, cuK, kvHeads],
    [got.dV, cuK, kvHeads],
  ] as const) {
    for (let e = cu[cu.length - 1]! * nh * D; e < g.length; e++) if (g[e] !== MARK) strays++;
  }
  if (strays) ok = false;
  const compared = `${ref.dQ.size / D} dQ rows, ${ref.dK.size / D} dK and dV rows compared`;
  const outputs = [dQ, dK, dV].map((x) => x.toBytes());
  for (const x of [q, k, v, dO, o, lse, cuSeqlensQ, cuSeqlensK, ...scratch, dQ, dK, dV]) {
    x.dispose();
  }
  return {
    ok,
    outputs,
    summary: `worst error against float64, as a fraction of the bound (${bound} · max|ref| per tensor): ${worst.join(", ")}; ${compared}${zeros ? `; ${zeros} elements of unseen rows exactly 0` : ""}${strays ? `; ${strays} elements written outside every sequence` : ""}`,
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
