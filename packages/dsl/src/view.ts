import {
  accessAxes,
  bufferOffset,
  elementOffset,
  isWholeView,
  layoutSlot,
  isTirxError,
  subBuffer,
  viewOf,
  rearrange,
  reinterpret,
  subAxes,
  subView,
  TirxError,
  type AccessIndex,
  type Buffer,
  type DType,
  type Expr,
  type Slice,
  type Span,
  type SubIndex,
  type View,
} from "@tirx-ts/core";
import { checkDType, PrimExpr, show, toExpr, type ExprLike } from "./expr.js";
import { loadAt, ptrAt, storeAt } from "./element.js";
import { isPlainObject } from "./check.js";
import { callerSpan } from "./span.js";
import { FlatView } from "./flat.js";

/** One index of `sub`: an expression or number (drops the axis), `":"`, `"a:b"`, `"a:b:s"`, `T.slice`, `"..."`. */
export type Index = ExprLike | Slice | string;

function parseIndex(i: unknown, span?: Span): SubIndex {
  if (typeof i === "string") {
    if (i === ":" || i === "...") return i;
    const m = /^\s*(-?\d*)\s*:\s*(-?\d*)\s*(?::\s*(\d*)\s*)?$/.exec(i);
    if (!m)
      throw new TirxError(
        "TX1013",
        `cannot read ${show(i)} as a slice (use ":", "a:b" or "a:b:step")`,
        span,
      );
    return checkSlice(
      {
        kind: "Slice",
        ...(m[1] ? { start: Number(m[1]) } : {}),
        ...(m[2] ? { stop: Number(m[2]) } : {}),
        ...(m[3] ? { step: Number(m[3]) } : {}),
      },
      span,
    );
  }
  if (i instanceof PrimExpr) return i.expr;
  if (isPlainObject(i) && i.kind === "Slice") return checkSlice(i, span);
  if (typeof i === "number") {
    if (!Number.isSafeInteger(i)) {
      throw new TirxError("TX1002", `an index must be an integer, got ${show(i)}`, span);
    }
    return i;
  }
  if (typeof i === "bigint" && i >= BigInt(-(2 ** 31)) && i < 2n ** 31n) return Number(i);
  throw new TirxError(
    "TX1002",
    `an index must be an expression, an integer or a slice, got ${show(i)}`,
    span,
  );
}

/** A slice object with integer (or absent) start, stop and a positive step. */
export function checkSlice(s: Record<string, unknown>, span?: Span): Slice {
  const { start, stop, step } = s;
  const ok = (x: unknown): x is number | undefined =>
    x === undefined || (typeof x === "number" && Number.isSafeInteger(x));
  if (!ok(start) || !ok(stop) || !ok(step) || (step !== undefined && step <= 0)) {
    throw new TirxError(
      "TX1013",
      `a slice takes integer start and stop and a positive integer step, got ${show(s)}`,
      span,
    );
  }
  return {
    kind: "Slice",
    ...(start !== undefined ? { start } : {}),
    ...(stop !== undefined ? { stop } : {}),
    ...(step !== undefined ? { step } : {}),
  };
}

/**
 * A tensor or a zero-copy view of one, as kernel code sees it: global parameters, shared
 * allocations, and everything `rearrange`, `sub` and `view` make from them.
 */
export class TileView {
  /**
   * `source` is a view, or a whole global tensor with symbolic dims (`T.Tensor(["n"], ...)`),
   * which can be indexed and sub-viewed but has no static view until its symbolic axes are indexed.
   * `fixed`: the runtime indices the `sub` calls that made this view fixed (core's `subAxes`),
   * which every element access through it carries for the verifier (TX2006).
   */
  constructor(
    private readonly source: View | Buffer,
    private readonly fixed: AccessIndex = [],
  ) {}

  /**
   * The static view; tile operations, rearrange and view_as read it.
   * @throws TirxError TX2003 for a tensor with symbolic dims (index its symbolic axes with `sub` first).
   */
  get view(): View {
    if (this.source.kind === "View") return this.source;
    return viewOf(this.source, callerSpan());
  }

  /**
   * The tensor when this is a whole global tensor with symbolic dims (which has no static view:
   * a TMA copy names it whole, with its tensor map), else undefined.
   */
  get symbolicTensor(): Buffer | undefined {
    return this.source.kind === "Buffer" ? this.source : undefined;
  }

  /** The underlying buffer (storage). */
  get buffer(): Buffer {
    return this.source.kind === "View" ? this.source.buffer : this.source;
  }
  /** The static shape in elements. @throws TirxError TX2003 for a tensor with symbolic dims. */
  get shape(): readonly number[] {
    return this.view.shape;
  }
  get dtype(): DType {
    return this.source.dtype;
  }
  get name(): string {
    return this.buffer.name;
  }

  /**
   * einops rearrange without moving data, e.g. `rearrange("(w t) (r v) -> w t r v", { w: 4, t: 32, v: 8 })`.
   * @throws TirxError TX1010–TX1012.
   */
  rearrange(pattern: string, sizes: Readonly<Record<string, number>> = {}): TileView {
    const span = callerSpan();
    if (typeof pattern !== "string") {
      throw new TirxError(
        "TX1010",
        `rearrange needs an einops pattern such as "(w t) v -> w t v", got ${show(pattern)}`,
        span,
      );
    }
    if (!isPlainObject(sizes)) {
      throw new TirxError(
        "TX1011",
        `rearrange sizes must be an object such as { w: 4 }, got ${show(sizes)}`,
        span,
      );
    }
    const known: Record<string, number> = {};
    for (const k of Reflect.ownKeys(sizes)) {
      const v: unknown = Object.getOwnPropertyDescriptor(sizes, k)?.value;
      if (typeof k !== "string" || typeof v !== "number" || !Number.isSafeInteger(v) || v <= 0) {
        throw new TirxError(
          "TX1011",
          `size of axis ${show(k)} must be a positive integer, got ${show(v)}`,
          span,
        );
      }
      Object.defineProperty(known, k, { value: v, enumerable: true });
    }
    return new TileView(rearrange(this.view, pattern, known, span), this.fixed);
  }

  /**
   * Zero-copy slice: `A.sub(tid, ":")` is row `tid` (TIRx `A.sub[tid, :]`).
   * @throws TirxError TX1004, TX1005, TX1013.
   */
  sub(...index: Index[]): TileView {
    const span = callerSpan();
    const items = Array.from(index, (i) => parseIndex(i, span));
    const view =
      this.source.kind === "Buffer"
        ? subBuffer(this.source, items, span)
        : subView(this.source, items, span);
    const fixed = subAxes(this.source, items);
    return new TileView(view, fixed.length === 0 ? this.fixed : [...this.fixed, ...fixed]);
  }

  /**
   * The same bytes seen as `dtype` (e.g. float16 rows as uint32 words); a byte view, no conversion.
   * A float16 or bfloat16 buffer seen as `"float16x2"` / `"bfloat16x2"` loads and stores one pair
   * (two adjacent elements, the first in lane 0) per access.
   * @throws TirxError TX1014.
   */
  view_as(dtype: DType): TileView {
    const span = callerSpan();
    checkDType(dtype, "view_as", span);
    return new TileView(reinterpret(this.view, dtype, span), this.fixed);
  }

  /**
   * The buffer addressed by flat element offset, in elements of `dtype` (default the buffer's):
   * `A.flat().get([k])` loads element `k` from the buffer's start, whatever this view's shape.
   * The printed IR uses it for every access. @throws TirxError TX1003 (dtype).
   */
  flat(dtype: DType = this.buffer.dtype): FlatView {
    checkDType(dtype, "flat", callerSpan());
    return new FlatView(this.buffer, dtype);
  }

  /**
   * A view of this view's buffer given by its fields (the printed form of a `View`): element
   * `(i0, ..., in)` is element `offset + Σ ik * strides[k]` of the buffer, counted in elements
   * of `dtype` (default the buffer's); `axes` names axes for diagnostics. Extents are checked by
   * the verifier where the view is used.
   * @throws TirxError TX1003 (dtype), TX1002 (shape/strides/axes not integer lists of one rank).
   */
  as_strided(opts: {
    dtype?: DType;
    offset?: ExprLike;
    shape: readonly number[];
    strides: readonly number[];
    axes?: readonly string[];
  }): TileView {
    const span = callerSpan();
    if (!isPlainObject(opts)) {
      throw new TirxError("TX1002", `as_strided needs { shape, strides }, got ${show(opts)}`, span);
    }
    const dtype: unknown = opts.dtype ?? this.buffer.dtype;
    checkDType(dtype, "as_strided", span);
    const ints = (x: unknown, min: number): x is number[] =>
      Array.isArray(x) &&
      x.every((n) => typeof n === "number" && Number.isSafeInteger(n) && n >= min);
    const { shape, strides } = opts;
    const axes = opts.axes ?? shape.map(() => "");
    if (
      !ints(shape, 1) ||
      !ints(strides, Number.MIN_SAFE_INTEGER) ||
      strides.length !== shape.length ||
      !Array.isArray(axes) ||
      axes.length !== shape.length ||
      !axes.every((a) => typeof a === "string")
    ) {
      throw new TirxError(
        "TX1002",
        `as_strided: shape (positive integers), strides (integers) and axes (strings) must be lists of one rank, got ${show(opts)}`,
        span,
      );
    }
    const offset = toExpr(opts.offset ?? 0, "int32", span);
    return new TileView({
      kind: "View",
      buffer: this.buffer,
      dtype,
      offset,
      shape: [...shape],
      strides: [...strides],
      axes: [...axes],
      ...(span ? { span } : {}),
    });
  }

  /**
   * The flat offset of `indices` (one per axis) and the author's indices it does not bound
   * (core's `accessAxes`, with this view's `fixed` ones), which the access carries for the
   * verifier.
   */
  private access(indices: readonly ExprLike[], span?: Span): { offset: Expr; index: AccessIndex } {
    const items = this.indexExprs(indices, span);
    const offset = this.offset(items, span);
    return { offset, index: accessAxes(this.source, items, this.fixed) };
  }

  /** `indices` as int32 expressions. @throws TirxError TX1002 for a list of anything else. */
  private indexExprs(indices: readonly ExprLike[], span?: Span): Expr[] {
    if (!Array.isArray(indices)) {
      throw new TirxError(
        "TX1002",
        `indices must be an array such as [i, j], got ${show(indices)}`,
        span,
      );
    }
    return Array.from(indices as readonly unknown[], (i) => {
      if (typeof i === "number" && !Number.isInteger(i)) {
        throw new TirxError("TX1002", `an index must be an integer, got ${show(i)}`, span);
      }
      return toExpr(i as ExprLike, "int32", span);
    });
  }

  /** The flat offset of `items`, one per axis. @throws TirxError TX1004, TX1005, TX2021. */
  private offset(items: readonly Expr[], span?: Span): Expr {
    if (this.source.kind === "Buffer") return bufferOffset(this.source, items, span);
    const b = this.source.buffer;
    if (b.tileLayout && b.scope === "local") {
      // A laid-out register tile stores the thread's own slots: the index goes through the layout.
      elementOffset(this.source, items, span);
      if (!isWholeView(this.source)) {
        throw new TirxError(
          "TX2021",
          `${b.name} has a TileLayout: index the whole tile (its slots follow the layout), not a view of it`,
          span,
        );
      }
      try {
        return layoutSlot(b, this.source.shape, items, span);
      } catch (e) {
        // A layout of another size than the shape: the verifier reports it at the allocation
        // (TX2021); the access keeps its row-major offset until then.
        if (isTirxError(e)) return elementOffset(this.source, items, span);
        throw e;
      }
    }
    return elementOffset(this.source, items, span);
  }

  /**
   * Load one element: `shared.get([tid, j])` (TIRx `shared[tid, j]`). Each index must stay
   * within its axis (the verifier's TX2006), not only the element within the buffer.
   */
  get(indices: readonly ExprLike[]): PrimExpr {
    const span = callerSpan();
    const { offset, index } = this.access(indices, span);
    return loadAt(this.buffer, this.dtype, offset, span, index);
  }

  /**
   * Store one element: `B.set([tid, j], value)` (TIRx `B[tid, j] = value`). Each index must stay
   * within its axis (the verifier's TX2006), not only the element within the buffer.
   */
  set(indices: readonly ExprLike[], value: ExprLike): void {
    const span = callerSpan();
    const { offset, index } = this.access(indices, span);
    storeAt(this.buffer, this.dtype, offset, value, span, index);
  }

  /** Address of an element in this buffer's state space (an operand for mbarrier and similar intrinsics). */
  ptr(indices: readonly ExprLike[] = this.source.shape.map(() => 0)): PrimExpr {
    const span = callerSpan();
    const offset = this.offset(this.indexExprs(indices, span), span);
    return ptrAt(this.buffer, this.dtype, offset, span);
  }
}
