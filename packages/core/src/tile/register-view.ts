// A register operand that is a part of a tile (`f.sub(...)`): the same registers under a layout of
// its own when the part fixes or narrows only digits of `m` iters, else TX2022 (TIRx takes
// register regions as tile operands: tile_primitives/elementwise/reg.rst).
import { constInt, intImm } from "../ir/expr.js";
import { numel, rowMajorStrides, type View } from "../ir/buffer.js";
import type { LayoutAxis, LayoutIter, TileLayout } from "../ir/tile-layout.js";
import { layoutFromIters, showTileLayout } from "../layout/tile-layout.js";
import { isWholeView } from "../layout/access-axes.js";
import { invariant } from "../invariant.js";
import { iterDims } from "./flat-index.js";
import {
  groupedTile,
  registerTile,
  tileDispatchError,
  type RegisterTile,
  type TileContext,
} from "./operand.js";

/**
 * A register operand as the author passed it, a view of a local buffer (the tile itself, or
 * `f.sub(...)`), as a register tile. TIRx takes register regions as tile operands
 * (tile_primitives/elementwise/reg.rst: `Tx.warp.sqrt(R[fs], R[fs])`); a region is served when
 * it is the same registers under a layout of its own: the view's index ranges fix or narrow
 * digits of the tile's `m` iters only, so every thread that holds elements of the tile holds
 * the same subset of its slots. The result is a RegisterTile of the same buffer with the view's
 * shape and the derived layout: the view's iters (a narrowed iter keeps its stride with the
 * smaller extent), the tile's replicas and thread offsets, and an `m` offset adding the fixed
 * digits' slots. E.g. of `[2, 4]` in `S[(2, 4) : (4, 1)]`, `f.sub(1, ":")` is `[4]` in
 * `S[4 : 1] + O[4]`; of `[2, 32]` in `S[(2, 32) : (1, 1@laneid)]`, `f.sub("1:2", ":")` is
 * `[1, 32]` in `S[32 : 1@laneid] + O[1]`; a stepped slice whose step is a whole number of inner
 * `m` digits (`"0:4:2"` of an `m` iter of 4) fixes those digits. The whole tile is
 * {@link registerTile}'s. Lowerings read only the RegisterTile's shape, layout and buffer, so
 * every primitive serves a sub-view as it serves a tile.
 * @throws TirxError TX2022 naming the operand, the tile's layout, the slice that no layout of
 *   the registers expresses, and a slice that works: a runtime start (a register tile's slots
 *   are fixed at compile time), a view in another dtype (`view_as`), a slice that fixes or
 *   narrows a thread iter's digit (only some holders would hold the part), one that runs across
 *   a digit boundary (`"2:6"` of an iter pair `(2, 4)`), a step that falls inside an iter (`"0:4:3"`),
 *   or a view reaching outside the tile; and registerTile's errors for the buffer itself.
 */
export function registerView(
  view: View,
  operand: string,
  ctx: Pick<TileContext, "name" | "scope" | "span">,
): RegisterTile {
  const whole = registerTile(view.buffer, ctx);
  if (isWholeView(view)) return whole;
  const name = view.buffer.name;
  const shape = whole.shape;
  const box = boxOf(view, shape);
  const refuse = (why: string, nearest: string): never => {
    throw tileDispatchError(
      ctx,
      `${operand} ${view.dtype !== view.buffer.dtype ? `${name} as ${view.dtype}` : box ? subText(name, box, shape) : `a view of ${name}`} is a part of the register tile ${name} [${shape.join(", ")}] ${showTileLayout(whole.layout)} that no layout of its registers expresses: ${why}; a register sub-view may fix or narrow only digits of m iters, so that every thread holding the tile keeps the same slots`,
      nearest,
    );
  };
  if (view.dtype !== view.buffer.dtype) {
    refuse(
      `it reads the ${view.buffer.dtype} registers as ${view.dtype} (view_as)`,
      `${name} in its own dtype (T.tile.cast converts into a tile of another dtype)`,
    );
  }
  if (constInt(view.offset) === undefined) {
    refuse(
      "its start is a runtime index, but the slots of a register tile are fixed when the kernel is compiled",
      `constant indices (in a builder body a JavaScript loop unrolls: for (let i = 0; i < n; i++) ... ${name}.sub(i, ...); script mode has no compile-time loop, so name each part there), or the whole tile ${name}`,
    );
  }
  const got = subLayout(whole, view);
  if ("layout" in got) return groupedTile(view.buffer, view.shape, got.layout, ctx.span);
  const at = (k: number | undefined, dim: number): string => {
    const it = box?.[dim];
    if (box && it) {
      return it.axis === undefined
        ? `dim ${dim}'s index ${it.start}`
        : `dim ${dim}'s slice "${sliceText(it, shape[dim]!)}"`;
    }
    return k === undefined
      ? `dim ${dim}`
      : `axis ${k} of the view (extent ${view.shape[k]}, stride ${view.strides[k]})`;
  };
  const c = got.cut;
  const why =
    c.kind === "bounds"
      ? "it reaches outside the tile's elements"
      : c.kind === "overlap"
        ? `axis ${c.axis} of the view takes digits another axis takes`
        : c.kind === "stride"
          ? `${at(c.axis, dimOf(box, c.axis))} steps by ${view.strides[c.axis]} elements of the tile's row-major index, which falls inside an iter of the layout (its digits step by ${c.places.join(", ")})`
          : c.kind === "straddle"
            ? `${at(c.axis, dimOf(box, c.axis))} runs across a digit boundary of the layout's iters (its ${view.shape[c.axis]} elements are no whole run of digits with the outer ones fixed)`
            : c.axis !== undefined
              ? `${at(c.axis, c.dim)} keeps ${c.keep} of the ${c.of} values of ${c.split ? "a digit of " : ""}the thread iter ${iterText(c.iter)}, so only some of the threads holding the tile would hold the part`
              : `${at(undefined, c.dim)} fixes ${c.split ? "a digit of " : "the digit of "}the thread iter ${iterText(c.iter)}, so only the threads with that ${c.iter.axis} digit would hold the part`;
  const fit = box ? nearestBox(whole, view, box) : undefined;
  return refuse(
    why,
    fit === undefined
      ? `a sub(...) of ${name} whose slices fix or narrow only digits of its m iters, or the whole tile ${name}`
      : fit.every(
            (it, d) =>
              it.axis !== undefined && it.start === 0 && it.step === 1 && it.count === shape[d],
          )
        ? `the whole tile ${name}, or a layout whose iters of the sliced dims are on m`
        : `${subText(name, fit, shape)}, or a layout whose iters of the sliced dims are on m`,
  );
}

/** One dim of a sub-box of a tile: a fixed index (`axis` undefined) or a slice on view axis `axis`. */
interface BoxDim {
  readonly start: number;
  readonly step: number;
  readonly count: number;
  readonly axis?: number;
}

/** The tile dim view axis `k` slices in `box` (-1 without a box). */
const dimOf = (box: readonly BoxDim[] | undefined, k: number): number =>
  box?.findIndex((it) => it.axis === k) ?? -1;

/** `start:stop[:step]` of a slice of a dim of extent `n` (stop as the author would write it). */
const sliceText = (it: BoxDim, n: number): string =>
  `${it.start}:${Math.min(n, it.start + it.count * it.step)}${it.step > 1 ? `:${it.step}` : ""}`;

/** `name.sub(...)` of a box, as the author writes it. */
function subText(name: string, box: readonly BoxDim[], shape: readonly number[]): string {
  const items = box.map((it, d) =>
    it.axis === undefined
      ? String(it.start)
      : it.start === 0 && it.step === 1 && it.count === shape[d]
        ? `":"`
        : `"${sliceText(it, shape[d]!)}"`,
  );
  return `${name}.sub(${items.join(", ")})`;
}

/**
 * The view as per-dim slices of a tile of `shape` (what `sub` makes: each view axis one dim of
 * the tile, in order, stepping by a whole number of that dim's elements; the other dims fixed),
 * or undefined for another view (a rearrangement, a non-constant start).
 */
function boxOf(view: View, shape: readonly number[]): BoxDim[] | undefined {
  let rem = constInt(view.offset);
  if (rem === undefined || rem < 0) return undefined;
  const rs = rowMajorStrides(shape);
  const start = shape.map(() => 0);
  for (let d = shape.length - 1; d >= 0; d--) {
    start[d] = rem % shape[d]!;
    rem = Math.floor(rem / shape[d]!);
  }
  if (rem !== 0) return undefined;
  const box: BoxDim[] = shape.map((_, d) => ({ start: start[d]!, step: 1, count: 1 }));
  let prev = -1;
  for (let k = 0; k < view.shape.length; k++) {
    const n = view.shape[k]!;
    const s = view.strides[k]!;
    let found = -1;
    for (let d = prev + 1; d < shape.length && found < 0; d++) {
      const r = rs[d]!;
      const ok =
        n === 1 ? s === r : s > 0 && s % r === 0 && start[d]! + (s / r) * (n - 1) < shape[d]!;
      if (ok) found = d;
    }
    if (found < 0) return undefined;
    box[found] = { start: start[found]!, step: n === 1 ? 1 : s / rs[found]!, count: n, axis: k };
    prev = found;
  }
  return box;
}

/** The view of a tile of `shape` that `box` describes. */
function boxView(base: View, box: readonly BoxDim[], shape: readonly number[]): View {
  const rs = rowMajorStrides(shape);
  let offset = 0;
  const vShape: number[] = [];
  const strides: number[] = [];
  box.forEach((it, d) => {
    offset += it.start * rs[d]!;
    if (it.axis === undefined) return;
    vShape.push(it.count);
    strides.push(it.step * rs[d]!);
  });
  return {
    ...base,
    offset: intImm(offset),
    shape: vShape,
    strides,
    axes: vShape.map(() => ""),
  };
}

/**
 * The nearest box a layout of the registers expresses, per dim (the dims' iters are disjoint
 * digits, so each dim is judged with the others whole): the dim's slice as given, else its span
 * with step 1, widened outward to the next whole run of the dim's inner digits, up to the whole
 * dim. Undefined if even that fails (not expected).
 */
function nearestBox(whole: RegisterTile, view: View, box: readonly BoxDim[]): BoxDim[] | undefined {
  const shape = whole.shape;
  const full = (d: number, axis: number): BoxDim => ({ start: 0, step: 1, count: shape[d]!, axis });
  const fits = (d: number, it: BoxDim): boolean => {
    const trial = box.map((x, e) => (e === d ? it : full(e, e)));
    return "layout" in subLayout(whole, boxView(view, trial, shape));
  };
  const out = box.map((it, d) => {
    if (fits(d, it)) return it;
    // The dim's digits inside out: runs of 1, e_last, e_last · e_prev, …, the whole dim.
    const grains = [1];
    const dims = iterDims(whole);
    whole.layout.shard.forEach((x, i) => {
      if (dims[i] === d && x.extent > 1) grains.push(x.extent);
    });
    const runs: number[] = [];
    let p = 1;
    for (let i = grains.length - 1; i >= 1; i--) runs.push((p *= grains[i]!));
    runs.unshift(1);
    const stop = it.start + (it.count - 1) * it.step + 1;
    for (const g of runs) {
      const a = Math.floor(it.start / g) * g;
      const b = Math.min(shape[d]!, Math.ceil(stop / g) * g);
      const cand: BoxDim = { start: a, step: 1, count: b - a, axis: d };
      if (fits(d, cand)) return cand;
    }
    return full(d, d);
  });
  // The suggested box's axes in dim order (a fixed index that became a slice keeps its place).
  let k = 0;
  const numbered = out.map((it) => (it.axis === undefined ? it : { ...it, axis: k++ }));
  return "layout" in subLayout(whole, boxView(view, numbered, shape)) ? numbered : undefined;
}

/** One digit of a tile's flat row-major index: an iter of its layout (or a part of one). */
interface Digit {
  readonly extent: number;
  readonly stride: number;
  readonly axis: LayoutAxis;
  /** What one step of this digit is worth in the tile's row-major index. */
  readonly place: number;
  /** The tile's iter it is (or was split from), for messages. */
  readonly iter: LayoutIter;
  /** The tile's dim it belongs to. */
  readonly dim: number;
}

/** Why a view is not a layout of the tile's registers. */
type Cut =
  | { kind: "bounds" }
  | { kind: "overlap"; axis: number }
  | { kind: "stride"; axis: number; places: number[] }
  | { kind: "straddle"; axis: number }
  | {
      kind: "thread";
      /** The view axis that narrows the iter; undefined when no axis takes it (fixed). */
      axis?: number;
      dim: number;
      iter: LayoutIter;
      /** The digit is a part of the iter (split for a step). */
      split: boolean;
      keep: number;
      of: number;
    };

/**
 * The layout of the tile's registers that `view` (constant start) selects, or why there is none.
 * The tile's shard (extent-1 iters dropped) splits its row-major index into digits; a view axis
 * of stride `s` and extent `n` must be a run of consecutive digits, the innermost worth `s` (an
 * iter is split where a stepped axis needs it) and the outermost narrowed to `n / inner` values
 * from the start's digit; digits in no run are fixed at the start's digit. Fixed or narrowed
 * digits must be on `m`; they move into the `m` offset.
 */
function subLayout(whole: RegisterTile, view: View): { layout: TileLayout } | { cut: Cut } {
  const off = constInt(view.offset);
  invariant(off !== undefined, "subLayout: the view's start is constant");
  let lo = off;
  let hi = off;
  view.shape.forEach((n, k) => {
    const s = view.strides[k]!;
    if (n > 1) {
      if (s > 0) hi += s * (n - 1);
      else lo += s * (n - 1);
    }
  });
  if (lo < 0 || hi >= numel(whole.shape)) return { cut: { kind: "bounds" } };
  const digits: Digit[] = [];
  const dims = iterDims(whole);
  whole.layout.shard.forEach((x, i) => {
    if (x.extent > 1) digits.push({ ...x, place: 0, iter: x, dim: dims[i]! });
  });
  let place = 1;
  for (let i = digits.length - 1; i >= 0; i--) {
    digits[i] = { ...digits[i]!, place };
    place *= digits[i]!.extent;
  }
  // A stepped axis: split the iter its step falls inside (extent a·b → a of place s, then b).
  for (let k = 0; k < view.shape.length; k++) {
    const s = view.strides[k]!;
    if (view.shape[k]! === 1 || digits.some((d) => d.place === s)) continue;
    const i = digits.findIndex((d) => d.place < s && s < d.place * d.extent);
    const d = digits[i];
    if (!d || s % d.place !== 0 || (d.place * d.extent) % s !== 0) {
      return { cut: { kind: "stride", axis: k, places: digits.map((x) => x.place) } };
    }
    const inner = s / d.place;
    digits.splice(
      i,
      1,
      { ...d, extent: d.extent / inner, stride: d.stride * inner, place: s },
      { ...d, extent: inner },
    );
  }
  const value = digits.map((d) => Math.floor(off / d.place) % d.extent);
  const owner = digits.map(() => -1);
  const shard: LayoutIter[] = [];
  let m = whole.layout.offset.m ?? 0;
  for (let k = 0; k < view.shape.length; k++) {
    const n = view.shape[k]!;
    if (n === 1) continue;
    const b = digits.findIndex((d) => d.place === view.strides[k]!);
    let a = b;
    let inner = 1;
    let c = 0;
    for (;;) {
      if (a < 0 || n % inner !== 0) return { cut: { kind: "straddle", axis: k } };
      c = n / inner;
      if (c <= digits[a]!.extent) break;
      inner *= digits[a]!.extent;
      a--;
    }
    for (let l = a; l <= b; l++) {
      if (owner[l]! >= 0) return { cut: { kind: "overlap", axis: k } };
      owner[l] = k;
      if (l > a && value[l] !== 0) return { cut: { kind: "straddle", axis: k } };
    }
    const top = digits[a]!;
    if (value[a]! + c > top.extent) return { cut: { kind: "straddle", axis: k } };
    if (top.axis !== "m" && c < top.extent) {
      const split = top.extent !== top.iter.extent;
      const cut = { kind: "thread", axis: k, dim: top.dim, iter: top.iter, split } as const;
      return { cut: { ...cut, keep: c, of: top.extent } };
    }
    if (top.axis === "m") m += value[a]! * top.stride;
    shard.push({ extent: c, stride: top.stride, axis: top.axis });
    for (let l = a + 1; l <= b; l++) {
      const d = digits[l]!;
      shard.push({ extent: d.extent, stride: d.stride, axis: d.axis });
    }
  }
  for (let l = 0; l < digits.length; l++) {
    if (owner[l]! >= 0) continue;
    const d = digits[l]!;
    if (d.axis !== "m") {
      const split = d.extent !== d.iter.extent;
      return { cut: { kind: "thread", dim: d.dim, iter: d.iter, split, keep: 1, of: d.extent } };
    }
    m += value[l]! * d.stride;
  }
  return {
    layout: layoutFromIters(
      shard.length > 0 ? shard : [{ extent: 1, stride: 1, axis: "m" }],
      whole.layout.replica,
      { ...whole.layout.offset, m },
    ),
  };
}

/** An iter in TIRx notation, `32:1@laneid` (`4:1` on m). */
function iterText(x: LayoutIter): string {
  return `${x.extent}:${x.axis === "m" ? x.stride : `${x.stride}@${x.axis}`}`;
}
