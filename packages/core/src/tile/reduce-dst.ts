// The dst of a tile reduction: src's layout with the reduced axis's `m` iters dropped and its
// thread iters as replicas, src's thread offset kept; a dst written another way of that map is
// read in it, any other is TX2022 naming the allocation that works.
import type { LayoutIter } from "../ir/tile-layout.js";
import { showTileLayout } from "../layout/tile-layout.js";
import { compactM } from "./compact-m.js";
import { tileDispatchError, type RegisterTile, type TileContext } from "./operand.js";
import { inLayout } from "./same-map.js";
import { linearOffset } from "./threads.js";

const key = (x: LayoutIter): string => `${x.extent}:${x.stride}@${x.axis}`;

/**
 * The dst of a reduction of `src` along `axis`, read in the layout it must have: src's `kept`
 * iters (those of the other dims; an `m` iter by its extent, its stride free), src's thread
 * iters of the axis (in `red`) as replicas beside src's own, and src's thread offset (the threads
 * that held the elements hold the results); its shape src's with the axis 1 or dropped. A dst
 * in that layout is returned as given; one of the same element → (thread, slot) map written
 * another way is returned read in it (`inLayout`).
 * @throws TirxError TX2022 for a dst of another shape, or whose layout does not replicate over
 *   the reduced axes or lacks src's thread offset, naming the dst allocation, shape and layout,
 *   that works.
 */
export function reduceDst(
  dst: RegisterTile,
  src: RegisterTile,
  axis: number,
  red: readonly LayoutIter[],
  kept: readonly LayoutIter[],
  ctx: TileContext,
): RegisterTile {
  const keptM = kept.filter((x) => x.axis === "m");
  // The layout dst must have: kept iters, reduced thread iters as replicas, src's thread
  // offset (the same threads hold the results).
  const threadOffset = Object.fromEntries(
    Object.entries(src.layout.offset).filter(([a, v]) => a !== "m" && v !== 0),
  );
  const expected = {
    kind: "TileLayout" as const,
    shard: keptM.length + kept.length > 0 ? kept : [{ extent: 1, stride: 1, axis: "m" as const }],
    replica: [...src.layout.replica, ...red.filter((x) => x.axis !== "m")],
    offset: threadOffset,
  };
  const dShape = src.shape.map((n, d) => (d === axis ? 1 : n));
  const dropped = src.shape.filter((_, d) => d !== axis);
  const nearest = `T.alloc_local([${dShape.join(", ")}], "${src.dtype}") laid out as ${showTileLayout(compactM(expected))}${src.shape.length > 1 ? ` (or the shape [${src.shape.filter((_, d) => d !== axis).join(", ")}] without the reduced dim)` : ""}`;
  const dKept = dst.layout.shard.filter((x) => x.extent > 1);
  const shapeOk =
    dst.shape.join() === dShape.join() ||
    (dropped.length > 0 && dst.shape.join() === dropped.join());
  const same =
    shapeOk &&
    linearOffset(dst.layout) === linearOffset(src.layout) &&
    dKept.length === kept.length &&
    dKept.every((x, i) => {
      const y = kept[i]!;
      return x.axis === "m" ? y.axis === "m" && x.extent === y.extent : key(x) === key(y);
    }) &&
    sameSet(
      dst.layout.replica.filter((x) => x.extent > 1).map(key),
      expected.replica.filter((x) => x.extent > 1).map(key),
    );
  // The same element → (thread, slot) map written another way (a replica split or merged,
  // an m iter in two) is that layout: the lowering then reads the expected iters.
  const canon = !same && shapeOk ? inLayout(dst, compactM(expected), ctx) : undefined;
  if (canon) return canon;
  if (!same) {
    throw tileDispatchError(
      ctx,
      `dst ${dst.buffer.name} [${dst.shape.join(", ")}] ${showTileLayout(dst.layout)} must hold src's elements reduced along axis ${axis}, replicated over the threads that reduced them`,
      nearest,
    );
  }
  return dst;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().join() === [...b].sort().join();
}
