// The warp stage of a tile reduction (reduce.ts): each warp's partials through the call's shared
// scratch, the barrier of the warps combined (`bar.sync 0`, or each warpgroup's named barrier),
// and every owner combining its group's partials in warp order.
import { binary, compare } from "../ir/arith.js";
import { constInt, intImm, type Expr } from "../ir/expr.js";
import type { Stmt } from "../ir/stmt.js";
import { showTileLayout } from "../layout/tile-layout.js";
import { checkOpCall } from "../ops/check.js";
import { opOf } from "../ops/registry.js";
import { decode, forRange } from "./for-range.js";
import { tileDispatchError, type RegisterTile, type TileContext } from "./operand.js";
import { scratchIndex, type ScratchClaim } from "./shared-scratch.js";
import { loadSlot, storeSlot } from "./slot-loop.js";
import { digitRead } from "./thread-digits.js";
import { axisCoord, laneWarpParts, underGuard } from "./threads.js";

/** What the warp stage reads of its reduction's plan (reduce.ts). */
export interface WarpStage {
  /** The axis's warp iters as warps (`laneWarpParts`): extent, and stride in warps. */
  readonly warps: readonly { extent: number; stride: number }[];
  /** The call's part of the kernel's shared scratch of its scope (a slice per warpgroup at wg). */
  readonly scratch: ScratchClaim;
  /** The layout's thread offset in warps of the scope. */
  readonly warpOff: number;
  /** The warps combined: the warpgroup's (up to 4) at wg scope, the CTA's at cta scope. */
  readonly warpCount: number;
  /** The warpgroups, each with its own scratch slice and named barrier (1 at cta scope). */
  readonly groups: number;
  /** Partials per warp: 32 (one per lane) when kept elements stay on lanes, else 1. */
  readonly laneSlots: number;
  /** The owners of src's elements (`ownsGuard`), undefined when every thread is one. */
  readonly owns: Expr | undefined;
  /** The loop over the kept slots: (src base slot, dst slot, kept linear index). */
  readonly perKept: (body: (srcBase: Expr, dSlot: Expr, k: Expr) => Stmt[]) => Stmt[];
  /** The reduction's operator. */
  readonly combine: (a: Expr, b: Expr) => Expr;
}

/**
 * Step 3 of a reduction, across the warps of the axis: lane 0 of each warp (every lane when
 * `laneSlots` is 32) stores dst's partials into the scratch, the warps meet at their barrier
 * (also before the stores when an earlier call may still read those bytes, `scratch.wait`), and
 * every owner combines its group's partials in warp order into dst. The partials' warp index
 * is read past the layout's warp offset, each reduced digit by its place among every warp iter of
 * src's layout (`digitRead`).
 * @throws TirxError TX2022 for a warp iter that is no digit of the warp index a division and a
 *   modulo read.
 */
export function reduceWarps(
  src: RegisterTile,
  dst: RegisterTile,
  stage: WarpStage,
  ctx: TileContext,
): Stmt[] {
  const { warps, scratch, warpOff, warpCount, groups, laneSlots, owns, perKept, combine } = stage;
  const wgScope = ctx.scope === "wg";
  const stmts: Stmt[] = [];
  // The warp's index among the warps combined, and its group's first scratch element.
  const warpid = wgScope
    ? binary("floordiv", axisCoord("tid_in_wg", ctx), intImm(32))
    : axisCoord("warpid", ctx);
  // Its index past the layout's warp offset (the reduced digits are digits of this one);
  // partials are read back at the offset plus the digits.
  const vwarp = warpOff === 0 ? warpid : binary("sub", warpid, intImm(warpOff));
  const groupBase = scratchIndex(
    scratch,
    dst.dtype,
    groups > 1 ? axisCoord("wgid", ctx) : undefined,
  );
  const lane0 = compare("eq", axisCoord("laneid", ctx), intImm(0));
  const at = (k: Expr, w: Expr): Expr => {
    const kl =
      laneSlots > 1
        ? binary("add", binary("mul", k, intImm(laneSlots)), axisCoord("laneid", ctx))
        : k;
    const e = binary("add", binary("mul", kl, intImm(warpCount)), w);
    return constInt(groupBase) === 0 ? e : binary("add", groupBase, e);
  };
  const write = perKept((_sb, ds, k) => [
    {
      kind: "Store",
      buffer: scratch.buffer,
      dtype: dst.dtype,
      offset: at(k, warpid),
      value: loadSlot(dst, ds),
    },
  ]);
  const written = write.length === 1 ? write[0]! : { kind: "Seq" as const, stmts: write };
  // An earlier call may still be reading these bytes: its readers pass this barrier first.
  if (scratch.wait) stmts.push(...barrier(ctx, groups));
  // One writer per warp, or every lane when lanes keep their own partials.
  stmts.push(laneSlots > 1 ? written : { kind: "If", cond: lane0, then: written });
  stmts.push(...barrier(ctx, groups));
  // The first warp of this thread's reduced group: 0 when the axis spans every warp.
  const sorted = [...warps].sort((a, b) => a.stride - b.stride);
  let reach = 1;
  for (const w of sorted) reach = w.stride === reach ? reach * w.extent : -1;
  let wbase: Expr = reach === warpCount ? intImm(0) : vwarp;
  // Each reduced digit's modulus among every warp iter of the layout: its extent, or its
  // radix up to the next warp iter when warps between them hold nothing (digitRead).
  const allWarps: { extent: number; stride: number }[] = [];
  for (const x of [...src.layout.shard, ...src.layout.replica]) {
    const w = x.axis === "m" ? undefined : laneWarpParts(x, ctx).warp;
    if (w) allWarps.push(w);
  }
  allWarps.sort((a, b) => a.stride - b.stride);
  const modulus = (w: { extent: number; stride: number }): number => {
    const i = allWarps.findIndex((y) => y.stride === w.stride && y.extent === w.extent);
    const read = digitRead(allWarps, i, "warpid");
    if (read === undefined || read.field !== undefined || read.modulus === undefined) {
      throw tileDispatchError(
        ctx,
        `the warp iter ${w.extent}:${w.stride}@warpid of ${src.buffer.name} ${showTileLayout(src.layout)} is no digit of the warp index that a division and a modulo read, so its warps' partials cannot be found`,
        "warp iters whose strides are multiples of the one below",
      );
    }
    return read.modulus;
  };
  // The warp index with the reduced digits cleared, as a sum of the digits between them
  // (each term ≥ 0, so the scratch index provably stays in range) when they nest.
  let pos = 1;
  const pieces: { lo: number; hi?: number }[] = [];
  const nests = sorted.every((w) => {
    if (w.stride % pos !== 0) return false;
    if (w.stride > pos) pieces.push({ lo: pos, hi: w.stride });
    pos = w.stride * modulus(w);
    return true;
  });
  if (reach !== warpCount && nests) {
    // Warps past the layout's top warp iter hold nothing (their reads are guarded off): a
    // piece there would be 0 on every owner and only widen the index's range.
    if (pos < warpCount && allWarps.some((w) => w.stride >= pos)) pieces.push({ lo: pos });
    wbase = intImm(0);
    for (const p of pieces) {
      let d: Expr = p.lo === 1 ? vwarp : binary("floordiv", vwarp, intImm(p.lo));
      if (p.hi !== undefined) d = binary("floormod", d, intImm(p.hi / p.lo));
      wbase = binary("add", wbase, p.lo === 1 ? d : binary("mul", d, intImm(p.lo)));
    }
  } else if (reach !== warpCount)
    for (const w of warps) {
      const digit = binary(
        "floormod",
        w.stride === 1 ? vwarp : binary("floordiv", vwarp, intImm(w.stride)),
        intImm(modulus(w)),
      );
      wbase = binary("sub", wbase, w.stride === 1 ? digit : binary("mul", digit, intImm(w.stride)));
    }
  const nw = warps.reduce((p, w) => p * w.extent, 1);
  const part = (k: Expr, r: Expr): Expr => ({
    kind: "BufferLoad",
    buffer: scratch.buffer,
    dtype: dst.dtype,
    offset: at(
      k,
      binary(
        "add",
        warpOff === 0 ? wbase : binary("add", intImm(warpOff), wbase),
        decode(r, warps),
      ),
    ),
  });
  // Threads that hold no element of src combine nothing (past a warp offset their
  // partials' index would leave the scratch).
  stmts.push(
    ...underGuard(
      owns,
      perKept((_sb, ds, k) => [
        storeSlot(dst, ds, part(k, intImm(0)), ctx),
        ...forRange(ctx, 1, nw - 1, (r) => [
          storeSlot(dst, ds, combine(loadSlot(dst, ds), part(k, r)), ctx),
        ]),
      ]),
      ctx,
    ),
  );
  return stmts;
}

/**
 * The barrier of the threads that combine partials: at cta scope `bar.sync 0` (the CTA barrier);
 * at wg scope the warpgroup's named barrier `bar.sync 1 + wgid, 128` (PTX ISA, bar/barrier: ids
 * 1..15 are free for such groups; id 0 is the CTA's), so warpgroups reduce independently. The id
 * is an immediate of the op record, so for several warpgroups it is picked by a warp-uniform
 * branch on wgid.
 */
function barrier(ctx: TileContext, groups: number): Stmt[] {
  const at = ctx.span ? { span: ctx.span } : {};
  if (ctx.scope !== "wg") {
    const args = [intImm(0)];
    checkOpCall(opOf("bar.sync", "stmt", ctx.span), args, ctx.span);
    return [{ kind: "Call", op: "bar.sync", args, ...at }];
  }
  const threads = ctx.launch.block.reduce((a, b) => a * b, 1);
  const named = (g: number): Stmt => {
    const args = [intImm(1 + g), intImm(Math.min(128, threads))];
    checkOpCall(opOf("bar.sync.named", "stmt", ctx.span), args, ctx.span);
    return { kind: "Call", op: "bar.sync.named", args, ...at };
  };
  if (groups === 1) return [named(0)];
  const wgid = axisCoord("wgid", ctx);
  let chain: Stmt = named(groups - 1);
  for (let g = groups - 2; g >= 0; g--) {
    chain = {
      kind: "If",
      cond: compare("eq", wgid, intImm(g)),
      then: named(g),
      else: chain,
      ...at,
    };
  }
  return [chain];
}
