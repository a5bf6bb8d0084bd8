// A layout's `m` iters renumbered compactly: the slots of a layout built from another's iters (a
// reduction's dst, a broadcast input), the form `inLayout` reads a tile of the same map into.
import type { TileLayout } from "../ir/tile-layout.js";

/** `l` with its m iters renumbered compactly (row-major over the m iters). */
export function compactM(l: TileLayout): TileLayout {
  let s = 1;
  const shard = [...l.shard];
  for (let i = shard.length - 1; i >= 0; i--) {
    const x = shard[i]!;
    if (x.axis !== "m") continue;
    shard[i] = { ...x, stride: s };
    s *= x.extent;
  }
  return { ...l, shard };
}
