import {
  bufferOffset,
  elementOffset,
  layoutSlot,
  isTirxError,
  subBuffer,
  viewOf,
  rearrange,
  reinterpret,
  subView,
  TirxError,
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
/** True when `v` is its buffer's own row-major view (offset 0, same shape and dtype). */
function isWholeView(v: View): boolean {
  const shape = v.buffer.shape;
  if (v.dtype !== v.buffer.dtype || v.shape.length !== shape.length) return false;
  if (v.offset.kind !== "IntImm" || Number(v.offset.value) !== 0) return false;
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    if (shape[i] !== v.shape[i] || (v.shape[i] !== 1 && v.strides[i] !== s)) return false;
    s *= v.shape[i]!;
  }
  return true;
}

export class TileView {
  /**
   * `source` is a view, or a whole global tensor with symbolic dims (`T.Tensor(["n"], ...)`),
   * which can be indexed and sub-viewed but has no static view until its symbolic axes are indexed.
   */
  constructor(private readonly source: View | Buffer) {}

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
    return new TileView(rearrange(this.view, pattern, known, span));
  }

  /**
   * Zero-copy slice: `A.sub(tid, ":")` is row `tid` (TIRx `A.sub[tid, :]`).
   * @throws TirxError TX1004, TX1005, TX1013.
   */
  sub(...index: Index[]): TileView {
    const span = callerSpan();
    const items = Array.from(index, (i) => parseIndex(i, span));
    if (this.source.kind === "Buffer") return new TileView(subBuffer(this.source, items, span));
    return new TileView(subView(this.source, items, span));
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
    return new TileView(reinterpret(this.view, dtype, span));
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

  private offset(indices: readonly ExprLike[], span?: Span): Expr {
    if (!Array.isArray(indices)) {
      throw new TirxError(
        "TX1002",
        `indices must be an array such as [i, j], got ${show(indices)}`,
        span,
      );
    }
    const items = Array.from(indices as readonly unknown[], (i) => {
      if (typeof i === "number" && !Number.isInteger(i)) {
        throw new TirxError("TX1002", `an index must be an integer, got ${show(i)}`, span);
      }
      return toExpr(i as ExprLike, "int32", span);
    });
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
        // A layout that does not group by the shape: the verifier reports it at the allocation
        // (TX2021); the access keeps its row-major offset until then.
        if (isTirxError(e)) return elementOffset(this.source, items, span);
        throw e;
      }
    }
    return elementOffset(this.source, items, span);
  }

  /** Load one element: `shared.get([tid, j])` (TIRx `shared[tid, j]`). */
  get(indices: readonly ExprLike[]): PrimExpr {
    const span = callerSpan();
    const offset = this.offset(indices, span);
    return loadAt(this.buffer, this.dtype, offset, span);
  }

  /** Store one element: `B.set([tid, j], value)` (TIRx `B[tid, j] = value`). */
  set(indices: readonly ExprLike[], value: ExprLike): void {
    const span = callerSpan();
    const offset = this.offset(indices, span);
    storeAt(this.buffer, this.dtype, offset, value, span);
  }

  /** Address of an element in this buffer's state space (an operand for mbarrier and similar intrinsics). */
  ptr(indices: readonly ExprLike[] = this.source.shape.map(() => 0)): PrimExpr {
    const span = callerSpan();
    const offset = this.offset(indices, span);
    return ptrAt(this.buffer, this.dtype, offset, span);
  }
}
