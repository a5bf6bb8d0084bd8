// The slot of a broadcast input of an elementwise primitive (numpy's rule at one rank): where
// each dst element's input element sits in the same thread, and the TX2022 naming the element
// and thread that break the rule where it does not.
import { binary } from "../ir/arith.js";
import { intImm, type Expr } from "../ir/expr.js";
import type { LayoutIter, TileLayout } from "../ir/tile-layout.js";
import { showTileLayout } from "../layout/tile-layout.js";
import { invariant } from "../invariant.js";
import { compactM } from "./compact-m.js";
import { layoutText } from "./layout-name.js";
import { memoryIters, tileDispatchError, type RegisterTile, type TileContext } from "./operand.js";
import { inLayout } from "./same-map.js";

const iterKey = (x: LayoutIter): string => `${x.extent}:${x.stride}@${x.axis}`;

/**
 * The slot of a broadcast input `a` (numpy's rule at one rank: each dim of `a` is dst's extent
 * or 1) as a function of dst's slot loop variables, when the broadcast is a register-only
 * operation: every dst element a thread holds has its `a` element (same indices, 0 in the
 * broadcast dims) in the same thread. That holds when `a`'s layout, grouped by its shape, is
 * dst's iters of the kept dims in order (thread iters equal; `m` iters of the same extents, any
 * strides), replicated over dst's thread iters of the broadcast dims and dst's own replicas, with
 * dst's thread offsets. `a`'s slot is then its `m` offset plus, per `m` iter, the loop variable of
 * dst's matching iter times `a`'s stride. Rank-1 `[n]` against `[n, k]` is not taken: TIRx's docs
 * state no such rule, so the ranks must match (allocate `[n, 1]`).
 * @throws TirxError TX2022 when the shapes do not broadcast (naming the rule) or the layouts do
 *   not agree: naming an element of dst and the thread (or slot digit) that holds it where `a`
 *   does not, and the layout that works (the one `T.tile.<scope>.max(a, dst, axis)` gives).
 */
export function broadcastSlot(
  dst: RegisterTile,
  a: RegisterTile,
  n: string,
  ctx: TileContext,
): (slot: Expr, vars: readonly Expr[]) => Expr {
  const aText = `${n} (${a.buffer.name} [${a.shape.join(", ")}] ${showTileLayout(a.layout)})`;
  const fits =
    a.shape.length === dst.shape.length &&
    a.shape.every((e, d) => e === dst.shape[d] || e === 1) &&
    a.shape.some((e, d) => e !== dst.shape[d]);
  if (!fits) {
    const same = a.shape.length === dst.shape.length && a.shape.every((e, d) => e === dst.shape[d]);
    throw tileDispatchError(
      ctx,
      same
        ? `${aText} must have dst's shape and layout, slot for slot`
        : `${aText} must have dst's shape [${dst.shape.join(", ")}], or broadcast to it: the same rank, each dim dst's extent or 1`,
      `${n} allocated as [${dst.shape.join(", ")}] with ${layoutText(dst.layout, dst.shape, dst.dtype)} (dst's), or T.tile.permute_layout into it${same ? "" : `; a per-row operand as [${dst.shape.map((e, d) => (d === dst.shape.length - 1 ? 1 : e)).join(", ")}]`}`,
    );
  }
  const dDims = dst.dims;
  const aDims = a.dims;
  invariant(
    dDims !== undefined && aDims !== undefined,
    "broadcastSlot: broadcastReading reads both tiles under a shape that groups",
  );
  const bcast = new Set(a.shape.flatMap((e, d) => (e === 1 && dst.shape[d]! > 1 ? [d] : [])));
  const shard = dst.layout.shard;
  const kept = shard.flatMap((x, i) => (x.extent > 1 && !bcast.has(dDims[i]!) ? [i] : []));
  const dropped = shard.filter((x, i) => x.extent > 1 && bcast.has(dDims[i]!));
  // The layout that works: dst's kept iters, its broadcast thread iters as replicas.
  const expected: TileLayout = compactM({
    kind: "TileLayout",
    shard: kept.length > 0 ? kept.map((i) => shard[i]!) : [{ extent: 1, stride: 1, axis: "m" }],
    replica: [...dst.layout.replica, ...dropped.filter((x) => x.axis !== "m")],
    offset: Object.fromEntries(Object.entries(dst.layout.offset).filter(([k]) => k !== "m")),
  });
  // The same element → (thread, slot) map written another way is that layout (its m offset
  // kept): read with the expected iters below.
  let aIterDims: readonly number[] = aDims;
  if (showTileLayout(a.layout) !== showTileLayout(expected)) {
    const canon = inLayout(a, expected, ctx);
    if (canon?.dims) {
      a = canon;
      aIterDims = canon.dims;
    }
  }
  const axis = [...bcast].join(", ");
  const nearest = `T.alloc_local([${a.shape.join(", ")}], "${a.dtype}") laid out as ${showTileLayout(expected)} (what T.tile.${ctx.scope === "thread" ? "" : `${ctx.scope}.`}max(${a.buffer.name}, ${dst.buffer.name}, ${axis}) writes)`;
  const fail = (why: string): never => {
    throw tileDispatchError(
      ctx,
      `${aText} broadcasts along dim ${axis} of dst ${dst.buffer.name} [${dst.shape.join(", ")}] ${showTileLayout(dst.layout)}, which needs each thread to hold the ${n} element of every dst element it holds (same indices, 0 in the broadcast dims): ${why}`,
      nearest,
    );
  };
  /** The element of dst whose digit on shard iter `i` is 1 (others 0), shown as indices. */
  const elementAt = (i: number): string => {
    const d = dDims[i]!;
    let inner = 1;
    for (let k = i + 1; k < shard.length && dDims[k] === d; k++) inner *= shard[k]!.extent;
    return `[${dst.shape.map((_, e) => (e === d ? inner : 0)).join(", ")}]`;
  };
  const holder = (x: LayoutIter): string =>
    x.axis === "m"
      ? `slot digit ${x.extent}:${x.stride}`
      : `the thread with ${x.axis} = ${x.stride + (dst.layout.offset[x.axis] ?? 0)}`;
  const aIters = a.layout.shard.flatMap((x, j) => (x.extent > 1 ? [{ x, d: aIterDims[j]! }] : []));
  const pairs: { dm?: number; am: LayoutIter }[] = [];
  const ms = memoryIters(dst.layout);
  kept.forEach((i, k) => {
    const x = shard[i]!;
    const y = aIters[k];
    const ok =
      y !== undefined &&
      y.d === dDims[i] &&
      (x.axis === "m" ? y.x.axis === "m" && y.x.extent === x.extent : iterKey(x) === iterKey(y.x));
    if (!ok) {
      fail(
        `dst element ${elementAt(i)} is held by ${holder(x)} (dst's iter ${iterKey(x)} of dim ${dDims[i]}), where ${n} has ${y ? `the iter ${iterKey(y.x)} of dim ${y.d}` : "no iter"}`,
      );
    }
    if (x.axis === "m") pairs.push({ dm: ms.findIndex((z) => z.index === i), am: y!.x });
  });
  if (aIters.length > kept.length) {
    const y = aIters[kept.length]!;
    fail(`${n} has the iter ${iterKey(y.x)} of dim ${y.d} beyond dst's kept iters`);
  }
  const want = expected.replica.filter((x) => x.extent > 1).map(iterKey);
  const have = a.layout.replica.filter((x) => x.extent > 1).map(iterKey);
  const missing = want.find((k) => !have.includes(k));
  if (missing) {
    const x = dropped.find((y) => iterKey(y) === missing);
    fail(
      x
        ? `dst element ${elementAt(shard.indexOf(x))} is held by ${holder(x)}, which holds no ${n} element of its row: ${n} must replicate over ${missing}`
        : `${n} must replicate over dst's replica ${missing}`,
    );
  }
  const extra = have.find((k) => !want.includes(k));
  if (extra) fail(`${n}'s replica ${extra} is not one of dst's threads of the broadcast dims`);
  for (const ax of Object.keys({ ...dst.layout.offset, ...a.layout.offset })) {
    if (ax === "m") continue;
    const k = ax as keyof TileLayout["offset"];
    if ((a.layout.offset[k] ?? 0) !== (dst.layout.offset[k] ?? 0)) {
      fail(
        `${n}'s ${ax} offset ${a.layout.offset[k] ?? 0} is not dst's ${dst.layout.offset[k] ?? 0}, so the threads differ`,
      );
    }
  }
  const base = a.layout.offset.m ?? 0;
  return (_slot, vars) => {
    let slot: Expr = intImm(base);
    for (const p of pairs) {
      const v = vars[p.dm!]!;
      const st = p.am.stride;
      if (st !== 0) slot = binary("add", slot, st === 1 ? v : binary("mul", v, intImm(st)));
    }
    return slot;
  };
}
