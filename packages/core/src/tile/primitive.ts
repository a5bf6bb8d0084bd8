import type { DType } from "../dtype.js";
import { cast } from "../ir/arith.js";
import type { Expr } from "../ir/expr.js";
import { showTileLayout } from "../layout/tile-layout.js";
import { checkOpCall } from "../ops/check.js";
import { opOf } from "../ops/registry.js";
import {
  tileDispatchError,
  type RegisterTile,
  type TileArg,
  type TileContext,
  type TileLowering,
  type TileScope,
} from "./operand.js";

/**
 * The kind of one operand of a tile primitive, as the dsl surface takes it:
 * - `register`: a register tile (`T.alloc_local`, with or without a TileLayout);
 * - `tile`: a register tile or a shared/global view;
 * - `value`: a register tile or a scalar (broadcast to every element);
 * - `axis`: a static integer (a logical dim of the source tile);
 * - `options`: an optional plain object of the primitive's options.
 */
export type TileOperandKind = "register" | "tile" | "value" | "axis" | "options";

/** One operand of a primitive: its name (for messages and docs) and kind. */
export interface TileOperandSpec {
  readonly name: string;
  readonly kind: TileOperandKind;
}

/** A resolved operand as a lowering gets it: tiles and scalars, an axis, or options. */
export type TileInput = TileArg | number | Readonly<Record<string, unknown>> | undefined;

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

/**
 * The thread axes a layout's shard may bind at `scope` (its threads must all be in the scope):
 * none for `thread`, laneid for `warp`, laneid and tid_in_wg for `wg`, any for `cta`.
 * @throws TirxError TX2022 naming the scope that would serve the layout.
 */
export function checkScope(t: RegisterTile, ctx: TileContext): void {
  const allowed: Record<TileScope, readonly string[]> = {
    thread: [],
    warp: ["laneid"],
    wg: ["laneid", "tid_in_wg"],
    cta: ["laneid", "warpid", "tid_in_wg", "wgid", "tid"],
  };
  const bad = t.layout.shard.find(
    (x) => x.axis !== "m" && x.extent > 1 && !allowed[ctx.scope].includes(x.axis),
  );
  if (!bad) return;
  const wider = (["warp", "wg", "cta"] as const).find((s) => allowed[s].includes(bad.axis))!;
  throw tileDispatchError(
    ctx,
    `${t.buffer.name} ${showTileLayout(t.layout)} spreads over ${bad.axis}, beyond the threads of one ${ctx.scope === "thread" ? "thread" : ctx.scope}`,
    `T.tile.${wider}.${ctx.name}`,
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
    `T.tile.cast ${other.tile.buffer.name} into a ${first.tile.dtype} tile first`,
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
