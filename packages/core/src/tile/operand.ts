import { TirxError } from "../diagnostics.js";
import type { DType } from "../dtype.js";
import type { Buffer, Expr } from "../ir/expr.js";
import type { View } from "../ir/buffer.js";
import type { LaunchConfig, Stmt } from "../ir/stmt.js";
import type { LayoutAxis, LayoutIter, TileLayout } from "../ir/tile-layout.js";
import { defaultLayout, layoutGroups, showTileLayout } from "../layout/tile-layout.js";
import { numel } from "../ir/buffer.js";
import type { Span } from "../span.js";
import type { ScratchClaim, ScratchScope } from "./shared-scratch.js";

/**
 * The set of threads that run a tile primitive together (TIRx's scope namespaces): `thread`
 * (`T.tile.*`: each thread alone), `warp` (`T.tile.warp.*`), `wg` (`T.tile.wg.*`: a warpgroup of
 * 4 warps), `cta` (`T.tile.cta.*`: every thread of the CTA; may hold CTA barriers).
 */
export type TileScope = "thread" | "warp" | "wg" | "cta";

/** Every {@link TileScope}, narrowest first. */
export const TILE_SCOPES: readonly TileScope[] = ["thread", "warp", "wg", "cta"];

/**
 * A register tile operand: a local buffer, its static logical shape, and its TileLayout (a
 * buffer without one is the row-major layout of every thread holding the whole array).
 * `layout` is grouped by `shape` when the shape's dims line up with runs of its iters (see
 * {@link registerTile}); else it is the layout as given and `dims` is undefined: the tile's
 * elements are the shard's by their row-major index (TIRx docs, "Tensor Layout"), and a
 * primitive that needs dims reads the tile under another shape ({@link reshapedTile}) or says
 * why it cannot.
 */
export interface RegisterTile {
  readonly kind: "register";
  readonly buffer: Buffer;
  readonly shape: readonly number[];
  readonly dtype: DType;
  /** The layout, grouped by `shape` when it groups. */
  readonly layout: TileLayout;
  /** `dims[i]` is the logical dim of shard iter i; undefined when `shape` does not group. */
  readonly dims: readonly number[] | undefined;
  /** True when the buffer records a TileLayout (else the default row-major one). */
  readonly laidOut: boolean;
}

/** A shared or global operand: a static view (elements of `view.dtype`). */
export interface MemoryTile {
  readonly kind: "memory";
  readonly view: View;
}

/** A scalar (broadcast) operand: one expression for every element. */
export interface ScalarOperand {
  readonly kind: "scalar";
  readonly expr: Expr;
}

/**
 * A function of a tile's logical indices (TIRx's tile primitives take reified Python lambdas,
 * `LambdaExprNode` in tvm/tirx/tile_primitive.h): `fn(idx)` gets one int32 expression per dim of
 * the destination (the element's logical index) and returns the operand's value there, e.g. a
 * bool for `select`'s `cond`. Evaluated once while tracing, inside the slot loop, so the
 * expressions it builds are computed per element.
 */
export interface IndexFnOperand {
  readonly kind: "index_fn";
  readonly fn: (idx: readonly Expr[]) => Expr;
}

/** One resolved operand of a tile primitive. */
export type TileArg = RegisterTile | MemoryTile | ScalarOperand;

/**
 * What a primitive's lowering may read besides its operands: the launch (thread counts), the
 * linear thread index in the CTA as an int32 expression, the scope, the target sm, the author's
 * span, whether the call sits inside a loop, and a fresh-buffer factory.
 */
export interface TileContext {
  readonly name: string;
  readonly scope: TileScope;
  readonly launch: LaunchConfig;
  /** `threadIdx` linearized, x fastest (int32). */
  readonly tid: Expr;
  /** The compile target's sm when known (dispatch rules that need a newer instruction read it). */
  readonly sm?: number;
  /** True when the call is nested in a loop or branch (its shared scratch waits for a barrier first). */
  readonly nested: boolean;
  readonly span?: Span;
  /**
   * The call's part of the kernel's shared scratch of `scope` (`SharedScratch.claim`: one region
   * per scope for every call, sized by the largest; the kernel allocates it), and whether the
   * call's barrier must come before its first store into it.
   */
  readonly sharedScratch: (req: {
    readonly scope: ScratchScope;
    readonly bytes: number;
    readonly groups?: number;
  }) => ScratchClaim;
  /**
   * A fresh local buffer (e.g. a per-thread scratch) named after `hint`; the lowering emits its
   * Alloc. Shared scratch comes from `sharedScratch` only, so that every call shares it.
   */
  readonly fresh: (hint: string, shape: readonly number[], dtype: DType, scope: "local") => Buffer;
  /** A fresh int32 or float variable named after `hint`. */
  readonly freshVar: (hint: string, dtype: DType) => import("../ir/expr.js").Var;
}

/** What a primitive's dispatch returns: the statements to emit and why it chose them. */
export interface TileLowering {
  readonly stmts: readonly Stmt[];
  /** One line: the instructions chosen and the fact of the layouts that chose them. */
  readonly explain: string;
}

/**
 * The TX2022 (tile/dispatch) error: `requirement` is the rule that failed, `nearest` the layout
 * (or call) that would be served.
 */
export function tileDispatchError(
  ctx: Pick<TileContext, "name" | "scope" | "span">,
  requirement: string,
  nearest?: string,
): TirxError {
  const at = ctx.scope === "thread" ? `T.tile.${ctx.name}` : `T.tile.${ctx.scope}.${ctx.name}`;
  return new TirxError(
    "TX2022",
    `${at}: ${requirement}${nearest ? `; nearest that works: ${nearest}` : ""}`,
    ctx.span,
  );
}

/**
 * A local buffer as a register tile: its TileLayout (or the default row-major one) grouped by
 * its static shape when the shape's dims line up with runs of its iters (else ungrouped, `dims`
 * undefined).
 * @throws TirxError TX2022 for a buffer that is not local or has a symbolic shape; TX1026 when the
 *   shape's size is not the layout's (the verifier's TX2021 says the same later).
 */
export function registerTile(
  buffer: Buffer,
  ctx: Pick<TileContext, "name" | "scope" | "span">,
): RegisterTile {
  if (buffer.scope !== "local" || !buffer.shape.every((d) => typeof d === "number")) {
    throw tileDispatchError(
      ctx,
      `${buffer.name} must be a register tile (T.alloc_local with a static shape), not a ${buffer.scope} buffer`,
      `T.alloc_local([${buffer.shape.map((d) => (typeof d === "number" ? d : d.name)).join(", ")}], "${buffer.dtype}", { layout })`,
    );
  }
  const shape = buffer.shape as readonly number[];
  const base = buffer.tileLayout ?? defaultLayout(shape.length > 0 ? shape : [1]);
  return groupedTile(buffer, shape, base, ctx.span);
}

/**
 * The register tile of `buffer` seen as `shape` with `layout`: grouped by `shape` when it
 * groups ({@link layoutGroups}), else the layout as given with `dims` undefined.
 * @throws TirxError TX1026 when the shape's size is not the layout's.
 */
export function groupedTile(
  buffer: Buffer,
  shape: readonly number[],
  layout: TileLayout,
  span?: Span,
): RegisterTile {
  const g = layoutGroups(layout, shape.length > 0 ? shape : [1], span);
  if (!g) {
    return {
      kind: "register",
      buffer,
      shape,
      dtype: buffer.dtype,
      layout,
      dims: undefined,
      laidOut: buffer.tileLayout !== undefined,
    };
  }
  const dims: number[] = [];
  for (let d = 0; d + 1 < g.seps.length; d++) {
    for (let i = g.seps[d]!; i < g.seps[d + 1]!; i++) dims.push(d);
  }
  while (dims.length < g.layout.shard.length) dims.push(Math.max(0, shape.length - 1));
  return {
    kind: "register",
    buffer,
    shape,
    dtype: buffer.dtype,
    layout: g.layout,
    dims,
    laidOut: buffer.tileLayout !== undefined,
  };
}

/**
 * The same registers read as another shape of the same size (TIRx docs, "Tensor Layout": a
 * layout admits every shape of its size, element by row-major index), grouped by it; undefined
 * when that shape does not group either. Primitives that need dims (a reduction's axis, a
 * broadcast, a view's strides) read a tile whose own shape does not group under a coarser one.
 * @throws TirxError TX1026 when the sizes differ (an internal error of the caller).
 */
export function reshapedTile(t: RegisterTile, shape: readonly number[]): RegisterTile | undefined {
  const r = groupedTile(t.buffer, shape, t.layout);
  return r.dims === undefined ? undefined : { ...r, laidOut: t.laidOut };
}

/** The tile's layout in TIRx notation, for messages. */
export function showTile(t: RegisterTile): string {
  return `${t.buffer.name} ${showTileLayout(t.layout)}`;
}

/** Number of logical elements of a register tile. */
export function tileElements(t: RegisterTile): number {
  return numel(t.shape);
}

/** The shard iters of a layout on memory (`m`), with their index in the shard. */
export function memoryIters(l: TileLayout): { iter: LayoutIter; index: number }[] {
  return l.shard.flatMap((iter, index) => (iter.axis === "m" ? [{ iter, index }] : []));
}

/** True when the layout binds no thread axis in its shard (every thread holds every element). */
export function isThreadLocal(l: TileLayout): boolean {
  return l.shard.every((x) => x.axis === "m" && x.extent >= 1);
}

/** The thread axes a layout names in its shard and replica. */
export function threadAxes(l: TileLayout): LayoutAxis[] {
  const out = new Set<LayoutAxis>();
  for (const x of [...l.shard, ...l.replica]) if (x.axis !== "m" && x.extent > 1) out.add(x.axis);
  return [...out];
}

/**
 * A view of one or two dims of extent > 1 (extent-1 dims dropped) as rows × cols with their
 * element strides: one dim is a single row (rows 1, row stride 0); no dim is one element. With
 * more dims the result is the last dim as one row: callers check the rank first.
 */
export function viewRows(v: View): {
  rows: number;
  cols: number;
  rowStride: number;
  colStride: number;
} {
  const big = v.shape.flatMap((n, d) => (n === 1 ? [] : [d]));
  const last = big[big.length - 1];
  const first = big.length === 2 ? big[0] : undefined;
  return {
    rows: first === undefined ? 1 : v.shape[first]!,
    cols: last === undefined ? 1 : v.shape[last]!,
    rowStride: first === undefined ? 0 : v.strides[first]!,
    colStride: last === undefined ? 1 : v.strides[last]!,
  };
}
