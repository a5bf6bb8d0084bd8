// FlashAttention forward on Hopper: O = softmax(Q·Kᵀ · scale) · V, Q, K, V and O [batch, seq,
// heads, head_dim] float16 or bfloat16. The kernel is `makeFlashAttention` of @tirx-ts/kernels
// (packages/kernels/src/attention/forward.ts: its design, options and numerics are described
// there; examples/script/flash_attention.ts is the same kernel in script mode). This file runs it
// at a small size on the simulator (or the GPU) against a float64 reference; the references of
// the options (checkFlashAttention) and of variable-length batches (checkFlashAttentionVarlen) are
// here too, for test/flash-attention.test.ts and test/gpu/flash-attention-options.test.ts.
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
  type DeviceTensor,
  type ExampleResult,
  type FlashAttentionSizes,
  type PrimFunc,
} from "tirx-ts";

export { makeFlashAttention, type FlashAttentionSizes };

/**
 * The example's size (the simulator runs it in the test suite): one batch and head, 128 queries
 * (one CTA), 256 keys (two KV blocks: the ring turns and the online softmax rescales once). The
 * serial schedule, as examples/script/flash_attention.ts writes it out (makeFlashAttention's
 * default, "pingpong", adds the consumers' named-barrier turns; the result is the same bits).
 */
export const EXAMPLE: FlashAttentionSizes = {
  batch: 1,
  heads: 1,
  seqQ: 128,
  seqK: 256,
  headDim: 64,
  dtype: "float16",
  schedule: "serial",
};
export const flash_attention = makeFlashAttention(EXAMPLE);

/**
 * One sequence of a batch as the reference sees it: its query rows qOff … qOff + lenQ − 1 and key
 * rows kOff … kOff + lenK − 1 in the packed [rows, heads, hd] view of Q and K (a [batch, seq,
 * heads, hd] tensor is that view with sequence b at rows b · seq), and `sees(i, j)`: does its
 * query i see its key j.
 */
export interface RefSequence {
  readonly qOff: number;
  readonly lenQ: number;
  readonly kOff: number;
  readonly lenK: number;
  readonly sees: (i: number, j: number) => boolean;
  /** The query rows compared (default every row): the reference computes only those. */
  readonly checks?: (i: number) => boolean;
}

/**
 * Attention in float64 over the sequences `seqs` of packed Q [rowsQ, heads, hd] and K, V [rowsK,
 * kvHeads, hd] (host values, as the device holds them): for query i of sequence b at head h,
 * O's row = softmax(q_i · k_jᵀ · scale) · V over the keys j it sees, query head h reading KV
 * head ⌊h / (heads / kvHeads)⌋. Returns O in Q's packed layout (rows of no sequence 0), LSE
 * (length `lseLength`) at `lseIndex(b, h, i)` (entries of no sequence NaN), and the number of
 * (row, head) pairs that see no key: their O row is 0 and their LSE −inf. The one reference of
 * the forward's checks: checkFlashAttention, checkFlashAttentionVarlen and the tests'
 * test/util/attention-reference.ts.
 */
export function attentionFloat64(
  Q: ArrayLike<number>,
  K: ArrayLike<number>,
  V: ArrayLike<number>,
  seqs: readonly RefSequence[],
  dims: { readonly heads: number; readonly kvHeads: number; readonly headDim: number },
  scale: number,
  lse: { readonly length: number; readonly index: (b: number, h: number, i: number) => number },
): { o: Float64Array; lse: Float64Array; emptyRows: number } {
  const { heads, kvHeads, headDim: D } = dims;
  const o = new Float64Array(Q.length);
  const L = new Float64Array(lse.length).fill(NaN);
  const p = new Float64Array(Math.max(0, ...seqs.map((q) => q.lenK)));
  let emptyRows = 0;
  seqs.forEach(({ qOff, lenQ, kOff, lenK, sees, checks }, b) => {
    for (let h = 0; h < heads; h++) {
      const hk = Math.floor(h / (heads / kvHeads));
      for (let i = 0; i < lenQ; i++) {
        if (checks && !checks(i)) continue;
        const qi = ((qOff + i) * heads + h) * D;
        let mx = -Infinity;
        for (let j = 0; j < lenK; j++) {
          if (!sees(i, j)) {
            p[j] = -Infinity;
            continue;
          }
          const kj = ((kOff + j) * kvHeads + hk) * D;
          let d = 0;
          for (let x = 0; x < D; x++) d += Q[qi + x]! * K[kj + x]!;
          p[j] = d * scale;
          if (p[j]! > mx) mx = p[j]!;
        }
        if (mx === -Infinity) {
          emptyRows++;
          L[lse.index(b, h, i)] = -Infinity;
          continue;
        }
        let sum = 0;
        for (let j = 0; j < lenK; j++) sum += p[j] = Math.exp(p[j]! - mx);
        for (let j = 0; j < lenK; j++) {
          if (p[j] === 0) continue;
          const vj = ((kOff + j) * kvHeads + hk) * D;
          const w = p[j]! / sum;
          for (let x = 0; x < D; x++) o[qi + x] = o[qi + x]! + w * V[vj + x]!;
        }
        L[lse.index(b, h, i)] = mx + Math.log(sum);
      }
    }
  });
  return { o, lse: L, emptyRows };
}

/**
 * Run `fn` (sizes and options `s`) on `dev` with Q, K, V of fixed random values in [-1, 1) and
 * compare O (and LSE) with a float64 reference over `seqs`; `lseIndex(b, h, i)` is the LSE
 * element of sequence b's query i at head h; `extra` are the kernel's parameters after O (and
 * before LSE). O starts at the marker −3, and rows that belong to no sequence must keep it.
 */
function checkAgainstFloat64(
  dev: DeviceLike,
  fn: PrimFunc,
  s: FlashAttentionSizes,
  seqs: readonly RefSequence[],
  shapes: { q: number[]; k: number[]; lse: number[] },
  lseIndex: (b: number, h: number, i: number) => number,
  extra: (DeviceTensor & Disposable)[],
): ExampleResult {
  const { heads, headDim: D, dtype: dt } = s;
  const scale = s.scale ?? 1 / Math.sqrt(D);
  const kvHeads = s.kvHeads ?? heads;
  const rowsQ = shapes.q.slice(0, -2).reduce((a, x) => a * x, 1);
  let seed = 7;
  const rnd = (): number =>
    ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  const make = (shape: number[]) =>
    tensor(Float32Array.from({ length: shape.reduce((a, x) => a * x, 1) }, rnd), {
      shape,
      dtype: dt,
      device: dev,
    });
  const q = make(shapes.q);
  const k = make(shapes.k);
  const v = make(shapes.k);
  const MARK = -3;
  const o = tensor(new Float32Array(rowsQ * heads * D).fill(MARK), {
    shape: shapes.q,
    dtype: dt,
    device: dev,
  });
  const lse = s.lse
    ? tensor(new Float32Array(heads * rowsQ).fill(MARK), {
        shape: shapes.lse,
        dtype: "float32",
        device: dev,
      })
    : undefined;
  compile(fn, { target: "cuda", arch: "sm_90a" })(q, k, v, o, ...extra, ...(lse ? [lse] : []));
  const [Q, K, V, O] = [q, k, v, o].map((x) => x.toArray() as Float32Array);
  const L = lse?.toArray() as Float32Array | undefined;
  const at = (row: number, hi: number) => (row * heads + hi) * D;
  const bound = (dt === "float16" ? 2 ** -10 : 2 ** -7) * 2;
  const ref = attentionFloat64(Q!, K!, V!, seqs, { heads, kvHeads, headDim: D }, scale, {
    length: heads * rowsQ,
    index: lseIndex,
  });
  let worst = 0;
  let worstLse = 0;
  const written = new Uint8Array(rowsQ);
  let rowsChecked = 0;
  let rowsAll = 0;
  seqs.forEach(({ qOff, lenQ, checks }, bi) => {
    for (let hi = 0; hi < heads; hi++) {
      for (let i = 0; i < lenQ; i++) {
        written[qOff + i] = 1;
        rowsAll++;
        if (checks && !checks(i)) continue;
        rowsChecked++;
        const refLse = ref.lse[lseIndex(bi, hi, i)]!;
        if (refLse === -Infinity) {
          // No visible key: O's row exactly 0, LSE −inf.
          for (let x = 0; x < D; x++) {
            if (O![at(qOff + i, hi) + x] !== 0) worst = Infinity;
          }
          if (L && L[lseIndex(bi, hi, i)] !== -Infinity) worstLse = Infinity;
          continue;
        }
        for (let x = 0; x < D; x++) {
          const got = O![at(qOff + i, hi) + x]!;
          const want = ref.o[at(qOff + i, hi) + x]!;
          worst = Math.max(worst, Number.isNaN(got) ? Infinity : Math.abs(got - want) / bound);
        }
        if (L) {
          const got = L[lseIndex(bi, hi, i)]!;
          worstLse = Math.max(
            worstLse,
            Number.isNaN(got)
              ? Infinity
              : Math.abs(got - refLse) / (2 ** -18 * Math.max(1, Math.abs(refLse))),
          );
        }
      }
    }
  });
  // Rows of no sequence (varlen padding) keep the marker in O and LSE.
  let strays = 0;
  for (let row = 0; row < rowsQ; row++) {
    if (written[row]) continue;
    for (let hi = 0; hi < heads; hi++) {
      for (let x = 0; x < D; x++) if (O![at(row, hi) + x] !== MARK) strays++;
      if (L && L[hi * rowsQ + row] !== MARK) strays++;
    }
  }
  const bytes = o.toBytes();
  for (const x of [q, k, v, o, ...extra, ...(lse ? [lse] : [])]) x.dispose();
  const lseSummary = L ? `; LSE worst ${worstLse.toFixed(3)} of its bound` : "";
  const emptySummary = ref.emptyRows ? `; ${ref.emptyRows} rows see no key` : "";
  const straySummary = strays ? `; ${strays} elements written outside every sequence` : "";
  const sampleSummary =
    rowsChecked < rowsAll ? `; ${rowsChecked} of ${rowsAll} (row, head) pairs compared` : "";
  return {
    ok: worst <= 1 && worstLse <= 1 && !Number.isNaN(worst) && strays === 0,
    outputs: [bytes],
    summary: `worst error ${worst.toFixed(3)} of the bound (2 ulp of ${dt}, inputs in [-1, 1)) against float64${lseSummary}${emptySummary}${straySummary}${sampleSummary}`,
    approximate: "exp2 is ex2.approx; P is rounded to the 16-bit dtype before P·V",
  };
}

/**
 * Run `fn` (sizes and options `s`, without `varlen`) on `dev` on fixed random inputs and compare O
 * with a float64 reference: every element within 2 ulp of the output dtype at magnitude 1
 * (2^-9 for float16, 2^-6 for bfloat16; the inputs are in [-1, 1), so |O| < 1), absolute (P is
 * rounded to the 16-bit dtype before P·V, a relative error of 2^-11 (float16) or 2^-8 (bfloat16)
 * per term; exp2 is approximate (ex2.approx, 2^-22 relative)); a row that sees no key exactly 0.
 * With `lse`, LSE within 2^-18 · max(1, |LSE|) (float32 logits; ex2.approx and lg2.approx), and
 * exactly −inf for a row that sees no key. Causal and a `window` are bottom-right aligned, as
 * FlashAttention's (query i sees keys i + seqK − seqQ − left ≤ j ≤ i + seqK − seqQ + right;
 * causal is [−1, 0]).
 */
export function checkFlashAttention(
  dev: DeviceLike,
  fn: PrimFunc,
  s: FlashAttentionSizes,
): ExampleResult {
  const { batch, heads, seqQ, seqK, headDim: D } = s;
  const kvHeads = s.kvHeads ?? heads;
  const [left, right] = s.window ?? (s.causal ? [-1, 0] : [-1, -1]);
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
  return checkAgainstFloat64(
    dev,
    fn,
    s,
    seqs,
    {
      q: [batch, seqQ, heads, D],
      k: [batch, seqK, kvHeads, D],
      lse: [batch, heads, seqQ],
    },
    (b, h, i) => (b * heads + h) * seqQ + i,
    [],
  );
}

/**
 * The varlen sibling of {@link checkFlashAttention}: `fn` made with `s.varlen`, sequence b of
 * `lensQ[b]` queries and `lensK[b]` keys packed one after the other from row 0 (cuSeqlensQ and
 * cuSeqlensK their prefix sums; `s.seqQ` and `s.seqK`, the packed row counts, may leave padding
 * rows after the last sequence). The same bounds, causal and `window` bottom-right aligned per
 * sequence (query i sees keys i + lenK − lenQ − left ≤ j ≤ i + lenK − lenQ + right, j < lenK), and
 * O and LSE rows of no sequence must keep their initial value. With `sampleAbove`, a sequence of
 * more query rows than that is compared at its first and last 128 rows and every 7th row between
 * (7 is prime to the tile heights, so every row position of a tile is among them; the float64
 * reference costs O(lenQ · lenK · hd), tens of seconds at 4096²); every row is still checked for
 * writes outside the sequences.
 */
export function checkFlashAttentionVarlen(
  dev: DeviceLike,
  fn: PrimFunc,
  s: FlashAttentionSizes,
  lensQ: readonly number[],
  lensK: readonly number[],
  sampleAbove = Infinity,
): ExampleResult {
  const { heads, seqQ, seqK, headDim: D } = s;
  const kvHeads = s.kvHeads ?? heads;
  const [left, right] = s.window ?? (s.causal ? [-1, 0] : [-1, -1]);
  const cum = (lens: readonly number[]) => lens.reduce((a, n) => [...a, a[a.length - 1]! + n], [0]);
  const cuQ = cum(lensQ);
  const cuK = cum(lensK);
  const seqs = lensQ.map((lenQ, b) => {
    const lenK = lensK[b]!;
    const shift = lenK - lenQ;
    return {
      qOff: cuQ[b]!,
      lenQ,
      kOff: cuK[b]!,
      lenK,
      sees: (i: number, j: number) =>
        (left === -1 || j >= i + shift - left) && (right === -1 || j <= i + shift + right),
      ...(lenQ > sampleAbove
        ? { checks: (i: number) => i < 128 || i >= lenQ - 128 || i % 7 === 0 }
        : {}),
    };
  });
  const ints = (a: number[]) =>
    tensor(Int32Array.from(a), { shape: [a.length], dtype: "int32", device: dev });
  return checkAgainstFloat64(
    dev,
    fn,
    s,
    seqs,
    { q: [seqQ, heads, D], k: [seqK, kvHeads, D], lse: [heads, seqQ] },
    (b, h, i) => h * seqQ + cuQ[b]! + i,
    [ints(cuQ), ints(cuK)],
  );
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
