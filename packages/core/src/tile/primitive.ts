import type { DType } from "../dtype.js";
import { cast } from "../ir/arith.js";
import type { Expr } from "../ir/expr.js";
import {
  LAYOUT_AXES,
  type LayoutAxis,
  type LayoutIter,
  type TileLayout,
} from "../ir/tile-layout.js";
import { layoutAxisRange, layoutFromIters, showTileLayout } from "../layout/tile-layout.js";
import { checkOpCall } from "../ops/check.js";
import { opOf } from "../ops/registry.js";
import { layoutText } from "./layout-name.js";
import {
  threadAxes,
  tileDispatchError,
  type IndexFnOperand,
  type RegisterTile,
  type TileArg,
  type TileContext,
  type TileLowering,
  type TileScope,
} from "./operand.js";
import { withArticle } from "../show.js";

/**
 * The kind of one operand of a tile primitive, as the dsl surface takes it:
 * - `register`: a register tile (`T.alloc_local`, with or without a TileLayout);
 * - `tile`: a register tile or a shared/global view;
 * - `value`: a register tile or a scalar (broadcast to every element);
 * - `predicate`: a `value`, or a function of the destination's logical indices
 *   ({@link IndexFnOperand}: `select`'s `cond` for masks such as causal attention's);
 * - `axis`: a static integer (a logical dim of the source tile);
 * - `options`: an optional plain object of the primitive's options.
 */
export type TileOperandKind = "register" | "tile" | "value" | "predicate" | "axis" | "options";

/** One operand of a primitive: its name (for messages and docs) and kind. */
export interface TileOperandSpec {
  readonly name: string;
  readonly kind: TileOperandKind;
}

/**
 * A resolved operand as a lowering gets it: tiles and scalars, a function of the indices, an
 * axis, or options.
 */
export type TileInput =
  TileArg | IndexFnOperand | number | Readonly<Record<string, unknown>> | undefined;

/**
 * One tile primitive (TIRx `Tx.tile.<name>`): its name, the scopes it serves, its operands, and
 * its dispatch: `lower` reads the operands' layouts, the scope and the target, and returns the
 * ordinary IR it lowers to (loops, loads and stores, vector accesses, shuffles, shared scratch and
 * barriers) with one line of why; or throws TX2022 naming the failed requirement. The verifier
 * and the simulator see only that IR, so every contract and hazard check of those instructions
 * applies to the primitive.
 */
export interface TilePrimitive<
  Ops extends readonly TileOperandSpec[] = readonly TileOperandSpec[],
> {
  /** TIRx's name, e.g. `"sum"`, `"copy"`, `"exp2"`. */
  readonly name: string;
  /** One line for the surface's doc. */
  readonly doc: string;
  readonly scopes: readonly TileScope[];
  readonly operands: Ops;
  /** Option names `options` accepts (checked by the surface). */
  readonly options?: readonly string[];
  readonly lower: (args: readonly TileInput[], ctx: TileContext) => TileLowering;
}

/** Every scope: elementwise work and copies follow the layout whatever the scope. */
export const ALL_SCOPES: readonly TileScope[] = ["thread", "warp", "wg", "cta"];

/** The operands of a copy-like primitive: a destination tile, then a source tile. */
export const DST_SRC = [
  { name: "dst", kind: "tile" },
  { name: "src", kind: "tile" },
] as const satisfies readonly TileOperandSpec[];

/** The thread axes a layout may bind at each scope (its threads must all be in the scope). */
const SCOPE_AXES: Readonly<Record<TileScope, readonly LayoutAxis[]>> = {
  thread: [],
  warp: ["laneid"],
  wg: ["laneid", "tid_in_wg"],
  cta: ["laneid", "warpid", "tid_in_wg", "wgid", "tid"],
};

/**
 * `l` written over the axes a `scope` primitive reads, naming the same threads of the scope's
 * first warp or warpgroup (PTX ISA, "Thread hierarchy": tid_in_wg = 32·warpid + laneid inside a
 * warpgroup, laneid = tid inside the first warp): at `wg`, `k@warpid` is `32·k@tid_in_wg`,
 * `k@laneid` is `k@tid_in_wg` (a layout naming warps but no lane gets `R[32 : 1@tid_in_wg]`, its
 * lanes being implicit replicas) and `k@tid` is `k@tid_in_wg`; at `warp`, `k@tid` is
 * `k@laneid`. Undefined when no such rewrite exists: other axes, a mix of tid and
 * laneid/warpid, or coordinates past the scope (warpid ≥ 4, tid ≥ 128 or 32).
 */
export function layoutForScope(l: TileLayout, scope: TileScope): TileLayout | undefined {
  const axes = new Set(threadAxes(l));
  const fits = (a: LayoutAxis, n: number): boolean => {
    const r = layoutAxisRange(l, a);
    return r.min >= 0 && r.max < n;
  };
  // Each axis as digits of the scope's thread index (PTX ISA, "Thread hierarchy"), when its
  // coordinates stay inside the scope's first warp / warpgroup.
  const within: Partial<Record<LayoutAxis, [LayoutAxis, number, number]>> =
    scope === "wg"
      ? {
          laneid: ["tid_in_wg", 1, 32],
          warpid: ["tid_in_wg", 32, 4],
          tid: ["tid_in_wg", 1, 128],
          tid_in_wg: ["tid_in_wg", 1, 128],
        }
      : scope === "warp"
        ? { laneid: ["laneid", 1, 32], tid: ["laneid", 1, 32] }
        : {};
  const target = scope === "wg" ? "tid_in_wg" : "laneid";
  // Nothing to rewrite: the scope's own axis, or lanes alone (allowed at wg, other warps copies).
  if ([...axes].every((a) => a === target || a === "laneid")) return undefined;
  const map: Partial<Record<LayoutAxis, [LayoutAxis, number]>> = {};
  for (const a of axes) {
    const w = within[a];
    if (!w || !fits(a, w[2])) return undefined;
    map[a] = [w[0], w[1]];
  }
  const move = (x: LayoutIter): LayoutIter => {
    const to = map[x.axis];
    return to ? { extent: x.extent, stride: x.stride * to[1], axis: to[0] } : x;
  };
  const replica = l.replica.map(move);
  // Warps named without their lanes: the lanes are implicit replicas, made explicit.
  if (map.warpid && !axes.has("laneid") && !axes.has("tid") && !axes.has("tid_in_wg"))
    replica.push({ extent: 32, stride: 1, axis: "tid_in_wg" });
  const offset: Partial<Record<LayoutAxis, number>> = {};
  for (const a of LAYOUT_AXES) {
    const v = l.offset[a];
    if (v === undefined) continue;
    const to = map[a] ?? [a, 1];
    offset[to[0]] = (offset[to[0]] ?? 0) + v * to[1];
  }
  return layoutFromIters(l.shard.map(move), replica, offset);
}

/**
 * The thread axes a layout's shard may bind at `scope` (its threads must all be in the scope):
 * none for `thread`, laneid for `warp`, laneid and tid_in_wg for `wg`, any for `cta`.
 * @throws TirxError TX2022 naming the axis (and its iter) that leaves the scope, the axes the
 *   scope takes, and as the nearest: the layout rewritten over those axes when it names the
 *   same threads ({@link layoutForScope}: `1@warpid` inside a warpgroup is `32@tid_in_wg`),
 *   and the wider scope that serves the layout as it is.
 */
export function checkScope(t: RegisterTile, ctx: TileContext): void {
  const allowed = SCOPE_AXES[ctx.scope];
  const bad = t.layout.shard.find(
    (x) => x.axis !== "m" && x.extent > 1 && !allowed.includes(x.axis),
  );
  if (!bad) return;
  const wider = (["warp", "wg", "cta"] as const).find((s) => SCOPE_AXES[s].includes(bad.axis))!;
  const takes =
    ctx.scope === "thread"
      ? "a thread-scope primitive's layouts bind no thread axis (only m)"
      : `a ${ctx.scope}-scope primitive's layouts bind only ${allowed.join(" and ")}`;
  const rule =
    ctx.scope === "wg"
      ? "; inside a warpgroup 1@warpid is 32@tid_in_wg (k@warpid is 32·k@tid_in_wg), and k@laneid and k@tid are k@tid_in_wg"
      : ctx.scope === "warp" && bad.axis === "tid"
        ? "; inside the first warp, k@tid is k@laneid"
        : "";
  const moved = layoutForScope(t.layout, ctx.scope);
  const here = ctx.scope === "thread" ? `T.tile.${ctx.name}` : `T.tile.${ctx.scope}.${ctx.name}`;
  throw tileDispatchError(
    ctx,
    `${t.buffer.name} ${showTileLayout(t.layout)} spreads over ${bad.axis} (the iter ${bad.extent} : ${bad.stride}@${bad.axis}), beyond the threads of one ${ctx.scope}: ${takes}${rule}`,
    moved
      ? `${layoutText(moved, t.shape, t.dtype)} (the same threads in each ${ctx.scope === "wg" ? "warpgroup" : "warp"}) with ${here}, or this layout with T.tile.${wider}.${ctx.name}`
      : `T.tile.${wider}.${ctx.name}`,
  );
}

/**
 * A tile without a TileLayout is per-thread (every thread holds the whole array): a warp, wg or
 * cta primitive would have every thread move every element.
 * @throws TirxError TX2022 for such a tile at warp, wg or cta scope.
 */
export function checkLaidOut(t: RegisterTile, ctx: TileContext): void {
  if (t.laidOut || ctx.scope === "thread") return;
  throw tileDispatchError(
    ctx,
    `${t.buffer.name} [${t.shape.join(", ")}] has no TileLayout, so it is per-thread (every thread would hold and move all ${t.shape.reduce((a, b) => a * b, 1)} elements); a ${ctx.scope}-scope primitive needs a tile laid out over its threads`,
    `T.alloc_local([${t.shape.join(", ")}], "${t.dtype}", { layout: T.TileLayout(...) }), or the thread scope T.tile.${ctx.name}`,
  );
}

/**
 * Register tiles combined element by element must share one dtype (no silent conversion).
 * @throws TirxError TX2022 naming the dtypes and suggesting `T.tile.cast` first.
 */
export function checkSameDType(
  tiles: readonly { role: string; tile: RegisterTile }[],
  ctx: TileContext,
): void {
  const first = tiles[0];
  const other = tiles.find((t) => t.tile.dtype !== first?.tile.dtype);
  if (!first || !other) return;
  throw tileDispatchError(
    ctx,
    `register tiles must have one dtype: ${first.role} ${first.tile.buffer.name} is ${first.tile.dtype}, ${other.role} ${other.tile.buffer.name} ${other.tile.dtype}`,
    `T.tile.cast ${other.tile.buffer.name} into ${withArticle(first.tile.dtype)} tile first`,
  );
}

/** A value op call (a `CallExpr`) checked against its record in the op table. */
export function valueOp(name: string, args: readonly Expr[], ctx: TileContext): Expr {
  const op = opOf(name, "value", ctx.span);
  const dtype = checkOpCall(op, args, ctx.span);
  return {
    kind: "CallExpr",
    op: name,
    args,
    dtype: dtype ?? args[0]!.dtype,
    ...(ctx.span ? { span: ctx.span } : {}),
  };
}

/** `e` converted to `dtype` (itself when it already has it). */
export function asDType(e: Expr, dtype: DType): Expr {
  return e.dtype === dtype ? e : cast(dtype, e);
}

/**
 * Narrow a resolved operand to a register tile.
 * @throws TirxError TX2022 when it is a memory view or a scalar.
 */
export function needRegister(a: TileInput, what: string, ctx: TileContext): RegisterTile {
  if (typeof a === "object" && a !== null && (a as TileArg).kind === "register") {
    return a as RegisterTile;
  }
  throw tileDispatchError(ctx, `${what} must be a register tile (T.alloc_local)`);
}

/** A resolved operand as a tile or scalar (undefined for axes and options). */
export function asArg(a: TileInput): TileArg | undefined {
  if (typeof a !== "object" || a === null) return undefined;
  const k = (a as { kind?: unknown }).kind;
  return k === "register" || k === "memory" || k === "scalar" ? (a as TileArg) : undefined;
}

export type { TileLowering };
