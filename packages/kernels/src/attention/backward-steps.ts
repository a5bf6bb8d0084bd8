// What the backward's main kernels (backward.ts at head dims 64 and 128, backward-wide.ts at 256)
// share about a CTA's key tile: a varlen sequence's rows, the query blocks that meet the tile's
// keys' windows and the loop over them (with the heads of a GQA group), and the mask of an S
// block that crosses a window edge or the sequence's end. Each builder calls these while it
// builds its kernel (T.let_ bindings land where they are called).
import { T, type ExprLike, type PrimExpr, type TileView } from "@tirx-ts/dsl";
import { minus, plus } from "./options.js";

/** Query rows per step of the backward's loops (a wgmma M of 64). */
export const BM = 64;

/**
 * Sequence b's query rows of a varlen batch, read from cuSeqlensQ int32 [batch + 1]: its first
 * packed row q0, its length lenQ, and blk, the first 64-row block of its rows in the padded row
 * space of the scratch tensors (⌊q0 / 64⌋ + b: see backward.ts's backwardScratch).
 */
export function queryRowsOf(
  cuSeqlensQ: TileView,
  b: ExprLike,
): { q0: PrimExpr; lenQ: PrimExpr; blk: PrimExpr } {
  const q0 = T.let_("seqQ0", cuSeqlensQ.get([b]));
  const lenQ = T.let_("lenQ", T.sub(cuSeqlensQ.get([T.add(b, 1)]), q0));
  const blk = T.let_("blkQ", T.add(T.floordiv(q0, BM), b));
  return { q0, lenQ, blk };
}

/** A varlen sequence's rows: its queries ({@link queryRowsOf}), its first key row and key count. */
export interface SequenceRows {
  readonly q0: PrimExpr;
  readonly lenQ: PrimExpr;
  readonly blk: PrimExpr;
  readonly k0: PrimExpr;
  readonly lenK: PrimExpr;
}

/** Sequence b's query and key rows from cuSeqlensQ and cuSeqlensK (int32 [batch + 1] each). */
export function sequenceRows(
  cuSeqlensQ: TileView,
  cuSeqlensK: TileView,
  b: ExprLike,
): SequenceRows {
  const sq = queryRowsOf(cuSeqlensQ, b);
  const k0 = T.let_("seqK0", cuSeqlensK.get([b]));
  const lenK = T.let_("lenK", T.sub(cuSeqlensK.get([T.add(b, 1)]), k0));
  return { ...sq, k0, lenK };
}

/**
 * The window's shift seq_k − seq_q (options.ts windowOffsets): with varlen the sequence's
 * lenK − lenQ (bound here), else `denseShift`, the dense batch's.
 */
export function windowShift(seq: SequenceRows | undefined, denseShift: number): ExprLike {
  return seq ? T.let_("shift", T.sub(seq.lenK, seq.lenQ)) : denseShift;
}

/** The steps of a key tile ({@link keyTileSteps}). */
export interface KeyTileSteps {
  /**
   * Loop over the steps: for each query head hk·group + g of the KV head's group, the query
   * blocks i0 + r (r < blocks); step n = g · blocks + r (a ring stage's index and phase).
   */
  readonly forSteps: (body: (n: ExprLike, h: ExprLike, i: ExprLike) => void) => void;
}

/**
 * The query blocks that meet the key tile kb (keys kb·bn … kb·bn + bn − 1) of KV head hk:
 * blocks i0 ≤ i < i0 + blocks, those with a query q and key k where k − rightOff ≤ q ≤ k + leftOff,
 * of the `qBlocks` the sequence has (`qBlocksDense` without varlen, whose last index bounds i for
 * the verifier's bounds analysis: it does not relate i0 to blocks), for each of the `group`
 * query heads of the KV head. Binds i0 and blocks here.
 */
export function keyTileSteps(o: {
  readonly kb: ExprLike;
  readonly bn: number;
  readonly hk: ExprLike;
  readonly group: number;
  readonly qBlocks: ExprLike;
  readonly qBlocksDense: number;
  readonly varlen: boolean;
  readonly rightOff: ExprLike | undefined;
  readonly leftOff: ExprLike | undefined;
}): KeyTileSteps {
  const { kb, bn, hk, group, qBlocks, rightOff, leftOff } = o;
  const i0 =
    rightOff === undefined
      ? 0
      : T.let_("i0", T.floordiv(T.max(T.sub(T.mul(kb, bn), rightOff), 0), BM).min(qBlocks));
  const blocks =
    leftOff === undefined
      ? rightOff === undefined
        ? qBlocks
        : T.let_("blocks", T.sub(qBlocks, i0))
      : T.let_(
          "blocks",
          T.max(
            T.sub(
              T.min(
                T.floordiv(T.max(T.add(T.mul(kb, bn), plus(leftOff, bn - 1 + BM)), 0), BM),
                qBlocks,
              ),
              i0,
            ),
            0,
          ),
        );
  // i0 + r < qBlocks always (blocks ≤ qBlocks − i0); the min states it for the verifier (dense;
  // with varlen the block indexes only dynamic views).
  const blockOf = (r: ExprLike): ExprLike =>
    rightOff === undefined
      ? r
      : o.varlen
        ? T.let_("i", T.add(i0, r))
        : T.let_("i", T.min(T.add(i0, r), o.qBlocksDense - 1));
  const forSteps = (body: (n: ExprLike, h: ExprLike, i: ExprLike) => void): void => {
    const inner = (g: ExprLike, h: ExprLike) => {
      for (const r of T.range(blocks)) {
        const n = group === 1 ? r : T.let_("n", T.add(T.mul(g, blocks), r));
        body(n, h, blockOf(r));
      }
    };
    if (group === 1) inner(0, hk);
    else {
      for (const g of T.range(group)) inner(g, T.let_("h", T.add(T.mul(hk, group), g)));
    }
  };
  return { forSteps };
}

/**
 * Mask an S block of query block i (rows q0 = 64·i …) against keys k0 … k0 + width − 1 to −inf
 * (+inf for a negative scale: c · S is −inf either way)
 * where a key is hidden from a query: k > q + rightOff, k < q − leftOff (the forward's test), or
 * (varlen) k ≥ lenK; only when the block crosses one of those edges (tested at its corners).
 * `keysAsRows`: S is Sᵀ, [keys, queries] (the "rs" backward), else [queries, keys].
 */
export function maskBlock(
  S: TileView,
  o: {
    readonly k0: PrimExpr;
    readonly i: ExprLike;
    readonly width: number;
    readonly rightOff: ExprLike | undefined;
    readonly leftOff: ExprLike | undefined;
    readonly lenK?: PrimExpr;
    readonly keysAsRows?: boolean;
    /**
     * The softmax scale is negative (c = scale · log2 e < 0): hidden logits become +inf, else
     * −inf, so that c · S is −inf (exp2 of it 0) either way.
     */
    readonly negativeScale: boolean;
  },
): void {
  const { k0, width, rightOff, leftOff, lenK } = o;
  const q0 = T.mul(o.i, BM);
  // The tests of the bounded edges, right, left, then the sequence's end: per block (does it
  // cross the edge? its corner keys hidden from a corner query) and per element.
  const edges: [PrimExpr, (q: ExprLike, k: PrimExpr) => PrimExpr][] = [];
  if (rightOff !== undefined) {
    edges.push([
      T.add(k0, width - 1).gt(rightOff === 0 ? q0 : T.add(q0, rightOff)),
      (q, k) => k.gt(rightOff === 0 ? q : T.add(q, rightOff)),
    ]);
  }
  if (leftOff !== undefined) {
    edges.push([k0.lt(T.add(q0, minus(BM - 1, leftOff))), (q, k) => k.lt(T.sub(q, leftOff))]);
  }
  if (lenK !== undefined) edges.push([T.add(k0, width).gt(lenK), (_q, k) => k.ge(lenK)]);
  if (edges.length === 0) return;
  const any = (ps: PrimExpr[]): PrimExpr => ps.reduce((a, x) => T.or(a, x));
  const hidden = (r: ExprLike, cc: ExprLike) => {
    const k = T.add(k0, cc);
    const q = T.add(q0, r);
    return any(edges.map(([, e]) => e(q, k)));
  };
  T.if_(any(edges.map(([x]) => x)), () =>
    T.tile.wg.select(
      S,
      o.keysAsRows ? ([kr, qc]) => hidden(qc!, kr!) : ([r, cc]) => hidden(r!, cc!),
      o.negativeScale ? Infinity : -Infinity,
      S,
    ),
  );
}

/**
 * P = exp2(c·S − LSE₂) in place (the forward's normalised probabilities, exp(scale·S − LSE) with
 * log2 e folded into c and LSE₂; ex2.approx): S float32 [64, n] (or Sᵀ), `lse` LSE₂ broadcasting
 * along S's keys.
 */
export function probabilities(S: TileView, lse: TileView, c: ExprLike): void {
  T.tile.wg.mul(S, S, c);
  T.tile.wg.sub(S, S, lse);
  T.tile.wg.exp2(S, S, { approx: true });
}

/**
 * dS = P ∘ (dP − Δ) in place in dP (the gradient of the scaled logits): dP and P float32 of one
 * shape and layout, `delta` Δ = rowsum(dO ∘ O) broadcasting along the keys.
 */
export function logitGradients(dP: TileView, P: TileView, delta: TileView): void {
  T.tile.wg.sub(dP, dP, delta);
  T.tile.wg.mul(dP, dP, P);
}
