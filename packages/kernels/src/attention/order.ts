// The order in which a causal attention grid's CTAs start (the forward's query tiles, the
// backward's key tiles). A causal CTA's work depends on its tile: the forward's query tile qt
// reads qt + 1 KV blocks, the backward's key tile kb meets the query blocks from its diagonal
// on. The grid [tiles, Y, Z] starts its CTAs in launch order, x fastest, so with the tile as x
// the longest CTAs of the last (batch, head) pairs start near the end and the SMs that take them
// finish last. Here the CTAs are dealt longest first in L2 sections instead: the longest tile of
// each pair of a section, then the next, …, so that the last CTAs to start are the shortest,
// while the CTAs resident together read the K and V (forward) or Q and dO (backward) of a few
// pairs only (FlashAttention-3's tile scheduler, hopper/tile_scheduler.hpp, orders its
// persistent units the same way). The same CTAs in another order: the results are the same bits.
import { T, type PrimExpr } from "@tirx-ts/dsl";

/**
 * L2 bytes that a section's pairs may stream: 16 MiB, half FlashAttention-3's 32 MB. On the H200
 * (bf16, causal), against the grid's own order: the forward 1.9-9.2% faster at hd 64 4k and 16k,
 * hd 128 4k, hd 256 1k and 4k, the rest within ±0.3%; the backward (hd 128) 3.5-4.2% at 4k and
 * 1.5-1.9% at 1k, where 32 MiB ran 16k 3-6% slower (bench/results/attention-order-2026-12-04.md).
 */
export const L2_SECTION_BYTES = 16 * 2 ** 20;

/**
 * Pairs per section: the largest divisor of `pairs` (batch · heads of the grid) whose pairs'
 * `bytes` (the bytes each pair streams, e.g. its K and V) fit in {@link L2_SECTION_BYTES}
 * together; at least 1.
 * @example l2Section(64, 4 * 2 ** 20); // 4
 */
export function l2Section(pairs: number, bytes: number): number {
  let best = 1;
  for (let d = 1; d <= pairs; d++) if (pairs % d === 0 && d * bytes <= L2_SECTION_BYTES) best = d;
  return best;
}

/** A unit's place in the longest-first order: its rank among its pair's tiles, and its pair. */
export interface DealtTile {
  /** 0 for the pair's longest tile (dealt first), up to tiles − 1. */
  readonly rank: PrimExpr;
  /** Its (batch, head) pair, in 0 … pairs − 1 (an expression: the caller binds it). */
  readonly pair: PrimExpr;
}

/**
 * The launch index of the CTA in the grid [tiles, y, z]: x + tiles · (y + Y · z), the order in
 * which the CTAs start (x fastest).
 */
export function launchIndex(tiles: number, y: number): PrimExpr {
  return T.let_(
    "lin",
    T.add(
      T.cuda.block_idx("x"),
      T.mul(T.add(T.cuda.block_idx("y"), T.mul(T.cuda.block_idx("z"), y)), tiles),
    ),
  );
}

/**
 * Unit `lin` (below tiles · pairs) of `pairs` pairs of `tiles` tiles each, dealt longest first in
 * sections of `section` pairs: with l = lin mod section·tiles, rank ⌊l / section⌋ of pair
 * section·⌊lin / (section·tiles)⌋ + (l mod section); in a last section of the remaining
 * rem = pairs mod section pairs, rank ⌊l / rem⌋ of pair section·⌊lin / (section·tiles)⌋ +
 * (l mod rem) (FlashAttention-3's DynamicPersistentTileScheduler, its order without its atomic
 * counter). One section of every pair: rank ⌊lin / pairs⌋ of pair lin mod pairs. The grids
 * (lin: {@link launchIndex}) and the persistent forward's units take it alike.
 */
export function dealLongestFirst(o: {
  readonly lin: PrimExpr;
  /** Tiles per pair. */
  readonly tiles: number;
  readonly pairs: number;
  /** Pairs per section, 1 … pairs. */
  readonly section: number;
}): DealtTile {
  const { lin, tiles, pairs, section: sw } = o;
  if (sw === pairs) return { rank: T.floordiv(lin, pairs), pair: T.floormod(lin, pairs) };
  const sec = T.let_("sec", T.floordiv(lin, sw * tiles));
  const l2 = T.let_("l2", T.floormod(lin, sw * tiles));
  const rem = pairs % sw;
  if (rem === 0)
    return { rank: T.floordiv(l2, sw), pair: T.add(T.mul(sec, sw), T.floormod(l2, sw)) };
  // The last section has the remaining rem pairs. (Clamped: no-ops for lin < tiles · pairs, but
  // the verifier's ranges of the two arms do not tie them to the section, and the kernels' stores
  // must be provably inside their tensors, TX2006.)
  const last = sec.ge(Math.floor(pairs / sw));
  return {
    rank: T.min(T.if_then_else(last, T.floordiv(l2, rem), T.floordiv(l2, sw)), tiles - 1),
    pair: T.min(
      T.add(T.mul(sec, sw), T.if_then_else(last, T.floormod(l2, rem), T.floormod(l2, sw))),
      pairs - 1,
    ),
  };
}

/**
 * The key tile kb, KV head hk and batch b of a backward main kernel's CTA, its grid [seqK / bn,
 * kvHeads, batch], for the sizes `s` (FlashAttentionSizes' fields): with a causal mask (or a
 * window bounded on the right only) and a dense batch, dealt longest first (key tile 0 meets the
 * most query blocks) in sections of pairs whose Q, dO (16-bit) and float32 dQ accumulator rows
 * (the KV head's query heads, seqQ × hd each) fit in {@link L2_SECTION_BYTES}; otherwise (and
 * where that is the grid's own order: one key tile, or sections of one pair) the block indices
 * themselves.
 */
export function backwardKeyTile(
  s: {
    readonly varlen?: unknown;
    readonly causal?: boolean;
    readonly window?: readonly [number, number];
    readonly batch: number;
    readonly heads: number;
    readonly kvHeads?: number;
    readonly seqQ: number;
    readonly seqK: number;
    readonly headDim: number;
  },
  bn: number,
): { kb: PrimExpr; hk: PrimExpr; b: PrimExpr } {
  const kvHeads = s.kvHeads ?? s.heads;
  const [left, right] = s.window ?? (s.causal === true ? [-1, 0] : [-1, -1]);
  const tiles = s.seqK / bn;
  const pairs = kvHeads * s.batch;
  const section =
    s.varlen === undefined && left === -1 && right !== -1 && tiles > 1
      ? l2Section(pairs, (s.heads / kvHeads) * s.seqQ * s.headDim * (2 * 2 + 4))
      : 1;
  if (section === 1) {
    return { kb: T.cuda.block_idx("x"), hk: T.cuda.block_idx("y"), b: T.cuda.block_idx("z") };
  }
  const { rank, pair: p } = dealLongestFirst({
    lin: launchIndex(tiles, kvHeads),
    tiles,
    pairs,
    section,
  });
  const pair = T.let_("pair", p);
  return {
    kb: T.let_("kb", rank),
    hk: T.let_("hk", T.floormod(pair, kvHeads)),
    b: T.let_("b", T.floordiv(pair, kvHeads)),
  };
}
