import type { DType } from "../dtype.js";
import { binary, ifThenElse } from "../ir/arith.js";
import { floatImm, intImm, type Expr } from "../ir/expr.js";
import { isFloat } from "../dtype.js";
import type { Stmt } from "../ir/stmt.js";
import type { LayoutIter, TileLayout } from "../ir/tile-layout.js";
import { showTileLayout } from "../layout/tile-layout.js";
import { layoutText } from "./layout-name.js";
import {
  groupedTile,
  memoryIters,
  reshapedTile,
  tileDispatchError,
  type IndexFnOperand,
  type RegisterTile,
  type TileArg,
  type TileContext,
} from "./operand.js";
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
import { iterValue, loopNest, ownedOnly } from "./threads.js";
import { elementMapShift, inLayout } from "./same-map.js";
import { slotScratch } from "./slot-scratch.js";
import { shardPlaces, threadIndexPart, unflatten } from "./flat-index.js";
import { invariant } from "../invariant.js";

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
 * The slot loop of a register tile: nested unrolled loops over its `m` iters (its layout's
 * span on `m` is the thread's array), `body` getting the slot expression. Thread iters do not
 * appear: every thread runs the same loop over its own slots.
 */
export function slotLoop(
  t: RegisterTile,
  ctx: TileContext,
  body: (slot: Expr, vars: readonly Expr[]) => Stmt[],
): Stmt[] {
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
      return body(slot, vars);
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

const iterKey = (x: LayoutIter): string => `${x.extent}:${x.stride}@${x.axis}`;

/** `l` with its m iters renumbered compactly (row-major over the m iters). */
export function compactM(l: TileLayout): TileLayout {
  let s = 1;
  const shard = [...l.shard];
  for (let i = shard.length - 1; i >= 0; i--) {
    const x = shard[i]!;
    if (x.axis !== "m") continue;
    shard[i] = { ...x, stride: s };
    s *= x.extent;
  }
  return { ...l, shard };
}

/**
 * The slot of a broadcast input `a` (numpy's rule at one rank: each dim of `a` is dst's extent
 * or 1) as a function of dst's slot loop variables, when the broadcast is a register-only
 * operation: every dst element a thread holds has its `a` element (same indices, 0 in the
 * broadcast dims) in the same thread. That holds when `a`'s layout, grouped by its shape, is
 * dst's iters of the kept dims in order (thread iters equal; `m` iters of the same extents, any
 * strides), replicated over dst's thread iters of the broadcast dims and dst's own replicas, with
 * dst's thread offsets. `a`'s slot is then its `m` offset plus, per `m` iter, the loop variable of
 * dst's matching iter times `a`'s stride. Rank-1 `[n]` against `[n, k]` is not taken: TIRx's docs
 * state no such rule, so the ranks must match (allocate `[n, 1]`).
 * @throws TirxError TX2022 when the shapes do not broadcast (naming the rule) or the layouts do
 *   not agree: naming an element of dst and the thread (or slot digit) that holds it where `a`
 *   does not, and the layout that works (the one `T.tile.<scope>.max(a, dst, axis)` gives).
 */
function broadcastSlot(
  dst: RegisterTile,
  a: RegisterTile,
  n: string,
  ctx: TileContext,
): (slot: Expr, vars: readonly Expr[]) => Expr {
  const aText = `${n} (${a.buffer.name} [${a.shape.join(", ")}] ${showTileLayout(a.layout)})`;
  const fits =
    a.shape.length === dst.shape.length &&
    a.shape.every((e, d) => e === dst.shape[d] || e === 1) &&
    a.shape.some((e, d) => e !== dst.shape[d]);
  if (!fits) {
    const same = a.shape.length === dst.shape.length && a.shape.every((e, d) => e === dst.shape[d]);
    throw tileDispatchError(
      ctx,
      same
        ? `${aText} must have dst's shape and layout, slot for slot`
        : `${aText} must have dst's shape [${dst.shape.join(", ")}], or broadcast to it: the same rank, each dim dst's extent or 1`,
      `${n} allocated as [${dst.shape.join(", ")}] with ${layoutText(dst.layout, dst.shape, dst.dtype)} (dst's), or T.tile.permute_layout into it${same ? "" : `; a per-row operand as [${dst.shape.map((e, d) => (d === dst.shape.length - 1 ? 1 : e)).join(", ")}]`}`,
    );
  }
  const dDims = dst.dims;
  const aDims = a.dims;
  invariant(
    dDims !== undefined && aDims !== undefined,
    "broadcastSlot: broadcastReading reads both tiles under a shape that groups",
  );
  const bcast = new Set(a.shape.flatMap((e, d) => (e === 1 && dst.shape[d]! > 1 ? [d] : [])));
  const shard = dst.layout.shard;
  const kept = shard.flatMap((x, i) => (x.extent > 1 && !bcast.has(dDims[i]!) ? [i] : []));
  const dropped = shard.filter((x, i) => x.extent > 1 && bcast.has(dDims[i]!));
  // The layout that works: dst's kept iters, its broadcast thread iters as replicas.
  const expected: TileLayout = compactM({
    kind: "TileLayout",
    shard: kept.length > 0 ? kept.map((i) => shard[i]!) : [{ extent: 1, stride: 1, axis: "m" }],
    replica: [...dst.layout.replica, ...dropped.filter((x) => x.axis !== "m")],
    offset: Object.fromEntries(Object.entries(dst.layout.offset).filter(([k]) => k !== "m")),
  });
  // The same element → (thread, slot) map written another way is that layout (its m offset
  // kept): read with the expected iters below.
  let aIterDims: readonly number[] = aDims;
  if (showTileLayout(a.layout) !== showTileLayout(expected)) {
    const canon = inLayout(a, expected, ctx);
    if (canon?.dims) {
      a = canon;
      aIterDims = canon.dims;
    }
  }
  const axis = [...bcast].join(", ");
  const nearest = `T.alloc_local([${a.shape.join(", ")}], "${a.dtype}") laid out as ${showTileLayout(expected)} (what T.tile.${ctx.scope === "thread" ? "" : `${ctx.scope}.`}max(${a.buffer.name}, ${dst.buffer.name}, ${axis}) writes)`;
  const fail = (why: string): never => {
    throw tileDispatchError(
      ctx,
      `${aText} broadcasts along dim ${axis} of dst ${dst.buffer.name} [${dst.shape.join(", ")}] ${showTileLayout(dst.layout)}, which needs each thread to hold the ${n} element of every dst element it holds (same indices, 0 in the broadcast dims): ${why}`,
      nearest,
    );
  };
  /** The element of dst whose digit on shard iter `i` is 1 (others 0), shown as indices. */
  const elementAt = (i: number): string => {
    const d = dDims[i]!;
    let inner = 1;
    for (let k = i + 1; k < shard.length && dDims[k] === d; k++) inner *= shard[k]!.extent;
    return `[${dst.shape.map((_, e) => (e === d ? inner : 0)).join(", ")}]`;
  };
  const holder = (x: LayoutIter): string =>
    x.axis === "m"
      ? `slot digit ${x.extent}:${x.stride}`
      : `the thread with ${x.axis} = ${x.stride + (dst.layout.offset[x.axis] ?? 0)}`;
  const aIters = a.layout.shard.flatMap((x, j) => (x.extent > 1 ? [{ x, d: aIterDims[j]! }] : []));
  const pairs: { dm?: number; am: LayoutIter }[] = [];
  const ms = memoryIters(dst.layout);
  kept.forEach((i, k) => {
    const x = shard[i]!;
    const y = aIters[k];
    const ok =
      y !== undefined &&
      y.d === dDims[i] &&
      (x.axis === "m" ? y.x.axis === "m" && y.x.extent === x.extent : iterKey(x) === iterKey(y.x));
    if (!ok) {
      fail(
        `dst element ${elementAt(i)} is held by ${holder(x)} (dst's iter ${iterKey(x)} of dim ${dDims[i]}), where ${n} has ${y ? `the iter ${iterKey(y.x)} of dim ${y.d}` : "no iter"}`,
      );
    }
    if (x.axis === "m") pairs.push({ dm: ms.findIndex((z) => z.index === i), am: y!.x });
  });
  if (aIters.length > kept.length) {
    const y = aIters[kept.length]!;
    fail(`${n} has the iter ${iterKey(y.x)} of dim ${y.d} beyond dst's kept iters`);
  }
  const want = expected.replica.filter((x) => x.extent > 1).map(iterKey);
  const have = a.layout.replica.filter((x) => x.extent > 1).map(iterKey);
  const missing = want.find((k) => !have.includes(k));
  if (missing) {
    const x = dropped.find((y) => iterKey(y) === missing);
    fail(
      x
        ? `dst element ${elementAt(shard.indexOf(x))} is held by ${holder(x)}, which holds no ${n} element of its row: ${n} must replicate over ${missing}`
        : `${n} must replicate over dst's replica ${missing}`,
    );
  }
  const extra = have.find((k) => !want.includes(k));
  if (extra) fail(`${n}'s replica ${extra} is not one of dst's threads of the broadcast dims`);
  for (const ax of Object.keys({ ...dst.layout.offset, ...a.layout.offset })) {
    if (ax === "m") continue;
    const k = ax as keyof TileLayout["offset"];
    if ((a.layout.offset[k] ?? 0) !== (dst.layout.offset[k] ?? 0)) {
      fail(
        `${n}'s ${ax} offset ${a.layout.offset[k] ?? 0} is not dst's ${dst.layout.offset[k] ?? 0}, so the threads differ`,
      );
    }
  }
  const base = a.layout.offset.m ?? 0;
  return (_slot, vars) => {
    let slot: Expr = intImm(base);
    for (const p of pairs) {
      const v = vars[p.dm!]!;
      const st = p.am.stride;
      if (st !== 0) slot = binary("add", slot, st === 1 ? v : binary("mul", v, intImm(st)));
    }
    return slot;
  };
}

/**
 * The logical indices of dst's element at a slot-loop iteration, for a function-of-the-indices
 * operand, over dst's own shape `shape` (`dst` may be read under a coarser one for a
 * broadcast): per dim, the sum over its shard iters (outermost first) of the iter's digit times
 * the extents inside it; a thread iter's digit is the calling thread's ({@link iterValue}), bound
 * to one int32 variable per dim before the loop (pushed on `lets`); an `m` iter's digit is its
 * loop variable. When `shape` does not group dst's layout, the element's row-major index (the
 * thread's part bound once, plus the `m` iters' values times their places) split over `shape`.
 */
function logicalIndices(
  dst: RegisterTile,
  shape: readonly number[],
  ctx: TileContext,
  lets: Stmt[],
): (vars: readonly Expr[]) => Expr[] {
  const ms = memoryIters(dst.layout);
  const dims = dst.dims;
  if (dims === undefined || shape.join() !== dst.shape.join()) {
    const places = shardPlaces(dst.layout);
    let base = threadIndexPart(dst, ctx);
    if (base.kind !== "IntImm") {
      const v = ctx.freshVar("elem", "int32");
      lets.push({ kind: "Let", var: v, value: base, ...(ctx.span ? { span: ctx.span } : {}) });
      base = v;
    }
    const at = base;
    return (vars) => {
      let f: Expr = at;
      ms.forEach((z, k) => {
        const p = places[z.index]!;
        if (z.iter.extent > 1)
          f = binary("add", f, p === 1 ? vars[k]! : binary("mul", vars[k]!, intImm(p)));
      });
      return unflatten(f, shape.length > 0 ? shape : [1]);
    };
  }
  const shard = dst.layout.shard;
  const inner = shard.map((_, i) => {
    let p = 1;
    for (let k = i + 1; k < shard.length && dims[k] === dims[i]; k++) p *= shard[k]!.extent;
    return p;
  });
  const rank = Math.max(1, dst.shape.length);
  const threadPart: Expr[] = [];
  for (let d = 0; d < rank; d++) {
    let e: Expr | undefined;
    shard.forEach((x, i) => {
      if (dims[i] !== d || x.axis === "m" || x.extent === 1) return;
      const v = iterValue(dst.layout, x, ctx);
      const t = inner[i] === 1 ? v : binary("mul", v, intImm(inner[i]!));
      e = e ? binary("add", e, t) : t;
    });
    if (!e) {
      threadPart.push(intImm(0));
      continue;
    }
    const v = ctx.freshVar(`idx${d}`, "int32");
    lets.push({ kind: "Let", var: v, value: e, ...(ctx.span ? { span: ctx.span } : {}) });
    threadPart.push(v);
  }
  return (vars) =>
    threadPart.map((t, d) => {
      let e = t;
      ms.forEach((z, k) => {
        if (dims[z.index] !== d || z.iter.extent === 1) return;
        const v = vars[k]!;
        e = binary("add", e, inner[z.index] === 1 ? v : binary("mul", v, intImm(inner[z.index]!)));
      });
      return e;
    });
}

/**
 * dst and its register inputs (`ins`, undefined for other operands) read under one shape whose
 * dims line up with the layouts' iters, when an input broadcasts (its shape differs from dst's)
 * and dst's shape or the input's does not group its layout (TIRx docs, "Tensor Layout": a
 * tile's elements are the shard's by row-major index, whatever its dims): dst's dims of extent
 * above 1, merged into runs that every broadcast input keeps whole or broadcasts whole (`[2, 3,
 * 16]` with a per-row `[2, 3, 1]` is `[6, 16]` with `[6, 1]`). As given otherwise (no broadcast,
 * every shape grouping, or shapes that do not broadcast: broadcastSlot says why).
 * @throws TirxError TX2022 when dst or a broadcast input does not group under the merged shape
 *   either (naming the shape and a layout that works).
 */
function broadcastReading(
  dst: RegisterTile,
  ins: readonly (RegisterTile | undefined)[],
  ctx: TileContext,
): { dst: RegisterTile; ins: readonly (RegisterTile | undefined)[] } {
  const bcast = ins.filter(
    (a): a is RegisterTile => a !== undefined && a.shape.join() !== dst.shape.join(),
  );
  const fits = (a: RegisterTile): boolean =>
    a.shape.length === dst.shape.length && a.shape.every((e, d) => e === dst.shape[d] || e === 1);
  if (bcast.length === 0 || (dst.dims && bcast.every((a) => a.dims)) || !bcast.every(fits)) {
    return { dst, ins };
  }
  const status = (d: number): string => bcast.map((a) => (a.shape[d] === 1 ? "b" : "k")).join();
  const runs: { dims: number[]; n: number }[] = [];
  dst.shape.forEach((n, d) => {
    if (n === 1) return;
    const last = runs[runs.length - 1];
    if (last && status(last.dims[0]!) === status(d)) {
      last.dims.push(d);
      last.n *= n;
    } else runs.push({ dims: [d], n });
  });
  const merged = runs.length > 0 ? runs.map((r) => r.n) : [1];
  const of = (a: RegisterTile): number[] =>
    runs.length > 0 ? runs.map((r) => (a.shape[r.dims[0]!] === 1 ? 1 : r.n)) : [1];
  const refuse = (t: RegisterTile, role: string, shape: readonly number[]): never => {
    throw tileDispatchError(
      ctx,
      `${role} ${t.buffer.name} [${t.shape.join(", ")}] ${showTileLayout(t.layout)} takes part in a broadcast, which reads each dim's iters, but its dims do not line up with the layout's iters even as [${shape.join(", ")}] (the dims that broadcast alike merged)`,
      `${role} with a shape whose dims line up with its layout's iters (its shard's [${t.layout.shard.map((x) => x.extent).join(", ")}]), or a layout whose iters line up with [${t.shape.join(", ")}]`,
    );
  };
  const d2 = reshapedTile(dst, merged) ?? refuse(dst, "dst", merged);
  return {
    dst: d2,
    ins: ins.map((a) => {
      if (a === undefined) return undefined;
      if (a.shape.join() === dst.shape.join()) return groupedTile(a.buffer, merged, a.layout);
      return reshapedTile(a, of(a)) ?? refuse(a, "an input", of(a));
    }),
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
