import * as arith from "./arith.js";
import { copy } from "./copy.js";
import { copy_async } from "./copy-async.js";
import { gemm } from "./gemm.js";
import { memset } from "./memset.js";
import { gemm_async } from "./gemm-async.js";
import type { TileOperandSpec, TilePrimitive } from "./primitive.js";
import { permute_layout } from "./permute.js";
import { max, min, sum } from "./reduce.js";

/**
 * Every tile primitive by its TIRx name: the dsl builds `T.tile.<name>`, `T.tile.warp.<name>`,
 * `T.tile.wg.<name>` and `T.tile.cta.<name>` from this table (for the scopes each record
 * serves). A new primitive is its record file and one line here.
 */
export const TILE_PRIMITIVES = {
  fill: arith.fill,
  zero: arith.zero,
  cast: arith.castPrim,
  add: arith.add,
  sub: arith.sub,
  mul: arith.mul,
  fdiv: arith.fdiv,
  fma: arith.fma,
  maximum: arith.maximum,
  minimum: arith.minimum,
  exp: arith.exp,
  exp2: arith.exp2,
  log2: arith.log2,
  sqrt: arith.sqrt,
  reciprocal: arith.reciprocal,
  select: arith.select,
  silu: arith.silu,
  copy,
  copy_async,
  memset,
  gemm,
  gemm_async,
  permute_layout,
  sum,
  max,
  min,
} as const satisfies Readonly<Record<string, TilePrimitive<readonly TileOperandSpec[]>>>;

/** A tile primitive's name. */
export type TilePrimitiveName = keyof typeof TILE_PRIMITIVES;
