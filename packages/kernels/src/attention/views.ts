// The views of the attention kernels' operands that the forward and the backward both take:
// row blocks of a [batch, seq, heads, D] tensor, rows at a dynamic row of a packed
// [rows, heads, D] tensor, and the 64-wide column blocks TMA and wgmma see of a 16-bit tile
// under a 128B swizzle (a box is at most one 128-byte swizzle row wide).
import { T, type ExprLike, type TileView } from "@tirx-ts/dsl";

/** Columns of one 128B-swizzle row of 16-bit elements: Q, K, V and O tiles are column blocks of 64. */
export const W = 64;

/** Row blocks of a [batch, seq, heads, D] tensor: `rows(x, r).sub(b, i, h)` is an [r, D] view. */
export const rows = (x: TileView, r: number): TileView =>
  x.rearrange("b (i r) h d -> b i h r d", { r });

/** An [r, D] view as its 64-wide column blocks [r, D / 64, 64]. */
export const cols = (x: TileView): TileView => x.rearrange("r (k c) -> r k c", { c: W });

/** A shared [D / 64, r, 64] tile (as TMA writes it) seen as [r, D / 64, 64], the way cols sees a view. */
export const blocked = (t: TileView): TileView => t.rearrange("k r c -> r k c");

/**
 * `r` rows of a packed [rows, nh, D] tensor from row `row` (a runtime value) on, head `hh`, as an
 * [r, D] view (varlen sequences and dynamic-length batches start at any row).
 */
export const rowsAt = (
  x: TileView,
  D: number,
  row: ExprLike,
  hh: ExprLike,
  r: number,
  nh: number,
): TileView =>
  x.as_strided({
    offset: T.add(T.mul(row, nh * D), T.mul(hh, D)),
    shape: [r, D],
    strides: [nh * D, 1],
  });
