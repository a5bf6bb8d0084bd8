// Kernels for register arrays and vectorized loops, shared by the codegen tests (PTX text,
// ptxas) and the simulator tests (numbers against a CPU computation).
import { T } from "@tirx-ts/dsl";

const launch = (block: number) => T.cuda.LaunchConfig({ grid: 1, block });

/**
 * Each of 32 threads accumulates an m x n float32 outer-product tile over k < K in a local
 * array: C[t*m + i, j] = sum_k A[k, t*m + i] * B[k, j].
 */
export const accumulate = (K: number, m = 4, n = 4) =>
  T.function(
    "accumulate",
    {
      A: T.Tensor([K, 32 * m], "float32"),
      B: T.Tensor([K, n], "float32"),
      C: T.Tensor([32 * m, n], "float32"),
    },
    ({ A, B, C }) => {
      T.device_entry({ launch: launch(32) });
      const tid = T.cuda.thread_idx("x");
      const acc = T.alloc_local([m, n], "float32", { name: "acc" });
      for (const i of T.unroll(m)) for (const j of T.unroll(n)) acc.set([i, j], T.float32(0));
      for (const k of T.range(K)) {
        for (const i of T.unroll(m)) {
          for (const j of T.unroll(n)) {
            acc.set([i, j], acc.get([i, j]).add(A.get([k, tid.mul(m).add(i)]).mul(B.get([k, j]))));
          }
        }
      }
      for (const i of T.unroll(m))
        for (const j of T.unroll(n)) C.set([tid.mul(m).add(i), j], acc.get([i, j]));
    },
  );

/**
 * The same tile with fragments: a and b are register arrays filled by vectorized loads, and the
 * result rows leave through vectorized stores.
 */
export const gemmTile = (K: number) =>
  T.function(
    "gemm_tile",
    {
      A: T.Tensor([K, 128], "float32"),
      B: T.Tensor([K, 4], "float32"),
      C: T.Tensor([128, 4], "float32"),
    },
    ({ A, B, C }) => {
      T.device_entry({ launch: launch(32) });
      const tid = T.cuda.thread_idx("x");
      const acc = T.alloc_local([4, 4], "float32", { name: "acc" });
      const a = T.alloc_local([4], "float32", { name: "a" });
      const b = T.alloc_local([4], "float32", { name: "b" });
      for (const i of T.unroll(4)) for (const j of T.unroll(4)) acc.set([i, j], T.float32(0));
      for (const k of T.range(K)) {
        for (const v of T.vectorized(4)) a.set([v], A.get([k, tid.mul(4).add(v)]));
        for (const v of T.vectorized(4)) b.set([v], B.get([k, v]));
        for (const i of T.unroll(4)) {
          for (const j of T.unroll(4)) {
            acc.set([i, j], acc.get([i, j]).add(a.get([i]).mul(b.get([j]))));
          }
        }
      }
      for (const i of T.unroll(4))
        for (const v of T.vectorized(4)) C.set([tid.mul(4).add(i), v], acc.get([i, v]));
    },
  );

/**
 * A local array indexed by a runtime value stays in .local: each thread fills h[0..8) with
 * 10*j and reads back h[tid % 8].
 */
export const runtimeIndex = () =>
  T.function("runtime_index", { C: T.Tensor([32], "int32") }, ({ C }) => {
    T.device_entry({ launch: launch(32) });
    const tid = T.cuda.thread_idx("x");
    const h = T.alloc_local([8], "int32", { name: "h" });
    for (const j of T.unroll(8)) h.set([j], j.mul(10));
    C.set([tid], h.get([tid.floormod(8)]));
  });

/**
 * A mutable scalar assigned in a loop and a branch: C[t] = sum over k < n of (k odd ? A[t, k] :
 * -A[t, k]), with a running maximum of the partial sums in M[t].
 */
export const localScalar = (n: number) =>
  T.function(
    "local_scalar",
    {
      A: T.Tensor([32, n], "float32"),
      C: T.Tensor([32], "float32"),
      M: T.Tensor([32], "float32"),
    },
    ({ A, C, M }) => {
      T.device_entry({ launch: launch(32) });
      const tid = T.cuda.thread_idx("x");
      const sum = T.local_scalar("float32", 0, { name: "sum" });
      const best = T.local_scalar("float32", -1e30, { name: "best" });
      for (const k of T.range(n)) {
        T.if_(
          k.floormod(2).eq(1),
          () => sum.set(sum.add(A.get([tid, k]))),
          () => sum.set(sum.sub(A.get([tid, k]))),
        );
        best.set(T.max(best, sum));
      }
      C.set([tid], sum);
      M.set([tid], best.get());
    },
  );

/** Vectorized copy of a [rows, w] tensor, one row per thread, of `dtype`. */
export const vectorCopy = (dtype: "float32" | "float16" | "float64" | "int32", w = 4, rows = 32) =>
  T.function(
    "vector_copy",
    { A: T.Tensor([rows, w], dtype), B: T.Tensor([rows, w], dtype) },
    ({ A, B }) => {
      T.device_entry({ launch: launch(rows) });
      const i = T.cuda.thread_idx("x");
      for (const v of T.vectorized(w)) B.set([i, v], A.get([i, v]));
    },
  );

/** A vectorized loop whose base is one element off: alignment cannot be proven, so it unrolls. */
export const misalignedCopy = () =>
  T.function(
    "misaligned_copy",
    { A: T.Tensor([32, 5], "float32"), B: T.Tensor([32, 4], "float32") },
    ({ A, B }) => {
      T.device_entry({ launch: launch(32) });
      const i = T.cuda.thread_idx("x");
      for (const v of T.vectorized(4)) B.set([i, v], A.get([i, v.add(1)]));
    },
  );

/** Vectorized element-wise scale-and-add through shared memory: B = 2 * A + 1 in float32. */
export const vectorAxpy = () =>
  T.function(
    "vector_axpy",
    { A: T.Tensor([32, 8], "float32"), B: T.Tensor([32, 8], "float32") },
    ({ A, B }) => {
      T.device_entry({ launch: launch(32) });
      const i = T.cuda.thread_idx("x");
      const S = T.alloc_shared([32, 8], "float32");
      for (const v of T.vectorized(8)) S.set([i, v], A.get([i, v]));
      for (const v of T.vectorized(8))
        B.set([i, v], S.get([i, v]).mul(T.float32(2)).add(T.float32(1)));
    },
  );
