import { bufferName } from "../buffer-name.js";
import { dtypeBytes, type DType } from "../dtype.js";
import { TirxError } from "../diagnostics.js";
import { binary, cast } from "../ir/arith.js";
import { rowMajorStrides, showShape, staticShape, type Buffer, type View } from "../ir/buffer.js";
import { constInt, intImm, type Expr } from "../ir/expr.js";
import { knownDivisor, residueMod } from "../analysis/bounds.js";
import type { DiagnosticCode } from "../catalog.js";
import type { Span } from "../span.js";
import { withArticle } from "../show.js";

/** A static slice `start:stop:step` of one axis (stop exclusive). */
export interface Slice {
  readonly kind: "Slice";
  readonly start?: number;
  readonly stop?: number;
  readonly step?: number;
}

/** One index of `sub`: a runtime or constant index (drops the axis), a slice, or `"..."`. */
export type SubIndex = Expr | number | Slice | ":" | "...";

/**
 * The whole buffer as a row-major view.
 * @throws TirxError TX2003 when the buffer has a symbolic dim (see `subBuffer`, `bufferOffset`).
 */
export function viewOf(buffer: Buffer, span?: Span): View {
  const shape = staticShape(buffer, "a view of the whole tensor", span);
  return {
    kind: "View",
    buffer,
    dtype: buffer.dtype,
    offset: intImm(0),
    shape: [...shape],
    strides: rowMajorStrides(shape),
    axes: shape.map(() => ""),
    ...(span ? { span } : {}),
  };
}

/**
 * The view that stands for a whole global tensor in a TMA copy (the global operand of a
 * `cp.async.bulk.tensor` tile.apply, whose tensor map gives the box position by coords): the
 * tensor's row-major view when its shape is static ({@link viewOf}); for a tensor with symbolic
 * dims (`T.Tensor(["m", "n"], ...)`), a stand-in of the tensor's rank at offset 0 with extent 1
 * and stride 0 on each axis whose length or stride is symbolic (the map reads the runtime dims
 * at launch) and the static extent and stride elsewhere. Source: PTX ISA
 * "cp.async.bulk.tensor" (the tensor is named by the tensor map, not by an address).
 */
export function tensorView(buffer: Buffer, span?: Span): View {
  if (buffer.shape.every((d) => typeof d === "number")) return viewOf(buffer, span);
  const strides = rowMajorStrideExprs(buffer, span).map((e) => constInt(e));
  const sym = (k: number): boolean =>
    typeof buffer.shape[k] !== "number" || strides[k] === undefined;
  return {
    kind: "View",
    buffer,
    dtype: buffer.dtype,
    offset: intImm(0),
    shape: buffer.shape.map((d, k) => (sym(k) ? 1 : (d as number))),
    strides: strides.map((s, k) => (sym(k) ? 0 : s!)),
    axes: buffer.shape.map(() => ""),
    ...(span ? { span } : {}),
  };
}

/**
 * `index` (of `sub`) with its first `"..."` replaced by as many `":"` as make it `rank` items
 * (none where it has `rank` or more without it); the rest as given.
 */
export function expandEllipsis(index: readonly SubIndex[], rank: number): SubIndex[] {
  const ell = index.indexOf("...");
  if (ell < 0) return [...index];
  const fill = rank - (index.length - 1);
  return [
    ...index.slice(0, ell),
    ...new Array<SubIndex>(Math.max(fill, 0)).fill(":"),
    ...index.slice(ell + 1),
  ];
}

function asIndex(i: Expr | number, span?: Span): Expr {
  if (typeof i === "number") {
    if (!Number.isInteger(i)) throw new TirxError("TX1002", `index ${i} is not an integer`, span);
    return intImm(i);
  }
  if (i.dtype === "int32") return i;
  if (
    i.dtype === "bool" ||
    i.dtype === "float16" ||
    i.dtype.startsWith("float") ||
    i.dtype === "bfloat16"
  ) {
    throw new TirxError("TX1002", `an index must be an integer, got ${i.dtype}`, span);
  }
  return cast("int32", i, span);
}

/**
 * Zero-copy sub-view: `sub(view, [tid, ":"])` keeps axis 1 whole and fixes axis 0 at `tid`.
 * Integer and runtime indices drop their axis; slices keep it. Constant indices are checked.
 * @throws TirxError TX1004 (too many indices), TX1005 (constant index out of range), TX1013 (slice).
 */
export function subView(view: View, index: readonly SubIndex[], span?: Span): View {
  const items = expandEllipsis(index, view.shape.length);
  if (items.length > view.shape.length) {
    throw new TirxError(
      "TX1004",
      `${items.length} indices for a view of rank ${view.shape.length} (shape [${view.shape.join(", ")}])`,
      span,
    );
  }
  while (items.length < view.shape.length) items.push(":");
  let offset = view.offset;
  const shape: number[] = [];
  const strides: number[] = [];
  const axes: string[] = [];
  items.forEach((it, k) => {
    const len = view.shape[k]!;
    const stride = view.strides[k]!;
    if (it === ":" || (typeof it === "object" && it.kind === "Slice")) {
      const sl: Slice = it === ":" ? { kind: "Slice" } : it;
      const step = sl.step ?? 1;
      const start = sl.start ?? 0;
      const stop = sl.stop ?? len;
      if (!Number.isInteger(step) || step <= 0 || start < 0 || stop > len || start >= stop) {
        throw new TirxError(
          "TX1013",
          `slice ${start}:${stop}:${step} of axis ${k} (length ${len}) is empty or out of range`,
          span,
        );
      }
      offset = binary("add", offset, intImm(start * stride), span);
      shape.push(Math.ceil((stop - start) / step));
      strides.push(stride * step);
      axes.push(view.axes[k] ?? "");
    } else if (it === "...") {
      throw new TirxError("TX1004", `"..." may appear at most once`, span);
    } else {
      const e = asIndex(it, span);
      const c = constInt(e);
      if (c !== undefined && (c < 0 || c >= len)) {
        throw new TirxError("TX1005", `index ${c} is outside axis ${k} of length ${len}`, span);
      }
      offset = binary("add", offset, binary("mul", e, intImm(stride), span), span);
    }
  });
  return { ...view, offset, shape, strides, axes, ...(span ? { span } : {}) };
}

/**
 * Element offset (in elements of the view's dtype) of `indices` in `view`; the rank must match.
 * @throws TirxError TX1004, TX1005.
 */
export function elementOffset(view: View, indices: readonly (Expr | number)[], span?: Span): Expr {
  if (indices.length !== view.shape.length) {
    throw new TirxError(
      "TX1004",
      `${indices.length} indices for a view of rank ${view.shape.length} (shape [${view.shape.join(", ")}])`,
      span,
    );
  }
  return subView(view, indices, span).offset;
}

/**
 * `e / k` for an `e` that `residueMod` proves divisible by `k`, in the simplest form at hand:
 * a folded constant, each term of a sum divided, the divisible factor of a product divided,
 * a smaller shift; else an exact `floordiv(e, k)`.
 */
export function exactDiv(e: Expr, k: number, span?: Span): Expr {
  if (k === 1) return e;
  const c = constInt(e);
  if (c !== undefined) return intImm(c / k, e.dtype, span);
  const div = (x: Expr): boolean => residueMod(x, k) === 0;
  if (e.kind === "Binary") {
    if ((e.op === "add" || e.op === "sub") && div(e.a) && div(e.b)) {
      return binary(e.op, exactDiv(e.a, k, span), exactDiv(e.b, k, span), span);
    }
    if (e.op === "mul" && div(e.a)) return binary("mul", exactDiv(e.a, k, span), e.b, span);
    if (e.op === "mul" && div(e.b)) return binary("mul", e.a, exactDiv(e.b, k, span), span);
    const s = e.op === "shl" ? constInt(e.b) : undefined;
    const t = Math.log2(k);
    if (s !== undefined && Number.isInteger(t) && t <= s) {
      return binary("shl", e.a, intImm(s - t, e.b.dtype, span), span);
    }
  }
  return binary("floordiv", e, intImm(k, e.dtype, span), span);
}

/**
 * The offset in `buffer`'s own elements (as `BufferPtr`, `BufferLoad` and mbarrier operands
 * count) of `offset`, counted in elements of `dtype` (as views, `view_as`, `flat(dtype)` and
 * `as_strided({ dtype })` count). A wider `dtype` scales the offset; a narrower one must land
 * on a whole buffer element, which must be provable from the expression (`residueMod`:
 * constants, multiples from constant factors, strides and shifts), and is divided exactly.
 * `what` names the operand in the message ("ptr", "the mbarrier operand").
 * @throws TirxError `code` (TX1014 unless given) when the offset is not provably a whole
 *   buffer element.
 */
export function bufferElementOffset(
  buffer: Buffer,
  dtype: DType,
  offset: Expr,
  what: string,
  span?: Span,
  code: DiagnosticCode = "TX1014",
): Expr {
  const eb = dtypeBytes(dtype);
  const bb = dtypeBytes(buffer.dtype);
  if (eb === bb) return offset;
  if (eb > bb) return binary("mul", offset, intImm(eb / bb, offset.dtype, span), span);
  const k = bb / eb;
  const r = residueMod(offset, k);
  if (r === 0) return exactDiv(offset, k, span);
  const why =
    r !== undefined
      ? `its ${dtype} offset is ${r} more than a multiple of ${k} (byte ${r * eb} of a ${bb}-byte ${buffer.dtype} element)`
      : `its ${dtype} offset is not provably a multiple of ${k} (the expression shows a factor of ${knownDivisor(offset)} only); write it from multiples of ${k} or take it of ${withArticle(buffer.dtype)} view`;
  throw new TirxError(
    code,
    `${what} of ${withArticle(dtype)} view into ${bufferName(buffer)} (${buffer.dtype}) must start on a whole ${buffer.dtype} element (${bb} bytes): ${why}`,
    span,
  );
}

/**
 * The address (`BufferPtr`, counted in the buffer's elements) of the first element of `view`:
 * uint32 for shared buffers, uint64 for global ones.
 * @throws TirxError as {@link bufferElementOffset}.
 */
export function viewStartPtr(
  view: View,
  what: string,
  span?: Span,
  code: DiagnosticCode = "TX1014",
): Expr {
  const offset = bufferElementOffset(view.buffer, view.dtype, view.offset, what, span, code);
  return bufferPtr(view.buffer, offset, span);
}

/**
 * The address of element `offset` (in `buffer`'s own elements) in the buffer's state space: a
 * uint32 shared-window address for shared buffers, a uint64 generic address for global ones.
 */
export function bufferPtr(buffer: Buffer, offset: Expr, span?: Span): Expr {
  return {
    kind: "BufferPtr",
    buffer,
    offset,
    dtype: buffer.scope === "global" ? "uint64" : "uint32",
    ...(span ? { span } : {}),
  };
}

/**
 * Reinterpret the bytes of a view as `dtype` (e.g. float16 bytes as uint32): the final axis must
 * be contiguous and hold a whole number of new elements; other strides must be whole too.
 * @throws TirxError TX1014.
 */
export function reinterpret(view: View, dtype: DType, span?: Span): View {
  const from = dtypeBytes(view.dtype);
  const to = dtypeBytes(dtype);
  if (from === to) return { ...view, dtype };
  const rank = view.shape.length;
  const last = rank - 1;
  const bad = (why: string): never => {
    throw new TirxError("TX1014", `cannot view ${view.dtype} bytes as ${dtype}: ${why}`, span);
  };
  if (rank === 0) bad("a scalar view has no final axis");
  if (view.strides[last] !== 1 && view.shape[last] !== 1) bad("the final axis is not contiguous");
  const lastBytes = view.shape[last]! * from;
  if (lastBytes % to !== 0) bad(`the final axis has ${lastBytes} bytes, not a multiple of ${to}`);
  const strides = view.strides.map((s, k) => {
    if (k === last) return 1;
    if ((s * from) % to !== 0) bad(`axis ${k} steps ${s * from} bytes, not a multiple of ${to}`);
    return (s * from) / to;
  });
  const shape = view.shape.map((n, k) => (k === last ? lastBytes / to : n));
  let offset: Expr;
  if (to > from) {
    const c = constInt(view.offset);
    if (c !== undefined) {
      if ((c * from) % to !== 0)
        bad(`the view starts at byte ${c * from}, not a multiple of ${to}`);
      offset = intImm((c * from) / to);
    } else {
      // The byte offset is divided below: it must provably start on a whole `dtype` element,
      // or the view would silently round down.
      const d = knownDivisor(view.offset) * from;
      if (d % to !== 0) {
        bad(
          `the view starts at a runtime byte offset that is only provably a multiple of ${d}, not of ${to}`,
        );
      }
      offset = binary("floordiv", binary("mul", view.offset, intImm(from)), intImm(to));
    }
  } else {
    offset = binary("mul", view.offset, intImm(from / to));
  }
  return { ...view, dtype, shape, strides, offset, ...(span ? { span } : {}) };
}

/**
 * Row-major strides of `buffer` in elements, as int32 expressions: products of the later dims,
 * so a stride after a symbolic dim is a runtime value (`[n, m]` has strides `[m, 1]`).
 */
export function rowMajorStrideExprs(buffer: Buffer, span?: Span): Expr[] {
  const strides = new Array<Expr>(buffer.shape.length);
  let s: Expr = intImm(1);
  for (let k = buffer.shape.length - 1; k >= 0; k--) {
    strides[k] = s;
    const d = buffer.shape[k]!;
    s = binary("mul", s, typeof d === "number" ? intImm(d) : d, span);
  }
  return strides;
}

/**
 * Sub-view of a whole buffer whose shape may be symbolic (a tensor `T.Tensor(["n", 64], ...)`):
 * indices drop their axis (constant indices are checked against static dims); slices and `":"`
 * keep it and need a static length and a static stride, so the result is an ordinary static
 * `View` (`A.sub(row, ":")` of `[rows, 64]` is a 64-element row at offset `row * 64`).
 * @throws TirxError TX1004 (rank), TX1005 (constant index), TX1013 (slice), TX2003 (a kept axis
 * whose length or stride is symbolic).
 */
export function subBuffer(buffer: Buffer, index: readonly SubIndex[], span?: Span): View {
  const rank = buffer.shape.length;
  const items = expandEllipsis(index, rank);
  if (items.length > rank) {
    throw new TirxError(
      "TX1004",
      `${items.length} indices for a tensor of rank ${rank} (shape ${showShape(buffer.shape)})`,
      span,
    );
  }
  while (items.length < rank) items.push(":");
  const strides = rowMajorStrideExprs(buffer, span);
  let offset: Expr = intImm(0);
  const shape: number[] = [];
  const kept: number[] = [];
  items.forEach((it, k) => {
    const dim = buffer.shape[k]!;
    const stride = strides[k]!;
    if (it === "...") throw new TirxError("TX1004", `"..." may appear at most once`, span);
    if (it === ":" || (typeof it === "object" && it.kind === "Slice")) {
      const s = constInt(stride);
      if (typeof dim !== "number" || s === undefined) {
        throw new TirxError(
          "TX2003",
          `axis ${k} of ${bufferName(buffer)} (shape ${showShape(buffer.shape)}) has a symbolic ${typeof dim !== "number" ? "length" : "stride"}; index it instead of slicing it, so the view keeps only static axes`,
          span,
        );
      }
      const sl: Slice = it === ":" ? { kind: "Slice" } : it;
      const step = sl.step ?? 1;
      const start = sl.start ?? 0;
      const stop = sl.stop ?? dim;
      if (!Number.isInteger(step) || step <= 0 || start < 0 || stop > dim || start >= stop) {
        throw new TirxError(
          "TX1013",
          `slice ${start}:${stop}:${step} of axis ${k} (length ${dim}) is empty or out of range`,
          span,
        );
      }
      offset = binary("add", offset, intImm(start * s), span);
      shape.push(Math.ceil((stop - start) / step));
      kept.push(s * step);
    } else {
      const e = asIndex(it, span);
      const c = constInt(e);
      if (typeof dim === "number" && c !== undefined && (c < 0 || c >= dim)) {
        throw new TirxError("TX1005", `index ${c} is outside axis ${k} of length ${dim}`, span);
      }
      offset = binary("add", offset, binary("mul", e, stride, span), span);
    }
  });
  return {
    kind: "View",
    buffer,
    dtype: buffer.dtype,
    offset,
    shape,
    strides: kept,
    axes: shape.map(() => ""),
    ...(span ? { span } : {}),
  };
}

/**
 * Element offset of `indices` (one per axis) in a whole buffer whose shape may be symbolic:
 * `Σ i_k * stride_k` with runtime strides where a later dim is symbolic.
 * @throws TirxError TX1004 (rank), TX1005 (constant index outside a static dim).
 */
export function bufferOffset(
  buffer: Buffer,
  indices: readonly (Expr | number)[],
  span?: Span,
): Expr {
  if (indices.length !== buffer.shape.length) {
    throw new TirxError(
      "TX1004",
      `${indices.length} indices for a tensor of rank ${buffer.shape.length} (shape ${showShape(buffer.shape)})`,
      span,
    );
  }
  return subBuffer(buffer, indices, span).offset;
}
