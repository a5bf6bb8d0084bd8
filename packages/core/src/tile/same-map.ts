import { numel } from "../ir/buffer.js";
import type { TileLayout } from "../ir/tile-layout.js";
import { layoutCoordinates, showTileLayout } from "../layout/tile-layout.js";
import type { RegisterTile, TileContext } from "./operand.js";
import { linearThreads } from "./threads.js";

/** The most (element, copy) pairs {@link sameElementMap} compares one by one. */
const MAX_COPIES = 1 << 16;

/**
 * Whether register tiles `a` and `b` of one shape put every logical element on the same threads
 * at the same slot, however their layouts are written: iters split or merged
 * (`S[(32, 2, 2) : (1@laneid, 2, 1)]` is `S[(32, 4) : (1@laneid, 1)]`), iters of extent 1 with any
 * stride, or one thread axis for another (`1@warpid` is `32@tid`). TIRx aligns elementwise
 * operands after canonicalizing their layouts (tile_primitives/elementwise/reg); here the maps
 * themselves are compared: equal notations at once, else every element's physical coordinates
 * (replicas included) on the scope's linear thread index ({@link linearThreads}) and `m`. Tiles
 * of more than 65536 element copies are compared by notation only (false when it differs).
 * @throws TirxError TX2022 as linearThreads (thread iters whose digits overlap).
 */
export function sameElementMap(a: RegisterTile, b: RegisterTile, ctx: TileContext): boolean {
  if (a.shape.join() !== b.shape.join()) return false;
  if (showTileLayout(a.layout) === showTileLayout(b.layout)) return true;
  const la = linearThreads(a.layout, ctx, true);
  const lb = linearThreads(b.layout, ctx, true);
  const copies = (l: TileLayout): number => l.replica.reduce((p, x) => p * x.extent, 1);
  const n = numel(a.shape);
  if (n * Math.max(copies(la), copies(lb)) > MAX_COPIES) return false;
  /** The element's coordinates, each as text with its axes in one order, as a sorted set. */
  const at = (l: TileLayout, e: number): string =>
    layoutCoordinates(l, e)
      .map((c) =>
        Object.entries(c)
          .filter(([, v]) => v !== 0)
          .sort(([x], [y]) => (x < y ? -1 : 1))
          .map(([k, v]) => `${k}=${v}`)
          .join(","),
      )
      .sort()
      .join("|");
  for (let e = 0; e < n; e++) if (at(la, e) !== at(lb, e)) return false;
  return true;
}
