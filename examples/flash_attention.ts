// FlashAttention forward on Hopper: O = softmax(Q·Kᵀ · scale) · V, Q, K, V and O [batch, seq,
// heads, head_dim] float16 or bfloat16. The kernel is `makeFlashAttention` of @tirx-ts/kernels
// (packages/kernels/src/attention/forward.ts: its design, options and numerics are described
// there; examples/script/flash_attention.ts is the same kernel in script mode). This file runs it
// at a small size on the simulator (or the GPU) against a float64 reference.
// Run: npx tsx examples/flash_attention.ts
import {
  device,
  explainTile,
  isMain,
  runAsMain,
  tensor,
  compile,
  makeFlashAttention,
  type DeviceLike,
  type ExampleResult,
  type FlashAttentionSizes,
  type PrimFunc,
} from "tirx-ts";

export { makeFlashAttention, type FlashAttentionSizes };

/**
 * The example's size (the simulator runs it in the test suite): one batch and head, 128 queries
 * (one CTA), 256 keys (two KV blocks: the ring turns and the online softmax rescales once).
 */
export const EXAMPLE: FlashAttentionSizes = {
  batch: 1,
  heads: 1,
  seqQ: 128,
  seqK: 256,
  headDim: 64,
  dtype: "float16",
};
export const flash_attention = makeFlashAttention(EXAMPLE);

/**
 * Run `fn` (sizes and options `s`) on `dev` on fixed random inputs and compare O with a float64
 * reference: every element within 2^-8 · max|V| + ½ ulp of the output dtype (P is rounded to the
 * 16-bit dtype before P·V, a relative error of 2^-11 (float16) or 2^-8 (bfloat16) per term;
 * exp2 is approximate (ex2.approx, 2^-22 relative)); a row that sees no key exactly 0. With
 * `lse`, LSE within 2^-18 · max(1, |LSE|) (float32 logits; ex2.approx and lg2.approx), and
 * exactly −inf for a row that sees no key.
 */
export function checkFlashAttention(
  dev: DeviceLike,
  fn: PrimFunc,
  s: FlashAttentionSizes,
): ExampleResult {
  const { batch, heads, seqQ, seqK, headDim: D, dtype: dt } = s;
  const scale = s.scale ?? 1 / Math.sqrt(D);
  const kvHeads = s.kvHeads ?? heads;
  const [left, right] = s.window ?? (s.causal ? [-1, 0] : [-1, -1]);
  const sees = (i: number, j: number) =>
    (left === -1 || j >= i - left) && (right === -1 || j <= i + right);
  let seed = 7;
  const rnd = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  const make = (n: number, shape: number[]) =>
    tensor(Float32Array.from({ length: n }, rnd), { shape, dtype: dt, device: dev });
  const q = make(batch * seqQ * heads * D, [batch, seqQ, heads, D]);
  const k = make(batch * seqK * kvHeads * D, [batch, seqK, kvHeads, D]);
  const v = make(batch * seqK * kvHeads * D, [batch, seqK, kvHeads, D]);
  const o = tensor.zeros([batch, seqQ, heads, D], dt, dev);
  const lse = s.lse ? tensor.zeros([batch, heads, seqQ], "float32", dev) : undefined;
  compile(fn, { target: "cuda", arch: "sm_90a" })(q, k, v, o, ...(lse ? [lse] : []));
  const [Q, K, V, O] = [q, k, v, o].map((x) => x.toArray() as Float32Array);
  const L = lse?.toArray() as Float32Array | undefined;
  const at = (bi: number, si: number, hi: number, seq: number, nh = heads) =>
    ((bi * seq + si) * nh + hi) * D;
  const bound = (dt === "float16" ? 2 ** -10 : 2 ** -7) * 2;
  let worst = 0;
  let worstLse = 0;
  let emptyRows = 0;
  for (let bi = 0; bi < batch; bi++) {
    for (let hi = 0; hi < heads; hi++) {
      const hk = Math.floor(hi / (heads / kvHeads));
      for (let i = 0; i < seqQ; i++) {
        const logits = Array.from({ length: seqK }, (_, j) => {
          if (!sees(i, j)) return -Infinity;
          let d = 0;
          for (let x = 0; x < D; x++)
            d += Q![at(bi, i, hi, seqQ) + x]! * K![at(bi, j, hk, seqK, kvHeads) + x]!;
          return d * scale;
        });
        const mx = Math.max(...logits);
        if (mx === -Infinity) {
          // No visible key: O's row exactly 0, LSE −inf.
          emptyRows++;
          for (let x = 0; x < D; x++) {
            if (O![at(bi, i, hi, seqQ) + x] !== 0) worst = Infinity;
          }
          if (L && L[(bi * heads + hi) * seqQ + i] !== -Infinity) worstLse = Infinity;
          continue;
        }
        const p = logits.map((z) => Math.exp(z - mx));
        const sum = p.reduce((a, z) => a + z, 0);
        for (let x = 0; x < D; x++) {
          let ref = 0;
          for (let j = 0; j < seqK; j++) {
            if (p[j] !== 0) ref += p[j]! * V![at(bi, j, hk, seqK, kvHeads) + x]!;
          }
          ref /= sum;
          worst = Math.max(worst, Math.abs(O![at(bi, i, hi, seqQ) + x]! - ref) / bound);
        }
        if (L) {
          const ref = mx + Math.log(sum);
          const got = L[(bi * heads + hi) * seqQ + i]!;
          worstLse = Math.max(
            worstLse,
            Number.isNaN(got)
              ? Infinity
              : Math.abs(got - ref) / (2 ** -18 * Math.max(1, Math.abs(ref))),
          );
        }
      }
    }
  }
  const bytes = o.toBytes();
  for (const x of [q, k, v, o, ...(lse ? [lse] : [])]) x.dispose();
  const lseSummary = L ? `; LSE worst ${worstLse.toFixed(3)} of its bound` : "";
  const emptySummary = emptyRows ? `; ${emptyRows} rows see no key` : "";
  return {
    ok: worst <= 1 && worstLse <= 1 && !Number.isNaN(worst),
    outputs: [bytes],
    summary: `worst error ${worst.toFixed(3)} of the bound (2 ulp of ${dt}, inputs in [-1, 1)) against float64${lseSummary}${emptySummary}`,
    approximate: "exp2 is ex2.approx; P is rounded to the 16-bit dtype before P·V",
  };
}

/** Run at the example's size on `dev` against float64. */
export function runExample(
  dev: DeviceLike = device(),
  kernel: PrimFunc = flash_attention,
): ExampleResult {
  return checkFlashAttention(dev, kernel, EXAMPLE);
}

if (isMain(import.meta.url)) {
  for (const line of explainTile(flash_attention)) console.error(line);
  runAsMain("flash_attention", runExample);
}
