// Where a thread's slots of a wgmma accumulator tile lie (the attention kernels' and the GEMM's
// epilogues and row indices): PTX ISA, wgmma "Matrix fragments for accumulator D".
import { T, type ExprLike, type PrimExpr, type TileView } from "@tirx-ts/dsl";

/**
 * Thread t's first row (of its two, r and r + 8) within its warpgroup's 64 rows of a wgmma
 * accumulator: 16·⌊t / 32⌋ + ⌊(t mod 32) / 4⌋, t in 0 … 127 (PTX ISA, wgmma "Matrix fragments
 * for accumulator D").
 */
export const fragRow = (t: ExprLike): PrimExpr =>
  T.add(T.mul(T.floordiv(t, 32), 16), T.floordiv(T.floormod(t, 32), 4));

/** Thread t's first column of each 8-column group of a wgmma accumulator: 2·(t mod 4). */
export const fragCol = (t: ExprLike): PrimExpr => T.mul(T.floormod(t, 4), 2);

/**
 * A stager of a warpgroup's [64, D] 16-bit wgmma accumulator tiles (layout
 * wgmma_tile_layout("D", 64, D, …)) into shared memory for a TMA store: `stage(dst, acc)` writes
 * row r of `acc` to row `row0` + r (0 when absent) of `dst`, a [D / 64, rows, 64] view of 64-column
 * blocks (one 128-byte swizzle row each, as TMA reads them). Thread t (`tid` mod 128) holds rows
 * fragRow(t) + 8·i (i < 2) and the column pairs 8·n + fragCol(t) (PTX ISA, wgmma "Matrix
 * fragments for accumulator D"), each pair one 32-bit store. The thread's row and column are
 * bound once, here, for every tile staged; the caller fences the async proxy and meets its
 * warpgroup before the TMA store reads `dst`.
 */
export function fragmentStager(
  tid: ExprLike,
  row0?: ExprLike,
): (dst: TileView, acc: TileView) => void {
  const to = T.let_("to", T.floormod(tid, 128));
  const r0 = T.let_("or0", fragRow(to));
  const c0 = T.let_("oc0", fragCol(to));
  // Column pairs per 64-column block: column 8·n + c0 + e is in block ⌊n / 8⌋ (c0 + e < 8),
  // column 8·(n mod 8) + c0 + e of it (so written, the verifier bounds it by 64).
  const nb = 8;
  return (dst, acc) => {
    const slots = acc.flat();
    for (const i of T.unroll(2)) {
      const r = T.add(r0, T.mul(i, 8));
      const row = row0 === undefined ? r : T.add(row0, r);
      for (const n of T.unroll(acc.shape[1]! / 8)) {
        for (const e of T.vectorized(2)) {
          dst.set(
            [T.floordiv(n, nb), row, T.add(T.add(T.mul(T.floormod(n, nb), 8), c0), e)],
            slots.get([T.add(T.add(T.mul(n, 4), T.mul(i, 2)), e)]),
          );
        }
      }
    }
  };
}

/**
 * A [64, 64] float32 block in the fragment order of a warpgroup's m64n64 wgmma accumulator:
 * element (r, c), r = 16·w + 8·j + q, c = 8·n + 2·p + e (w < 4, j < 2, q < 8, n < 8, p < 4,
 * e < 2), at offset 512·n + 128·w + 16·q + 4·p + 2·j + e. Thread t = 32·w + 4·q + p holds it in
 * slot 4·n + 2·j + e (PTX ISA, wgmma "Matrix fragments for accumulator D"), so that slots
 * 4·n … 4·n + 3 of thread t lie at offsets 512·n + 4·t … + 3: each thread stores its 32 slots as
 * eight 16-byte vectors, a warp 512 contiguous bytes a store (no bank conflicts, where a
 * row-major block takes eight ways: a warp's eight rows 256 bytes apart). FlashAttention-3 keeps
 * its dQ accumulator in this order for the same reason.
 */
export const FRAG_BLOCK = { n: 8, w: 4, q: 8, p: 4, j: 2, e: 2 } as const;

/**
 * Store a warpgroup's [64, 64] float32 wgmma accumulator tile `acc` (layout wgmma_tile_layout("D",
 * 64, 64, "float32")) to `block`, a contiguous 4096-element float32 view (16-byte aligned), in
 * {@link FRAG_BLOCK}'s order: thread t (`tid` mod 128) writes offsets 512·n + 4·t … + 3 from its
 * slots 4·n … 4·n + 3, as 16-byte stores.
 */
export function storeFragmentBlock(block: TileView, acc: TileView, tid: ExprLike): void {
  const t = T.let_("tf", T.floormod(tid, 128));
  const slots = acc.flat();
  for (const n of T.unroll(8)) {
    for (const k of T.vectorized(4)) {
      block.set([T.add(T.add(T.mul(n, 512), T.mul(t, 4)), k)], slots.get([T.add(T.mul(n, 4), k)]));
    }
  }
}

/**
 * Load a warpgroup's [64, 64] float32 wgmma accumulator tile `acc` (layout
 * wgmma_tile_layout("D", 64, 64, "float32")) from `block`, a contiguous 4096-element float32 view
 * (16-byte aligned) in {@link FRAG_BLOCK}'s order, as {@link storeFragmentBlock} wrote it: thread
 * t (`tid` mod 128) reads offsets 512·n + 4·t … + 3 into its slots 4·n … 4·n + 3, as 16-byte
 * loads (a warp 512 contiguous bytes a load).
 */
export function loadFragmentBlock(acc: TileView, block: TileView, tid: ExprLike): void {
  const t = T.let_("tf", T.floormod(tid, 128));
  const slots = acc.flat();
  for (const n of T.unroll(8)) {
    for (const k of T.vectorized(4)) {
      slots.set([T.add(T.mul(n, 4), k)], block.get([T.add(T.add(T.mul(n, 512), T.mul(t, 4)), k)]));
    }
  }
}

/**
 * Row r (0 … 63) of a [64, 64] float32 block in {@link FRAG_BLOCK}'s order, given as `block`, a
 * view whose last axis is the block's 4096 elements: the row's 64 columns as [8, 4, 2] (column
 * 8·n + 2·p + e at [n, p, e]; strides 512, 4, 1), the leading axes of `block` kept.
 */
export function fragmentRow(block: TileView, r: ExprLike): TileView {
  const lead = Array.from({ length: block.shape.length - 1 }, (_, i) => `x${i}`).join(" ");
  const v = block.rearrange(`${lead} (n w q p j e) -> w j q ${lead} n p e`, FRAG_BLOCK);
  return v.sub(T.floordiv(r, 16), T.floormod(T.floordiv(r, 8), 2), T.floormod(r, 8));
}
