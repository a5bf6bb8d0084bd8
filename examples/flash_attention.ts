// FlashAttention forward on Hopper with the tile layer: O = softmax(Q·Kᵀ · scale) · V per batch
// and head, Q, K, V and O [batch, seq, heads, head_dim] (bshd, contiguous), float16 or
// bfloat16 in and out, float32 accumulation and softmax. The design (FlashAttention-3's, without
// its ping-pong and intra-warpgroup overlap yet):
//   - a CTA per 128 query rows of one (batch, head); 384 threads: warpgroup 0 produces, warpgroups
//     1 and 2 consume 64 query rows each;
//   - the producer thread loads Q's tile once and K's and V's 128-row blocks through a 2-deep
//     ring by T.tile.copy_async (TMA, 128B swizzle; tensor maps planned from the views), each on
//     its own "full" mbarrier, after the consumers freed the stage ("empty", one arrive each);
//   - per KV block a consumer computes S = Q·Kᵀ with T.tile.wg.gemm_async (wgmma SS, 64 × 128
//     float32 in the wgmma accumulator layout), the online softmax in registers with T.tile.wg
//     reductions (row max and sum: shuffles within each row's 4 lanes) and elementwise ops
//     broadcast along rows (exp2 with the scale folded in, log2(e) · scale), then O += P·V with
//     P kept in registers (wgmma RS: the accumulator layout of S is the A operand's layout, so
//     T.tile.wg.cast makes P in place);
//   - the epilogue divides by the row sums and stores O with T.tile.wg.copy (32-bit stores).
// FlashAttention-3's intra-warpgroup overlap (block j's Q·Kᵀ issued with block j − 1's P·V)
// and its ping-pong of the two consumers by named barriers were both written and measured
// slower on the H200 in this form (bench/results/attention-overlap-2026-12-02.md,
// attention-pingpong-2026-12-02.md): the two consumers already alternate on their own.
// Numerics: the running max starts at -inf and is taken in float32 of the scaled logits, so
// float16 inputs never overflow before it is subtracted.
// Causal (seq_q = seq_k): a query tile reads the KV blocks up to its last row, those that
// cross the diagonal masked to -inf by T.tile.wg.select with a function of the element's
// indices; tiles run longest first.
// Head dims 64, 128 and 256 (KV blocks of 64 keys at 256); Q, K and V tiles are stored as
// 64-wide column blocks (one 128-byte swizzle row each), as TMA writes them and wgmma reads them.
// Shapes: seq_q and seq_k multiples of 128. Run: npx tsx examples/flash_attention.ts
import {
  T,
  device,
  explainTile,
  isMain,
  runAsMain,
  tensor,
  compile,
  type DeviceLike,
  type ExampleResult,
  type ExprLike,
} from "tirx-ts";
import type { PrimFunc } from "@tirx-ts/core";

/** Query rows per CTA (two consumer warpgroups of 64). */
const BM = 128;
const STAGES = 2;
/** Columns of one 128B-swizzle row of 16-bit elements: Q, K and V tiles are column blocks of 64. */
const W = 64;

/** Sizes of {@link makeFlashAttention}. */
export interface FlashAttentionSizes {
  readonly batch: number;
  readonly heads: number;
  readonly seqQ: number;
  readonly seqK: number;
  /** Head dim: 64, 128 or 256. */
  readonly headDim: 64 | 128 | 256;
  readonly dtype: "float16" | "bfloat16";
  readonly causal?: boolean;
  /** Softmax scale (default 1 / √head_dim). */
  readonly scale?: number;
  /** Unused (the grid is one CTA per 128 query rows of each batch and head). */
  readonly ctas?: number;
}

/**
 * The forward kernel for Q [batch, seqQ, heads, hd], K and V [batch, seqK, heads, hd] → O
 * [batch, seqQ, heads, hd] (all `dtype`).
 * @throws Error for a head dim other than 64, 128, 256, sequence lengths that are not positive multiples
 *   of 128, or a causal mask with seq_q ≠ seq_k.
 */
export function makeFlashAttention(s: FlashAttentionSizes): PrimFunc {
  const { batch, heads, seqQ, seqK, headDim: D, dtype: dt } = s;
  if (D !== 64 && D !== 128 && D !== 256) {
    throw new Error(`flash_attention: head_dim is 64, 128 or 256, got ${D}`);
  }
  // Keys per KV block: 128, or 64 at head dim 256 (Q, two stages of K and V in 227 KiB of
  // shared memory, and O's 64 × 256 float32 accumulators are 128 registers per thread).
  const BN = D === 256 ? 64 : 128;
  if (seqQ <= 0 || seqK <= 0 || seqQ % BM || seqK % BN) {
    throw new Error(`flash_attention needs seq_q and seq_k positive multiples of ${BM}`);
  }
  const causal = s.causal ?? false;
  if (causal && seqQ !== seqK) {
    throw new Error("flash_attention: a causal mask needs seq_q = seq_k (not written otherwise)");
  }
  const scale = s.scale ?? 1 / Math.sqrt(D);
  // exp(x · scale) = exp2(x · scale · log2 e): the scale and log2 e folded into one multiply.
  const c = scale * Math.LOG2E;
  const kvBlocks = seqK / BN;
  const tileBytes = BN * D * 2;
  return T.function(
    "flash_attention",
    {
      Q: T.Tensor([batch, seqQ, heads, D], dt),
      K: T.Tensor([batch, seqK, heads, D], dt),
      V: T.Tensor([batch, seqK, heads, D], dt),
      O: T.Tensor([batch, seqQ, heads, D], dt),
    },
    ({ Q, K, V, O }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({
          grid: [seqQ / BM, heads, batch],
          block: 384,
          dynamic_shared_bytes: (BM + 2 * STAGES * BN) * D * 2,
        }),
      });
      const tid = T.cuda.thread_idx("x");
      // With a causal mask, query tile qt sees the KV blocks up to its last row; the longest
      // tiles go first.
      const qt = causal
        ? T.let_("qt", T.sub(seqQ / BM - 1, T.cuda.block_idx("x")))
        : T.cuda.block_idx("x");
      const blocks = causal ? T.let_("blocks", T.mul(T.add(qt, 1), BM / BN)) : kvBlocks;
      const h = T.cuda.block_idx("y");
      const b = T.cuda.block_idx("z");
      const wg = T.let_("wg", tid.floordiv(128));
      const sw = T.swizzle_mode("128B");
      const sQ = T.alloc_shared([D / W, BM, W], dt, {
        name: "sQ",
        align: 1024,
        layout: sw,
        dynamic: true,
      });
      const sK = T.alloc_shared([STAGES, D / W, BN, W], dt, {
        name: "sK",
        align: 1024,
        layout: sw,
        dynamic: true,
      });
      const sV = T.alloc_shared([STAGES, D / W, BN, W], dt, {
        name: "sV",
        align: 1024,
        layout: sw,
        dynamic: true,
      });
      const qFull = T.alloc_shared([1], "uint64", { name: "qFull" });
      const kFull = T.alloc_shared([STAGES], "uint64", { name: "kFull" });
      const vFull = T.alloc_shared([STAGES], "uint64", { name: "vFull" });
      const kEmpty = T.alloc_shared([STAGES], "uint64", { name: "kEmpty" });
      const vEmpty = T.alloc_shared([STAGES], "uint64", { name: "vEmpty" });
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.init(qFull.sub(0), 1);
        for (const st of T.unroll(STAGES)) {
          T.ptx.mbarrier.init(kFull.sub(st), 1);
          T.ptx.mbarrier.init(vFull.sub(st), 1);
          T.ptx.mbarrier.init(kEmpty.sub(st), 2);
          T.ptx.mbarrier.init(vEmpty.sub(st), 2);
        }
        T.ptx.fence.mbarrier_init();
      });
      T.cuda.cta_sync();
      // Row blocks of a [batch, seq, heads, D] tensor: rows(X, r).sub(b, i, h) is [r, D];
      // cols(v) is a [r, D] view as its 64-wide column blocks [r, D / 64, 64], and
      // blocked(s) a shared [D / 64, r, 64] tile seen the same way: what TMA writes for a
      // 128B swizzle (a box is at most one 128-byte swizzle row wide).
      const rows = (x: typeof Q, r: number) => x.rearrange("b (i r) h d -> b i h r d", { r });
      const cols = (v: ReturnType<typeof rows>) => v.rearrange("r (k c) -> r k c", { c: W });
      const blocked = (t: typeof sQ) => t.rearrange("k r c -> r k c");
      T.if_(
        wg.eq(0),
        () => {
          T.ptx.setmaxnreg(false, 40);
          T.if_(tid.eq(0), () => {
            T.ptx.mbarrier.arrive.expect_tx(qFull.sub(0), BM * D * 2);
            T.tile.copy_async(blocked(sQ), cols(rows(Q, BM).sub(b, qt, h)), {
              mbar: qFull.sub(0),
            });
            for (const j of T.range(blocks)) {
              // KV block j's stage in the ring, and the phase of that stage's barriers.
              const st = T.let_("st", T.floormod(j, STAGES));
              const ph = T.let_("ph", T.floormod(T.floordiv(j, STAGES), 2));
              T.ptx.mbarrier.try_wait(kEmpty.sub(st), T.sub(1, ph));
              T.ptx.mbarrier.arrive.expect_tx(kFull.sub(st), tileBytes);
              T.tile.copy_async(blocked(sK.sub(st)), cols(rows(K, BN).sub(b, j, h)), {
                mbar: kFull.sub(st),
              });
              T.ptx.mbarrier.try_wait(vEmpty.sub(st), T.sub(1, ph));
              T.ptx.mbarrier.arrive.expect_tx(vFull.sub(st), tileBytes);
              T.tile.copy_async(blocked(sV.sub(st)), cols(rows(V, BN).sub(b, j, h)), {
                mbar: vFull.sub(st),
              });
            }
          });
        },
        () => {
          T.ptx.setmaxnreg(true, 232);
          // Consumer cw = wg - 1 ∈ {0, 1} (spelled (wg + 1) mod 2: bounds analysis sees it ≥ 0).
          const cw = T.let_("cw", wg.add(1).floormod(2));
          // S and O in the wgmma accumulator layout; P (16-bit) in the same layout, which is
          // also the register A operand's; per-row values replicated over each row's 4 lanes.
          const sl = T.layout.wgmma_tile_layout("D", 64, BN, "float32");
          const ol = T.layout.wgmma_tile_layout("D", 64, D, "float32");
          const rl = T.TileLayout(
            "S[(4, 2, 8) : (32@tid_in_wg, 1, 4@tid_in_wg)] + R[4 : 1@tid_in_wg]",
          );
          const S = T.alloc_local([64, BN], "float32", { name: "S", layout: sl });
          const P = T.alloc_local([64, BN], dt, { name: "P", layout: sl });
          const acc = T.alloc_local([64, D], "float32", { name: "acc", layout: ol });
          const out = T.alloc_local([64, D], dt, { name: "out", layout: ol });
          // m: the running max of the scaled logits (log2 domain); l: the running sum of
          // exp2(scaled logit − m); mNew, corr, rs: this block's max, rescale and row sum.
          const m = T.alloc_local([64, 1], "float32", { name: "m", layout: rl });
          const l = T.alloc_local([64, 1], "float32", { name: "l", layout: rl });
          const mNew = T.alloc_local([64, 1], "float32", { name: "mNew", layout: rl });
          const corr = T.alloc_local([64, 1], "float32", { name: "corr", layout: rl });
          const rs = T.alloc_local([64, 1], "float32", { name: "rs", layout: rl });
          T.tile.wg.zero(acc);
          T.tile.wg.fill(m, -Infinity);
          T.tile.wg.zero(l);
          T.ptx.mbarrier.try_wait(qFull.sub(0), 0);
          const sQh = sQ.rearrange("k (w r) c -> w r k c", { r: 64 }).sub(cw);
          for (const j of T.range(blocks)) {
            const st = T.let_("st", T.floormod(j, STAGES));
            const ph = T.let_("ph", T.floormod(T.floordiv(j, STAGES), 2));
            T.ptx.mbarrier.try_wait(kFull.sub(st), ph);
            T.tile.wg.gemm_async(S, sQh, blocked(sK.sub(st)), { transB: true, accum: false });
            T.ptx.wgmma.wait_group(0);
            T.if_(T.floormod(tid, 128).eq(0), () => T.ptx.mbarrier.arrive(kEmpty.sub(st)));
            if (causal) {
              // Blocks that reach past the query tile's first row: key BN·j + c is hidden from
              // this warpgroup's row r (query BM·qt + 64·cw + r) when it comes after it.
              const q0 = T.let_("q0", T.add(T.mul(qt, BM), T.mul(cw, 64)));
              T.if_(T.add(T.mul(j, BN), BN - 1).gt(T.mul(qt, BM)), () =>
                T.tile.wg.select(
                  S,
                  ([r, c]) => T.add(T.mul(j, BN), c!).gt(T.add(q0, r!)),
                  -Infinity,
                  S,
                ),
              );
            }
            // m' = max(m, c · rowmax(S)); corr = exp2(m − m'); P = exp2(c · S − m').
            T.tile.wg.max(mNew, S, 1);
            T.tile.wg.mul(mNew, mNew, c);
            T.tile.wg.maximum(mNew, mNew, m);
            T.tile.wg.sub(corr, m, mNew);
            T.tile.wg.exp2(corr, corr, { approx: true });
            T.tile.wg.maximum(m, m, mNew);
            // c·S rounded, then − m' (not one fma): m' is max(c·S) rounded the same way, so
            // the row's largest logit gives exactly exp2(0) = 1 and no logit gives more, even when
            // logits are huge (an fma would leave c·S's rounding error, up to 2^-25·|c·S|, in
            // the exponent).
            T.tile.wg.mul(S, S, c);
            T.tile.wg.sub(S, S, mNew);
            T.tile.wg.exp2(S, S, { approx: true });
            // l = l · corr + rowsum(P); O = O · corr + P · V.
            T.tile.wg.sum(rs, S, 1);
            T.tile.wg.fma(l, l, corr, rs);
            T.tile.wg.mul(acc, acc, corr);
            T.tile.wg.cast(P, S);
            T.ptx.mbarrier.try_wait(vFull.sub(st), ph);
            T.tile.wg.gemm_async(acc, P, blocked(sV.sub(st)), { accum: true });
            T.ptx.wgmma.wait_group(0);
            T.if_(T.floormod(tid, 128).eq(0), () => T.ptx.mbarrier.arrive(vEmpty.sub(st)));
          }
          // O = acc / l (l ≥ 1: every row sees its maximum's key, exp2(0) = 1).
          T.tile.wg.reciprocal(rs, l);
          T.tile.wg.mul(acc, acc, rs);
          T.tile.wg.cast(out, acc);
          const oRows = rows(O, 64).sub(b, T.add(T.mul(qt, 2), cw), h);
          T.tile.wg.copy(oRows, out);
        },
      );
    },
  );
}

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
 * Run `fn` (sizes `s`) on `dev` on fixed random inputs and compare O with a float64 reference:
 * every element within 2^-8 · max|V| + ½ ulp of the output dtype (P is rounded to the 16-bit
 * dtype before P·V, a relative error of 2^-11 (float16) or 2^-8 (bfloat16) per term; exp2 is
 * approximate (ex2.approx, 2^-22 relative)).
 */
export function checkFlashAttention(
  dev: DeviceLike,
  fn: PrimFunc,
  s: FlashAttentionSizes,
): ExampleResult {
  const { batch, heads, seqQ, seqK, headDim: D, dtype: dt } = s;
  const scale = s.scale ?? 1 / Math.sqrt(D);
  let seed = 7;
  const rnd = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  const make = (n: number, shape: number[]) =>
    tensor(Float32Array.from({ length: n }, rnd), { shape, dtype: dt, device: dev });
  const q = make(batch * seqQ * heads * D, [batch, seqQ, heads, D]);
  const k = make(batch * seqK * heads * D, [batch, seqK, heads, D]);
  const v = make(batch * seqK * heads * D, [batch, seqK, heads, D]);
  const o = tensor.zeros([batch, seqQ, heads, D], dt, dev);
  compile(fn, { target: "cuda", arch: "sm_90a" })(q, k, v, o);
  const [Q, K, V, O] = [q, k, v, o].map((x) => x.toArray() as Float32Array);
  const at = (bi: number, si: number, hi: number, seq: number) =>
    ((bi * seq + si) * heads + hi) * D;
  const bound = (dt === "float16" ? 2 ** -10 : 2 ** -7) * 2;
  let worst = 0;
  for (let bi = 0; bi < batch; bi++) {
    for (let hi = 0; hi < heads; hi++) {
      for (let i = 0; i < seqQ; i++) {
        const logits = Array.from({ length: seqK }, (_, j) => {
          if (s.causal && j > i) return -Infinity;
          let d = 0;
          for (let x = 0; x < D; x++)
            d += Q![at(bi, i, hi, seqQ) + x]! * K![at(bi, j, hi, seqK) + x]!;
          return d * scale;
        });
        const mx = Math.max(...logits);
        const p = logits.map((z) => Math.exp(z - mx));
        const sum = p.reduce((a, z) => a + z, 0);
        for (let x = 0; x < D; x++) {
          let ref = 0;
          for (let j = 0; j < seqK; j++) ref += p[j]! * V![at(bi, j, hi, seqK) + x]!;
          ref /= sum;
          worst = Math.max(worst, Math.abs(O![at(bi, i, hi, seqQ) + x]! - ref) / bound);
        }
      }
    }
  }
  const bytes = o.toBytes();
  for (const x of [q, k, v, o]) x.dispose();
  return {
    ok: worst <= 1,
    outputs: [bytes],
    summary: `worst error ${worst.toFixed(3)} of the bound (2 ulp of ${dt}, inputs in [-1, 1)) against float64`,
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
