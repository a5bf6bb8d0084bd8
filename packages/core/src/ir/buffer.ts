import type { DType } from "../dtype.js";
import type { Span } from "../span.js";
import type { Expr } from "./expr.js";

/** PTX state spaces a buffer can live in. `shared.dyn` is dynamic (extern) shared memory. */
export type Scope = "global" | "shared" | "shared.dyn" | "local";

/**
 * A multi-dimensional array in one state space. Shapes are static, in elements, row-major.
 * Identity is `id`; two buffers with equal fields are still different storage.
 */
export interface Buffer {
  readonly kind: "Buffer";
  readonly name: string;
  readonly id: number;
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly scope: Scope;
  /** Alignment of the first element in bytes (shared allocations: 16 unless asked otherwise). */
  readonly align: number;
  readonly span?: Span;
}

/**
 * A zero-copy view of a buffer: element `(i0, ..., in)` of the view is element
 * `offset + Σ ik * strides[k]` of the buffer, counted in elements of `dtype`.
 * `dtype` may differ from the buffer's (a reinterpreting view of the same bytes); then
 * `offset` and `strides` count elements of the view's dtype.
 */
export interface View {
  readonly kind: "View";
  readonly buffer: Buffer;
  readonly dtype: DType;
  readonly offset: Expr;
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  /** Axis names given by `rearrange`, for diagnostics; "" where unnamed. */
  readonly axes: readonly string[];
  readonly span?: Span;
}

let nextBufferId = 1;

/** A fresh buffer. */
export function mkBuffer(
  name: string,
  shape: readonly number[],
  dtype: DType,
  scope: Scope,
  opts: { align?: number; span?: Span } = {},
): Buffer {
  return {
    kind: "Buffer",
    name,
    id: nextBufferId++,
    dtype,
    shape: [...shape],
    scope,
    align: opts.align ?? (scope === "global" ? 256 : 16),
    ...(opts.span ? { span: opts.span } : {}),
  };
}

/** Row-major (C order) strides of `shape`, in elements. */
export function rowMajorStrides(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i]!;
  }
  return strides;
}

/** Number of elements of `shape`. */
export function numel(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}
