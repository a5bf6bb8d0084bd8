import {
  constInt,
  divisorOf,
  dtypeBytes,
  elementOffset,
  isDType,
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
import { builder } from "./builder.js";
import { describe, PrimExpr, toExpr, type ExprLike } from "./expr.js";
import { callerSpan } from "./span.js";

/** One index of `sub`: an expression or number (drops the axis), `":"`, `"a:b"`, `"a:b:s"`, `T.slice`, `"..."`. */
export type Index = ExprLike | Slice | string;

function parseIndex(i: Index, span?: Span): SubIndex {
  if (typeof i === "string") {
    if (i === ":" || i === "...") return i;
    const m = /^\s*(-?\d*)\s*:\s*(-?\d*)\s*(?::\s*(\d*)\s*)?$/.exec(i);
    if (!m)
      throw new TirxError(
        "TX1013",
        `cannot read "${i}" as a slice (use ":", "a:b" or "a:b:step")`,
        span,
      );
    return {
      kind: "Slice",
      ...(m[1] ? { start: Number(m[1]) } : {}),
      ...(m[2] ? { stop: Number(m[2]) } : {}),
      ...(m[3] ? { step: Number(m[3]) } : {}),
    };
  }
  if (
    typeof i === "object" &&
    i !== null &&
    !(i instanceof PrimExpr) &&
    (i as Slice).kind === "Slice"
  ) {
    return i as Slice;
  }
  if (typeof i === "number") return i;
  if (i instanceof PrimExpr) return i.expr;
  throw new TirxError(
    "TX1002",
    `an index must be an expression, a number or a slice, got ${describe(i)}`,
    span,
  );
}

/**
 * A tensor or a zero-copy view of one, as kernel code sees it: global parameters, shared
 * allocations, and everything `rearrange`, `sub` and `view` make from them.
 */
export class TileView {
  constructor(readonly view: View) {}

  /** The underlying buffer (storage). */
  get buffer(): Buffer {
    return this.view.buffer;
  }
  get shape(): readonly number[] {
    return this.view.shape;
  }
  get dtype(): DType {
    return this.view.dtype;
  }
  get name(): string {
    return this.view.buffer.name;
  }

  /**
   * einops rearrange without moving data, e.g. `rearrange("(w t) (r v) -> w t r v", { w: 4, t: 32, v: 8 })`.
   * @throws TirxError TX1010–TX1012.
   */
  rearrange(pattern: string, sizes: Readonly<Record<string, number>> = {}): TileView {
    return new TileView(rearrange(this.view, pattern, sizes, callerSpan()));
  }

  /**
   * Zero-copy slice: `A.sub(tid, ":")` is row `tid` (TIRx `A.sub[tid, :]`).
   * @throws TirxError TX1004, TX1005, TX1013.
   */
  sub(...index: Index[]): TileView {
    const span = callerSpan();
    return new TileView(
      subView(
        this.view,
        index.map((i) => parseIndex(i, span)),
        span,
      ),
    );
  }

  /**
   * The same bytes seen as `dtype` (e.g. float16 rows as uint32 words); a byte view, no conversion.
   * @throws TirxError TX1014.
   */
  view_as(dtype: DType): TileView {
    const span = callerSpan();
    if (!isDType(dtype)) throw new TirxError("TX1003", `unknown dtype "${String(dtype)}"`, span);
    // A runtime origin must provably start on a whole `dtype` element: viewing it as a wider
    // type divides the byte offset, which would otherwise silently round down.
    const from = dtypeBytes(this.dtype);
    const to = dtypeBytes(dtype);
    if (to > from && constInt(this.view.offset) === undefined) {
      const d = divisorOf(this.view.offset) * from;
      if (d % to !== 0) {
        throw new TirxError(
          "TX1014",
          `cannot view ${this.dtype} bytes as ${dtype}: the view starts at a runtime byte offset that is only provably a multiple of ${d}, not of ${to}`,
          span,
        );
      }
    }
    return new TileView(reinterpret(this.view, dtype, span));
  }

  private offset(indices: readonly ExprLike[], span?: Span): Expr {
    if (!Array.isArray(indices)) {
      throw new TirxError(
        "TX1002",
        `indices must be an array such as [i, j], got ${describe(indices)}`,
        span,
      );
    }
    return elementOffset(
      this.view,
      indices.map((i) => toExpr(i, "int32", span)),
      span,
    );
  }

  /** Load one element: `shared.get([tid, j])` (TIRx `shared[tid, j]`). */
  get(indices: readonly ExprLike[]): PrimExpr {
    const span = callerSpan();
    const offset = this.offset(indices, span);
    return new PrimExpr({
      kind: "BufferLoad",
      buffer: this.buffer,
      offset,
      dtype: this.dtype,
      ...(span ? { span } : {}),
    });
  }

  /** Store one element: `B.set([tid, j], value)` (TIRx `B[tid, j] = value`). */
  set(indices: readonly ExprLike[], value: ExprLike): void {
    const span = callerSpan();
    const b = builder("set", span);
    const offset = this.offset(indices, span);
    b.emit({
      kind: "Store",
      buffer: this.buffer,
      dtype: this.dtype,
      offset,
      value: toExpr(value, this.dtype, span),
      ...(span ? { span } : {}),
    });
  }

  /** Address of an element in this buffer's state space (an operand for mbarrier and similar intrinsics). */
  ptr(indices: readonly ExprLike[] = this.shape.map(() => 0)): PrimExpr {
    const span = callerSpan();
    const offset = this.offset(indices, span);
    const dtype = this.buffer.scope === "global" ? "uint64" : "uint32";
    return new PrimExpr({
      kind: "BufferPtr",
      buffer: this.buffer,
      offset,
      dtype,
      ...(span ? { span } : {}),
    });
  }
}
