// The slot loop of a register tile and its slot loads and stores: how every register primitive
// walks the thread's own elements (its layout's `m` iters) and reads and writes them.
import { binary } from "../ir/arith.js";
import { intImm, type Expr } from "../ir/expr.js";
import type { Stmt } from "../ir/stmt.js";
import { memoryIters, type RegisterTile, type TileContext } from "./operand.js";
import { asDType } from "./primitive.js";
import { loopNest } from "./threads.js";

/**
 * The slot loop of a register tile: nested unrolled loops over its `m` iters (its layout's
 * span on `m` is the thread's array), `body` getting the slot expression. Thread iters do not
 * appear: every thread runs the same loop over its own slots.
 */
export function slotLoop(
  t: RegisterTile,
  ctx: TileContext,
  body: (slot: Expr, vars: readonly Expr[]) => Stmt[],
): Stmt[] {
  const ms = memoryIters(t.layout);
  const base = t.layout.offset.m ?? 0;
  return loopNest(
    ctx,
    ms.map((x) => x.iter.extent),
    (vars) => {
      let slot: Expr = intImm(base);
      vars.forEach((v, i) => {
        const s = ms[i]!.iter.stride;
        if (s !== 0) slot = binary("add", slot, s === 1 ? v : binary("mul", v, intImm(s)));
      });
      return body(slot, vars);
    },
  );
}

/** Load slot `slot` of a register tile. */
export function loadSlot(t: RegisterTile, slot: Expr): Expr {
  return { kind: "BufferLoad", buffer: t.buffer, offset: slot, dtype: t.dtype };
}

/** Store `value` (converted to the tile's dtype) at slot `slot`. */
export function storeSlot(t: RegisterTile, slot: Expr, value: Expr, ctx: TileContext): Stmt {
  return {
    kind: "Store",
    buffer: t.buffer,
    dtype: t.dtype,
    offset: slot,
    value: asDType(value, t.dtype),
    ...(ctx.span ? { span: ctx.span } : {}),
  };
}
