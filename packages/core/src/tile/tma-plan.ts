import { gcd, knownDivisor, provableAlignment } from "../analysis/bounds.js";
import { dtypeBytes } from "../dtype.js";
import { binary } from "../ir/arith.js";
import {
  isStaticShape,
  rowMajorStrides,
  showShape,
  type Buffer,
  type Dim as ShapeDim,
  type View,
} from "../ir/buffer.js";
import { constInt, intImm, type Expr } from "../ir/expr.js";
import { mkTensorMap, SWIZZLE_BYTES, type TensorMap, type TmaSwizzle } from "../ir/tensor-map.js";
import { showSwizzle, swizzleModeOf } from "../layout/swizzle.js";
import { tileDispatchError, type TileContext } from "./operand.js";

/** TMA tensors have rank 1..5 (PTX ISA, cp.async.bulk.tensor: `.dim` is `.1d` … `.5d`). */
const MAX_RANK = 5;
/** Box extents are at most 256 elements per axis (CUDA Driver API, cuTensorMapEncodeTiled). */
const MAX_BOX = 256;
/** Most TMA instructions one tile call unrolls into (a wider split is a dst layout to rethink). */
export const MAX_TMA_ISSUES = 32;

const SWIZZLE_OF_MODE: readonly TmaSwizzle[] = ["none", "32B", "64B", "128B"];

/** One `cp.async.bulk.tensor` of a planned copy: the shared tile it fills or reads, its coords. */
export interface TmaIssue {
  /** The tensor map this issue uses (the plan's map, or its tail map for the last box of a cut). */
  readonly map: TensorMap;
  /** The shared box: the map's box shape (rank of the global tensor), dense row-major. */
  readonly shared: View;
  /** Box origin in the global tensor, one int32 per axis, outermost first. */
  readonly coords: readonly Expr[];
}

/** A copy between a shared view and a global view planned as TMA issues of one tensor map. */
export interface TmaCopyPlan {
  /** The map of the full boxes. */
  readonly map: TensorMap;
  /**
   * The map of the narrower last box along a cut dim whose extent is not a multiple of the box
   * (264 rows as 256 + 8): same tensor and swizzle, that box's shape. Absent when boxes are equal.
   */
  readonly tailMap?: TensorMap;
  readonly issues: readonly TmaIssue[];
  /** Bytes of one full box (of `map`). */
  readonly boxBytes: number;
  /** Bytes of the whole tile (what the caller's expect_tx must cover for a load). */
  readonly totalBytes: number;
}

/** One dim of the copy (extent > 1): its extent and its strides in the shared and global views. */
interface Dim {
  readonly n: number;
  readonly ds: number;
  readonly gs: number;
}

/**
 * Tensor maps planned so far per global tensor: the same tensor, box and swizzle planned twice
 * in one kernel (two calls, or two issues) reuse one map, so the kernel takes one map parameter.
 * Buffers belong to one traced kernel, so the cache never joins maps of two kernels.
 */
const MAPS = new WeakMap<Buffer, TensorMap[]>();

function mapFor(buffer: Buffer, box: readonly number[], swizzle: TmaSwizzle): TensorMap {
  let list = MAPS.get(buffer);
  if (!list) MAPS.set(buffer, (list = []));
  const key = box.join(",");
  const hit = list.find((m) => m.swizzle === swizzle && m.box.join(",") === key);
  if (hit) return hit;
  const m = mkTensorMap({
    buffer,
    box,
    elementStrides: box.map(() => 1),
    swizzle,
    l2Promotion: "none",
    oobFill: "none",
    name: list.length === 0 ? `${buffer.name}_tmap` : `${buffer.name}_tmap${list.length}`,
  });
  list.push(m);
  return m;
}

/** The constant factor of a product (`e * 4 * 16` → 64, `x << 3` → 8) and the rest. */
function splitCoef(e: Expr): { k: number; atom: Expr | undefined } {
  const c = constInt(e);
  if (c !== undefined) return { k: c, atom: undefined };
  if (e.kind === "Binary" && e.op === "mul") {
    const cb = constInt(e.b);
    if (cb !== undefined) {
      const r = splitCoef(e.a);
      return { k: r.k * cb, atom: r.atom };
    }
    const ca = constInt(e.a);
    if (ca !== undefined) {
      const r = splitCoef(e.b);
      return { k: r.k * ca, atom: r.atom };
    }
  }
  if (e.kind === "Binary" && e.op === "shl") {
    const s = constInt(e.b);
    if (s !== undefined && s >= 0 && s < 31) {
      const r = splitCoef(e.a);
      return { k: r.k * 2 ** s, atom: r.atom };
    }
  }
  return { k: 1, atom: e };
}

/** The terms of a sum (`add` trees flattened). */
function terms(e: Expr): Expr[] {
  if (e.kind === "Binary" && e.op === "add") return [...terms(e.a), ...terms(e.b)];
  return [e];
}

/**
 * The coordinates (outermost first, int32) of element offset `offset` of a row-major tensor of
 * `shape`: the constant part by division; each term `k · x` (k a constant factor, k > 1) to the
 * outermost axis whose stride divides k, as `(k / stride) · x` — how `sub`, slices and
 * `rearrange` build a tile's offset from per-axis tile indices (`A.rearrange("(m r) (n c) -> m n
 * r c", ...).sub(i, j)`: i·r·K + j·c), exact while each index stays inside its axis, as it does
 * for an in-bounds tile of such a view; a bare term (k = 1, e.g. one opaque offset variable) is
 * split exactly by floordiv/floormod over every axis.
 */
export function coordsOf(offset: Expr, shape: readonly ShapeDim[]): Expr[] {
  if (!isStaticShape(shape)) return symbolicCoordsOf(offset, shape);
  const strides = rowMajorStrides(shape);
  const out: Expr[] = shape.map(() => intImm(0));
  const add = (g: number, e: Expr): void => {
    out[g] = binary("add", out[g]!, e);
  };
  let c = 0;
  for (const t of terms(offset)) {
    const { k, atom } = splitCoef(t);
    if (atom === undefined) {
      c += k;
      continue;
    }
    const g = strides.findIndex((s) => k % s === 0);
    if (k !== 1 || g === 0) {
      add(g, k / strides[g]! === 1 ? atom : binary("mul", atom, intImm(k / strides[g]!)));
      continue;
    }
    strides.forEach((s, a) => {
      const q = binary("floordiv", t, intImm(s));
      add(a, a === 0 ? q : binary("floormod", q, intImm(shape[a]!)));
    });
  }
  let rest = c;
  strides.forEach((s, a) => {
    const q = Math.floor(rest / s);
    rest -= q * s;
    if (q !== 0) add(a, intImm(q));
  });
  return out;
}

/** The factors of a product (`mul` trees flattened). */
function factors(e: Expr): Expr[] {
  if (e.kind === "Binary" && e.op === "mul") return [...factors(e.a), ...factors(e.b)];
  return [e];
}

/**
 * Row-major strides of a shape with symbolic dims, per axis: the symbolic dims inside it (their
 * `Var` ids, sorted) and the product of the static ones (`[b, s, 8, 64]`: axis 0 is s · 512).
 */
function symbolicStrides(shape: readonly ShapeDim[]): { vars: number[]; k: number }[] {
  const out: { vars: number[]; k: number }[] = [];
  let vars: number[] = [];
  let k = 1;
  for (let a = shape.length - 1; a >= 0; a--) {
    out[a] = { vars: [...vars].sort((x, y) => x - y), k };
    const d = shape[a]!;
    if (typeof d === "number") k *= d;
    else vars = [...vars, d.id];
  }
  return out;
}

/**
 * {@link coordsOf} of a tensor with symbolic dims: a term `k · v₁ · … · x` whose symbolic-dim
 * factors v are those of an axis' stride and whose constant k is a multiple of the stride's
 * static part goes to the outermost such axis as `(k / static) · x` (`b · (s · 512)` of
 * `[b, s, 8, 64]` is coordinate b on axis 0; `r · 512` is r on axis 1), the constant part to the
 * axes of static stride, and any other term is split exactly by floordiv/floormod over every
 * axis with the strides and dims as expressions.
 */
function symbolicCoordsOf(offset: Expr, shape: readonly ShapeDim[]): Expr[] {
  const strides = symbolicStrides(shape);
  const dimExpr = (d: ShapeDim): Expr => (typeof d === "number" ? intImm(d) : d);
  const strideExpr = (a: number): Expr =>
    shape.slice(a + 1).reduce<Expr>((acc, d) => binary("mul", acc, dimExpr(d)), intImm(1));
  const symbolic = new Set(shape.flatMap((d) => (typeof d === "number" ? [] : [d.id])));
  const out: Expr[] = shape.map(() => intImm(0));
  const add = (g: number, e: Expr): void => {
    out[g] = binary("add", out[g]!, e);
  };
  const sameVars = (a: readonly number[], b: readonly number[]): boolean =>
    a.length === b.length && a.every((x, i) => x === b[i]);
  let c = 0;
  for (const t of terms(offset)) {
    const { k: k0, atom } = splitCoef(t);
    if (atom === undefined) {
      c += k0;
      continue;
    }
    const vars: number[] = [];
    const rest: Expr[] = [];
    let k = k0;
    for (const f of factors(atom)) {
      const fc = constInt(f);
      if (fc !== undefined) k *= fc;
      else if (f.kind === "Var" && symbolic.has(f.id)) vars.push(f.id);
      else rest.push(f);
    }
    vars.sort((x, y) => x - y);
    const g = strides.findIndex((st) => sameVars(st.vars, vars) && k % st.k === 0);
    if (g >= 0 && (k !== 1 || vars.length > 0 || g === 0)) {
      const x = rest.length === 0 ? intImm(1) : rest.reduce((p, f) => binary("mul", p, f));
      const q = k / strides[g]!.k;
      add(g, q === 1 ? x : binary("mul", x, intImm(q)));
      continue;
    }
    shape.forEach((d, a) => {
      const q = binary("floordiv", t, strideExpr(a));
      add(a, a === 0 ? q : binary("floormod", q, dimExpr(d)));
    });
  }
  // The constant part: on the axes of static stride, outermost first.
  let rest = c;
  strides.forEach((st, a) => {
    if (st.vars.length > 0) return;
    const q = Math.floor(rest / st.k);
    rest -= q * st.k;
    if (q !== 0) add(a, intImm(q));
  });
  return out;
}

/** The TMA swizzle of a shared buffer's layout. @throws TirxError TX2022 for a non-TMA one. */
function swizzleOf(shared: View, ctx: TileContext): TmaSwizzle {
  const l = shared.buffer.layout;
  if (!l || l.swizzleLen === 0) return "none";
  const mode = swizzleModeOf(l);
  if (mode !== undefined) return SWIZZLE_OF_MODE[mode]!;
  throw tileDispatchError(
    ctx,
    `${shared.buffer.name}'s ${showSwizzle(l)} is not a TMA swizzle mode (TMA writes the 32B, 64B or 128B swizzle of CUtensorMapSwizzle)`,
    `alloc_shared(..., { layout: T.swizzle_mode("128B" | "64B" | "32B") })`,
  );
}

/** Provable byte alignment of a view's first element (the buffer's alignment caps it). */
export function viewAlignment(v: View): number {
  return provableAlignment(knownDivisor(v.offset) * dtypeBytes(v.dtype), v.buffer.align);
}

/**
 * Plan a copy between shared view `shared` and global view `global` (one dtype, equal extents
 * once extent-1 dims are dropped, paired in order) as TMA boxes of one tensor map over
 * `global`'s whole tensor (CUDA Driver API cuTensorMapEncodeTiled; PTX ISA
 * cp.async.bulk.tensor):
 * - the map's swizzle is the shared buffer's (`T.swizzle_mode`), dims and strides the tensor's;
 * - the box is the chain of dims, innermost first, that is dense in shared memory in the
 *   tensor's axis order: the dim of shared stride 1 (global stride 1), then the dim whose shared
 *   stride is the product of the box so far and whose global stride is an outer axis' stride,
 *   and so on. A dim wider than 256 elements, or an innermost dim wider than the swizzle span
 *   (128B: 128 bytes, 64 float16), is cut into the widest boxes whose innermost extent stays a
 *   multiple of 16 bytes and whose shared starts stay on the swizzle atom (see `cutDim`): 300
 *   float32 columns as 256 + 44, 264 rows of 128 bytes as 256 + 8, equal boxes where as few
 *   allow; a narrower last box is a second tensor map (`tailMap`). The chain ends at a cut.
 *   Every other dim (and the rest of a cut dim) is an issue dim: one TMA per index, at its
 *   shared offset and global coordinates;
 * - so a dst is filled exactly as its view says: a 256 × 32 float32 row-major dst of 512 rows is
 *   two 256 × 32 boxes, the second at shared offset 256·32; a 128 × 128 float16 tile under a
 *   128B swizzle is two 128 × 64 boxes when the dst is a column-block view (buffer
 *   [2, 128, 64], view `sA.rearrange("b r c -> r b c")`, src `A.rearrange("r (b c) -> r b c")`):
 *   block b at shared offset b·128·64 elements, the layout wgmma reads for K-major 128B swizzle
 *   with K = 128; a row-major 128 × 128 dst would take 256 one-row boxes and is refused.
 * Coordinates come from the global view's offset (see {@link coordsOf}).
 * The tensor's dims may be symbolic (`T.Tensor(["b", "s", 8, 64], ...)`): the map's dims and
 * strides are then the launch's (the runtime encodes it from the bound sizes; a stride that is
 * not a multiple of 16 bytes is TX4024 at launch), the views' static strides match only the
 * axes whose strides are static, a box along an axis of symbolic length is not checked against
 * it (TMA fills what lies past the end with zeros), and coordinates come off the offset's terms
 * by the symbolic strides (`b · (s · 512)` is coordinate b on axis 0).
 * @throws TirxError TX2022: rank > 5, a global row stride not a multiple of 16 bytes, the
 *   innermost dim strided (global or shared), a non-TMA swizzle, a box start not provably on
 *   the swizzle atom (1024 B for 128B, else 128 B; a shared stride between boxes that breaks it
 *   is named, with the row pitch that works), an innermost extent not a multiple of 16 bytes
 *   (the nearest extent named), more than {@link MAX_TMA_ISSUES} issues. Refused only when no
 *   cut into legal boxes exists.
 */
export function planTma(shared: View, global: View, ctx: TileContext): TmaCopyPlan {
  const gb = global.buffer;
  // Dims and row-major strides; undefined for a stride with a symbolic dim inside (the launch's,
  // checked then: tensorMapLaunchDims), which no view's static stride can name.
  const gshape = gb.shape;
  const R = gshape.length;
  const eb = dtypeBytes(shared.dtype);
  if (R > MAX_RANK) {
    throw tileDispatchError(
      ctx,
      `TMA tensors have rank 1..5, but ${gb.name} has rank ${R}`,
      `a ${gb.name}.rearrange(...) is not enough (the map describes the tensor): use the cp.async path (T.tile.warp.copy_async) or T.tile.copy`,
    );
  }
  const gstr: (number | undefined)[] = [];
  let acc: number | undefined = 1;
  for (let k = R - 1; k >= 0; k--) {
    gstr[k] = acc;
    const d = gshape[k]!;
    acc = acc === undefined || typeof d !== "number" ? undefined : acc * d;
  }
  for (let k = 0; k < R - 1; k++) {
    const st = gstr[k];
    if (st !== undefined && (st * eb) % 16 !== 0) {
      throw tileDispatchError(
        ctx,
        `axis ${k} of ${gb.name} ${showShape(gshape)} has a stride of ${st * eb} bytes; a tensor map needs strides that are multiples of 16 bytes`,
        `pad the inner axis of ${gb.name} to a multiple of ${16 / gcd(16, eb)} elements, or the cp.async path (T.tile.warp.copy_async)`,
      );
    }
  }
  const swizzle = swizzleOf(shared, ctx);
  const span = SWIZZLE_BYTES[swizzle];
  /** Box starts in shared memory: the swizzle atom (8 rows of the span), at least 128 bytes. */
  const need = Math.max(128, 8 * span);
  const sdims = shared.shape.flatMap((n, d) => (n === 1 ? [] : [d]));
  const gdims = global.shape.flatMap((n, d) => (n === 1 ? [] : [d]));
  const dims: Dim[] = sdims.map((d, i) => ({
    n: shared.shape[d]!,
    ds: shared.strides[d]!,
    gs: global.strides[gdims[i]!]!,
  }));
  const axisOf = (gs: number, n: number): number => {
    for (let g = R - 1; g >= 0; g--) {
      const d = gshape[g]!;
      // A symbolic dim's length is the launch's: a box past its end is filled (OOB).
      if (gstr[g] === gs && (typeof d !== "number" || d >= n)) return g;
    }
    return -1;
  };
  // The box chain, innermost first.
  const box = gshape.map(() => 1);
  const used = new Set<number>();
  const issueDims: Dim[] = [];
  /** The narrower last box of a cut dim: its axis, extent, and shared / global offsets. */
  let cut: { g: number; tail: number; ds: number; gs: number } | undefined;
  let cur = 1;
  let prevAxis = R;
  for (;;) {
    const i = dims.findIndex((x, j) => !used.has(j) && x.ds === cur);
    const x = dims[i];
    const g = x ? axisOf(x.gs, x.n) : -1;
    if (!x || g < 0 || g >= prevAxis || (cur === 1 && g !== R - 1)) {
      if (cur === 1) {
        const sInner = dims.find((y) => y.ds === 1);
        throw tileDispatchError(
          ctx,
          sInner
            ? `the innermost dim of ${shared.buffer.name} (shared stride 1) has a global stride of ${sInner.gs} in ${gb.name}; TMA boxes are contiguous along the tensor's innermost axis`
            : `no dim of ${shared.buffer.name} has shared stride 1, so no TMA box row is contiguous in shared memory`,
          `views whose innermost dim is contiguous on both sides, or T.tile.copy through registers`,
        );
      }
      break;
    }
    used.add(i);
    const inner = prevAxis === R;
    const cap = inner && span > 0 ? Math.min(MAX_BOX, span / eb) : MAX_BOX;
    if (x.n > cap) {
      const c = cutDim(x, inner, cap, eb, need, shared, ctx);
      box[g] = c.b;
      issueDims.push({ n: c.q, ds: x.ds * c.b, gs: x.gs * c.b });
      if (c.tail > 0) cut = { g, tail: c.tail, ds: x.ds * c.b * c.q, gs: x.gs * c.b * c.q };
      break;
    }
    box[g] = x.n;
    prevAxis = g;
    cur *= x.n;
  }
  dims.forEach((x, j) => {
    if (!used.has(j)) issueDims.push(x);
  });
  const innerBytes = box[R - 1]! * eb;
  if (innerBytes % 16 !== 0) {
    const unit = 16 / gcd(16, eb);
    throw tileDispatchError(
      ctx,
      `the innermost TMA box is ${box[R - 1]} × ${shared.dtype} = ${innerBytes} bytes; boxes need a multiple of 16 bytes along the innermost axis`,
      innerFix(
        shared,
        box[R - 1]!,
        unit,
        eb,
        need,
        span > 0 ? Math.min(MAX_BOX, span / eb) : MAX_BOX,
      ),
    );
  }
  const main = issueDims.reduce((a, x) => a * x.n, 1);
  // The tail boxes: one per index of the issue dims other than the cut one (issueDims[0]).
  const count = main + (cut ? main / issueDims[0]!.n : 0);
  const boxShape = `[${box.join(", ")}]`;
  if (count > MAX_TMA_ISSUES) {
    const spanEl = span > 0 ? span / eb : 0;
    throw tileDispatchError(
      ctx,
      `the dst ${shared.buffer.name} [${shared.shape.join(", ")}] (strides [${shared.strides.join(", ")}]) is dense in shared memory only in boxes of ${boxShape}, so the copy would take ${count} TMA issues (at most ${MAX_TMA_ISSUES})`,
      spanEl > 0 && dims.some((x) => x.ds === 1 && x.n > spanEl)
        ? `column blocks of ${spanEl} (${swizzle} swizzle span): a shared buffer [blocks, rows, ${spanEl}] viewed as .rearrange("b r c -> r b c"), with src .rearrange("r (b c) -> r b c", { c: ${spanEl} })`
        : `a dst view that is row-major over the tile (as ${gb.name}'s axes), so one box covers it`,
    );
  }
  const got = viewAlignment(shared);
  const stepAlign = issueDims.reduce((a, x) => gcd(a, x.ds * eb), cut ? cut.ds * eb : 0);
  const align = provableAlignment(stepAlign, got);
  if (align % need !== 0) {
    const atom = span > 0 ? ` (the ${swizzle} swizzle atom: 8 rows of ${span} bytes)` : "";
    const bad = issueDims.find((x) => (x.ds * eb) % need !== 0);
    if (got % need === 0 && bad) {
      const unit = need / gcd(need, eb);
      const pitch = Math.ceil(bad.ds / unit) * unit;
      const shape = shared.buffer.shape;
      const rows2d =
        shape.length === 2 &&
        shared.strides[shared.strides.length - 1] === 1 &&
        bad.ds === shape[1];
      throw tileDispatchError(
        ctx,
        `a TMA box in ${shared.buffer.name} must start ${need}-byte aligned${atom}, but consecutive boxes along a dim of ${bad.n} are ${bad.ds * eb} bytes apart (its shared stride ${bad.ds} × ${shared.dtype}), so only ${align}-byte aligned`,
        rows2d
          ? `a row pitch that is a multiple of ${unit} elements: T.alloc_shared([${String(shape[0])}, ${pitch}], ...) and the copy into its .sub(":", "0:${String(shape[1])}")`
          : `a shared stride along that dim that is a multiple of ${unit} elements (${pitch} instead of ${bad.ds}): pad ${shared.buffer.name} and copy into a view of it`,
      );
    }
    throw tileDispatchError(
      ctx,
      `a TMA box in ${shared.buffer.name} must start ${need}-byte aligned${atom}, but its boxes are only provably ${align}-byte aligned`,
      `T.alloc_shared(..., { align: ${need} }) and box offsets that are multiples of ${need} bytes`,
    );
  }
  const map = mapFor(gb, box, swizzle);
  const tailBox = cut ? box.map((b, a) => (a === cut!.g ? cut!.tail : b)) : undefined;
  const tailMap = tailBox ? mapFor(gb, tailBox, swizzle) : undefined;
  const issues: TmaIssue[] = [];
  const emit = (m: TensorMap, shape: number[], dims: readonly Dim[], d0: number, g0: number) => {
    const n = dims.reduce((a, x) => a * x.n, 1);
    const tileStrides = rowMajorStrides(shape);
    for (let e = 0; e < n; e++) {
      let r = e;
      let dOff = d0;
      let gOff = g0;
      for (let k = dims.length - 1; k >= 0; k--) {
        const x = dims[k]!;
        const j = r % x.n;
        r = Math.floor(r / x.n);
        dOff += j * x.ds;
        gOff += j * x.gs;
      }
      const goff = binary("add", global.offset, intImm(gOff));
      issues.push({
        map: m,
        shared: {
          ...shared,
          offset: binary("add", shared.offset, intImm(dOff)),
          shape: [...shape],
          strides: tileStrides,
          axes: shape.map(() => ""),
        },
        coords: coordsOf(goff, gshape),
      });
    }
  };
  emit(map, box, issueDims, 0, 0);
  if (cut && tailMap && tailBox) emit(tailMap, tailBox, issueDims.slice(1), cut.ds, cut.gs);
  // A box's innermost coordinate must be a multiple of 16 bytes: on the H200 a copy at 4 bytes
  // stopped the kernel with an illegal instruction (the simulator's TX6031 at run time). Refused
  // here where the coordinate is a constant.
  for (const is of issues) {
    const c = constInt(is.coords[is.coords.length - 1]!);
    if (c !== undefined && (c * eb) % 16 !== 0) {
      const unit = 16 / gcd(16, eb);
      throw tileDispatchError(
        ctx,
        `a TMA box of ${gb.name} starts at element ${c} of its innermost axis (${c * eb} bytes); the copy engine needs a multiple of 16 bytes there (${unit} ${gb.dtype} elements)`,
        `a view of ${gb.name} starting at innermost element ${Math.floor(c / unit) * unit} instead of ${c} (a multiple of ${unit} ${gb.dtype} elements; read inside the box from there), or the cp.async path (T.tile.warp.copy_async)`,
      );
    }
  }
  const boxBytes = box.reduce((a, b) => a * b, eb);
  const tailBytes = tailBox ? tailBox.reduce((a, b) => a * b, eb) : 0;
  return {
    map,
    ...(tailMap ? { tailMap } : {}),
    issues,
    boxBytes,
    totalBytes: boxBytes * main + tailBytes * (count - main),
  };
}

/**
 * The nearest call for an innermost extent `n` that is not a multiple of `unit` elements (16
 * bytes): the next multiple, and, for a 2-D shared buffer whose rows would then be separate boxes
 * (wider than `cap`, or padded), a row pitch that keeps each row's box `need`-byte aligned.
 */
function innerFix(
  shared: View,
  n: number,
  unit: number,
  eb: number,
  need: number,
  cap: number,
): string {
  const up = Math.ceil(n / unit) * unit;
  const text = `an innermost extent that is a multiple of ${unit} elements (${up} instead of ${n})`;
  const shape = shared.buffer.shape;
  const rows = shared.shape.some((x, d) => x > 1 && shared.strides[d] === shape[1]);
  if (shape.length !== 2 || typeof shape[1] !== "number" || !rows) return text;
  const pitch = Math.max(shape[1], up);
  const rowUnit = need / gcd(need, eb);
  if ((up <= cap && pitch === up) || (pitch * eb) % need === 0) {
    return pitch === shape[1]
      ? text
      : `${text}, in T.alloc_shared([${String(shape[0])}, ${pitch}], ...)`;
  }
  return `${text}, in rows ${need}-byte aligned: T.alloc_shared([${String(shape[0])}, ${Math.ceil(pitch / rowUnit) * rowUnit}], ...) and the copy into its .sub(":", "0:${up}")`;
}

const lcm = (a: number, b: number): number => (a / gcd(a, b)) * b;

/**
 * How a dim of the box chain wider than a box (`cap`: 256 elements, or the swizzle span for the
 * innermost) is cut: boxes of `b` elements, `q` of them, then one of `tail` (0: none). Each box
 * extent along the innermost axis is a multiple of 16 bytes, and each box starts `need` bytes
 * (the swizzle atom, at least 128) after a multiple of the view's start, so b is a multiple of
 * both granules; the plan takes the fewest boxes (the largest such b ≤ cap), equal boxes of one
 * map where that count allows them (300 = 3 × 100 would take 3; 256 + 44 takes 2).
 * Where no box start along the dim reaches `need` bytes within `cap` elements (an innermost dim
 * under a swizzle), equal boxes of the largest divisor of the extent, for the plan's issue-count
 * and alignment checks to refuse with the layout that works.
 * @throws TirxError TX2022 for an innermost extent wider than a box and not a multiple of 16
 *   bytes (no cut into whole 16-byte rows exists).
 */
function cutDim(
  x: Dim,
  inner: boolean,
  cap: number,
  eb: number,
  need: number,
  shared: View,
  ctx: TileContext,
): { b: number; q: number; tail: number } {
  const ext = inner ? 16 / gcd(16, eb) : 1;
  if (x.n % ext !== 0) {
    throw tileDispatchError(
      ctx,
      `the innermost extent ${x.n} × ${shared.dtype} = ${x.n * eb} bytes is wider than one TMA box (${cap} elements) and not a multiple of 16 bytes, so it splits into no boxes of whole 16-byte rows`,
      innerFix(shared, x.n, ext, eb, need, cap),
    );
  }
  const start = need / gcd(need, x.ds * eb);
  const unit = lcm(ext, start);
  const top = Math.floor(cap / unit) * unit;
  if (top === 0) {
    // No box start along this dim reaches the atom (an innermost dim under a swizzle: boxes at
    // span offsets inside a row): equal boxes of the largest divisor, which the plan's issue
    // count and alignment checks then refuse with the layout that works (column blocks).
    let b = cap;
    while (x.n % b !== 0) b--;
    return { b, q: x.n / b, tail: 0 };
  }
  const k = Math.ceil(x.n / top);
  if (x.n % k === 0 && (x.n / k) % unit === 0) return { b: x.n / k, q: k, tail: 0 };
  return { b: top, q: Math.floor(x.n / top), tail: x.n % top };
}
