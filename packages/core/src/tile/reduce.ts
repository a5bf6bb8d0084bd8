import { binary, ifThenElse } from "../ir/arith.js";
import { dtypeBytes } from "../dtype.js";
import { intImm, type Expr } from "../ir/expr.js";
import type { Stmt } from "../ir/stmt.js";
import { showTileLayout } from "../layout/tile-layout.js";
import { constant } from "./elementwise.js";
import { tileDispatchError, type RegisterTile } from "./operand.js";
import {
  checkLaidOut,
  checkSameDType,
  layoutForScope,
  needRegister,
  type TilePrimitive,
} from "./primitive.js";
import { layoutText } from "./layout-name.js";
import { butterflyStmts, laneButterfly, type LanePart } from "./reduce-lanes.js";
import { decode, forRange } from "./for-range.js";
import { reduceDst } from "./reduce-dst.js";
import { reduceViaRun } from "./reduce-via-run.js";
import { reduceWarps } from "./reduce-warps.js";
import { loadSlot, storeSlot } from "./slot-loop.js";
import { laneWarpParts, linearOffset, linearThreads, loopNest, ownsGuard } from "./threads.js";

/** The reduction operators (TIRx `Tx.tile.sum` / `max` / `min`). */
export type TileReduceOp = "sum" | "max" | "min";

const COMBINE = { sum: "add", max: "max", min: "min" } as const;

function combine(op: TileReduceOp, a: Expr, b: Expr): Expr {
  return binary(COMBINE[op], a, b);
}

/** The operands of a reduction: dst and src register tiles, and the logical axis. */
export type ReduceOperands = readonly [
  { readonly name: "dst"; readonly kind: "register" },
  { readonly name: "src"; readonly kind: "register" },
  { readonly name: "axis"; readonly kind: "axis" },
];

/**
 * A reduction along logical axis `axis` of a register tile (TIRx `Tx.tile.sum` / `max` /
 * `min`), following the source layout:
 * 1. within each thread over the `m` iters of the axis (a sum alternates two accumulators, each
 *    starting at 0, for instruction-level parallelism; max/min run in slot order);
 * 2. across the lanes of the axis with `shfl.sync.bfly` butterflies, one per lane bit, highest
 *    first (PTX ISA, shfl.sync; the order of `T.cuda.warp_sum`); after a lane offset that is not
 *    a multiple of the butterfly's span (`O[8@laneid]` over 16 lanes), `shfl.sync.idx` from lane
 *    off + ((lane − off) XOR mask), the same butterfly on the layout's digits;
 * 3. across the warps of the axis through a shared scratch of one partial per warp: lane 0
 *    writes (every lane, a partial per lane and warp, when other elements stay on lanes, e.g.
 *    a column sum of a tile whose rows lie on warps and columns on lanes), one barrier, and
 *    every thread combines the partials in warp order. At cta scope the barrier is
 *    `bar.sync 0`; at wg scope (warps of one warpgroup, a layout over tid_in_wg) each
 *    warpgroup has its own slice of scratch and its named barrier `bar.sync 1 + wgid, 128`
 *    (PTX ISA, bar/barrier), so warpgroups reduce independently. The scratch is the call's
 *    part of the kernel's scratch of its scope (`SharedScratch`: one region for every call),
 *    and the barrier also comes before the writes when an earlier call may still be reading
 *    those bytes (always in a loop or branch).
 * `axis` may be negative: -1 is the last dim (Python's and TIRx's indexing).
 * Lanes that do not fill a power of two (24 lanes beside warp iters) pad the butterfly to one;
 * the lanes past the extent hold nothing and never enter a result (reduce-lanes.ts). A tile
 * whose shape's dims do not line up with its layout's iters is reduced as [outer, axis, inner]
 * when that lines up (`reduceViaRun`).
 * `dst` has `src`'s shape with the axis dropped or 1, and the layout that replicates over the
 * reduced thread axes: src's thread iters of the axis become replicas `R[...]`; its `m` iters of
 * the axis drop; src's thread offset stays (the threads that held the elements hold the results;
 * partials of a warp offset are read back past it).
 * `dst` and `src` must have one dtype (partials accumulate in it).
 * @throws TirxError TX2022 for dst and src of different dtypes (suggesting `T.tile.cast`), a bool
 *   src; a
 *   tile without a TileLayout at warp/wg/cta scope; an axis out of range; a `dst` of another
 *   shape, or whose layout does not replicate over the reduced axes or lacks src's thread offset
 *   (naming the dst allocation, shape and layout, that works); lanes that an offset pushes past
 *   lane 31; a reduction
 *   wider than the scope (lanes need warp, warps need wg or cta; at wg scope an axis over wgid or
 *   warpid, naming the layouts over tid_in_wg that name the same threads, or a CTA that is not
 *   whole warpgroups); thread axes whose digits overlap (see `linearThreads`); a lane iter
 *   whose stride is no power of two, or whose padding to one would reach the next lane iter;
 *   an axis whose elements are no run of the layout's iters.
 */
function reduction(op: TileReduceOp): TilePrimitive<ReduceOperands> {
  const prim: TilePrimitive<ReduceOperands> = {
    name: op,
    doc: `dst = the ${op} of src along one axis (within threads, lane butterflies, warps through shared memory)`,
    scopes: ["thread", "warp", "wg", "cta"],
    operands: [
      { name: "dst", kind: "register" },
      { name: "src", kind: "register" },
      { name: "axis", kind: "axis" },
    ] as const,
    lower: (args, ctx) => {
      let dst = needRegister(args[0], "dst", ctx);
      const src = needRegister(args[1], "src", ctx);
      checkLaidOut(src, ctx);
      checkSameDType(
        [
          { role: "dst", tile: dst },
          { role: "src", tile: src },
        ],
        ctx,
      );
      if (src.dtype === "bool") {
        throw tileDispatchError(
          ctx,
          `${op} of bool tile ${src.buffer.name}: partials accumulate in the tile's dtype, and bool has no ${op === "sum" ? "add" : op}`,
          `T.tile.cast into an int32 tile first (a count of true elements is its sum; any / all its max / min)`,
        );
      }
      const given = typeof args[2] === "number" ? args[2] : -1;
      // A negative axis counts from the last dim (-1 = last), as Python and TIRx index.
      const axis = given < 0 ? given + src.shape.length : given;
      if (!Number.isInteger(axis) || axis < 0 || axis >= src.shape.length) {
        throw tileDispatchError(
          ctx,
          `axis ${given} is not a dim of src [${src.shape.join(", ")}]`,
          `an axis in 0..${src.shape.length - 1}, or -${src.shape.length}..-1 counted from the last`,
        );
      }
      if (src.dims === undefined || dst.dims === undefined) {
        return reduceViaRun(dst, src, axis, ctx, (d3, s3) => prim.lower([d3, s3, 1], ctx));
      }
      const srcDims = src.dims;
      // Validates a mix of thread axes as digits of the thread index (TX2022 on overlaps).
      linearThreads(src.layout, ctx);
      const shard = src.layout.shard;
      const red = shard.filter((x, i) => srcDims[i] === axis && x.extent > 1);
      const kept = shard.filter((x, i) => srcDims[i] !== axis && x.extent > 1);
      const redM = red.filter((x) => x.axis === "m");
      const keptM = kept.filter((x) => x.axis === "m");
      const lanes: { extent: number; stride: number }[] = [];
      const warps: { extent: number; stride: number }[] = [];
      for (const x of red.filter((y) => y.axis !== "m")) {
        const p = laneWarpParts(x, ctx);
        if (p.lane) lanes.push(p.lane);
        if (p.warp) warps.push(p.warp);
      }
      // dst read in the layout the reduction writes: kept iters, reduced thread iters as replicas.
      dst = reduceDst(dst, src, axis, red, kept, ctx);
      checkLaidOut(dst, ctx);
      const threads = ctx.launch.block.reduce((a, b) => a * b, 1);
      if (warps.length > 0 && ctx.scope !== "cta" && ctx.scope !== "wg") {
        throw tileDispatchError(
          ctx,
          `axis ${axis} of ${src.buffer.name} ${showTileLayout(src.layout)} spreads over warps, so the reduction needs shared scratch and a barrier of the warps`,
          `T.tile.wg.${op} for warps of one warpgroup, T.tile.cta.${op} across the CTA`,
        );
      }
      const wgSpread = src.layout.shard.find(
        (x, i) => srcDims[i] === axis && x.extent > 1 && (x.axis === "wgid" || x.axis === "warpid"),
      );
      if (warps.length > 0 && ctx.scope === "wg" && wgSpread) {
        // The same threads inside each warpgroup, over tid_in_wg (warpid < 4, no wgid).
        const sMoved = layoutForScope(src.layout, "wg");
        const dMoved = layoutForScope(dst.layout, "wg");
        throw tileDispatchError(
          ctx,
          `axis ${axis} of ${src.buffer.name} ${showTileLayout(src.layout)} spreads over ${wgSpread.axis} (the iter ${wgSpread.extent} : ${wgSpread.stride}@${wgSpread.axis}); a wg reduction combines the warps of each warpgroup (its named barrier), so its layouts bind only laneid and tid_in_wg (inside a warpgroup k@warpid is 32·k@tid_in_wg)`,
          sMoved && dMoved
            ? `src ${layoutText(sMoved, src.shape, src.dtype)} and dst ${layoutText(dMoved, dst.shape, dst.dtype)} (the same threads in each warpgroup) with T.tile.wg.${op}, or these layouts with T.tile.cta.${op}`
            : `T.tile.cta.${op} (the layout reaches past the 4 warps of one warpgroup)`,
        );
      }
      if (warps.length > 0 && ctx.scope === "wg" && threads > 128 && threads % 128 !== 0) {
        throw tileDispatchError(
          ctx,
          `a wg reduction across warps meets at a named barrier of 128 threads per warpgroup, but the CTA's ${threads} threads are not whole warpgroups`,
          `a block of a multiple of 128 threads, or T.tile.cta.${op}`,
        );
      }
      if (lanes.length > 0 && ctx.scope === "thread") {
        throw tileDispatchError(
          ctx,
          `axis ${axis} of ${src.buffer.name} ${showTileLayout(src.layout)} spreads over lanes, so the reduction shuffles across a warp`,
          `T.tile.warp.${op}`,
        );
      }
      // The layout's thread offset in lanes and warps of the scope (a wg reduction's warps are
      // those of each warpgroup). The owners' lanes must stay in their warp.
      const scopeOff =
        ctx.scope === "wg" ? linearOffset(src.layout) % 128 : linearOffset(src.layout);
      const laneOff = scopeOff % 32;
      const warpOff = Math.floor(scopeOff / 32);
      const allLanes: LanePart[] = [];
      for (const x of [...src.layout.shard, ...src.layout.replica]) {
        const l = x.axis === "m" ? undefined : laneWarpParts(x, ctx).lane;
        if (l) allLanes.push(l);
      }
      const butterfly = laneButterfly(lanes, allLanes, laneOff, ctx);
      let laneReach = laneOff + butterfly.extraReach;
      for (const l of allLanes) laneReach += (l.extent - 1) * l.stride;
      if (laneReach >= 32) {
        throw tileDispatchError(
          ctx,
          `${src.buffer.name} ${showTileLayout(src.layout)} puts elements on lanes ${laneOff}..${laneReach} after its offset${butterfly.extraReach > 0 ? ` (its reduced lanes padded to a power of two)` : ""}, past the 32 lanes of a warp, so no shuffle pattern reduces them`,
          "an offset that keeps each warp's lanes in 0..31 (a multiple of 32 moves whole warps)",
        );
      }
      // Kept elements on lanes (e.g. a column sum across warps): each lane keeps its own
      // partials in the scratch, one per lane and warp.
      const keptLanes = kept.some((x) => x.axis !== "m" && laneWarpParts(x, ctx).lane);
      const laneSlots = warps.length > 0 && keptLanes ? 32 : 1;
      const stmts: Stmt[] = [];
      const n = redM.reduce((p, x) => p * x.extent, 1);
      const pairs = op === "sum" && n >= 2 && n % 2 === 0;
      const acc = pairs ? ctx.fresh(`${op}_acc`, [2], src.dtype, "local") : undefined;
      if (acc) stmts.push({ kind: "Alloc", buffer: acc });
      const accT: RegisterTile | undefined = acc && { ...src, buffer: acc };
      // At wg scope the warps combined are the warpgroup's (up to 4), each warpgroup with its
      // own scratch and named barrier; at cta scope the CTA's.
      const wgScope = ctx.scope === "wg";
      const ctaWarps = Math.ceil(threads / 32);
      const warpCount = wgScope ? Math.min(4, ctaWarps) : ctaWarps;
      const groups = wgScope ? Math.ceil(ctaWarps / 4) : 1;
      const nKept = keptM.reduce((p, x) => p * x.extent, 1);
      // The call's part of the kernel's scratch of its scope (SharedScratch), a slice per
      // warpgroup at wg scope.
      const scratch =
        warps.length > 0
          ? ctx.sharedScratch({
              scope: wgScope ? "wg" : "cta",
              bytes: nKept * laneSlots * warpCount * dtypeBytes(dst.dtype),
              ...(wgScope ? { groups } : {}),
            })
          : undefined;
      const dM = dst.layout.shard.filter((x) => x.axis === "m" && x.extent > 1);
      // For each kept slot: (src base slot, dst slot, kept linear index).
      const perKept = (body: (srcBase: Expr, dSlot: Expr, k: Expr) => Stmt[]): Stmt[] =>
        loopNest(
          ctx,
          keptM.map((x) => x.extent),
          (vars) => {
            let sb: Expr = intImm(src.layout.offset.m ?? 0);
            let ds: Expr = intImm(dst.layout.offset.m ?? 0);
            let k: Expr = intImm(0);
            vars.forEach((v, i) => {
              sb = binary("add", sb, binary("mul", v, intImm(keptM[i]!.stride)));
              ds = binary("add", ds, binary("mul", v, intImm(dM[i]!.stride)));
              k = binary("add", binary("mul", k, intImm(keptM[i]!.extent)), v);
            });
            return body(sb, ds, k);
          },
        );
      const redIters = redM.map((x) => ({ extent: x.extent, stride: x.stride }));
      // Threads that hold no element of src (a layout with gaps or an offset) read none of its
      // slots (they were never written: a GPU register's value is undefined, the simulator's
      // TX6028): their partials start from 0 (a selp). Only such threads combine with each other
      // (the reduced iters' digits keep a thread's ownership), and their results are not stored.
      const owns = ownsGuard(src.layout, ctx);
      const srcAt = (base: Expr, r: Expr): Expr => {
        const v = loadSlot(src, binary("add", base, decode(r, redIters)));
        return owns ? ifThenElse(owns, v, constant(0, src.dtype)) : v;
      };
      // 1. Within the thread.
      stmts.push(
        ...perKept((sb, ds) => {
          if (accT) {
            const two = (v: Expr): Expr => binary("floormod", v, intImm(2));
            return [
              storeSlot(accT, intImm(0), constant(0, src.dtype), ctx),
              storeSlot(accT, intImm(1), constant(0, src.dtype), ctx),
              ...forRange(ctx, 0, n, (r) => [
                storeSlot(accT, two(r), combine(op, loadSlot(accT, two(r)), srcAt(sb, r)), ctx),
              ]),
              storeSlot(
                dst,
                ds,
                combine(op, loadSlot(accT, intImm(0)), loadSlot(accT, intImm(1))),
                ctx,
              ),
            ];
          }
          return [
            storeSlot(dst, ds, srcAt(sb, intImm(0)), ctx),
            ...forRange(ctx, 1, n - 1, (r) => [
              storeSlot(dst, ds, combine(op, loadSlot(dst, ds), srcAt(sb, r)), ctx),
            ]),
          ];
        }),
      );
      // 2. Across lanes: one butterfly per lane bit of the axis, highest first (reduce-lanes.ts).
      if (butterfly.steps.length > 0) {
        stmts.push(
          ...perKept((_sb, ds) =>
            butterflyStmts(butterfly, dst, ds, laneOff, (a, b) => combine(op, a, b), ctx),
          ),
        );
      }
      // 3. Across warps, through shared scratch (reduce-warps.ts).
      if (scratch) {
        stmts.push(
          ...reduceWarps(
            src,
            dst,
            {
              warps,
              scratch,
              warpOff,
              warpCount,
              groups,
              laneSlots,
              owns,
              perKept,
              combine: (a, b) => combine(op, a, b),
            },
            ctx,
          ),
        );
      }
      const steps: string[] = [];
      if (n > 1) steps.push(`${n} slots in-thread${pairs ? " (2 accumulators)" : ""}`);
      if (butterfly.steps.length > 0) {
        const masks = butterfly.steps;
        const pads = masks.flatMap((m) => (m.pad ? [`${m.pad.extent} of ${m.pad.size}`] : []));
        steps.push(
          (butterfly.byIdx
            ? `warp shfl.sync.idx ×${masks.length} (a butterfly on the digits past lane offset ${laneOff})`
            : `warp shfl.sync.bfly ×${masks.length}`) +
            (pads.length > 0
              ? ` (padded to a power of two: ${pads.join(", ")} lanes hold elements; the lanes past them take their partner's partial)`
              : ""),
        );
      }
      if (scratch && wgScope)
        steps.push(
          `shared scratch (${nw(warps)} warps per warpgroup${laneSlots > 1 ? ", a partial per lane" : ""}) + named bar.sync (1 + wgid, ${Math.min(128, threads)})${scratch.wait ? " ×2" : ""}`,
        );
      else if (scratch)
        steps.push(
          `shared scratch (${nw(warps)} warps${laneSlots > 1 ? ", a partial per lane" : ""}) + bar.sync${scratch.wait ? " ×2" : ""}`,
        );
      return {
        stmts,
        explain: `${steps.join(" + ") || "copy (nothing to reduce)"}: reduces axis ${axis} of ${showTileLayout(src.layout)}`,
      };
    },
  };
  return prim;
}

function nw(warps: readonly { extent: number }[]): number {
  return warps.reduce((p, w) => p * w.extent, 1);
}

/** `T.tile.sum(dst, src, axis)`. */
export const sum = reduction("sum");
/** `T.tile.max(dst, src, axis)`. */
export const max = reduction("max");
/** `T.tile.min(dst, src, axis)`. */
export const min = reduction("min");
