import type { DType } from "../dtype.js";
import { binary, ifThenElse } from "../ir/arith.js";
import { floatImm, intImm, type Expr } from "../ir/expr.js";
import { isFloat } from "../dtype.js";
import type { Stmt } from "../ir/stmt.js";
import { showTileLayout } from "../layout/tile-layout.js";
import { layoutText } from "./layout-name.js";
import { memoryIters, tileDispatchError, type RegisterTile, type TileContext } from "./operand.js";
import {
  ALL_SCOPES,
  asArg,
  asDType,
  checkLaidOut,
  checkSameDType,
  checkScope,
  needRegister,
  valueOp,
  type TileInput,
  type TilePrimitive,
} from "./primitive.js";
import { loopNest } from "./threads.js";

/**
 * The per-element computation of an elementwise primitive: `ins` as loaded (their own dtypes),
 * the result in (or converted to) the destination's dtype.
 */
export type ElementFn = (
  ins: readonly Expr[],
  dtype: DType,
  opts: Readonly<Record<string, unknown>>,
  ctx: TileContext,
) => Expr;

/**
 * The operand specs of an elementwise primitive, as types: `dst` (register), one `value` per
 * input name, and `options` when the primitive takes any.
 */
export type ElementwiseOperands<
  I extends readonly string[],
  O extends readonly string[],
> = readonly [
  { readonly name: "dst"; readonly kind: "register" },
  ...{ readonly [K in keyof I]: { readonly name: I[K]; readonly kind: "value" } },
  ...(O extends readonly [] ? [] : [{ readonly name: "options"; readonly kind: "options" }]),
];

/** The layout key two tiles must share to be combined slot by slot. */
function layoutKey(t: RegisterTile): string {
  return `${t.shape.join("x")} ${showTileLayout(t.layout)}`;
}

/**
 * The slot loop of a register tile: nested unrolled loops over its `m` iters (its layout's
 * span on `m` is the thread's array), `body` getting the slot expression. Thread iters do not
 * appear: every thread runs the same loop over its own slots.
 */
export function slotLoop(t: RegisterTile, ctx: TileContext, body: (slot: Expr) => Stmt[]): Stmt[] {
  const ms = memoryIters(t.layout);
  const base = t.layout.offset.m ?? 0;
  return loopNest(
    ctx,
    ms.map((x) => x.iter.extent),
    (vars) => {
      let slot: Expr = intImm(base);
      vars.forEach((v, i) => {
        const s = ms[i]!.iter.stride;
        if (s !== 0) slot = binary("add", slot, s === 1 ? v : binary("mul", v, intImm(s)));
      });
      return body(slot);
    },
  );
}

/** Load slot `slot` of a register tile. */
export function loadSlot(t: RegisterTile, slot: Expr): Expr {
  return { kind: "BufferLoad", buffer: t.buffer, offset: slot, dtype: t.dtype };
}

/** Store `value` (converted to the tile's dtype) at slot `slot`. */
export function storeSlot(t: RegisterTile, slot: Expr, value: Expr, ctx: TileContext): Stmt {
  return {
    kind: "Store",
    buffer: t.buffer,
    dtype: t.dtype,
    offset: slot,
    value: asDType(value, t.dtype),
    ...(ctx.span ? { span: ctx.span } : {}),
  };
}

/**
 * An elementwise primitive `dst = f(in_0, …)`: `dst` a register tile, each input a register tile
 * with `dst`'s shape and layout, or a scalar broadcast to every element. Lowered to an unrolled
 * loop over the thread's own slots (the layout says each thread owns scalar elements, so a scalar
 * loop is the lowering, not a fallback); `f` converts the inputs it computes on to `dst`'s dtype.
 * Register-tile inputs must have dst's dtype (except for `cast`, and `select`'s bool `cond`);
 * scalars are converted to it.
 * @throws TirxError TX2022 for an input whose shape or layout differs from dst's (naming dst's
 *   layout as the one that works), a register-tile input of another dtype (suggesting
 *   `T.tile.cast` first), a tile without a TileLayout at warp/wg/cta scope, or a layout spread
 *   beyond the scope's threads.
 */
export function elementwise<
  const I extends readonly string[],
  const O extends readonly string[] = readonly [],
>(
  name: string,
  doc: string,
  inputs: I,
  f: ElementFn,
  options?: O,
): TilePrimitive<ElementwiseOperands<I, O>> {
  const opts0: readonly string[] = options ?? [];
  const operands = [
    { name: "dst", kind: "register" },
    ...inputs.map((n) => ({ name: n, kind: "value" as const })),
    ...(opts0.length > 0 ? [{ name: "options", kind: "options" as const }] : []),
  ] as unknown as ElementwiseOperands<I, O>;
  return {
    name,
    doc,
    scopes: ALL_SCOPES,
    operands,
    options: opts0,
    lower: (args: readonly TileInput[], ctx: TileContext) => {
      const dst = needRegister(args[0], "dst", ctx);
      checkLaidOut(dst, ctx);
      checkScope(dst, ctx);
      const key = layoutKey(dst);
      const ins = inputs.map((n, i) => {
        const a = asArg(args[i + 1]);
        if (a === undefined || a.kind === "memory") {
          throw tileDispatchError(
            ctx,
            `${n} must be a register tile or a scalar; a memory operand needs T.tile.copy into registers first`,
          );
        }
        if (a.kind === "register" && layoutKey(a) !== key) {
          throw tileDispatchError(
            ctx,
            `${n} (${a.buffer.name} [${a.shape.join(", ")}] ${showTileLayout(a.layout)}) must have dst's shape and layout, slot for slot`,
            `${n} allocated as [${dst.shape.join(", ")}] with ${layoutText(dst.layout, dst.shape, dst.dtype)} (dst's), or T.tile.permute_layout into it`,
          );
        }
        return a;
      });
      // cast converts; select's cond is a predicate (bool) tile.
      if (name !== "cast") {
        checkSameDType(
          [
            { role: "dst", tile: dst },
            ...ins.flatMap((a, i) =>
              a.kind === "register" && !(name === "select" && i === 0)
                ? [{ role: inputs[i]!, tile: a }]
                : [],
            ),
          ],
          ctx,
        );
      }
      const opts = (opts0.length > 0 ? args[inputs.length + 1] : undefined) as
        Readonly<Record<string, unknown>> | undefined;
      // A computed scalar is evaluated once, before the loop (bound to a variable).
      const lets: Stmt[] = [];
      const scalars = ins.map((a) => {
        if (a.kind !== "scalar") return undefined;
        const k = a.expr.kind;
        if (k === "IntImm" || k === "FloatImm" || k === "Var") return a.expr;
        const v = ctx.freshVar("s", a.expr.dtype);
        lets.push({ kind: "Let", var: v, value: a.expr, ...(ctx.span ? { span: ctx.span } : {}) });
        return v;
      });
      const loop = slotLoop(dst, ctx, (slot) => {
        const vals = ins.map(
          (a, i) => scalars[i] ?? (a.kind === "scalar" ? a.expr : loadSlot(a, slot)),
        );
        return [storeSlot(dst, slot, f(vals, dst.dtype, opts ?? {}, ctx), ctx)];
      });
      const stmts = [...lets, ...loop];
      const slots = memoryIters(dst.layout).reduce((p, x) => p * x.iter.extent, 1);
      return {
        stmts,
        explain: `per-thread loop, ${slots} slot${slots === 1 ? "" : "s"} (the layout gives each thread scalar elements): ${dst.buffer.name} ${showTileLayout(dst.layout)}`,
      };
    },
  };
}

/** A float constant of `dtype` (an integer dtype takes the integer). */
export function constant(v: number, dtype: DType): Expr {
  return isFloat(dtype) ? floatImm(v, dtype) : intImm(v, dtype);
}

/** `name` or `name.approx` by the `approx` option. */
export function maybeApprox(
  name: string,
  x: Expr,
  opts: Readonly<Record<string, unknown>>,
  ctx: TileContext,
): Expr {
  return valueOp(opts.approx === true ? `${name}.approx` : name, [x], ctx);
}

export { binary, ifThenElse };
