import {
  invariant,
  mkBuffer,
  mkVar,
  registerTile,
  registerView,
  TILE_PRIMITIVES,
  TirxError,
  tileDispatchError,
  type Expr,
  type PrimFunc,
  type Span,
  type TileContext,
  type TileInput,
  type TileOperandKind,
  type TileOperandSpec,
  type TilePrimitive,
  type TilePrimitiveName,
  type TileScope,
} from "@tirx-ts/core";
import { builder, tileNotesOf } from "./builder.js";
import { checkOptions } from "./check.js";
import { PrimExpr, toExpr, type ExprLike } from "./expr.js";
import { callerSpan } from "./span.js";
import { TileView } from "./view.js";

/** The JS value the surface takes for an operand kind. */
type ArgOf<K extends TileOperandKind> = K extends "register" | "tile"
  ? TileView
  : K extends "value"
    ? TileView | ExprLike
    : K extends "predicate"
      ? TileView | ExprLike | IndexFn
      : K extends "axis"
        ? number
        : Readonly<Record<string, unknown>>;

/**
 * The logical indices of a destination element, one int32 expression per dim of the tile. Typed
 * so that destructuring up to 8 of them (`([i, j]) => …`) gives PrimExprs under
 * `noUncheckedIndexedAccess`; a name past the tile's rank holds undefined at run time (its use
 * is TX1002, see {@link IndexFn}).
 */
export type TileIndices = readonly PrimExpr[] & {
  readonly 0: PrimExpr;
  readonly 1: PrimExpr;
  readonly 2: PrimExpr;
  readonly 3: PrimExpr;
  readonly 4: PrimExpr;
  readonly 5: PrimExpr;
  readonly 6: PrimExpr;
  readonly 7: PrimExpr;
};

/**
 * A function of the destination's logical indices (one int32 per dim), e.g. a mask predicate:
 * `([i, j]) => j.gt(i.add(off))`. Called once while tracing, inside the slot loop; a TypeError
 * it throws (an index past the tile's rank read, `(j) => j.lt(n)` taking the array for one
 * index) is TX1002.
 */
export type IndexFn = (idx: TileIndices) => ExprLike;

type MapArgs<Ops extends readonly unknown[]> = {
  -readonly [I in keyof Ops]: Ops[I] extends { readonly kind: infer K extends TileOperandKind }
    ? ArgOf<K>
    : never;
};

/** The surface arguments of a primitive with operand specs `Ops` (trailing options optional). */
export type TileArgs<Ops extends readonly TileOperandSpec[]> = Ops extends readonly [
  ...infer H,
  { readonly kind: "options" },
]
  ? [...MapArgs<H>, options?: ArgOf<"options">]
  : MapArgs<Ops>;

type Table = typeof TILE_PRIMITIVES;

/** One scope's namespace: every primitive of the registry as a typed function. */
export type TileNamespace = {
  readonly [N in TilePrimitiveName]: (...args: TileArgs<Table[N]["operands"]>) => void;
};

/**
 * Resolve one surface argument of kind `kind`: a TileView of a local buffer is a register tile
 * (a sub-view `f.sub(...)` the part it selects, with its own shape and layout; TX2022 for a
 * part no layout of the registers expresses), of a shared/global buffer a memory view; an
 * expression or number a scalar; a function (for a `predicate`) a function of the indices, its
 * result converted to an Expr; options are
 * checked against the record's `optionNames` (TX1002 for another name), their TileView values
 * passed as core Views and PrimExpr values as Exprs.
 */
function resolve(
  kind: TileOperandKind,
  a: unknown,
  spec: TileOperandSpec,
  ctx: Pick<TileContext, "name" | "scope" | "span">,
  likeDType: string | undefined,
  optionNames: readonly string[] = [],
): TileInput {
  const span = ctx.span;
  // The primitive as the author called it: T.tile.warp.gemm, or T.tile.fill at thread scope.
  const surface = ctx.scope === "thread" ? `T.tile.${ctx.name}` : `T.tile.${ctx.scope}.${ctx.name}`;
  if (kind === "axis") {
    if (typeof a !== "number" || !Number.isSafeInteger(a)) {
      throw new TirxError("TX2022", `${surface}: ${spec.name} must be a static integer`, span);
    }
    return a;
  }
  if (kind === "options") {
    if (a === undefined) return undefined;
    const o = checkOptions(a, optionNames, surface, span);
    // Views and expressions among the values reach core as its IR (a View, an Expr).
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(o)) {
      out[k] = v instanceof TileView ? v.view : v instanceof PrimExpr ? v.expr : v;
    }
    return out;
  }
  if (kind === "predicate" && typeof a === "function") {
    const f0 = a as IndexFn;
    const call = (idx: PrimExpr[]): ExprLike => {
      try {
        return f0(idx as readonly PrimExpr[] as TileIndices);
      } catch (e) {
        // `(j) => j.lt(n)`: the function gets dst's indices as one array, not as arguments.
        if (e instanceof TypeError) {
          throw new TirxError(
            "TX1002",
            `${surface}: ${spec.name}'s function threw "${e.message}"; it takes dst's indices as one array of int32 expressions, one per dim: ([i, j]) => j.lt(i)`,
            span,
          );
        }
        throw e;
      }
    };
    return {
      kind: "index_fn",
      fn: (idx) => toExpr(call(idx.map((e) => new PrimExpr(e))), "bool", span),
    };
  }
  if (a instanceof TileView) {
    // A local buffer's view is a register operand: the tile itself or a part of it, never
    // widened to the whole tile (core's registerView: its own shape and layout, or TX2022).
    if (a.buffer.scope === "local") {
      return a.symbolicTensor ? registerTile(a.buffer, ctx) : registerView(a.view, spec.name, ctx);
    }
    return { kind: "memory", view: a.view };
  }
  if (kind !== "value" && kind !== "predicate") {
    throw new TirxError(
      "TX2022",
      `${surface}: ${spec.name} must be a tile (T.alloc_local, T.alloc_shared or a tensor view)`,
      span,
    );
  }
  const e: Expr = toExpr(
    a as ExprLike,
    a instanceof PrimExpr ? undefined : ((likeDType ?? "float32") as never),
    span,
  );
  return { kind: "scalar", expr: e };
}

/** `threadIdx` linearized, x fastest, for a launch of `block` threads. */
function linearTid(block: readonly [number, number, number]): Expr {
  const s = (name: "tid.x" | "tid.y" | "tid.z" | "ntid.x" | "ntid.y"): Expr => ({
    kind: "Special",
    name,
    dtype: "int32",
  });
  if (block[1] === 1 && block[2] === 1) return s("tid.x");
  const bin = (op: "add" | "mul", a: Expr, b: Expr): Expr => ({
    kind: "Binary",
    op,
    a,
    b,
    dtype: "int32",
  });
  return bin(
    "add",
    s("tid.x"),
    bin("mul", bin("add", s("tid.y"), bin("mul", s("tid.z"), s("ntid.y"))), s("ntid.x")),
  );
}

/**
 * Call primitive `rec` at `scope` with the author's arguments: resolve the operands, dispatch
 * (the record's `lower`), record the chosen lowering's statements and its explanation.
 * @throws TirxError TX1001 outside a kernel body, TX2002 before T.device_entry, TX2022 when the
 *   record serves no lowering (its message names the requirement), and the operand errors.
 */
function callTile(
  rec: TilePrimitive,
  scope: TileScope,
  args: readonly unknown[],
  span?: Span,
): void {
  const surface = scope === "thread" ? `T.tile.${rec.name}` : `T.tile.${scope}.${rec.name}`;
  const b = builder(surface, span);
  if (!b.launch) {
    throw new TirxError(
      "TX2002",
      `${surface} is only defined inside T.device_entry; call T.device_entry first`,
      span,
    );
  }
  const base = { name: rec.name, scope, ...(span ? { span } : {}) };
  const firstTile = args.find((a): a is TileView => a instanceof TileView);
  const inputs = rec.operands.map((spec, i) => {
    if (spec.kind !== "options" && args[i] === undefined) {
      throw new TirxError("TX2022", `${surface} is missing its operand ${spec.name}`, span);
    }
    return resolve(spec.kind, args[i], spec, base, firstTile?.dtype, rec.options);
  });
  if (args.length > rec.operands.length) {
    throw new TirxError(
      "TX2022",
      `${surface} takes ${rec.operands.length} operands (${rec.operands.map((o) => o.name).join(", ")}), got ${args.length}`,
      span,
    );
  }
  // Names are numbered per call site (the call's index in the kernel), so two traces of one
  // kernel (builder and script mode) name their scratch buffers and variables alike.
  const call = b.tileNotes.length;
  let fresh = 0;
  const nested = b.depth > 2;
  let claimed = false;
  const ctx: TileContext = {
    ...base,
    launch: b.launch,
    ...(b.sm !== undefined ? { sm: b.sm } : {}),
    tid: linearTid(b.launch.block),
    nested,
    sharedScratch: (req) => {
      // A CTA barrier the author traced at the top level since the last such call (before
      // this one, and before the loop or branch this one is in) ordered every read before it.
      if (b.ctaBarrierSinceScratch()) b.scratch.fence();
      claimed = true;
      return b.scratch.claim({ ...req, nested, ...(span ? { span } : {}) });
    },
    fresh: (hint, shape, dtype, sc) =>
      mkBuffer(`${hint}_${call}_${++fresh}`, shape, dtype, sc, span ? { span } : {}),
    freshVar: (hint, dtype) => mkVar(`${hint}_${call}_${++fresh}`, dtype, span),
  };
  const low = rec.lower(inputs, ctx);
  for (const s of low.stmts) b.emit(s);
  // Its own barriers are traced: only a later one follows its reads of the scratch.
  if (claimed) b.markScratch();
  b.tileNotes.push({ ...(span ? { span } : {}), surface, explain: low.explain });
}

function namespace(scope: TileScope): TileNamespace {
  const out: Record<string, (...args: unknown[]) => void> = {};
  for (const [name, rec] of Object.entries(TILE_PRIMITIVES) as [string, TilePrimitive][]) {
    out[name] = rec.scopes.includes(scope)
      ? (...args: unknown[]) => callTile(rec, scope, args, callerSpan())
      : () => {
          // A scope the record does not serve (its `scopes`, the README table's column).
          const span = callerSpan();
          const at = (s: TileScope): string =>
            s === "thread" ? `T.tile.${name}` : `T.tile.${s}.${name}`;
          throw tileDispatchError(
            { name, scope, ...(span ? { span } : {}) },
            `${name} runs at ${rec.scopes.join(", ")} scope only (${rec.doc}), not ${scope === "thread" ? "per thread" : `over a ${scope}`}`,
            rec.scopes.map(at).join(" or "),
          );
        };
  }
  return out as TileNamespace;
}

/**
 * TIRx's tile primitives (`Tx.tile.*`), generated from core's `TILE_PRIMITIVES`: `T.tile.<name>`
 * runs per thread, `T.tile.warp.<name>`, `T.tile.wg.<name>` and `T.tile.cta.<name>` with the
 * threads of a warp, warpgroup or CTA (every one of them must make the call). Each call dispatches
 * on its operands' layouts and records ordinary IR; `explainTile(fn)` says what it chose. A
 * primitive called at a scope its record does not serve (e.g. `T.tile.warp.gemm_async`) throws
 * TX2022 naming the scopes it serves.
 * @example T.tile.cta.sum(rowSum, x, 1) // lane butterflies + one partial per warp in shared memory
 */
export const tile: TileNamespace & {
  readonly warp: TileNamespace;
  readonly wg: TileNamespace;
  readonly cta: TileNamespace;
} = { ...namespace("thread"), warp: namespace("warp"), wg: namespace("wg"), cta: namespace("cta") };

/**
 * What each tile primitive call of `fn` chose, one line per call in program order:
 * `softmax.ts:42 T.tile.cta.sum → warp shfl.sync.bfly ×5 + shared scratch (8 warps) + bar.sync:
 * reduces axis 1 of S[...]`. Empty for a kernel without tile calls.
 */
export function explainTile(fn: PrimFunc): string[] {
  return tileNotesOf(fn).map((n) => {
    const at = n.span ? `${n.span.file.split(/[\\/]/).pop() ?? ""}:${n.span.line} ` : "";
    return `${at}${n.surface} → ${n.explain}`;
  });
}

invariant(Object.keys(TILE_PRIMITIVES).length > 0, "tile: the registry is empty");
