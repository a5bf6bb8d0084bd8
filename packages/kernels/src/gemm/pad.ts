// The zero-padded copy the GEMM library call makes of an operand whose rows are not a multiple of
// 16 bytes (TMA's global pitch: CUDA Driver API, cuTensorMapEncodeTiled): X [rows, cols] →
// Y [rows, pitch], Y[r, c] = X[r, c] for c < cols and 0 past them, one thread per element of Y.
import { T } from "@tirx-ts/dsl";
import type { PrimFunc } from "@tirx-ts/core";
import type { GemmInput } from "./kernel.js";

/** Threads per CTA of the padding kernel. */
const THREADS = 256;

/** Elements per padded row: `cols` rounded up to a multiple of 16 bytes of `bytes`-byte elements. */
export function paddedPitch(cols: number, bytes: number): number {
  const per = 16 / bytes;
  return Math.ceil(cols / per) * per;
}

/**
 * The kernel `gemm_pad(X [rows, cols], Y [rows, pitch])` of `dtype`: Y's first `cols` columns
 * are X's, the rest zeros (rows, cols ≥ 1, pitch ≥ cols: the caller's sizes; rows · pitch below
 * 2^31).
 */
export function makePadRows(rows: number, cols: number, pitch: number, dtype: GemmInput): PrimFunc {
  return T.function(
    "gemm_pad",
    { X: T.Tensor([rows, cols], dtype), Y: T.Tensor([rows, pitch], dtype) },
    ({ X, Y }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: Math.ceil((rows * pitch) / THREADS), block: THREADS }),
      });
      const idx = T.let_(
        "idx",
        T.add(T.mul(T.cuda.block_idx("x"), THREADS), T.cuda.thread_idx("x")),
      );
      T.if_(idx.lt(rows * pitch), () => {
        const r = T.let_("r", T.floordiv(idx, pitch));
        const c = T.let_("c", T.floormod(idx, pitch));
        T.if_(
          c.lt(cols),
          () => Y.set([r, c], X.get([r, c])),
          () => Y.set([r, c], T.float32(0).cast(dtype)),
        );
      });
    },
  );
}
