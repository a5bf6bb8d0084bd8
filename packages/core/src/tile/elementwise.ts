import { isFloat, type DType } from "../dtype.js";
import { binary, ifThenElse } from "../ir/arith.js";
import { floatImm, intImm, type Expr } from "../ir/expr.js";
import type { Stmt } from "../ir/stmt.js";
import { showTileLayout } from "../layout/tile-layout.js";
import {
  memoryIters,
  tileDispatchError,
  type IndexFnOperand,
  type RegisterTile,
  type TileArg,
  type TileContext,
} from "./operand.js";
import {
  ALL_SCOPES,
  asArg,
  checkLaidOut,
  checkSameDType,
  checkScope,
  needRegister,
  valueOp,
  type TileInput,
  type TilePrimitive,
} from "./primitive.js";
import { ownedOnly } from "./threads.js";
import { elementMapShift } from "./same-map.js";
import { slotScratch } from "./slot-scratch.js";
import { loadSlot, slotLoop, storeSlot } from "./slot-loop.js";
import { broadcastReading } from "./broadcast-reading.js";
import { broadcastSlot } from "./broadcast-slot.js";
import { logicalIndices } from "./logical-indices.js";

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

/** The layout key two tiles must share to be combined slot by slot (shape and layout, as text). */
export function layoutKey(t: RegisterTile): string {
  return `${t.shape.join("x")} ${showTileLayout(t.layout)}`;
}

/**
 * An elementwise primitive `dst = f(in_0, …)`: `dst` a register tile, each input a register tile
 * with `dst`'s shape and layout, a register tile that broadcasts to it (numpy's rule at one rank:
 * extent 1 in the broadcast dims, e.g. a per-row `[64, 1]` against `[64, 128]`; its layout must
 * keep each element in the threads that hold its dst elements, see `broadcastSlot`), a scalar
 * broadcast to every element, or (for a `predicate` operand) a function of dst's logical indices
 * evaluated per element ({@link IndexFnOperand}). Lowered to an unrolled
 * loop over the thread's own slots (the layout says each thread owns scalar elements, so a scalar
 * loop is the lowering, not a fallback; `cast` from float32 to float16/bfloat16 first tries two
 * slots per instruction, tile/cast-pair.ts); `f` converts the inputs it computes on to `dst`'s
 * dtype.
 * Register-tile inputs must have dst's dtype (except for `cast`, and `select`'s bool `cond`);
 * scalars are converted to it. A tile whose shape's dims do not line up with runs of its
 * layout's iters (TIRx maps an element by its row-major index) is served as any other: the
 * slots are the same; a function of the indices splits the element's row-major index; a
 * broadcast reads dst and its input with their dims merged where they broadcast alike
 * (`broadcastReading`).
 * @throws TirxError TX2022 for an input whose shape or layout differs from dst's and does not
 *   broadcast to it (naming dst's layout, or for a broadcast the element and thread that break
 *   the rule and the layout that works), a register-tile input of another dtype (suggesting
 *   `T.tile.cast` first), a tile without a TileLayout at warp/wg/cta scope, a layout spread
 *   beyond the scope's threads, or a broadcast whose dims, merged, still do not line up.
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
      const given = needRegister(args[0], "dst", ctx);
      checkLaidOut(given, ctx);
      checkScope(given, ctx);
      // A shape whose dims do not line up with the layout's iters is read under one that does
      // when an input broadcasts (see broadcastReading).
      const read = broadcastReading(
        given,
        inputs.map((_, i) => {
          const a = asArg(args[i + 1]);
          return a?.kind === "register" ? a : undefined;
        }),
        ctx,
      );
      const dst = read.dst;
      const key = layoutKey(dst);
      // Per register input: its slot as a function of dst's slot and loop variables (dst's own
      // slot when the layouts are equal; the kept dims' digits when it broadcasts).
      const slotOf: (((slot: Expr, vars: readonly Expr[]) => Expr) | undefined)[] = [];
      // Whether input i reads dst's own slots (the same map, no shift): safe in place.
      const inPlace: boolean[] = [];
      const ins: (TileArg | IndexFnOperand)[] = inputs.map((n, i) => {
        const raw = args[i + 1];
        if (typeof raw === "object" && raw !== null && raw.kind === "index_fn") {
          return raw as IndexFnOperand;
        }
        let a = asArg(raw);
        if (a === undefined || a.kind === "memory") {
          throw tileDispatchError(
            ctx,
            `${n} must be a register tile or a scalar; a memory operand needs T.tile.copy into registers first`,
          );
        }
        if (a.kind === "register") {
          a = read.ins[i] ?? a;
          // The same map (or the same but for a slot offset: two parts of one tile), else a
          // broadcast.
          const shift = layoutKey(a) === key ? 0 : elementMapShift(dst, a, ctx);
          inPlace[i] = shift === 0;
          slotOf[i] =
            shift === undefined
              ? broadcastSlot(dst, a, n, ctx)
              : (slot) => (shift === 0 ? slot : binary("add", slot, intImm(shift)));
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
      // A function of the indices: dst's per-dim thread part bound once, before the loop.
      const indices = ins.some((a) => a.kind === "index_fn")
        ? logicalIndices(dst, given.shape, ctx, lets)
        : undefined;
      // An input in dst's registers at other slots (a broadcast or another part of the tile)
      // would be overwritten before it is read: compute into a scratch, then copy into dst.
      const aliased = ins.some(
        (a, i) => a.kind === "register" && a.buffer.id === dst.buffer.id && inPlace[i] !== true,
      );
      const scratch = aliased ? slotScratch(dst, ctx) : undefined;
      const out = scratch?.tile ?? dst;
      const loop = slotLoop(dst, ctx, (slot, vars) => {
        const vals = ins.map((a, i) => {
          if (a.kind === "index_fn") return a.fn(indices!(vars));
          if (a.kind === "scalar") return scalars[i] ?? a.expr;
          return loadSlot(a as RegisterTile, slotOf[i]!(slot, vars));
        });
        return [storeSlot(out, slot, f(vals, dst.dtype, opts ?? {}, ctx), ctx)];
      });
      if (scratch) {
        loop.push(
          ...slotLoop(dst, ctx, (slot) => [storeSlot(dst, slot, loadSlot(out, slot), ctx)]),
        );
      }
      // Only the threads holding elements compute (a layout may leave threads out).
      const stmts = [
        ...lets,
        ...(scratch ? [scratch.alloc] : []),
        ...ownedOnly(dst.layout, ctx, loop),
      ];
      const slots = memoryIters(dst.layout).reduce((p, x) => p * x.iter.extent, 1);
      return {
        stmts,
        explain: `per-thread loop, ${slots} slot${slots === 1 ? "" : "s"} (the layout gives each thread scalar elements${scratch ? "; through a scratch, as an input shares dst's registers at other slots" : ""}): ${dst.buffer.name} ${showTileLayout(dst.layout)}${dst === given ? "" : ` (dst [${given.shape.join(", ")}] read as [${dst.shape.join(", ")}] for the broadcast: its dims do not line up with the layout's iters)`}`,
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
