import type { Expr } from "../../ir/expr.js";
import { isFloat, type DType } from "../../dtype.js";
import type { MatrixDescriptor } from "./descriptor.js";

/**
 * The byte offset, from the descriptor's start address and before the swizzle XOR, of element
 * (r, k) of a 2-byte wgmma operand: r along M/N, k along K, `mn` for an MN-major (transposed)
 * operand. The canonical layouts of the PTX ISA ("Shared Memory Matrix Layout"; CUTLASS
 * `make_gmma_desc`), with W = 16·2^mode the bytes of a swizzle row and E = W / 2 its elements:
 * - K-major: `(r >> 3)·SBO + (r & 7)·W + 2k` swizzled, `(r >> 3)·SBO + (k >> 3)·LBO + (r & 7)·16 + 2(k & 7)` not;
 * - MN-major: `⌊r / E⌋·LBO + (k >> 3)·SBO + (k & 7)·W + 2(r % E)` swizzled,
 *   `(r >> 3)·SBO + (k >> 3)·LBO + (k & 7)·16 + 2(r & 7)` not.
 * A K-major operand of `eb`-byte elements (1 for float8, whose k32 step spans the same 32 bytes
 * per row as a k16 step of a 2-byte type) is the same bytes: with kb = eb·k its byte along K,
 * `(r >> 3)·SBO + (r & 7)·W + kb` swizzled, `(r >> 3)·SBO + (kb >> 4)·LBO + (r & 7)·16 + (kb & 15)`
 * not. MN-major operands exist for 2-byte types only (PTX ISA, wgmma.mma_async: imm-trans-a/b
 * for .f16/.bf16 alone).
 */
export function operandOffset(
  d: Pick<MatrixDescriptor, "ldo" | "sdo" | "swizzle">,
  mn: boolean,
  r: number,
  k: number,
  eb = 2,
): number {
  const kb = eb * k;
  if (d.swizzle === 0) {
    return mn
      ? (r >> 3) * d.sdo + (k >> 3) * d.ldo + (k & 7) * 16 + 2 * (r & 7)
      : (r >> 3) * d.sdo + (kb >> 4) * d.ldo + (r & 7) * 16 + (kb & 15);
  }
  const W = 16 << d.swizzle;
  const E = W >> 1;
  return mn
    ? Math.floor(r / E) * d.ldo + (k >> 3) * d.sdo + (k & 7) * W + 2 * (r % E)
    : (r >> 3) * d.sdo + (r & 7) * W + kb;
}

/** The physical shared byte of pre-swizzle byte address `x` (CuTe Swizzle<mode, 4, 3>: bits 4.. ^= bits 7..). */
export function swizzleByte(x: number, swizzle: number): number {
  return swizzle === 0 ? x : x ^ (((x >> 7) & ((1 << swizzle) - 1)) << 4);
}

/** One element where a descriptor and its tile disagree (byte offsets from the start). */
export interface OperandMismatch {
  readonly r: number;
  readonly k: number;
  /** Where the descriptor reads element (r, k). */
  readonly got: number;
  /** Where the row-major tile holds it. */
  readonly want: number;
}

/**
 * The first element of a `rows`×(32/eb) operand (`eb`-byte type: 2, or 1 for float8, K-major) that
 * the descriptor `d` reads from another place than a row-major tile with rows of `cols` elements
 * holds it: K-major (r, k) at `eb(r·cols + k)` from the start, MN-major at `2(k·cols + r)` (the tile is [M/N, K] or [K, M/N]
 * with its swizzle applied to the whole tile, as `T.swizzle_mode` does). Undefined when they agree
 * for every element, that is when LBO and SBO are the ones the tile's layout needs, and when a
 * tile row is shorter than the operand's (16 elements K-major, `rows` MN-major): such a tile is
 * laid out some other way (core matrices, halves of N), which this does not judge.
 */
export function operandTileMismatch(
  d: Pick<MatrixDescriptor, "ldo" | "sdo" | "swizzle">,
  mn: boolean,
  rows: number,
  cols: number,
  eb = 2,
): OperandMismatch | undefined {
  const K = 32 / eb;
  // Only a tile whose rows hold the operand's is claimed; other tiles (core matrices in a
  // [k/8][row][k%8] tile, an MN-major operand wider than the tile's rows) are not read as
  // row-major [M/N, K] or [K, M/N].
  if (cols < (mn ? rows : K)) return undefined;
  for (let r = 0; r < rows; r++) {
    for (let k = 0; k < K; k++) {
      const got = operandOffset(d, mn, r, k, eb);
      const want = eb * (mn ? k * cols + r : r * cols + k);
      if (got !== want) return { r, k, got, want };
    }
  }
  return undefined;
}

/**
 * What a row-major tile of a swizzle needs of LBO/SBO, in words, for a message: the rows of a
 * swizzled tile are one swizzle row (W bytes) and SBO steps 8 of them.
 */
export function operandLayoutHint(swizzle: number, mn: boolean, cols: number, eb = 2): string {
  const rowBytes = eb * cols;
  if (swizzle === 0) {
    return `a no-swizzle descriptor reads 8×16-byte core matrices (each 128 contiguous bytes), which a row-major tile with ${rowBytes}-byte rows does not hold; lay the tile out as core matrices (a 1-D buffer indexed by hand) or use a swizzled tile`;
  }
  const W = 16 << swizzle;
  if (rowBytes !== W) {
    return `a ${W}B-swizzled ${mn ? "MN" : "K"}-major operand needs tile rows of exactly ${W} bytes (one swizzle row); this tile's rows are ${rowBytes} bytes`;
  }
  return `for this tile (rows of ${rowBytes} bytes, ${W}B swizzle, ${mn ? "MN" : "K"}-major) SBO is ${8 * W}${mn ? "" : " (8 rows)"}`;
}

/**
 * Whether a shared buffer of `buffer` dtype certainly holds another type than the wgmma's
 * `ab` operand: a floating-point buffer of another dtype. An integer buffer (raw bytes or words,
 * read through a view) is not judged.
 */
export function operandDtypeConflict(buffer: DType, ab: DType): boolean {
  return isFloat(buffer) && buffer !== ab;
}
