// A register tile's elements by their row-major index. TIRx docs, "Tensor Layout": an element's
// coordinate is flattened row-major over the tile's shape and the flat index split over the
// shard's extents, so a layout admits every shape of its size. Where the shape's dims line up
// with runs of the iters (groupLayout) the primitives read the dims' digits; these helpers serve
// a shape whose dims do not (`[2, 48]` over `S[(3, 32) : (1, 1@laneid)]`).
import { binary } from "../ir/arith.js";
import { rowMajorStrides } from "../ir/buffer.js";
import { intImm, type Expr } from "../ir/expr.js";
import type { TileLayout } from "../ir/tile-layout.js";
import type { RegisterTile, TileContext } from "./operand.js";
import { iterValue } from "./threads.js";

/**
 * What one step of each shard iter's value is worth in the element's row-major index: the
 * product of the extents after it (the shard split innermost-last, TIRx's "split" step).
 */
export function shardPlaces(l: TileLayout): number[] {
  const out = new Array<number>(l.shard.length);
  let p = 1;
  for (let i = l.shard.length - 1; i >= 0; i--) {
    out[i] = p;
    p *= l.shard[i]!.extent;
  }
  return out;
}

/**
 * The logical dim of each shard iter of `t`: `t.dims` when the shape groups, else the dim of
 * the shape in which the iter's lowest place falls (an iter may straddle dims then: for
 * messages and the nearest-slice search only).
 */
export function iterDims(t: RegisterTile): number[] {
  if (t.dims) return [...t.dims];
  const suffix = rowMajorStrides(t.shape);
  return shardPlaces(t.layout).map((p) => {
    const d = suffix.findIndex((s) => s <= p);
    return d < 0 ? Math.max(0, t.shape.length - 1) : d;
  });
}

/**
 * The calling thread's part of the row-major index of each element it holds of `t`: the sum of
 * its thread iters' values ({@link iterValue}) times their places; an element's index is this
 * plus its `m` iters' values times theirs. int32; 0 for a layout on `m` only.
 * @throws TirxError TX2022 as iterValue.
 */
export function threadIndexPart(t: RegisterTile, ctx: TileContext): Expr {
  const places = shardPlaces(t.layout);
  let e: Expr = intImm(0);
  t.layout.shard.forEach((x, i) => {
    if (x.axis === "m" || x.extent === 1) return;
    const v = iterValue(t.layout, x, ctx);
    e = binary("add", e, places[i] === 1 ? v : binary("mul", v, intImm(places[i]!)));
  });
  return e;
}

/**
 * The per-dim indices of row-major index `f` over `shape`: `(f / suffix_d) % shape_d` (0 for a
 * dim of 1). The outermost dim takes the modulo too: on a thread that holds no element `f` may
 * lie past the shape, and the index then still provably stays in its dim.
 */
export function unflatten(f: Expr, shape: readonly number[]): Expr[] {
  const suffix = rowMajorStrides(shape);
  return shape.map((n, d) => {
    if (n === 1) return intImm(0);
    const v: Expr = suffix[d] === 1 ? f : binary("floordiv", f, intImm(suffix[d]!));
    return binary("floormod", v, intImm(n));
  });
}
