import { DTYPES, logical, not, type DType, type Slice } from "@tirx-ts/core";
import * as control from "./control.js";
import * as cuda from "./cuda.js";
import * as warp from "./warp.js";
import * as memoryOrder from "./memory-order.js";
import {
  ceildiv,
  freeBinary,
  freeCompare,
  if_then_else,
  PrimExpr,
  toExpr,
  type ExprLike,
} from "./expr.js";
import { alloc_local, alloc_shared, device_entry, function_ } from "./function.js";
import { ptx } from "./ptx.js";
import { math } from "./math.js";
import { local_scalar } from "./local-scalar.js";
import { call_op, call_value, raw } from "./raw.js";
import { dtypeFn, Scalar, Tensor, type DTypeFn } from "./types.js";
import { callerSpan } from "./span.js";
import { checkSlice } from "./view.js";
import { tensormap_encode_tiled } from "./tma.js";
import * as clusterOps from "./cluster.js";
import { SwizzleLayout, SwizzleMode, swizzle_mode } from "./swizzle.js";
import { ComposeLayout, layout, O, R, S, TileLayout } from "./layout.js";
import { tile } from "./tile.js";
import { nvshmem } from "./nvshmem.js";
import { registerT } from "./unknown-member.js";

const dtypes = Object.fromEntries(DTYPES.map((d) => [d, dtypeFn(d)])) as Record<DType, DTypeFn>;

/**
 * A static slice for `sub`: `T.slice(0, 8)` is `0:8`, `T.slice(0, 8, 2)` is `0:8:2`.
 * @throws TirxError TX1013 for a bound that is not an integer or a step that is not positive.
 */
function slice(start?: number, stop?: number, step?: number): Slice {
  return checkSlice({ start, stop, step }, callerSpan());
}

function freeLogical(op: "and" | "or", a: ExprLike, b: ExprLike): PrimExpr {
  const span = callerSpan();
  return new PrimExpr(logical(op, toExpr(a, "bool", span), toExpr(b, "bool", span), span));
}

/**
 * The builder's `T`: every name of the `T` namespace but `prim_func`. Statements are recorded
 * while a `T.function` body runs. Script-mode lowering (`script/`) resolves `T` in a kernel body
 * to this object; `T.ts` adds `prim_func`, which sits above script lowering.
 */
export const builderT = {
  function: function_,
  Tensor,
  Scalar,
  device_entry,
  alloc_shared,
  alloc_local,
  SwizzleLayout,
  SwizzleMode,
  swizzle_mode,
  TileLayout,
  ComposeLayout,
  S,
  R,
  O,
  layout,
  tile,
  local_scalar,
  range: control.range,
  serial: control.serial,
  grid: control.grid,
  unroll: control.unroll,
  vectorized: control.vectorized,
  if_: control.if_,
  while_: control.while_,
  let_: control.let_,
  if_then_else,
  ceildiv,
  slice,
  add: (a: ExprLike, b: ExprLike): PrimExpr => freeBinary("add", a, b),
  sub: (a: ExprLike, b: ExprLike): PrimExpr => freeBinary("sub", a, b),
  mul: (a: ExprLike, b: ExprLike): PrimExpr => freeBinary("mul", a, b),
  floordiv: (a: ExprLike, b: ExprLike): PrimExpr => freeBinary("floordiv", a, b),
  floormod: (a: ExprLike, b: ExprLike): PrimExpr => freeBinary("floormod", a, b),
  min: (a: ExprLike, b: ExprLike): PrimExpr => freeBinary("min", a, b),
  max: (a: ExprLike, b: ExprLike): PrimExpr => freeBinary("max", a, b),
  /** C division `a / b`: truncates toward zero for integers. */
  div: (a: ExprLike, b: ExprLike): PrimExpr => freeBinary("div", a, b),
  /** C remainder `a % b`: takes the sign of the dividend. */
  mod: (a: ExprLike, b: ExprLike): PrimExpr => freeBinary("mod", a, b),
  /** `a < b` (bool). */
  lt: (a: ExprLike, b: ExprLike): PrimExpr => freeCompare("lt", a, b),
  /** `a <= b` (bool). */
  le: (a: ExprLike, b: ExprLike): PrimExpr => freeCompare("le", a, b),
  /** `a > b` (bool). */
  gt: (a: ExprLike, b: ExprLike): PrimExpr => freeCompare("gt", a, b),
  /** `a >= b` (bool). */
  ge: (a: ExprLike, b: ExprLike): PrimExpr => freeCompare("ge", a, b),
  /** `a == b` (bool). */
  eq: (a: ExprLike, b: ExprLike): PrimExpr => freeCompare("eq", a, b),
  /** `a != b` (bool). */
  ne: (a: ExprLike, b: ExprLike): PrimExpr => freeCompare("ne", a, b),
  /** Logical `a && b` of two bools (both sides are evaluated). */
  and: (a: ExprLike, b: ExprLike): PrimExpr => freeLogical("and", a, b),
  /** Logical `a || b` of two bools (both sides are evaluated). */
  or: (a: ExprLike, b: ExprLike): PrimExpr => freeLogical("or", a, b),
  /** Logical `!a` of a bool. */
  not: (a: ExprLike): PrimExpr => {
    const span = callerSpan();
    return new PrimExpr(not(toExpr(a, "bool", span), span));
  },
  cuda: {
    LaunchConfig: cuda.LaunchConfig,
    thread_idx: cuda.thread_idx,
    block_idx: cuda.block_idx,
    block_dim: cuda.block_dim,
    grid_dim: cuda.grid_dim,
    cta_sync: cuda.cta_sync,
    tile: cuda.tile,
    tensormap_encode_tiled,
    cluster_ctarank: clusterOps.cluster_ctarank,
    cluster_nctarank: clusterOps.cluster_nctarank,
    cluster_cta_idx: clusterOps.cluster_cta_idx,
    cluster_dim: clusterOps.cluster_dim,
    cluster_idx: clusterOps.cluster_idx,
    cluster_grid_dim: clusterOps.cluster_grid_dim,
    cluster_sync: clusterOps.cluster_sync,
    threadfence: memoryOrder.threadfence,
    threadfence_block: memoryOrder.threadfence_block,
    threadfence_system: memoryOrder.threadfence_system,
    ...warp,
  },
  tensormap_encode_tiled,
  ptx,
  // NVSHMEM's device API on symmetric tensors (dsl nvshmem.ts).
  nvshmem,
  ...math,
  raw,
  call_op,
  call_value,
  ...dtypes,
};

// A misspelled member of T in a builder kernel body is TX1024 (function.ts, unknown-member.ts).
registerT(builderT);
