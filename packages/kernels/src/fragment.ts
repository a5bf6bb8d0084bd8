// Where a thread's slots of a wgmma accumulator tile lie (the attention kernels' and the GEMM's
// epilogues and row indices): PTX ISA, wgmma "Matrix fragments for accumulator D".
import { T, type ExprLike, type PrimExpr } from "@tirx-ts/dsl";

/**
 * Thread t's first row (of its two, r and r + 8) within its warpgroup's 64 rows of a wgmma
 * accumulator: 16·⌊t / 32⌋ + ⌊(t mod 32) / 4⌋, t in 0 … 127 (PTX ISA, wgmma "Matrix fragments
 * for accumulator D").
 */
export const fragRow = (t: ExprLike): PrimExpr =>
  T.add(T.mul(T.floordiv(t, 32), 16), T.floordiv(T.floormod(t, 32), 4));

/** Thread t's first column of each 8-column group of a wgmma accumulator: 2·(t mod 4). */
export const fragCol = (t: ExprLike): PrimExpr => T.mul(T.floormod(t, 4), 2);
