import {
  bufferElementOffset,
  bufferPtr,
  type AccessIndex,
  type Buffer,
  type DType,
  type Expr,
  type Span,
} from "@tirx-ts/core";
import { builder } from "./builder.js";
import { PrimExpr, toExpr, type ExprLike } from "./expr.js";

/** Element accesses at a flat element offset, shared by `TileView` and `FlatView`. */

/**
 * A load of the `dtype` element at `offset` of `buffer`; `index`, the author's indices the
 * offset does not bound (core's `accessAxes`), goes on the load for the verifier where not empty.
 */
export function loadAt(
  buffer: Buffer,
  dtype: DType,
  offset: Expr,
  span?: Span,
  index: AccessIndex = [],
): PrimExpr {
  return new PrimExpr({
    kind: "BufferLoad",
    buffer,
    offset,
    dtype,
    ...(index.length > 0 ? { index } : {}),
    ...(span ? { span } : {}),
  });
}

/**
 * Record a store of `value` (converted like a literal to `dtype`) at `offset` of `buffer`, with
 * `index` as {@link loadAt} takes it.
 * @throws TirxError TX1001 outside a kernel body.
 */
export function storeAt(
  buffer: Buffer,
  dtype: DType,
  offset: Expr,
  value: ExprLike,
  span?: Span,
  index: AccessIndex = [],
): void {
  const b = builder("set", span);
  b.emit({
    kind: "Store",
    buffer,
    dtype,
    offset,
    value: toExpr(value, dtype, span),
    ...(index.length > 0 ? { index } : {}),
    ...(span ? { span } : {}),
  });
}

/**
 * The address of the `dtype` element at `offset` (counted in elements of `dtype`, as views and
 * `flat(dtype)` count) in `buffer`'s state space: a uint32 shared-window address for shared
 * buffers, a uint64 generic address for global ones. The IR's `BufferPtr` counts in the
 * buffer's own elements (core's `bufferElementOffset`): a view of a wider dtype scales the
 * offset, and a view of a narrower one must provably land on a whole buffer element.
 * @throws TirxError TX1014 when a narrower view's offset is not provably a whole buffer element.
 */
export function ptrAt(buffer: Buffer, dtype: DType, offset: Expr, span?: Span): PrimExpr {
  return new PrimExpr(
    bufferPtr(buffer, bufferElementOffset(buffer, dtype, offset, "ptr", span), span),
  );
}
