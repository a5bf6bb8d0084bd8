import { DTYPES, type DType } from "@tirx-ts/core";
import * as control from "./control.js";
import * as cuda from "./cuda.js";
import { freeBinary, freeCompare, if_then_else, type ExprLike, type PrimExpr } from "./expr.js";
import { alloc_local, alloc_shared, device_entry, function_ } from "./function.js";
import { ptx } from "./ptx.js";
import { dtypeFn, Scalar, Tensor, type DTypeFn } from "./types.js";

const dtypes = Object.fromEntries(DTYPES.map((d) => [d, dtypeFn(d)])) as Record<DType, DTypeFn>;

/** A static slice for `sub`: `T.slice(0, 8)` is `0:8`. */
function slice(start?: number, stop?: number, step?: number) {
  return {
    kind: "Slice" as const,
    ...(start !== undefined ? { start } : {}),
    ...(stop !== undefined ? { stop } : {}),
    ...(step !== undefined ? { step } : {}),
  };
}

/**
 * The `T` namespace: TIRx script names in TypeScript. Statements are recorded while a
 * `T.function` body runs; see the README for a complete kernel.
 */
export const T = {
  function: function_,
  Tensor,
  Scalar,
  device_entry,
  alloc_shared,
  alloc_local,
  range: control.range,
  unroll: control.unroll,
  if_: control.if_,
  while_: control.while_,
  let_: control.let_,
  if_then_else,
  slice,
  add: (a: ExprLike, b: ExprLike): PrimExpr => freeBinary("add", a, b),
  sub: (a: ExprLike, b: ExprLike): PrimExpr => freeBinary("sub", a, b),
  mul: (a: ExprLike, b: ExprLike): PrimExpr => freeBinary("mul", a, b),
  floordiv: (a: ExprLike, b: ExprLike): PrimExpr => freeBinary("floordiv", a, b),
  floormod: (a: ExprLike, b: ExprLike): PrimExpr => freeBinary("floormod", a, b),
  min: (a: ExprLike, b: ExprLike): PrimExpr => freeBinary("min", a, b),
  max: (a: ExprLike, b: ExprLike): PrimExpr => freeBinary("max", a, b),
  lt: (a: ExprLike, b: ExprLike): PrimExpr => freeCompare("lt", a, b),
  cuda: {
    LaunchConfig: cuda.LaunchConfig,
    thread_idx: cuda.thread_idx,
    block_idx: cuda.block_idx,
    block_dim: cuda.block_dim,
    grid_dim: cuda.grid_dim,
    cta_sync: cuda.cta_sync,
    tile: cuda.tile,
  },
  ptx,
  ...dtypes,
};
