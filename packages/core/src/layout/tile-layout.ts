import { dtypeBytes, type DType } from "../dtype.js";
import { TirxError } from "../diagnostics.js";
import { invariant } from "../invariant.js";
import type { Span } from "../span.js";
import {
  LAYOUT_AXES,
  type ComposeLayout,
  type LayoutAxis,
  type LayoutIter,
  type TileLayout,
} from "../ir/tile-layout.js";
import type { SwizzleLayout } from "../ir/swizzle-layout.js";
import { didYouMean } from "../suggest.js";
import { applySwizzle, showSwizzle } from "./swizzle.js";

export type { ComposeLayout, LayoutAxis, LayoutIter, TileLayout };
export { LAYOUT_AXES };

/*
 * TIRx's layout model (TIRx docs, "Tensor Layout", tvm.apache.org/docs/tirx/layout.html, and
 * the `tvm_tirx.tirx.TileLayout` reference): a shard D, a replica R and an offset O over named
 * axes; L(x) = { D(x) + r + O : r ∈ R }. Every error a user's spec can cause is TX1026
 * (layout/tile-layout) at the author's span; broken internal assumptions are invariant().
 */

/**
 * A stride as the notation writes it: an integer (on the memory axis `m`), `"4@laneid"` (4 on
 * `laneid`), or `{ stride, axis }`. Checked at run time: the number an integer, the axis one of
 * {@link LAYOUT_AXES}.
 */
export type StrideSpec =
  number | `${number}@${LayoutAxis}` | { readonly stride: number; readonly axis: LayoutAxis };

/**
 * The iters of a shard `S[(extents) : (strides)]` or a replica `R[...]`: extents (positive
 * integers) and strides, one per extent. Without strides: contiguous row-major on `m` (the last
 * extent stride 1), as TIRx's `S[4, 8]`.
 */
export interface IterSpec {
  readonly extents: readonly number[];
  readonly strides?: readonly StrideSpec[];
}

/** A layout's three parts as specs: `S[...] + R[...] + O[...]`. */
export interface TileLayoutSpec {
  readonly shard: IterSpec;
  readonly replica?: IterSpec;
  /** Offset terms, summed per axis: `[16, "3@laneid"]` is 16 on `m` and 3 on `laneid`. */
  readonly offset?: readonly StrideSpec[];
}

/** A physical coordinate: a value per axis. */
export type LayoutCoord = Readonly<Partial<Record<LayoutAxis, number>>>;

const AXIS_SET: ReadonlySet<string> = new Set(LAYOUT_AXES);

/** True for a name of {@link LAYOUT_AXES}. */
export function isLayoutAxis(x: unknown): x is LayoutAxis {
  return typeof x === "string" && AXIS_SET.has(x);
}

const bad = (message: string, span?: Span, fix?: string): TirxError =>
  new TirxError("TX1026", message, span, [
    {
      message:
        'a TileLayout is S[(extents) : (strides)] + R[...] + O[...]; a stride is an integer on the memory axis m or "k@axis" with axis one of ' +
        LAYOUT_AXES.join(", "),
    },
    ...(fix ? [{ message: fix }] : []),
  ]);

const show = (x: unknown): string => {
  if (typeof x === "string") return JSON.stringify(x);
  if (typeof x === "number" || typeof x === "boolean" || x === undefined || x === null)
    return String(x);
  try {
    return JSON.stringify(x) ?? typeof x;
  } catch {
    return typeof x;
  }
};

/**
 * `{ stride, axis }` of one stride spec.
 * @throws TirxError TX1026 for a non-integer stride or an unknown axis.
 */
export function parseStride(
  s: unknown,
  what: string,
  span?: Span,
): { stride: number; axis: LayoutAxis } {
  let stride: unknown;
  let axis: unknown = "m";
  if (typeof s === "number") stride = s;
  else if (typeof s === "string") {
    const m = /^\s*(-?\d+)\s*(?:@\s*([A-Za-z_]\w*)\s*)?$/.exec(s);
    if (!m) throw bad(`${what}: ${show(s)} is not a stride (an integer, or "k@axis")`, span);
    stride = Number(m[1]);
    if (m[2] !== undefined) axis = m[2];
  } else if (typeof s === "object" && s !== null) {
    stride = (s as { stride?: unknown }).stride;
    axis = (s as { axis?: unknown }).axis;
  } else {
    throw bad(`${what}: ${show(s)} is not a stride (an integer, or "k@axis")`, span);
  }
  if (typeof stride !== "number" || !Number.isSafeInteger(stride)) {
    throw bad(`${what}: the stride ${show(stride)} must be an integer`, span);
  }
  if (!isLayoutAxis(axis)) throw bad(unknownAxis(what, axis), span);
  return { stride: stride === 0 ? 0 : stride, axis };
}

/**
 * Names users write for an axis (CUDA's, CuTe's, or a shortened TIRx name), each with the
 * {@link LAYOUT_AXES} name it means. Checked before the edit-distance guess, which would take
 * `warp` for `warpid` but not `threadIdx` for `tid`.
 */
const AXIS_ALIASES: Readonly<Record<string, LayoutAxis>> = {
  lane: "laneid",
  lane_id: "laneid",
  warp: "warpid",
  warp_id: "warpid",
  wg: "wgid",
  warpgroup: "wgid",
  warpgroup_id: "wgid",
  tid_in_warpgroup: "tid_in_wg",
  thread: "tid",
  threadIdx: "tid",
  memory: "m",
};

/**
 * The message for an axis name that is not one of {@link LAYOUT_AXES}: the name, the nearest
 * axis (an alias from {@link AXIS_ALIASES} or a name within typo distance), and every axis.
 * @example unknownAxis("a stride", "lane") // 'a stride: unknown axis `lane`; did you mean `laneid`? ...'
 */
function unknownAxis(what: string, axis: unknown): string {
  const all = `the axes are ${LAYOUT_AXES.join(", ")}`;
  if (typeof axis !== "string") return `${what}: ${show(axis)} is not a layout axis (${all})`;
  const guess = Object.hasOwn(AXIS_ALIASES, axis)
    ? AXIS_ALIASES[axis]
    : didYouMean(axis, LAYOUT_AXES);
  return `${what}: unknown axis \`${axis}\`${guess ? `; did you mean \`${guess}\`?` : ""} (${all})`;
}

/** Row-major contiguous strides of `extents` (the last 1). */
function rowMajor(extents: readonly number[]): number[] {
  const out = new Array<number>(extents.length);
  let s = 1;
  for (let i = extents.length - 1; i >= 0; i--) {
    out[i] = s;
    s *= extents[i]!;
  }
  return out;
}

function checkIters(spec: unknown, what: string, span?: Span): LayoutIter[] {
  if (typeof spec !== "object" || spec === null) {
    throw bad(`${what} must be { extents, strides? }, got ${show(spec)}`, span);
  }
  const { extents, strides } = spec as { extents?: unknown; strides?: unknown };
  if (!Array.isArray(extents)) {
    throw bad(
      `${what}: the extents must be an array of positive integers, got ${show(extents)}`,
      span,
    );
  }
  for (const e of extents as unknown[]) {
    if (typeof e !== "number" || !Number.isSafeInteger(e) || e <= 0) {
      throw bad(`${what}: the extent ${show(e)} must be a positive integer`, span);
    }
  }
  const ext = extents as number[];
  const total = ext.reduce((a, b) => a * b, 1);
  if (!Number.isSafeInteger(total)) {
    throw bad(`${what}: the extents (${ext.join(", ")}) multiply past 2^53`, span);
  }
  if (strides === undefined) {
    return rowMajor(ext).map((stride, i) => ({ extent: ext[i]!, stride, axis: "m" }));
  }
  if (!Array.isArray(strides) || strides.length !== ext.length) {
    throw bad(
      `${what}: ${ext.length} extents need ${ext.length} strides, got ${show(strides)}`,
      span,
    );
  }
  return ext.map((extent, i) => ({
    extent,
    ...parseStride((strides as unknown[])[i], what, span),
  }));
}

function checkOffset(terms: unknown, span?: Span): Partial<Record<LayoutAxis, number>> {
  if (terms === undefined) return {};
  if (!Array.isArray(terms)) {
    throw bad(`the offset must be an array of terms (16, "3@laneid"), got ${show(terms)}`, span);
  }
  const sum: Partial<Record<LayoutAxis, number>> = {};
  for (const t of terms as unknown[]) {
    const { stride, axis } = parseStride(t, "the offset", span);
    sum[axis] = (sum[axis] ?? 0) + stride;
  }
  return normalOffset(sum);
}

/** The offset with zero terms left out and keys in LAYOUT_AXES order. */
function normalOffset(
  o: Readonly<Partial<Record<LayoutAxis, number>>>,
): Partial<Record<LayoutAxis, number>> {
  const out: Partial<Record<LayoutAxis, number>> = {};
  for (const a of LAYOUT_AXES) {
    const v = o[a];
    if (v !== undefined && v !== 0) out[a] = v;
  }
  return out;
}

/**
 * A TileLayout from its S/R/O specs (TIRx `TileLayout(S[...] + R[...] + offset)`).
 * @example tileLayout({ shard: { extents: [8, 2, 4, 2], strides: ["4@laneid", "1@warpid", "1@laneid", 1] } })
 * @throws TirxError TX1026 (layout/tile-layout) at `span` for an extent that is not a positive
 *   integer, a stride or offset that is not an integer, an unknown axis, or extents and strides
 *   of different lengths.
 */
export function tileLayout(spec: TileLayoutSpec, span?: Span): TileLayout {
  if (typeof spec !== "object" || spec === null) {
    throw bad(`a TileLayout needs { shard, replica?, offset? }, got ${show(spec)}`, span);
  }
  const shard = checkIters(spec.shard, "the shard S", span);
  const replica = spec.replica === undefined ? [] : checkIters(spec.replica, "the replica R", span);
  return { kind: "TileLayout", shard, replica, offset: checkOffset(spec.offset, span) };
}

/**
 * A TileLayout from built iters (TIRx `TileLayout.from_iters`), checked as {@link tileLayout}.
 * @throws TirxError TX1026 as {@link tileLayout}.
 */
export function layoutFromIters(
  shard: readonly LayoutIter[],
  replica: readonly LayoutIter[] = [],
  offset: LayoutCoord = {},
  span?: Span,
): TileLayout {
  const iters = (xs: readonly LayoutIter[]): IterSpec => ({
    extents: xs.map((x) => x.extent),
    strides: xs.map((x) => ({ stride: x.stride, axis: x.axis })),
  });
  const terms: StrideSpec[] = [];
  for (const a of LAYOUT_AXES) {
    const v = offset[a];
    if (v !== undefined) terms.push({ stride: v, axis: a });
  }
  return tileLayout({ shard: iters(shard), replica: iters(replica), offset: terms }, span);
}

/** TIRx `TileLayout.DefaultLayout(shape)`: `S[shape]`, contiguous row-major on `m`. */
export function defaultLayout(shape: readonly number[], span?: Span): TileLayout {
  return tileLayout({ shard: { extents: shape } }, span);
}

/** True for a {@link TileLayout} value (any object of kind "TileLayout"). */
export function isTileLayout(x: unknown): x is TileLayout {
  return typeof x === "object" && x !== null && (x as { kind?: unknown }).kind === "TileLayout";
}

// ---------------------------------------------------------------------------------------------
// Notation: S[(8, 2, 4, 2) : (4@laneid, 1@warpid, 1@laneid, 1)] + R[2 : 4@warpid] + O[16]
// ---------------------------------------------------------------------------------------------

const strideText = (stride: number, axis: LayoutAxis): string =>
  axis === "m" ? String(stride) : `${stride}@${axis}`;

const group = (xs: readonly string[]): string => (xs.length === 1 ? xs[0]! : `(${xs.join(", ")})`);

function itersText(tag: "S" | "R", xs: readonly LayoutIter[]): string {
  if (xs.length === 0) return `${tag}[()]`;
  const e = group(xs.map((x) => String(x.extent)));
  const s = group(xs.map((x) => strideText(x.stride, x.axis)));
  return `${tag}[${e} : ${s}]`;
}

/**
 * The layout in TIRx's notation, e.g. `S[(8, 2, 4, 2) : (4@laneid, 1@warpid, 1@laneid, 1)] +
 * R[2 : 4@warpid] + O[(16, 3@laneid)]`: strides on `m` as bare integers, the replica and offset
 * only when present. {@link parseTileLayout} reads it back to an equal layout.
 */
export function showTileLayout(l: TileLayout): string {
  const parts = [itersText("S", l.shard)];
  if (l.replica.length > 0) parts.push(itersText("R", l.replica));
  const terms: string[] = [];
  for (const a of LAYOUT_AXES) {
    const v = l.offset[a];
    if (v !== undefined && v !== 0) terms.push(strideText(v, a));
  }
  if (terms.length > 0) parts.push(`O[${group(terms)}]`);
  return parts.join(" + ");
}

type Tok =
  | { t: "num"; v: number; at: number }
  | { t: "id"; v: string; at: number }
  | { t: "p"; v: string; at: number };

function tokenize(text: string, span?: Span): Tok[] {
  const out: Tok[] = [];
  const re = /\s*(?:(-?\d+)|([A-Za-z_]\w*)|([()[\]:,@+]))/y;
  let at = 0;
  while (at < text.length) {
    if (/^\s*$/.test(text.slice(at))) break;
    re.lastIndex = at;
    const m = re.exec(text);
    if (!m) {
      throw bad(
        `TileLayout notation: unexpected ${show(text.slice(at).trim()[0])} at column ${at + 1} of ${show(text)}`,
        span,
      );
    }
    const pos = m.index + m[0].length - (m[1] ?? m[2] ?? m[3] ?? "").length;
    if (m[1] !== undefined) out.push({ t: "num", v: Number(m[1]), at: pos });
    else if (m[2] !== undefined) out.push({ t: "id", v: m[2], at: pos });
    else out.push({ t: "p", v: m[3]!, at: pos });
    at = re.lastIndex;
  }
  return out;
}

/**
 * The layout that TIRx notation `text` writes: `S[...]` (required, first), then optionally
 * `+ R[...]` and `+ O[...]`. A part's body is `extents [: strides]`, each a single item or a
 * parenthesized list; `S[4, 8]` and `S[(4, 8)]` are contiguous row-major on `m`; a stride is an
 * integer (on `m`) or `k@axis`; an offset is a list of such terms.
 * @example parseTileLayout("S[(8, 2, 4, 2) : (4@laneid, 1@warpid, 1@laneid, 1)] + R[2 : 4@warpid]")
 * @throws TirxError TX1026 at `span` for text that is not the notation, or a spec
 *   {@link tileLayout} rejects.
 */
export function parseTileLayout(text: string, span?: Span): TileLayout {
  if (typeof text !== "string")
    throw bad(`TileLayout notation must be a string, got ${show(text)}`, span);
  const toks = tokenize(text, span);
  let i = 0;
  const where = (): string => {
    const t = toks[i];
    return t ? `${show(String(t.v))} at column ${t.at + 1}` : "the end";
  };
  const fail = (want: string): never => {
    throw bad(`TileLayout notation: expected ${want}, found ${where()} in ${show(text)}`, span);
  };
  const isP = (v: string): boolean => {
    const t = toks[i];
    return t !== undefined && t.t === "p" && t.v === v;
  };
  const eat = (v: string): void => {
    if (!isP(v)) fail(`"${v}"`);
    i++;
  };
  // One stride item: an integer, optionally @axis (the axis checked by parseStride).
  const item = (): string | number => {
    const t = toks[i];
    if (!t || t.t !== "num") return fail("an integer");
    i++;
    if (!isP("@")) return t.v;
    i++;
    const a = toks[i];
    if (!a || a.t !== "id") return fail("an axis name after @");
    i++;
    return `${t.v}@${a.v}`;
  };
  // A single item, or a parenthesized (possibly empty) list; bare lists run until ":" or "]".
  const items = (): (string | number)[] => {
    if (isP("(")) {
      i++;
      const xs: (string | number)[] = [];
      if (isP(")")) {
        i++;
        return xs;
      }
      xs.push(item());
      while (isP(",")) {
        i++;
        xs.push(item());
      }
      eat(")");
      return xs;
    }
    const xs = [item()];
    while (isP(",")) {
      i++;
      xs.push(item());
    }
    return xs;
  };
  const iters = (what: string): IterSpec => {
    const ext = items();
    for (const e of ext) {
      if (typeof e !== "number")
        throw bad(`${what}: the extent ${show(e)} must be a positive integer`, span);
    }
    if (!isP(":")) return { extents: ext as number[] };
    i++;
    return { extents: ext as number[], strides: items() as StrideSpec[] };
  };
  const parts: { shard?: IterSpec; replica?: IterSpec; offset?: StrideSpec[] } = {};
  let first = true;
  while (i < toks.length || first) {
    if (!first) eat("+");
    const tag = toks[i];
    if (!tag || tag.t !== "id" || !["S", "R", "O"].includes(tag.v))
      return fail("S[...], R[...] or O[...]");
    if (first && tag.v !== "S") fail("S[...] first");
    first = false;
    i++;
    eat("[");
    if (tag.v === "S" || tag.v === "R") {
      const key = tag.v === "S" ? "shard" : "replica";
      if (parts[key])
        throw bad(`TileLayout notation: ${tag.v}[...] appears twice in ${show(text)}`, span);
      parts[key] = iters(tag.v === "S" ? "the shard S" : "the replica R");
    } else {
      if (parts.offset)
        throw bad(`TileLayout notation: O[...] appears twice in ${show(text)}`, span);
      parts.offset = items() as StrideSpec[];
    }
    eat("]");
  }
  invariant(parts.shard, "parseTileLayout: the shard is parsed first");
  return tileLayout(
    {
      shard: parts.shard,
      ...(parts.replica ? { replica: parts.replica } : {}),
      ...(parts.offset ? { offset: parts.offset } : {}),
    },
    span,
  );
}

// ---------------------------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------------------------

/** The shard extents, outermost first (TIRx `GetShardShape`). */
export function shardShape(l: TileLayout): number[] {
  return l.shard.map((x) => x.extent);
}

/** The axes a layout names (its shard, replica and offset), in LAYOUT_AXES order. */
export function layoutAxes(l: TileLayout): LayoutAxis[] {
  const used = new Set<LayoutAxis>();
  for (const x of [...l.shard, ...l.replica]) used.add(x.axis);
  for (const a of LAYOUT_AXES) if (l.offset[a] !== undefined) used.add(a);
  return LAYOUT_AXES.filter((a) => used.has(a));
}

/**
 * Without `axis`: the number of logical elements (the product of the shard extents; TIRx
 * `size()`). With `axis`: the product of the extents of the shard and replica iters on that
 * axis (how many coordinates it takes when they do not overlap; 1 when unused).
 */
export function layoutSize(l: TileLayout, axis?: LayoutAxis): number {
  const xs =
    axis === undefined ? l.shard : [...l.shard, ...l.replica].filter((x) => x.axis === axis);
  return xs.reduce((a, x) => a * x.extent, 1);
}

/**
 * The least and greatest coordinate on `axis` over every element and replica, offset included
 * (`{ min: o, max: o }` for an axis the layout's iters do not use).
 */
export function layoutAxisRange(l: TileLayout, axis: LayoutAxis): { min: number; max: number } {
  const o = l.offset[axis] ?? 0;
  let min = o;
  let max = o;
  for (const x of [...l.shard, ...l.replica]) {
    if (x.axis !== axis) continue;
    const step = (x.extent - 1) * x.stride;
    if (step > 0) max += step;
    else min += step;
  }
  return { min, max };
}

/**
 * The span on `axis` (default `m`, TIRx `span()`): greatest minus least coordinate plus one,
 * over every element and replica; for `m` of a register tile, the slots a thread's array needs.
 */
export function layoutSpan(l: TileLayout, axis: LayoutAxis = "m"): number {
  const r = layoutAxisRange(l, axis);
  return r.max - r.min + 1;
}

/**
 * TIRx `is_trivial()`: only `m`, no replica or offset, and the shard contiguous row-major (extent-1
 * iters may have any stride) — the layout of a plain row-major array.
 */
export function isTrivialLayout(l: TileLayout): boolean {
  if (l.replica.length > 0 || Object.keys(l.offset).length > 0) return false;
  let s = 1;
  for (let i = l.shard.length - 1; i >= 0; i--) {
    const x = l.shard[i]!;
    if (x.axis !== "m") return false;
    if (x.extent !== 1 && x.stride !== s) return false;
    s *= x.extent;
  }
  return true;
}

/** The layout grouped by a logical shape (TIRx `group`): see {@link groupLayout}. */
export interface GroupedLayout {
  /** The same map, its shard iters split where a shape dim's boundary falls inside one. */
  readonly layout: TileLayout;
  /** Dim d of the shape owns shard iters `seps[d] .. seps[d + 1] - 1` of `layout`. */
  readonly seps: readonly number[];
}

/**
 * Checks that `l` admits the logical shape `shape`: positive integer dims whose product is the
 * layout's size. TIRx docs, "Tensor Layout": "A shape is admitted by a layout when its total size
 * equals ∏ e_k; the same layout then works for any such shape (the flatten/split re-derives the
 * per-iter components)": an element's row-major index over the shape is its index over the
 * shard extents, whether or not the dims line up with runs of the iters ({@link layoutGroups}).
 * @throws TirxError TX1026 at `span` when a dim is not a positive integer or the sizes differ.
 */
export function checkLayoutShape(l: TileLayout, shape: readonly number[], span?: Span): void {
  for (const d of shape) {
    if (typeof d !== "number" || !Number.isSafeInteger(d) || d <= 0) {
      throw bad(`the logical shape [${shape.join(", ")}] must have positive integer dims`, span);
    }
  }
  const total = shape.reduce((a, b) => a * b, 1);
  const size = layoutSize(l);
  if (total !== size) {
    const fit = resizedLayout(l, total);
    const fixes = [
      ...(fit
        ? [`a layout of ${total} elements, ${showTileLayout(fit)} (one extent changed)`]
        : []),
      `the shape [${l.shard.map((x) => x.extent).join(", ")}] of the layout's ${size} elements and a sub-view (.sub) of those you use`,
    ];
    throw bad(
      `${showTileLayout(l)} does not group by the shape [${shape.join(", ")}]: the shard has ${size} elements, the shape ${total}`,
      span,
      `take ${fixes.join(", or ")}`,
    );
  }
}

/**
 * `l` with the extent of one shard iter changed so that the shard holds `total` elements: the
 * first iter on the memory axis that allows it, else the first on a thread axis (its other
 * threads then hold none); undefined when no single extent does.
 */
function resizedLayout(l: TileLayout, total: number): TileLayout | undefined {
  const size = layoutSize(l);
  const order = [
    ...l.shard.flatMap((x, i) => (x.axis === "m" ? [i] : [])),
    ...l.shard.flatMap((x, i) => (x.axis !== "m" ? [i] : [])),
  ];
  for (const i of order) {
    const rest = size / l.shard[i]!.extent;
    const extent = total / rest;
    if (!Number.isInteger(extent) || extent < 1) continue;
    if (l.shard[i]!.axis !== "m" && extent > l.shard[i]!.extent) continue;
    return { ...l, shard: l.shard.map((x, j) => (j === i ? { ...x, extent } : x)) };
  }
  return undefined;
}

/**
 * The shard grouped by logical shape `shape` (TIRx `group(shape)`): consecutive shard iters
 * whose extents multiply to each dim, outermost first. An iter across a dim boundary is split
 * (extent `a·b`, stride s → `a` with stride `b·s`, then `b` with stride s) when the boundary
 * divides it. Extent-1 iters join the dim before them (the first dim when leading).
 * `undefined` when a dim boundary falls inside an iter that it does not divide (`[2, 48]` over
 * `S[(3, 32) : (1, 1@laneid)]`): the shape is still admitted (its elements are the shard's by
 * their row-major index), but no dim is a run of iters.
 * @throws TirxError TX1026 as {@link checkLayoutShape}.
 */
export function layoutGroups(
  l: TileLayout,
  shape: readonly number[],
  span?: Span,
): GroupedLayout | undefined {
  const g = grouping(l, shape, span);
  return "cut" in g ? undefined : g;
}

/**
 * {@link layoutGroups}, required to group.
 * @throws TirxError TX1026 as {@link checkLayoutShape}, and when a boundary does not divide an
 *   iter.
 */
export function groupLayout(l: TileLayout, shape: readonly number[], span?: Span): GroupedLayout {
  const g = grouping(l, shape, span);
  if (!("cut" in g)) return g;
  const { d, x } = g.cut;
  throw bad(
    `${showTileLayout(l)} does not group by the shape [${shape.join(", ")}]: dim ${d} (${shape[d]}) ends inside the iter ${x.extent}:${strideText(x.stride, x.axis)}, which it does not divide`,
    span,
  );
}

/** The grouping of {@link layoutGroups}, or the dim and iter where it fails. */
function grouping(
  l: TileLayout,
  shape: readonly number[],
  span?: Span,
): GroupedLayout | { cut: { d: number; x: LayoutIter } } {
  checkLayoutShape(l, shape, span);
  const queue = [...l.shard];
  const out: LayoutIter[] = [];
  const seps = [0];
  for (let d = 0; d < shape.length; d++) {
    let rem = shape[d]!;
    while (rem > 1) {
      const x = queue.shift();
      invariant(x, "groupLayout: the sizes agree, so iters remain while a dim is unfilled");
      if (rem % x.extent === 0) {
        out.push(x);
        rem /= x.extent;
      } else if (x.extent % rem === 0) {
        const inner = x.extent / rem;
        out.push({ extent: rem, stride: x.stride * inner, axis: x.axis });
        queue.unshift({ extent: inner, stride: x.stride, axis: x.axis });
        rem = 1;
      } else {
        return { cut: { d, x } };
      }
    }
    // Extent-1 iters directly after a filled dim belong to it.
    while (queue.length > 0 && queue[0]!.extent === 1) out.push(queue.shift()!);
    seps.push(out.length);
  }
  invariant(
    queue.length === 0 || shape.length === 0,
    "groupLayout: every iter is taken once the sizes agree",
  );
  if (shape.length === 0) {
    out.push(...queue);
    seps.push(out.length);
    seps.splice(1);
  }
  return { layout: { ...l, shard: out }, seps };
}

/** The shape's row-major linear index of `coord`, checked within the shape. */
function linearIndex(coord: readonly number[], shape: readonly number[], span?: Span): number {
  if (coord.length !== shape.length) {
    throw new TirxError(
      "TX1004",
      `a coordinate of rank ${coord.length} indexes a layout of shape [${shape.join(", ")}]`,
      span,
    );
  }
  let x = 0;
  coord.forEach((c, d) => {
    const n = shape[d]!;
    if (!Number.isSafeInteger(c) || c < 0 || c >= n) {
      throw new TirxError(
        "TX1005",
        `coordinate ${String(c)} lies outside dim ${d} of extent ${n} (shape [${shape.join(", ")}])`,
        span,
      );
    }
    x = x * n + c;
  });
  return x;
}

/** The per-iter values of logical coordinate `coord` (see {@link applyLayout}). */
function iterValues(
  l: TileLayout,
  coord: number | readonly number[],
  shape: readonly number[] | undefined,
  span?: Span,
): number[] {
  const extents = shardShape(l);
  let linear: number;
  if (typeof coord === "number") {
    linear = linearIndex([coord], [layoutSize(l)], span);
  } else if (shape !== undefined) {
    checkLayoutShape(l, shape, span);
    linear = linearIndex(coord, shape, span);
  } else {
    linear = linearIndex(coord, extents, span);
  }
  const out = new Array<number>(extents.length);
  for (let i = extents.length - 1; i >= 0; i--) {
    out[i] = linear % extents[i]!;
    linear = Math.floor(linear / extents[i]!);
  }
  return out;
}

function baseCoord(l: TileLayout, values: readonly number[]): Partial<Record<LayoutAxis, number>> {
  const out: Partial<Record<LayoutAxis, number>> = { m: 0 };
  for (const x of l.replica) out[x.axis] = 0;
  for (const a of LAYOUT_AXES) {
    const v = l.offset[a];
    if (v !== undefined) out[a] = v;
  }
  l.shard.forEach((x, i) => {
    out[x.axis] = (out[x.axis] ?? 0) + values[i]! * x.stride;
  });
  return out;
}

/**
 * The base physical coordinate of a logical element (TIRx `apply`): `D(x) + O` per axis, every
 * axis the layout names plus `m` (0 when unused); replicas are left to {@link layoutCoordinates}.
 * `coord` is one of: a linear index over the logical elements (row-major); a coordinate of
 * `shape` (the layout must group by it); a coordinate with one value per shard iter.
 * @example applyLayout(defaultLayout([4, 8]), [1, 2]).m === 10
 * @throws TirxError TX1004 for a coordinate of the wrong rank, TX1005 for one outside its dim,
 *   TX1026 when `shape` does not group the layout.
 */
export function applyLayout(
  l: TileLayout,
  coord: number | readonly number[],
  shape?: readonly number[],
  span?: Span,
): LayoutCoord {
  return baseCoord(l, iterValues(l, coord, shape, span));
}

/**
 * Every physical coordinate of a logical element: the base coordinate ({@link applyLayout}) plus
 * each combination of replica values, the replica iters enumerated row-major (first iter
 * outermost); `product(replica extents)` coordinates (one without a replica).
 * @throws TirxError as {@link applyLayout}.
 */
export function layoutCoordinates(
  l: TileLayout,
  coord: number | readonly number[],
  shape?: readonly number[],
  span?: Span,
): LayoutCoord[] {
  const base = applyLayout(l, coord, shape, span);
  let out: Partial<Record<LayoutAxis, number>>[] = [{ ...base }];
  for (const x of l.replica) {
    const next: Partial<Record<LayoutAxis, number>>[] = [];
    for (const c of out) {
      for (let r = 0; r < x.extent; r++)
        next.push({ ...c, [x.axis]: (c[x.axis] ?? 0) + r * x.stride });
    }
    out = next;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// ComposeLayout
// ---------------------------------------------------------------------------------------------

/**
 * TIRx `ComposeLayout(swizzle, tile)`: `tile`, then `swizzle` on its memory coordinate `m`.
 * A byte swizzle (`T.swizzle_mode`) is converted to elements of `dtype`.
 * @throws TirxError TX1016 for a byte swizzle without `dtype`, or whose 2^M-byte atom is
 *   smaller than one element or `dtype` not a power-of-two size.
 */
export function composeLayout(
  swizzle: SwizzleLayout,
  tile: TileLayout,
  dtype?: DType,
  span?: Span,
): ComposeLayout {
  let sw = swizzle;
  if (swizzle.unit === "byte") {
    if (dtype === undefined) {
      throw new TirxError(
        "TX1016",
        `ComposeLayout of ${showSwizzle(swizzle)} needs the tile's dtype to count the swizzle in elements`,
        span,
      );
    }
    const shift = Math.log2(dtypeBytes(dtype));
    if (!Number.isInteger(shift) || swizzle.perElement < shift) {
      throw new TirxError(
        "TX1016",
        `ComposeLayout: ${showSwizzle(swizzle)} cannot be counted in ${dtype} elements`,
        span,
      );
    }
    sw = { ...swizzle, perElement: swizzle.perElement - shift, unit: "element" };
  }
  return { kind: "ComposeLayout", swizzle: sw, tile };
}

/**
 * {@link applyLayout} of the tile layout with its `m` coordinate swizzled (in elements).
 * @throws TirxError as {@link applyLayout}; TX1016 for a negative `m` (a swizzle permutes
 *   non-negative offsets).
 */
export function applyComposeLayout(
  c: ComposeLayout,
  coord: number | readonly number[],
  shape?: readonly number[],
  span?: Span,
): LayoutCoord {
  const base = applyLayout(c.tile, coord, shape, span);
  const m = base.m ?? 0;
  if (m < 0) {
    throw new TirxError("TX1016", `ComposeLayout: a swizzle needs m ≥ 0, got ${m}`, span);
  }
  return { ...base, m: applySwizzle(c.swizzle, m) };
}

/** `ComposeLayout(SwizzleLayout(3, 3, 3), S[...])`, for messages and printers. */
export function showComposeLayout(c: ComposeLayout): string {
  return `ComposeLayout(${showSwizzle(c.swizzle)}, ${showTileLayout(c.tile)})`;
}

// ---------------------------------------------------------------------------------------------
// Injectivity
// ---------------------------------------------------------------------------------------------

/**
 * The most physical coordinates (logical elements × replica combinations) that
 * {@link layoutInjective} enumerates: 2^22. Register tiles are far smaller (a thread's array is
 * at most a few hundred slots); above it the check is skipped rather than made quadratic or
 * memory-hungry.
 */
export const INJECTIVE_CHECK_LIMIT = 2 ** 22;

/** Two logical elements that a layout sends to one physical coordinate. */
export interface LayoutCollision {
  /** The two logical elements, as row-major linear indices over the shard (a < b). */
  readonly a: number;
  readonly b: number;
  /** The physical coordinate they share: every axis the layout names, `m` included. */
  readonly at: LayoutCoord;
}

/**
 * Largest code range (product of the axes' ranges) that {@link layoutInjective} checks with a
 * dense array of owners (4 bytes each): 2^22, 16 MiB at most.
 */
const DENSE_CODES = 2 ** 22;

/**
 * `Σ_i c_i · weight(xs[i])` for every combination of iter values `c`, in row-major order (the
 * first iter outermost), as one array of `product(extents)` numbers: built outward from the
 * innermost iter, each step one pass over the array so far.
 */
function iterSums(xs: readonly LayoutIter[], weight: (x: LayoutIter) => number): Float64Array {
  let out = new Float64Array(1);
  for (let i = xs.length - 1; i >= 0; i--) {
    const x = xs[i]!;
    const w = weight(x);
    const next = new Float64Array(out.length * x.extent);
    for (let c = 0; c < x.extent; c++) {
      const add = c * w;
      const at = c * out.length;
      for (let j = 0; j < out.length; j++) next[at + j] = out[j]! + add;
    }
    out = next;
  }
  return out;
}

/**
 * The coordinate on `axis` of every logical element of `l`, by row-major linear index over the
 * shard: element `e`'s is `applyLayout(l, e)[axis]` (its offset included; 0 on an axis the
 * layout does not name), in one pass without a record per element. Replicas are left out, as
 * in {@link applyLayout}.
 * @returns `layoutSize(l)` values. Throws nothing.
 */
export function layoutAxisValues(l: TileLayout, axis: LayoutAxis): Float64Array {
  const out = iterSums(l.shard, (x) => (x.axis === axis ? x.stride : 0));
  const offset = l.offset[axis] ?? 0;
  if (offset !== 0) for (let e = 0; e < out.length; e++) out[e] = out[e]! + offset;
  return out;
}

/**
 * Whether the layout is injective: distinct logical elements reach distinct physical
 * coordinates (the tuple of every axis it names, `m` included), replicas included: no thread
 * slot holds two elements. A register tile whose layout is not would silently overwrite one
 * element with another (TIRx docs, "Tensor Layout": the shard maps each logical element to its
 * own physical place; replicas add copies, never sharing). Linear in the number of physical
 * coordinates: each encoded as a mixed-radix code over the axes' ranges, first owners kept in a
 * dense array where the codes' range is at most 2^22 and 64 times the coordinates, else in a
 * Map.
 * @returns undefined when injective, or when the layout has more than
 *   {@link INJECTIVE_CHECK_LIMIT} physical coordinates (not checked: such a layout is no register
 *   tile, and the verifier bounds `m` separately); else the first {@link LayoutCollision} in
 *   row-major order. Throws nothing.
 */
export function layoutInjective(l: TileLayout): LayoutCollision | undefined {
  const iters = [...l.shard, ...l.replica];
  const n = layoutSize(l);
  const reps = l.replica.reduce((a, x) => a * x.extent, 1);
  if (n * reps > INJECTIVE_CHECK_LIMIT) return undefined;
  const axes = layoutAxes(l).includes("m") ? layoutAxes(l) : ["m" as const, ...layoutAxes(l)];
  // Mixed-radix code over each axis's range (offset left out: it moves every coordinate alike).
  const lo = new Map<LayoutAxis, number>();
  const radix = new Map<LayoutAxis, number>();
  let total = 1;
  for (const a of axes) {
    let min = 0;
    let max = 0;
    for (const x of iters) {
      if (x.axis !== a) continue;
      const step = (x.extent - 1) * x.stride;
      if (step > 0) max += step;
      else min += step;
    }
    lo.set(a, min);
    radix.set(a, total);
    total *= max - min + 1;
  }
  const numeric = total <= Number.MAX_SAFE_INTEGER;
  /** The values of iters `xs` at row-major index `x` over their extents. */
  const digits = (x: number, xs: readonly LayoutIter[]): number[] => {
    const out = new Array<number>(xs.length);
    for (let i = xs.length - 1; i >= 0; i--) {
      out[i] = x % xs[i]!.extent;
      x = Math.floor(x / xs[i]!.extent);
    }
    return out;
  };
  /** The physical coordinate of element `e` in replica combination `k` (offset included). */
  const coord = (e: number, k: number): Record<string, number> => {
    const c: Record<string, number> = {};
    for (const a of axes) c[a] = l.offset[a] ?? 0;
    for (const [xs, v] of [
      [l.shard, digits(e, l.shard)],
      [l.replica, digits(k, l.replica)],
    ] as const)
      xs.forEach((x, i) => (c[x.axis] = c[x.axis]! + v[i]! * x.stride));
    return c;
  };
  // The numeric code of (e, k): a shard part and a replica part (iterSums, integers: exact).
  const radixes = axes.map((a) => radix.get(a)!);
  const codeOf = (x: LayoutIter): number => x.stride * radixes[axes.indexOf(x.axis)]!;
  const base = axes.reduce((s, a, j) => s - lo.get(a)! * radixes[j]!, 0);
  const shardCodes = numeric ? iterSums(l.shard, codeOf) : undefined;
  const repCodes = numeric ? iterSums(l.replica, codeOf) : undefined;
  // First owners (e + 1, 0 for none) in a dense array where the codes' range is small enough
  // (every register tile), else in a Map (codes, or the coordinate as text past 2^53).
  const dense =
    numeric && total <= DENSE_CODES && total <= 64 * n * reps ? new Int32Array(total) : undefined;
  const seen = new Map<number | string, number>();
  for (let e = 0; e < n; e++) {
    for (let k = 0; k < reps; k++) {
      let prev: number | undefined;
      if (dense) {
        const v = base + shardCodes![e]! + repCodes![k]!;
        const o = dense[v]!;
        if (o === 0) dense[v] = e + 1;
        else prev = o - 1;
      } else {
        let key: number | string;
        if (shardCodes) key = base + shardCodes[e]! + repCodes![k]!;
        else {
          const c = coord(e, k);
          key = axes.map((a) => c[a]).join(",");
        }
        prev = seen.get(key);
        if (prev === undefined) seen.set(key, e);
      }
      if (prev !== undefined && prev !== e) return { a: prev, b: e, at: coord(e, k) };
    }
  }
  return undefined;
}
