// The register-array and vectorized kernels on the simulator, against a CPU computation.
import { describe, expect, it } from "vitest";
import { verify, type DType, type PrimFunc } from "@tirx-ts/core";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import {
  accumulate,
  gemmTile,
  localScalar,
  misalignedCopy,
  runtimeIndex,
  vectorAxpy,
  vectorCopy,
} from "./kernels/registers.js";

/** Deterministic small values (exact in float16 too), so float32 sums are easy to reproduce. */
const values = (n: number, seed: number): number[] =>
  Array.from({ length: n }, (_, i) => (((i * 37 + seed * 11) % 23) - 11) / 4);

const run = (
  fn: PrimFunc,
  inputs: { data: number[]; shape: number[]; dtype: DType }[],
  outs: { shape: number[]; dtype: DType }[],
) => {
  const ins = inputs.map((x) => simTensor(x.data, { shape: x.shape, dtype: x.dtype }));
  const os = outs.map((o) => simZeros(o.shape, o.dtype));
  runSim(verify(fn), [...ins, ...os]);
  return os.map((o) => Array.from(o.toArray() as ArrayLike<number>));
};

/** C[t*m + i, j] = sum_k A[k, t*m + i] * B[k, j], rounded to float32 after each op, k in order. */
function outerProducts(A: number[], B: number[], K: number, m: number, n: number): number[] {
  const C = new Array<number>(32 * m * n).fill(0);
  for (let r = 0; r < 32 * m; r++) {
    for (let j = 0; j < n; j++) {
      let acc = 0;
      for (let k = 0; k < K; k++)
        acc = Math.fround(acc + Math.fround(A[k * 32 * m + r]! * B[k * n + j]!));
      C[r * n + j] = acc;
    }
  }
  return C;
}

describe("register arrays on the simulator", () => {
  it("accumulate and gemm_tile compute the outer-product sums", () => {
    const K = 8;
    const A = values(K * 128, 1);
    const B = values(K * 4, 2);
    const want = outerProducts(A, B, K, 4, 4);
    for (const fn of [accumulate(K), gemmTile(K)]) {
      const [C] = run(
        fn,
        [
          { data: A, shape: [K, 128], dtype: "float32" },
          { data: B, shape: [K, 4], dtype: "float32" },
        ],
        [{ shape: [128, 4], dtype: "float32" }],
      );
      expect(C).toEqual(want);
    }
  });

  it("a runtime-indexed local array and a mutable local scalar", () => {
    const [C] = run(runtimeIndex(), [], [{ shape: [32], dtype: "int32" }]);
    expect(C).toEqual(Array.from({ length: 32 }, (_, t) => (t % 8) * 10));
    const n = 6;
    const A = values(32 * n, 3);
    const [S, M] = run(
      localScalar(n),
      [{ data: A, shape: [32, n], dtype: "float32" }],
      [
        { shape: [32], dtype: "float32" },
        { shape: [32], dtype: "float32" },
      ],
    );
    for (let t = 0; t < 32; t++) {
      let sum = 0;
      let best = Math.fround(-1e30);
      for (let k = 0; k < n; k++) {
        const x = A[t * n + k]!;
        sum = Math.fround(k % 2 === 1 ? sum + x : sum - x);
        best = Math.max(best, sum);
      }
      expect([S![t], M![t]]).toEqual([sum, best]);
    }
  });
});

describe("vectorized loops on the simulator", () => {
  it("copies of every vector width give the input back", () => {
    for (const [dt, w] of [
      ["float32", 4],
      ["float32", 16],
      ["float16", 8],
      ["float64", 4],
      ["int32", 2],
    ] as const) {
      const A = values(32 * w, w).map((x) => (dt === "int32" ? x * 4 : x));
      const [B] = run(
        vectorCopy(dt, w),
        [{ data: A, shape: [32, w], dtype: dt }],
        [{ shape: [32, w], dtype: dt }],
      );
      expect(B).toEqual(A);
    }
  });

  it("the misaligned copy and the shared-memory axpy", () => {
    const A5 = values(32 * 5, 4);
    const [B] = run(
      misalignedCopy(),
      [{ data: A5, shape: [32, 5], dtype: "float32" }],
      [{ shape: [32, 4], dtype: "float32" }],
    );
    expect(B).toEqual(
      Array.from({ length: 128 }, (_, e) => A5[Math.floor(e / 4) * 5 + (e % 4) + 1]),
    );
    const A = values(32 * 8, 5);
    const [C] = run(
      vectorAxpy(),
      [{ data: A, shape: [32, 8], dtype: "float32" }],
      [{ shape: [32, 8], dtype: "float32" }],
    );
    expect(C).toEqual(A.map((x) => Math.fround(Math.fround(x * 2) + 1)));
  });
});
