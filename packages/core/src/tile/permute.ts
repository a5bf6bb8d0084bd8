import { dtypeBytes } from "../dtype.js";
import { intImm, type Expr } from "../ir/expr.js";
import type { Stmt } from "../ir/stmt.js";
import { viewOf } from "../layout/view.js";
import { showTileLayout } from "../layout/tile-layout.js";
import { checkOpCall } from "../ops/check.js";
import { opOf } from "../ops/registry.js";
import { copy } from "./copy.js";
import { scratchView } from "./shared-scratch.js";
import { tileDispatchError, type RegisterTile, type TileContext } from "./operand.js";
import { loadSlot, storeSlot } from "./slot-loop.js";
import { inThreadSlots, ownedOnly } from "./threads.js";
import { ALL_SCOPES, checkScope, needRegister, type TilePrimitive } from "./primitive.js";

function barrier(ctx: TileContext): Stmt {
  const args = [intImm(0)];
  checkOpCall(opOf("bar.sync", "stmt", ctx.span), args, ctx.span);
  return { kind: "Call", op: "bar.sync", args, ...(ctx.span ? { span: ctx.span } : {}) };
}

/**
 * `T.tile.permute_layout(dst, src)` (TIRx `Tx.tile.permute_layout`): the elements of register
 * tile `src` into register tile `dst` of the same shape and dtype and another layout. Equal
 * layouts are register moves. Layouts on `m` only (each thread holds the whole tile) permute in
 * registers through a local scratch (`T.tile.permute_layout`, any scope), and so do layouts over
 * threads that keep every element on its threads (each thread holding an element in dst holds it
 * in src: the element → thread maps compared, not the notations, e.g. an mma C fragment to the A
 * fragment of the same thread mapping), at any scope: register moves when each dst slot reads one
 * src slot on every thread, else through the local scratch. Other layouts over threads go
 * through a shared scratch of the tile, row-major: each thread stores its elements of src (one
 * replica each, `T.tile.copy`'s rule), `bar.sync 0`, each loads its elements of dst:
 * `T.tile.cta.permute_layout`. The scratch is the call's part of the kernel's cta scratch
 * (`SharedScratch`: one region for every call), with a `bar.sync 0` before the stores when an
 * earlier call may still be reading those bytes (always in a loop or branch).
 * @throws TirxError TX2022 for different shapes or dtypes, or thread layouts below cta scope.
 */
export const permute_layout: TilePrimitive<
  readonly [
    { readonly name: "dst"; readonly kind: "register" },
    { readonly name: "src"; readonly kind: "register" },
  ]
> = {
  name: "permute_layout",
  doc: "dst = src with another layout (registers, or a shared scratch and a CTA barrier)",
  scopes: ALL_SCOPES,
  operands: [
    { name: "dst", kind: "register" },
    { name: "src", kind: "register" },
  ],
  lower: (args, ctx) => {
    const dst = needRegister(args[0], "dst", ctx);
    const src = needRegister(args[1], "src", ctx);
    if (dst.dtype !== src.dtype || dst.shape.join() !== src.shape.join()) {
      throw tileDispatchError(
        ctx,
        `dst ${dst.buffer.name} [${dst.shape.join(", ")}] ${dst.dtype} and src ${src.buffer.name} [${src.shape.join(", ")}] ${src.dtype} must have one shape and dtype`,
        "T.tile.cast for a dtype change",
      );
    }
    if (showTileLayout(dst.layout) === showTileLayout(src.layout)) return copy.lower(args, ctx);
    const mOnly = [dst, src].every((t) =>
      [...t.layout.shard, ...t.layout.replica].every((x) => x.axis === "m" || x.extent === 1),
    );
    if (!mOnly) {
      checkScope(dst, ctx);
      checkScope(src, ctx);
    }
    // Every element stays on its threads: each thread that holds it in dst holds it in src.
    const slots = inThreadSlots(dst, src, ctx);
    const local = mOnly || slots !== undefined;
    if (slots && slots.every((v) => v === undefined || v >= 0)) {
      // The same src slot on every thread: straight register moves. In place (dst and src in
      // one register array), every value is read into a variable before any slot is written.
      const inPlace = dst.buffer.id === src.buffer.id;
      const span = ctx.span ? { span: ctx.span } : {};
      const reads: Stmt[] = [];
      const stmts = slots.flatMap((from, to) => {
        if (from === undefined) return [];
        let v: Expr = loadSlot(src, intImm(from));
        if (inPlace) {
          const x = ctx.freshVar("mv", src.dtype);
          reads.push({ kind: "Let", var: x, value: v, ...span });
          v = x;
        }
        return [storeSlot(dst, intImm(to), v, ctx)];
      });
      const moves = stmts.length;
      stmts.unshift(...reads);
      return {
        // Threads that hold no element of dst move nothing (their src slots were never written).
        stmts: ownedOnly(dst.layout, ctx, stmts),
        explain: `in-thread register moves (${moves} slots per thread; every element stays on its threads${inPlace ? ", read before written: in place" : ""}): ${showTileLayout(src.layout)} → ${showTileLayout(dst.layout)}`,
      };
    }
    if (!local) {
      if (ctx.scope !== "cta") {
        throw tileDispatchError(
          ctx,
          `${showTileLayout(src.layout)} → ${showTileLayout(dst.layout)} moves elements between threads, which needs a shared scratch and a CTA barrier`,
          `T.tile.cta.permute_layout (or a dst layout that keeps each element on the threads of src: ${showTileLayout(src.layout)} reordered only in its m iters)`,
        );
      }
    }
    const n = dst.shape.reduce((a, b) => a * b, 1);
    if (local) {
      const scratch = ctx.fresh("permute", dst.shape, dst.dtype, "local");
      const mem = { kind: "memory" as const, view: viewOf(scratch, ctx.span) };
      const put = copy.lower([mem, src], ctx);
      const get = copy.lower([dst, mem], ctx);
      return {
        stmts: [{ kind: "Alloc", buffer: scratch }, ...put.stmts, ...get.stmts],
        explain: `in-thread permutation through a per-thread scratch of ${n} elements (the slot depends on the thread): ${showTileLayout(src.layout)} → ${showTileLayout(dst.layout)}`,
      };
    }
    // The kernel's cta scratch, shared with its other calls: the barrier comes first when an
    // earlier call may still be reading these bytes (SharedScratch).
    const claim = ctx.sharedScratch({ scope: "cta", bytes: n * dtypeBytes(dst.dtype) });
    const mem = {
      kind: "memory" as const,
      view: scratchView(claim, dst.shape, dst.dtype, ctx.span),
    };
    const put = copy.lower([mem, src], ctx);
    const get = copy.lower([dst, mem], ctx);
    const stmts: Stmt[] = [
      ...(claim.wait ? [barrier(ctx)] : []),
      ...put.stmts,
      barrier(ctx),
      ...get.stmts,
    ];
    return {
      stmts,
      explain: `shared scratch (${n * dtypeBytes(dst.dtype)} B) + bar.sync${claim.wait ? " ×2" : ""}: ${showTileLayout(src.layout)} → ${showTileLayout(dst.layout)}`,
    };
  },
};
