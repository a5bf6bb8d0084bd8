// The tirx-ts kernels of bench/multi-gpu.ts, T.nvshmem on symmetric tensors (the direct path:
// one address range of per-GPU slices, runtime-cuda's SymmetricTensor), bfloat16:
// - one-shot all-reduce: barrier_all (every PE's input is in place: its kernel started after the
//   writes queued before it), each PE reads the P inputs, sums in float32 and writes its own
//   result, barrier_all (no PE goes on to overwrite its input while a peer reads it). Every
//   PE reads P·n elements: latency-bound sizes.
// - two-shot all-reduce: barrier_all, PE p sums chunk p (n / P elements) of the P inputs and
//   stores the sum into every PE's result, barrier_all. Every PE reads and writes 2·n elements.
// - block gather (all-gather + GEMM): PE me copies row block `src` of A from PE src's copy into
//   its own (a pull over NVLink), for the GEMM of that block to start after it.
// Each thread moves 8 elements (16 bytes, T.vectorized) per step over a grid-stride loop of a
// grid every GPU holds at once (barrier_all meets CTA b of every PE). barrier_all's counters are
// set up by the launch (compile(fn).launchAll).
import { T, symmetricShard, type PrimExpr, type PrimFunc } from "tirx-ts";

/** Threads per CTA, and bfloat16 elements per thread and step (one 16-byte vector). */
export const BLOCK = 512;
export const VEC = 8;

/** Sizes of an all-reduce kernel. */
export interface AllreduceBench {
  readonly pes: number;
  /** bfloat16 elements per PE: a multiple of VEC (two-shot: of pes · VEC). */
  readonly n: number;
  /** CTAs per GPU (at most what a GPU holds at once: barrier_all). */
  readonly ctas: number;
  /** Bytes each symmetric shard is padded to a multiple of (the GPUs' granularity; 1: none). */
  readonly granularity: number;
}

/** The shard of X (and Y) padded to the granularity. */
export function allreduceShard(s: AllreduceBench): number {
  return symmetricShard([s.n], "bfloat16", s.granularity)[0]!;
}

/**
 * For each 8-element vector v = j · (ctas · BLOCK) + cta · BLOCK + thread (j the loop step) with
 * v · 8 < `count`: `body(i)` at its first element i, offset by `base`.
 */
function gridStride(count: number, ctas: number, body: (i: PrimExpr) => void): void {
  const vectors = count / VEC;
  const per = ctas * BLOCK;
  const steps = Math.ceil(vectors / per);
  const v0 = T.let_("v0", T.cuda.block_idx("x").mul(BLOCK).add(T.cuda.thread_idx("x")));
  for (const j of T.range(steps)) {
    const v = T.let_("v", j.mul(per).add(v0));
    const at = (): void => body(T.let_("i", v.mul(VEC)));
    if (vectors % per === 0) at();
    else T.if_(v.lt(vectors), at);
  }
}

/**
 * One-shot all-reduce: X [P, shard] bfloat16 symmetric (PE p's input at X[p, 0:n]), Out [n]
 * bfloat16 each PE's own: Out = Σ_q X[q] (float32 sums, rounded once).
 */
export function makeOneShot(s: AllreduceBench): PrimFunc {
  const { pes: P, n, ctas } = s;
  return T.function(
    `allreduce_one_shot_${P}_${n}`,
    { X: T.Tensor([P, allreduceShard(s)], "bfloat16"), Out: T.Tensor([n], "bfloat16") },
    ({ X, Out }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: ctas, block: BLOCK }) });
      T.nvshmem.barrier_all();
      gridStride(n, ctas, (i) => {
        for (const e of T.vectorized(VEC)) {
          let acc = X.get([0, i.add(e)]).cast("float32");
          for (let q = 1; q < P; q++) acc = acc.add(X.get([q, i.add(e)]).cast("float32"));
          Out.set([i.add(e)], acc.cast("bfloat16"));
        }
      });
      T.nvshmem.barrier_all();
    },
  );
}

/**
 * Two-shot all-reduce: X, Y [P, shard] bfloat16 symmetric (PE p's input at X[p, 0:n], its result
 * at Y[p, 0:n]): PE p sums chunk p of the inputs and stores it into every PE's Y.
 */
export function makeTwoShot(s: AllreduceBench): PrimFunc {
  const { pes: P, n, ctas } = s;
  const chunk = n / P;
  const shard = allreduceShard(s);
  return T.function(
    `allreduce_two_shot_${P}_${n}`,
    { X: T.Tensor([P, shard], "bfloat16"), Y: T.Tensor([P, shard], "bfloat16") },
    ({ X, Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: ctas, block: BLOCK }) });
      const base = T.let_("base", T.nvshmem.my_pe().mul(chunk));
      T.nvshmem.barrier_all();
      gridStride(chunk, ctas, (c) => {
        const i = T.let_("k", base.add(c));
        const sum = T.alloc_local([VEC], "bfloat16", { name: "sum" });
        for (const e of T.vectorized(VEC)) {
          let acc = X.get([0, i.add(e)]).cast("float32");
          for (let q = 1; q < P; q++) acc = acc.add(X.get([q, i.add(e)]).cast("float32"));
          sum.set([e], acc.cast("bfloat16"));
        }
        for (let q = 0; q < P; q++) {
          for (const e of T.vectorized(VEC)) Y.set([q, i.add(e)], sum.get([e]));
        }
      });
      T.nvshmem.barrier_all();
    },
  );
}

/** Sizes of the all-gather + GEMM case: A [M, K] row-sharded over P GPUs, B [K, N]. */
export interface GatherBench {
  readonly pes: number;
  readonly m: number;
  readonly k: number;
  readonly ctas: number;
  readonly granularity: number;
}

/** The shard of A (all M · K elements of A on every PE, padded). */
export function gatherShard(s: GatherBench): number {
  return symmetricShard([s.m * s.k], "bfloat16", s.granularity)[0]!;
}

/**
 * Block gather: A [P, shard] bfloat16 symmetric (PE p's copy of all of A, row-major [M, K]; PE p
 * holds its own row block p before the launch), `src` int32: PE me copies row block src (M / P
 * rows) from PE src's copy into its own (nothing when src is me). Every PE's own block must be in place before (written
 * before the timed loop; the bench re-gathers the same bytes each iteration).
 */
export function makeGatherBlock(s: GatherBench): PrimFunc {
  const { pes: P, m, k, ctas } = s;
  const blk = (m / P) * k;
  return T.function(
    `gather_block_${P}_${m}_${k}`,
    { A: T.Tensor([P, gatherShard(s)], "bfloat16"), src: T.int32 },
    ({ A, src }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: ctas, block: BLOCK }) });
      const me = T.let_("me", T.nvshmem.my_pe());
      const base = T.let_("base", src.mul(blk));
      // A PE's own block is in place already.
      T.if_(src.ne(me), () =>
        gridStride(blk, ctas, (c) => {
          const i = T.let_("k", base.add(c));
          // Through registers: a vectorized loop that loads and stores one buffer is unrolled.
          const v = T.alloc_local([VEC], "bfloat16", { name: "v" });
          for (const e of T.vectorized(VEC)) v.set([e], A.get([src, i.add(e)]));
          for (const e of T.vectorized(VEC)) A.set([me, i.add(e)], v.get([e]));
        }),
      );
    },
  );
}
