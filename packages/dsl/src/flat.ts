import { TirxError, type Buffer, type DType, type Expr, type Span } from "@tirx-ts/core";
import { PrimExpr, show, toExpr, type ExprLike } from "./expr.js";
import { loadAt, ptrAt, storeAt } from "./element.js";
import { callerSpan } from "./span.js";

/**
 * A buffer addressed by flat element offset, as the IR holds its accesses (`BufferLoad.offset`,
 * `Store.offset`, `BufferPtr.offset`): element `[k]` is element `k` from the buffer's start,
 * counted in elements of `dtype` (the buffer's dtype unless reinterpreted). This is what the IR
 * printer writes for every access, so printed kernels rebuild the exact offsets; kernel authors
 * normally index with `get`/`set` on a shaped view instead. Bounds are checked by the verifier.
 */
export class FlatView {
  constructor(
    readonly buffer: Buffer,
    readonly dtype: DType,
  ) {}

  private at(index: unknown, what: string, span?: Span): Expr {
    if (!Array.isArray(index) || index.length !== 1) {
      throw new TirxError(
        "TX1004",
        `${what} of a flat view takes one offset such as [k], got ${show(index)}`,
        span,
      );
    }
    const k: unknown = index[0];
    if (typeof k === "number" && !Number.isSafeInteger(k)) {
      throw new TirxError("TX1002", `an offset must be an integer, got ${show(k)}`, span);
    }
    const e = toExpr(k as ExprLike, "int32", span);
    if (e.dtype === "bool" || e.dtype.startsWith("float") || e.dtype === "bfloat16") {
      throw new TirxError("TX1002", `an offset must be an integer, got ${e.dtype}`, span);
    }
    return e;
  }

  /** Load element `[k]` (dtype `this.dtype`). @throws TirxError TX1004, TX1002. */
  get(index: readonly ExprLike[]): PrimExpr {
    const span = callerSpan();
    const offset = this.at(index, "get", span);
    return loadAt(this.buffer, this.dtype, offset, span);
  }

  /** Store `value` (converted like a literal to `this.dtype`) at element `[k]`. */
  set(index: readonly ExprLike[], value: ExprLike): void {
    const span = callerSpan();
    const offset = this.at(index, "set", span);
    storeAt(this.buffer, this.dtype, offset, value, span);
  }

  /**
   * Address of element `[k]` in the buffer's state space: uint32 shared-window address for
   * shared buffers, uint64 generic address for global ones (as `TileView.ptr`).
   */
  ptr(index: readonly ExprLike[]): PrimExpr {
    const span = callerSpan();
    const offset = this.at(index, "ptr", span);
    return ptrAt(this.buffer, this.dtype, offset, span);
  }
}
