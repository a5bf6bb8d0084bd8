import { dtypeBytes } from "../dtype.js";
import { cast } from "../ir/arith.js";
import type { Buffer, View } from "../ir/buffer.js";
import type { AccessIndex, AxisIndex, Expr } from "../ir/expr.js";
import { expandEllipsis, type SubIndex } from "./view.js";

/*
 * Which of an element access's indices the verifier must prove within their axes (TX2006,
 * `verify/axis-check.ts`): the author's `get` / `set` indices and the runtime indices of the
 * `sub` calls that made the view, less those the flat offset bounds.
 */

/**
 * True when `v` is its buffer's own row-major view: offset 0, the buffer's shape and dtype (an
 * axis of extent 1 may have any stride). A tensor's or allocation's handle is one.
 */
export function isWholeView(v: View): boolean {
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

/**
 * Whether the flat offset of an access through `source` bounds its axis 0: `source` is the
 * tensor itself (a symbolic one), or a row-major view from offset 0 of exactly the buffer's
 * bytes (its whole view; also seen as another dtype, `view_as`, or split, `rearrange`), not a
 * laid-out register tile, whose offset is a slot. Then `offset = i0 · stride0 + r` with
 * `0 ≤ r < stride0` once the other axes are in range, and the buffer holds `extent0 · stride0`
 * elements of the view's dtype, so an offset inside it has `0 ≤ i0 < extent0`.
 */
function offsetBoundsAxis0(source: View | Buffer): boolean {
  if (source.kind === "Buffer") return true;
  const b = source.buffer;
  if (b.tileLayout && b.scope === "local") return false;
  if (source.offset.kind !== "IntImm" || Number(source.offset.value) !== 0) return false;
  if (!b.shape.every((d) => typeof d === "number")) return false;
  let s = 1;
  for (let i = source.shape.length - 1; i >= 0; i--) {
    if (source.shape[i] !== 1 && source.strides[i] !== s) return false;
    s *= source.shape[i]!;
  }
  const bytes = (b.shape as readonly number[]).reduce((a, d) => a * d, dtypeBytes(b.dtype));
  return s * dtypeBytes(source.dtype) === bytes;
}

/**
 * The runtime indices among `items` (one per axis of `source`, `"..."` expanded as `sub`
 * expands it) that the verifier must prove within their axes (TX2006): every index but a
 * constant (the builder checks those, TX1005) and axis 0 of the tensor itself (its offset bounds
 * it, see `offsetBoundsAxis0`). `sub` marks indices that fix an axis of a `sub` view.
 * Call it on items that `subView` / `subBuffer` / `elementOffset` / `bufferOffset` accepted.
 */
function runtimeAxes(source: View | Buffer, items: readonly SubIndex[], sub: boolean): AxisIndex[] {
  const shape = source.shape;
  const view = source.kind === "View" && !isWholeView(source);
  const names = source.kind === "View" ? source.axes : [];
  const skip0 = offsetBoundsAxis0(source);
  const out: AxisIndex[] = [];
  items.forEach((it, k) => {
    if (typeof it !== "object" || it.kind === "Slice" || it.kind === "IntImm") return;
    if (k === 0 && skip0) return;
    const index = it.dtype === "int32" ? it : cast("int32", it);
    out.push({ index, extent: shape[k]!, axis: k, name: names[k] ?? "", view, sub });
  });
  return out;
}

/**
 * The author's indices of an element access through `source` (`get` / `set` with `indices`,
 * one per axis, as `elementOffset` / `bufferOffset` / `layoutSlot` accepted them) that its flat
 * offset does not bound, after `fixed`, those the `sub` calls that made `source` fixed
 * (`subAxes`): the access's `AccessIndex`, which the verifier proves axis by axis. Empty when
 * the offset bounds every index (a 1-D tensor indexed directly, constant indices).
 */
export function accessAxes(
  source: View | Buffer,
  indices: readonly Expr[],
  fixed: AccessIndex = [],
): AccessIndex {
  const own = runtimeAxes(source, indices, false);
  return fixed.length === 0 ? own : [...fixed, ...own];
}

/**
 * The runtime indices `sub(source, index)` fixes that the verifier must prove within their axes
 * when the view is accessed (see `accessAxes`); `index` as `subView` / `subBuffer` accepted it.
 */
export function subAxes(source: View | Buffer, index: readonly SubIndex[]): AxisIndex[] {
  return runtimeAxes(source, expandEllipsis(index, source.shape.length), true);
}
