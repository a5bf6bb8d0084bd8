import { numel } from "../ir/buffer.js";
import type { TileLayout } from "../ir/tile-layout.js";
import { layoutCoordinates, showTileLayout } from "../layout/tile-layout.js";
import { TirxError } from "../diagnostics.js";
import { groupedTile, type RegisterTile, type TileContext } from "./operand.js";
import { linearThreads } from "./threads.js";

/** The most (element, copy) pairs {@link sameElementMap} compares one by one. */
const MAX_COPIES = 1 << 16;

/**
 * The constant `δ` such that register tile `b` holds every logical element on the threads where
 * `a` holds it, at `a`'s slot plus `δ`; undefined when there is none. Two parts of one tile
 * (`f.sub(0, ":")`, `f.sub(1, ":")`) differ by their `m` offsets; one map written two ways
 * (iters split or merged, `1@warpid` for `32@tid`) has `δ` 0. Notations equal but for the `m`
 * offset are read at once; otherwise every element's physical coordinates (replicas included) on
 * the scope's linear thread index ({@link linearThreads}) are compared. TIRx aligns elementwise
 * operands after canonicalizing their layouts (tile_primitives/elementwise/reg). Tiles of more
 * than 65536 element copies are compared by notation only.
 * @throws TirxError TX2022 as linearThreads (thread iters whose digits overlap).
 */
export function elementMapShift(
  a: RegisterTile,
  b: RegisterTile,
  ctx: TileContext,
): number | undefined {
  if (a.shape.join() !== b.shape.join()) return undefined;
  const mOff = (l: TileLayout): number => l.offset.m ?? 0;
  const noM = (l: TileLayout): string => {
    const offset = Object.fromEntries(Object.entries(l.offset).filter(([k]) => k !== "m"));
    return showTileLayout({ ...l, offset });
  };
  if (noM(a.layout) === noM(b.layout)) return mOff(b.layout) - mOff(a.layout);
  const la = linearThreads(a.layout, ctx, true);
  const lb = linearThreads(b.layout, ctx, true);
  const copies = (l: TileLayout): number => l.replica.reduce((p, x) => p * x.extent, 1);
  const n = numel(a.shape);
  if (n * Math.max(copies(la), copies(lb)) > MAX_COPIES) return undefined;
  /** The element's copies as (threads, slot), sorted by their threads. */
  const at = (l: TileLayout, e: number): { threads: string; m: number }[] =>
    layoutCoordinates(l, e)
      .map((c) => ({
        threads: Object.entries(c)
          .filter(([k, v]) => k !== "m" && v !== 0)
          .sort(([x], [y]) => (x < y ? -1 : 1))
          .map(([k, v]) => `${k}=${v}`)
          .join(","),
        m: c.m ?? 0,
      }))
      .sort((x, y) => (x.threads < y.threads ? -1 : x.threads > y.threads ? 1 : x.m - y.m));
  let shift: number | undefined;
  for (let e = 0; e < n; e++) {
    const ca = at(la, e);
    const cb = at(lb, e);
    if (ca.length !== cb.length) return undefined;
    for (let i = 0; i < ca.length; i++) {
      if (ca[i]!.threads !== cb[i]!.threads) return undefined;
      const d = cb[i]!.m - ca[i]!.m;
      if (shift === undefined) shift = d;
      else if (d !== shift) return undefined;
    }
  }
  return shift ?? 0;
}

/**
 * Whether register tiles `a` and `b` put every logical element on the same threads at the same
 * slot, however their layouts are written ({@link elementMapShift} is 0).
 * @throws TirxError TX2022 as linearThreads.
 */
export function sameElementMap(a: RegisterTile, b: RegisterTile, ctx: TileContext): boolean {
  return elementMapShift(a, b, ctx) === 0;
}

/**
 * `t` under layout `l` when `l` is `t`'s element → (thread, slot) map written another way (up to
 * `l`'s `m` offset, which is taken from `t`): a primitive that needs its operand in one notation
 * (a reduction's dst, a broadcast input) then reads `l`'s iters (grouped by `t`'s shape when
 * they line up, else as given: `dims` undefined); undefined when the maps differ or `l` is of
 * another size (or `t` has no TileLayout). Never throws a TirxError.
 */
export function inLayout(
  t: RegisterTile,
  l: TileLayout,
  ctx: TileContext,
): RegisterTile | undefined {
  if (!t.laidOut) return undefined;
  let canon: RegisterTile;
  let shift: number | undefined;
  try {
    canon = groupedTile(t.buffer, t.shape, l, ctx.span);
    shift = elementMapShift(canon, t, ctx);
  } catch (e) {
    // A layout of another size, or digits that overlap: not the same map.
    if (e instanceof TirxError) return undefined;
    throw e;
  }
  if (shift === undefined) return undefined;
  if (shift === 0) return canon;
  const offset = { ...l.offset, m: (l.offset.m ?? 0) + shift };
  return groupedTile(t.buffer, t.shape, { ...l, offset }, ctx.span);
}
