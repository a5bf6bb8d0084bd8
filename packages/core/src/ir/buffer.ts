import { bufferName } from "../buffer-name.js";
import { isLaneValue, isVector, laneDType, type DType } from "../dtype.js";
import { freshBufferId } from "./ids.js";
import { TirxError } from "../diagnostics.js";
import type { Span } from "../span.js";
import type { Buffer, Dim, Expr, Scope } from "./expr.js";
import type { SwizzleLayout } from "./swizzle-layout.js";
import type { TileLayout } from "./tile-layout.js";

export type { Buffer, Dim, Scope };

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

/**
 * Refuse a packed dtype (float16x2, bfloat16x2) or a vector dtype (float32x4, …) as the element
 * dtype of a tensor or a buffer: tirx-ts keeps them in registers (dtype.ts); a view may
 * reinterpret a buffer of the lane dtype as pairs or vectors (`view_as`).
 * @throws TirxError TX1027 (dsl/packed-storage), naming `what`.
 */
export function checkStorageDType(dtype: DType, what: string, span?: Span): void {
  if (!isLaneValue(dtype)) return;
  const lane = laneDType(dtype);
  throw new TirxError(
    "TX1027",
    `${what}: ${dtype} is a register value; no tensor or buffer has it as its dtype`,
    span,
    [
      {
        message: isVector(dtype)
          ? `keep the lanes in a ${lane} buffer and access it through buf.view_as("${dtype}") (one vector ld/st per access)`
          : `keep the pairs in a ${lane} buffer and access it through buf.view_as("${dtype}"), or store the bits as uint32 (T.ptx.x2.bits)`,
      },
    ],
  );
}

/**
 * A fresh buffer.
 * @throws TirxError TX1027 for a packed or vector dtype (`checkStorageDType`).
 */
export function mkBuffer(
  name: string,
  shape: readonly Dim[],
  dtype: DType,
  scope: Scope,
  opts: { align?: number; span?: Span; layout?: SwizzleLayout; tileLayout?: TileLayout } = {},
): Buffer {
  checkStorageDType(dtype, `buffer "${name}"`, opts.span);
  return {
    kind: "Buffer",
    name,
    id: freshBufferId(),
    dtype,
    shape: [...shape],
    scope,
    align: opts.align ?? (scope === "global" ? 256 : 16),
    ...(opts.layout ? { layout: opts.layout } : {}),
    ...(opts.tileLayout ? { tileLayout: opts.tileLayout } : {}),
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

/** True when every dim of `shape` is a static number. */
export function isStaticShape(shape: readonly Dim[]): shape is readonly number[] {
  return shape.every((d) => typeof d === "number");
}

/** `[2, n, 64]` as text, for messages. */
export function showShape(shape: readonly Dim[]): string {
  return `[${shape.map((d) => (typeof d === "number" ? String(d) : d.name)).join(", ")}]`;
}

/**
 * The static shape of `buffer`, for readers that size storage or tile it (allocations, views,
 * rearrange, tile patterns).
 * @throws TirxError TX2003 when a dim is symbolic, naming `what` needs it static.
 */
export function staticShape(buffer: Buffer, what: string, span?: Span): readonly number[] {
  const shape = buffer.shape;
  if (isStaticShape(shape)) return shape;
  throw new TirxError(
    "TX2003",
    `${what} needs a static shape, but ${bufferName(buffer)} has the symbolic shape ${showShape(shape)}`,
    span ?? buffer.span,
    [
      {
        message:
          'a symbolic tensor can be indexed (A.get([i]), A.set([i], v)) or sub-viewed with its symbolic axes indexed (A.sub(row, ":")); tile operations need a static view',
      },
    ],
  );
}
