import { binary } from "../ir/arith.js";
import { intImm, type Buffer, type Expr } from "../ir/expr.js";
import { invariant } from "../invariant.js";
import { rowMajorStrides } from "../ir/buffer.js";
import type { TileLayout } from "../ir/tile-layout.js";
import { layoutAxisRange, layoutGroups } from "../layout/tile-layout.js";
import type { Span } from "../span.js";

/**
 * The slot (memory coordinate `m`) of logical element `indices` of a laid-out local tile, as
 * the calling thread holds it: the layout grouped by `shape`, each index split into its iters'
 * digits, the digits of the `m` iters times their strides, plus the layout's `m` offset. A shape
 * whose dims do not line up with runs of the iters splits the row-major index instead (TIRx
 * docs, "Tensor Layout": flatten, then split over the shard extents). Thread digits are
 * dropped: the element is read from the calling thread's own array (meaningful where the
 * thread holds it). Constant indices give a constant slot once simplified.
 * @throws TirxError TX1026 when the shape's size is not the layout's.
 */
export function layoutSlot(
  b: Buffer,
  shape: readonly number[],
  indices: readonly Expr[],
  span?: Span,
): Expr {
  const l = b.tileLayout;
  invariant(l, "layoutSlot: the buffer has no TileLayout");
  const g = layoutGroups(l, shape.length > 0 ? shape : [1], span);
  if (!g) return flatSlot(l, shape, indices);
  let slot: Expr = intImm(l.offset.m ?? 0);
  for (let d = 0; d + 1 < g.seps.length; d++) {
    const idx = indices[d] ?? intImm(0);
    let inner = 1;
    for (let i = g.seps[d + 1]! - 1; i >= g.seps[d]!; i--) {
      const x = g.layout.shard[i]!;
      if (x.axis === "m" && x.extent > 1 && x.stride !== 0) {
        let digit: Expr = inner === 1 ? idx : binary("floordiv", idx, intImm(inner));
        if (i > g.seps[d]!) digit = binary("floormod", digit, intImm(x.extent));
        slot = binary("add", slot, x.stride === 1 ? digit : binary("mul", digit, intImm(x.stride)));
      }
      inner *= x.extent;
    }
  }
  return slot;
}

/** {@link layoutSlot} through the row-major index of `indices` over `shape`. */
function flatSlot(l: TileLayout, shape: readonly number[], indices: readonly Expr[]): Expr {
  const suffix = rowMajorStrides(shape);
  let f: Expr = intImm(0);
  shape.forEach((n, d) => {
    const idx = indices[d] ?? intImm(0);
    if (n > 1) f = binary("add", f, suffix[d] === 1 ? idx : binary("mul", idx, intImm(suffix[d]!)));
  });
  let slot: Expr = intImm(l.offset.m ?? 0);
  let place = 1;
  for (let i = l.shard.length - 1; i >= 0; i--) {
    const x = l.shard[i]!;
    if (x.axis === "m" && x.extent > 1 && x.stride !== 0) {
      let digit: Expr = place === 1 ? f : binary("floordiv", f, intImm(place));
      if (i > 0) digit = binary("floormod", digit, intImm(x.extent));
      slot = binary("add", slot, x.stride === 1 ? digit : binary("mul", digit, intImm(x.stride)));
    }
    place *= x.extent;
  }
  return slot;
}

/**
 * The storage of a laid-out local tile: the same buffer (same id and name) holding only the
 * thread's own slots, shape `[greatest m + 1]` (the layout's span on `m` when it starts at slot 0;
 * the verifier's TX2021 keeps m ≥ 0) and no TileLayout; a buffer without one is itself.
 */
export function tileStorage(b: Buffer): Buffer {
  if (!b.tileLayout || b.scope !== "local") return b;
  const rest: Omit<Buffer, "tileLayout"> & { tileLayout?: unknown } = { ...b };
  delete rest.tileLayout;
  return { ...(rest as Buffer), shape: [Math.max(1, layoutAxisRange(b.tileLayout, "m").max + 1)] };
}
