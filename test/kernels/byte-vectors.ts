import type { PrimFunc } from "@tirx-ts/core";
import { T, type PrimExpr } from "@tirx-ts/dsl";

/** The 8-bit dtypes: one byte per element in memory. */
export type ByteDType = "uint8" | "int8" | "bool";

/** Every 8-bit dtype. */
export const BYTE_DTYPES: readonly ByteDType[] = ["uint8", "int8", "bool"];

const launch = (rows: number) => T.cuda.LaunchConfig({ grid: 1, block: rows });

/** Where a thread's lanes start in a byte copy: `tid * stride + shift` elements. */
export interface ByteCopyShape {
  /** Lanes of the `T.vectorized` loop (elements each thread copies). */
  readonly w: number;
  /** Elements between consecutive threads' first lanes (≥ w). */
  readonly stride: number;
  /** Element offset added to the load's and to the store's index. */
  readonly loadShift: number;
  readonly storeShift: number;
  /** Threads (one CTA). */
  readonly rows: number;
}

/** Elements of A and B for `s`: every thread's lanes at the larger shift fit. */
export const byteCopyLength = (s: ByteCopyShape): number =>
  s.rows * s.stride + Math.max(s.loadShift, s.storeShift) + s.w;

/**
 * `B[tid * stride + storeShift + v] = A[tid * stride + loadShift + v]` for `v` in
 * `T.vectorized(w)`, A and B 1-D of {@link byteCopyLength} elements of `dtype`. With both shifts
 * 0 and `stride` a multiple of 16 the accesses are provably 16-byte aligned.
 */
export function byteCopy(dtype: ByteDType, s: ByteCopyShape): PrimFunc {
  const n = byteCopyLength(s);
  return T.function(
    `byte_copy_${dtype}`,
    { A: T.Tensor([n], dtype), B: T.Tensor([n], dtype) },
    ({ A, B }) => {
      T.device_entry({ launch: launch(s.rows) });
      const t = T.cuda.thread_idx("x");
      const at = (shift: number) => t.mul(s.stride).add(shift);
      for (const v of T.vectorized(s.w))
        B.set([at(s.storeShift).add(v)], A.get([at(s.loadShift).add(v)]));
    },
  );
}

/** `{ w, stride: w, loadShift: 0, storeShift: 0, rows: 32 }`: the aligned row copy. */
export const alignedRows = (w: number, rows = 32): ByteCopyShape => ({
  w,
  stride: w,
  loadShift: 0,
  storeShift: 0,
  rows,
});

/**
 * Through shared memory, `w` lanes a thread ([rows, w] row-major, 1-D tensors of rows·w):
 * uint8 `S = A + 7`, `B = S ^ 0x5a`; int8 `S = A * -3`, `B = S - 100` (both wrapping to their
 * dtype); bool `S = !A`, `B = S || i % 3 == 0` at flat index `i` (see {@link byteStagedRef}).
 * Each thread reads back only the shared elements it wrote, so no barrier is needed.
 */
export function byteStaged(dtype: ByteDType, w: number, rows = 32): PrimFunc {
  const n = rows * w;
  return T.function(
    `byte_staged_${dtype}`,
    { A: T.Tensor([n], dtype), B: T.Tensor([n], dtype) },
    ({ A, B }) => {
      T.device_entry({ launch: launch(rows) });
      const t = T.cuda.thread_idx("x");
      const S = T.alloc_shared([n], dtype, { name: "S" });
      const i = (v: PrimExpr) => t.mul(w).add(v);
      for (const v of T.vectorized(w)) {
        const a = A.get([i(v)]);
        S.set(
          [i(v)],
          dtype === "bool" ? T.not(a) : dtype === "uint8" ? a.add(7) : a.mul(T.int8(-3)),
        );
      }
      for (const v of T.vectorized(w)) {
        const s = S.get([i(v)]);
        B.set(
          [i(v)],
          dtype === "bool"
            ? T.or(s, i(v).floormod(3).eq(0))
            : dtype === "uint8"
              ? s.bitxor(T.uint8(0x5a))
              : s.sub(T.int8(100)),
        );
      }
    },
  );
}

/** What {@link byteStaged} computes from one element `a` at flat index `i` (JS numbers, 0/1 for bool). */
export function byteStagedRef(dtype: ByteDType, a: number, i: number): number {
  if (dtype === "bool") return a === 0 || i % 3 === 0 ? 1 : 0;
  if (dtype === "uint8") return ((a + 7) & 0xff) ^ 0x5a;
  const wrap = (x: number) => ((((x + 128) % 256) + 256) % 256) - 128;
  return wrap(wrap(a * -3) - 100);
}

/**
 * Widen and narrow through 8-bit lanes, `w` a thread ([rows, w] row-major, 1-D tensors):
 * `F = float32(A)` (the loads' sign or zero extension shows in F; bool as 0/1) and
 * `B = dtype(C)` from int32 C (int8/uint8: the low byte, wrapping; bool: C ≠ 0).
 */
export function byteWiden(dtype: ByteDType, w: number, rows = 32): PrimFunc {
  const n = rows * w;
  return T.function(
    `byte_widen_${dtype}`,
    {
      A: T.Tensor([n], dtype),
      C: T.Tensor([n], "int32"),
      F: T.Tensor([n], "float32"),
      B: T.Tensor([n], dtype),
    },
    ({ A, C, F, B }) => {
      T.device_entry({ launch: launch(rows) });
      const t = T.cuda.thread_idx("x");
      const i = (v: PrimExpr) => t.mul(w).add(v);
      for (const v of T.vectorized(w)) F.set([i(v)], A.get([i(v)]).cast("float32"));
      for (const v of T.vectorized(w)) {
        const c = C.get([i(v)]);
        B.set([i(v)], dtype === "bool" ? c.ne(0) : c.cast(dtype));
      }
    },
  );
}

/**
 * `F[tid * 4 + v] = M[tid * 5 + v] ? A[tid * 4 + v] : 0` for `v` in `T.vectorized(4)`, float32 A
 * and F ([rows, 4] row-major, 1-D), bool M of rows·5 + 4: the float accesses are 16-byte vectors,
 * the bool mask's (stride 5) stay single bytes in the same loop.
 */
export function maskedSelect(rows = 32): PrimFunc {
  return T.function(
    "masked_select",
    {
      M: T.Tensor([rows * 5 + 4], "bool"),
      A: T.Tensor([rows * 4], "float32"),
      F: T.Tensor([rows * 4], "float32"),
    },
    ({ M, A, F }) => {
      T.device_entry({ launch: launch(rows) });
      const t = T.cuda.thread_idx("x");
      for (const v of T.vectorized(4)) {
        const i = t.mul(4).add(v);
        F.set([i], T.if_then_else(M.get([t.mul(5).add(v)]), A.get([i]), T.float32(0)));
      }
    },
  );
}

/** Byte-copy shapes the simulator and GPU tests run: aligned 16, 8, 4 and 2, and misaligned. */
export const BYTE_COPY_SHAPES: readonly ByteCopyShape[] = [
  alignedRows(16),
  alignedRows(32),
  alignedRows(8),
  alignedRows(4),
  alignedRows(2),
  { w: 16, stride: 24, loadShift: 0, storeShift: 0, rows: 32 },
  { w: 16, stride: 20, loadShift: 0, storeShift: 2, rows: 32 },
  { w: 16, stride: 16, loadShift: 1, storeShift: 0, rows: 32 },
  { w: 8, stride: 16, loadShift: 3, storeShift: 5, rows: 32 },
];

/** Values every 8-bit input starts with: both ends of the range, and around the sign bit. */
export const BYTE_EDGES: Readonly<Record<ByteDType, readonly number[]>> = {
  uint8: [0, 1, 2, 126, 127, 128, 129, 254, 255],
  int8: [-128, -127, -2, -1, 0, 1, 2, 126, 127],
  bool: [0, 1, 1, 0],
};

/**
 * `n` values of `dtype`: {@link BYTE_EDGES} first, then pseudo-random values from `seed` (a
 * fixed linear congruential sequence, so every run sees the same inputs).
 */
export function byteInputs(dtype: ByteDType, n: number, seed: number): number[] {
  let x = seed >>> 0;
  const next = (): number => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x >>> 24;
  };
  return Array.from({ length: n }, (_, i) => {
    const e = BYTE_EDGES[dtype][i];
    if (e !== undefined) return e;
    const b = next();
    return dtype === "bool" ? b & 1 : dtype === "int8" ? b - (b & 0x80) * 2 : b;
  });
}

/** `n` int32 values: the edges of the int32 range and of the 8-bit ranges, then pseudo-random. */
export function int32Inputs(n: number, seed: number): number[] {
  const edges = [0, 1, -1, 127, 128, 255, 256, -128, -129, 2 ** 31 - 1, -(2 ** 31), 0x1234_5680];
  let x = seed >>> 0;
  return Array.from({ length: n }, (_, i) => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return edges[i] ?? x | 0;
  });
}

/**
 * Through a register array: `x[v] = A[tid * 16 + v]` then `B[tid * 16 + v] = x[15 - v] ^ 1`
 * (bool: `!x[15 - v]`), A and B 1-D of rows·16 `dtype`: the vector load unpacks straight into
 * the array's registers, and the store packs lanes read in reverse.
 */
export function byteRegisters(dtype: ByteDType, rows = 32): PrimFunc {
  return T.function(
    `byte_registers_${dtype}`,
    { A: T.Tensor([rows * 16], dtype), B: T.Tensor([rows * 16], dtype) },
    ({ A, B }) => {
      T.device_entry({ launch: launch(rows) });
      const t = T.cuda.thread_idx("x");
      const x = T.alloc_local([16], dtype, { name: "x" });
      for (const v of T.vectorized(16)) x.set([v], A.get([t.mul(16).add(v)]));
      for (const v of T.vectorized(16)) {
        const r = x.get([T.sub(15, v)]);
        B.set([t.mul(16).add(v)], dtype === "bool" ? T.not(r) : r.bitxor(T[dtype](1)));
      }
    },
  );
}

/** What {@link byteRegisters} stores at `B[tid * 16 + v]`, from the thread's row `a` of A. */
export function byteRegistersRef(dtype: ByteDType, a: readonly number[], v: number): number {
  const x = a[15 - v]!;
  return dtype === "bool" ? (x === 0 ? 1 : 0) : x ^ 1;
}
