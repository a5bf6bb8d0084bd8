import type { TileApply, TilePlan, TilePlanKind, TilePlanOf } from "@tirx-ts/core";
import { compileBulkCopy } from "./bulk.js";
import type { Exec } from "./compiled.js";
import { compileCpAsync } from "./cp-async.js";
import type { ExprCompiler } from "./expr.js";
import { compileTmaCopy } from "./tma.js";

/**
 * The simulator's compiler of a verified tile plan of kind `K` (core `TilePlanOf<K>`): `s` is the
 * `tile.apply` the author wrote (for reports), `plan` its verified form.
 */
export type TileCompiler<K extends TilePlanKind> = (
  ec: ExprCompiler,
  s: TileApply,
  plan: TilePlanOf<K>,
) => Exec;

/**
 * The compiler of each tile-plan kind (core `TILE_PLANS` lists the kinds): a kind without
 * one does not compile. Sources: PTX ISA "cp.async", "cp.async.bulk", "cp.async.bulk.tensor".
 */
export const TILE_COMPILERS = {
  "cp.async": compileCpAsync,
  "cp.async.bulk": compileBulkCopy,
  "cp.async.bulk.tensor": compileTmaCopy,
} as const satisfies { readonly [K in TilePlanKind]: TileCompiler<K> };

/** Compile one verified tile plan (a `TileOp`'s) with its kind's compiler. */
export function compileTilePlan(ec: ExprCompiler, s: TileApply, plan: TilePlan): Exec {
  // The table pairs each kind with its compiler; TypeScript cannot follow the pairing through
  // the lookup, hence the widened signature.
  const compile = TILE_COMPILERS[plan.kind] as (e: ExprCompiler, a: TileApply, p: TilePlan) => Exec;
  return compile(ec, s, plan);
}
