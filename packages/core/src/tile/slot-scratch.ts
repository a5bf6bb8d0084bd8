import type { Buffer } from "../ir/expr.js";
import type { Stmt } from "../ir/stmt.js";
import { defaultLayout, layoutAxisRange } from "../layout/tile-layout.js";
import type { RegisterTile, TileContext } from "./operand.js";

/**
 * A register primitive whose dst shares registers with an input at other slots (two parts of
 * one tile, `T.tile.sub(f, f, f.sub(":", "0:1"))`, a register copy between overlapping parts)
 * would overwrite input slots before it reads them, since it writes slot by slot. It computes
 * into this instead: a fresh local array with the slot space of `t`'s buffer (slots 0 … the
 * greatest `m` coordinate of the buffer's layout), then copies the results into `t`. Returns
 * the scratch as a tile of `t`'s shape and layout, and its Alloc.
 */
export function slotScratch(
  t: RegisterTile,
  ctx: TileContext,
): { tile: RegisterTile; alloc: Stmt } {
  const shape = t.buffer.shape as readonly number[];
  const l = t.buffer.tileLayout ?? defaultLayout(shape.length > 0 ? shape : [1]);
  const slots = layoutAxisRange(l, "m").max + 1;
  const buffer: Buffer = ctx.fresh(`${t.buffer.name}_alias`, [slots], t.dtype, "local");
  return {
    tile: { ...t, buffer },
    alloc: { kind: "Alloc", buffer, ...(ctx.span ? { span: ctx.span } : {}) },
  };
}
