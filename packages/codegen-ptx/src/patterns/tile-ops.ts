import type { TilePlan, TilePlanKind, TilePlanOf } from "@tirx-ts/core";
import type { EmitContext } from "../emit/context.js";
import type { ExprEmitter } from "../emit/expr.js";
import { emitCpAsync } from "./cp-async.js";
import { emitBulkCopy } from "./cp-async-bulk.js";
import { emitTmaCopy } from "./tma.js";

/** The PTX emitter of a verified tile plan of kind `K` (core `TilePlanOf<K>`). */
export type TileEmitter<K extends TilePlanKind> = (
  ctx: EmitContext,
  ex: ExprEmitter,
  plan: TilePlanOf<K>,
) => void;

/**
 * The emitter of each tile-plan kind (core `TILE_PLANS` lists the kinds): a kind without
 * one does not compile. Sources: PTX ISA "cp.async", "cp.async.bulk", "cp.async.bulk.tensor".
 */
export const TILE_EMITTERS = {
  "cp.async": emitCpAsync,
  "cp.async.bulk": emitBulkCopy,
  "cp.async.bulk.tensor": emitTmaCopy,
} as const satisfies { readonly [K in TilePlanKind]: TileEmitter<K> };

/** Emit one verified tile plan (a `TileOp`'s) with its kind's emitter. */
export function emitTilePlan(ctx: EmitContext, ex: ExprEmitter, plan: TilePlan): void {
  // The table pairs each kind with its emitter; TypeScript cannot follow the pairing through
  // the lookup, hence the widened signature.
  const emit = TILE_EMITTERS[plan.kind] as (c: EmitContext, e: ExprEmitter, p: TilePlan) => void;
  emit(ctx, ex, plan);
}
