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
import { invariant } from "@tirx-ts/core";

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

/** A CTA's place in the longest-first order: its rank among its pair's tiles, and its pair. */
export interface DealtTile {
  /** 0 for the pair's longest tile (dealt first), up to tiles − 1. */
  readonly rank: PrimExpr;
  /** The (batch, head) pair y + Y · z of the grid's [tiles, Y, Z], in 0 … pairs − 1. */
  readonly pair: PrimExpr;
}

/**
 * The CTA's tile rank and pair when the grid [tiles, y, pairs / y] is dealt longest first in
 * sections of `section` pairs (a divisor of `pairs`): the CTA of launch index l = x + tiles ·
 * (y + Y · z) is rank ⌊(l mod section·tiles) / section⌋ of pair section · ⌊l / (section·tiles)⌋
 * + (l mod section·tiles) mod section.
 * @throws invariant failure when `section` does not divide `pairs`.
 */
export function dealLongestFirst(o: {
  /** Tiles per pair: the grid's x extent. */
  readonly tiles: number;
  /** The grid's y extent (heads, or KV heads). */
  readonly y: number;
  /** Pairs: the grid's y · z extents. */
  readonly pairs: number;
  /** Pairs per section ({@link l2Section}). */
  readonly section: number;
}): DealtTile {
  invariant(o.pairs % o.section === 0, "dealLongestFirst: a section divides the pairs");
  const lin = T.let_(
    "lin",
    T.add(
      T.cuda.block_idx("x"),
      T.mul(T.add(T.cuda.block_idx("y"), T.mul(T.cuda.block_idx("z"), o.y)), o.tiles),
    ),
  );
  const run = o.section * o.tiles;
  const rem = T.let_("rem", T.floormod(lin, run));
  return {
    rank: T.floordiv(rem, o.section),
    pair: T.let_("pair", T.add(T.mul(T.floordiv(lin, run), o.section), T.floormod(rem, o.section))),
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
  const { rank, pair } = dealLongestFirst({ tiles, y: kvHeads, pairs, section });
  return {
    kb: T.let_("kb", rank),
    hk: T.let_("hk", T.floormod(pair, kvHeads)),
    b: T.let_("b", T.floordiv(pair, kvHeads)),
  };
}
