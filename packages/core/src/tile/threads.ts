import { binary, compare, logical } from "../ir/arith.js";
import { intImm, type Expr } from "../ir/expr.js";
import type { ForAnnotation, Stmt } from "../ir/stmt.js";
import type { LayoutAxis, LayoutIter, TileLayout } from "../ir/tile-layout.js";
import { layoutCoordinates } from "../layout/tile-layout.js";
import { layoutAxisExtent } from "../verify/launch-check.js";
import { invariant } from "../invariant.js";
import { tileDispatchError, type RegisterTile, type TileContext } from "./operand.js";
import { digitRead, exactRead, readsRebuild, unreadDigit } from "./thread-digits.js";

/**
 * The coordinate of the calling thread on a layout axis, from the linear thread index `tid`:
 * laneid = tid % 32, warpid = tid / 32, tid_in_wg = tid % 128, wgid = tid / 128 (PTX ISA,
 * "Thread hierarchy": a warp is 32 consecutive linear thread indices, a warpgroup 4 warps).
 * @throws TirxError TX2022 for `cta_in_cluster` and `pid` (tile primitives run inside one CTA).
 */
export function axisCoord(axis: LayoutAxis, ctx: TileContext): Expr {
  const t = ctx.tid;
  switch (axis) {
    case "laneid":
      return binary("floormod", t, intImm(32));
    case "warpid":
      return binary("floordiv", t, intImm(32));
    case "tid_in_wg":
      return binary("floormod", t, intImm(128));
    case "wgid":
      return binary("floordiv", t, intImm(128));
    case "tid":
      return t;
    case "m":
    case "cta_in_cluster":
    case "pid":
      throw tileDispatchError(
        ctx,
        `a register tile bound to ${axis} has no lowering inside one CTA`,
        "a layout over laneid, warpid, tid_in_wg, wgid or tid",
      );
  }
}

/**
 * Each thread axis as digits of the linear thread index (PTX ISA, "Thread hierarchy"): its
 * coordinate times `base` is its part of the index, and `span` (when the axis is a field below
 * the top) is how many values it has (laneid = tid mod 32, warpid = tid / 32,
 * tid_in_wg = tid mod 128, wgid = tid / 128).
 */
const LINEAR: Partial<Record<LayoutAxis, { base: number; span?: number }>> = {
  laneid: { base: 1, span: 32 },
  warpid: { base: 32 },
  tid_in_wg: { base: 1, span: 128 },
  wgid: { base: 128 },
  tid: { base: 1 },
};

/**
 * The thread offset of `l` (its `O[...]` terms on thread axes) in units of the linear thread
 * index: `k@laneid` is k, `k@warpid` 32·k, `k@tid_in_wg` k, `k@wgid` 128·k, `k@tid` k (PTX ISA,
 * "Thread hierarchy"). 0 when the layout has none.
 */
export function linearOffset(l: TileLayout): number {
  let off = 0;
  for (const [a, v] of Object.entries(l.offset) as [LayoutAxis, number][]) {
    if (a !== "m") off += v * (LINEAR[a]?.base ?? 0);
  }
  return off;
}

/** The thread axes `l` binds: iters of extent > 1 (shard or replica) and offsets. */
function boundThreadAxes(l: TileLayout): Set<LayoutAxis> {
  const axes = new Set<LayoutAxis>();
  for (const x of [...l.shard, ...l.replica]) if (x.axis !== "m" && x.extent > 1) axes.add(x.axis);
  for (const a of Object.keys(l.offset) as LayoutAxis[]) {
    if (a !== "m" && (l.offset[a] ?? 0) !== 0) axes.add(a);
  }
  return axes;
}

const showIter = (x: LayoutIter): string => `${x.extent}:${x.stride}@${x.axis}`;

/**
 * The threads of `ctx`'s scope that share a piece of work (cp.async chunks, memset stores): their
 * count and the calling thread's index among them (int32): 1 and 0 for a thread, the lane for a
 * warp, tid_in_wg for a warpgroup, the linear tid for the CTA. A CTA smaller than one warp (or
 * warpgroup) is that one scope, of its own size.
 * @throws TirxError TX2022 at warp or wg scope when the CTA is more than one but not whole warps
 *   (warpgroups): the last one's missing threads would leave their share undone.
 */
export function scopeThreads(ctx: TileContext): { n: number; index: Expr } {
  const threads = ctx.launch.block.reduce((a, b) => a * b, 1);
  const part = (size: number, what: string, index: Expr): { n: number; index: Expr } => {
    if (threads < size) return { n: threads, index };
    if (threads % size !== 0) {
      throw tileDispatchError(
        ctx,
        `the work is shared by the ${size} threads of each ${what}, but the CTA's ${threads} threads are not whole ${what}s, so the last ${what}'s missing threads would leave their share undone`,
        `a block of a multiple of ${size} threads, or T.tile.cta.${ctx.name} (the CTA's threads share it)`,
      );
    }
    return { n: size, index };
  };
  switch (ctx.scope) {
    case "thread":
      return { n: 1, index: intImm(0) };
    case "warp":
      return part(32, "warp", axisCoord("laneid", ctx));
    case "wg":
      return part(128, "warpgroup", axisCoord("tid_in_wg", ctx));
    case "cta":
      return { n: threads, index: ctx.tid };
  }
}

/**
 * `l` with its thread iters over one axis of the scope's linear thread index, when it binds more
 * than one thread axis (e.g. `S[(4, 32) : (32@tid_in_wg, 1@laneid)]`, where laneid is the low 5
 * bits of tid_in_wg): every thread iter becomes digits of `tid_in_wg` at wg scope, of `tid`
 * otherwise (`k@laneid` is `k`, `k@warpid` is `32·k`, `k@tid_in_wg` is `k`, `k@wgid` is `128·k`;
 * PTX ISA, "Thread hierarchy"), offsets likewise, and the parts of the scope's threads no axis of
 * `l` names (see {@link unnamedParts}) become explicit replica iters, so owners, replicas and
 * digits of the result are those of `l`. Shard and replica iters keep their order (new replicas
 * appended). `l` itself when it binds at most one thread axis (unless `always`). The digits
 * may leave gaps, threads that hold nothing (`S[(4, 24) : (1@warpid, 1@laneid)]` is 24:1 and
 * 4:32 on tid: lanes 24..31 idle), as long as a division and a modulo read each
 * (thread-digits.ts `digitRead`).
 * @throws TirxError TX2022 when an axis's iters reach past its field (laneid values ≥ 32,
 *   tid_in_wg values ≥ 128), when two iters name the same bits of the thread index (naming both
 *   and the overlap), or when a digit is read by no division and modulo (its stride no multiple
 *   of the one below, nor past a warp or warpgroup boundary that the one below stays under).
 */
export function linearThreads(l: TileLayout, ctx: TileContext, always = false): TileLayout {
  const axes = boundThreadAxes(l);
  if (axes.size <= 1 && !always) return l;
  const target: LayoutAxis = ctx.scope === "wg" ? "tid_in_wg" : "tid";
  for (const a of axes) {
    const lin = LINEAR[a];
    if (!lin) axisCoord(a, ctx);
    if (!lin?.span) continue;
    let max = l.offset[a] ?? 0;
    for (const x of [...l.shard, ...l.replica]) {
      if (x.axis === a) max += (x.extent - 1) * x.stride;
    }
    if (max >= lin.span) {
      throw tileDispatchError(
        ctx,
        `${a} takes values 0..${lin.span - 1}, but the iters of ${a} in this layout reach ${max}, beyond the field of the thread index that ${a} names`,
        `the iters past ${lin.span} on ${a === "laneid" ? "warpid (k@warpid = 32·k@tid_in_wg)" : "wgid (k@wgid = 128·k@tid)"}`,
      );
    }
  }
  const move = (x: LayoutIter): LayoutIter =>
    x.axis === "m" || x.extent === 1
      ? x
      : { extent: x.extent, stride: x.stride * LINEAR[x.axis]!.base, axis: target };
  const replica = l.replica.map(move);
  const threads = ctx.launch.block.reduce((a, b) => a * b, 1);
  const size = ctx.scope === "wg" ? Math.min(128, threads) : threads;
  for (const p of unnamedParts(l, ctx)) {
    if (p === "lane") replica.push({ extent: Math.min(32, size), stride: 1, axis: target });
    if (p === "warp")
      replica.push({ extent: Math.min(4, Math.ceil(size / 32)), stride: 32, axis: target });
    if (p === "wg") replica.push({ extent: Math.ceil(size / 128), stride: 128, axis: target });
  }
  let offset = 0;
  for (const a of axes) offset += (l.offset[a] ?? 0) * LINEAR[a]!.base;
  const out: TileLayout = {
    ...l,
    shard: l.shard.map(move),
    replica,
    offset: { ...(l.offset.m !== undefined ? { m: l.offset.m } : {}), [target]: offset },
  };
  // The digits must not overlap (each stride at least the reach of the iter below), and each
  // must be read by a division and a modulo (thread-digits.ts): its stride a multiple of the
  // one below, or past a boundary of the thread index's fields (a lane in its warp) that the
  // one below stays under. A gap between them (24 lanes beside warps: 24:1 and 4:32 on tid) is
  // threads that hold nothing.
  const orig = [...l.shard, ...l.replica];
  const all = [...out.shard, ...out.replica]
    .map((x, i) => ({ x, from: orig[i] }))
    .filter((e) => e.x.axis !== "m" && e.x.extent > 1)
    .sort((a, b) => a.x.stride - b.x.stride);
  const bad = unreadDigit(
    all.map((e) => e.x),
    target,
  );
  if (bad >= 0 && bad + 1 < all.length) {
    const below = all[bad]!;
    const e = all[bad + 1]!;
    const reach = below.x.stride * below.x.extent;
    const name = (f: { x: LayoutIter; from?: LayoutIter }): string =>
      f.from ? showIter(f.from) : `the threads ${showIter(f.x)} that no axis names`;
    const overlap = e.x.stride < reach;
    throw tileDispatchError(
      ctx,
      overlap
        ? `${name(below)} and ${name(e)} name the same threads: as digits of the linear thread index (${target}) they are ${showIter(below.x)} and ${showIter(e.x)}, which overlap on ${target} ${e.x.stride}..${Math.min(reach, e.x.stride * e.x.extent) - 1}`
        : `${name(below)} and ${name(e)} are no digits of the linear thread index (${target}): ${showIter(e.x)} starts at no multiple of ${below.x.stride}, the stride of ${showIter(below.x)}, nor at a warp or warpgroup boundary past it, so no division and modulo reads its value`,
      `iters whose ${target} digits (k@laneid = k, k@warpid = 32·k, k@tid_in_wg = k, k@wgid = 128·k) do not overlap, each stride a multiple of the one below or of the warp, e.g. (32@tid_in_wg, 1@laneid) for a [4, 32] tile`,
    );
  }
  return out;
}

/** Every iter (shard and replica) of `l` on `axis`, by increasing stride. */
function itersOn(l: TileLayout, axis: LayoutAxis): LayoutIter[] {
  return [...l.shard, ...l.replica]
    .filter((x) => x.axis === axis && x.extent > 1)
    .sort((a, b) => a.stride - b.stride);
}

/**
 * The index of iter `x` among `all` (the same object, else the same extent, stride and axis).
 */
function indexOfIter(all: readonly LayoutIter[], x: LayoutIter): number {
  const i = all.indexOf(x);
  return i >= 0 ? i : all.findIndex((y) => showIter(y) === showIter(x));
}

/**
 * The value of thread iter `x` (on a thread axis) for the calling thread, read off its axis's
 * coordinate less the offset `c` as {@link digitRead} says: `(c / stride) % modulus` (the extent,
 * or a radix up to the higher iters' strides when threads between them hold nothing), after
 * `c % field` where a higher iter's place vanishes only within a warp or warpgroup. The iters of
 * one axis must be such digits: positive strides, each at least the reach (stride × extent) of
 * the one below. A layout over several thread axes is read on the linear thread index
 * ({@link linearThreads}). On a thread that holds no element of `l` the value may lie outside
 * 0..extent - 1 ({@link ownsGuard} is false there).
 * @throws TirxError TX2022 when the iters of the axis overlap or are no digits (as linearThreads).
 */
export function iterValue(l: TileLayout, x: LayoutIter, ctx: TileContext): Expr {
  if (x.extent === 1) return intImm(0);
  const lin = linearThreads(l, ctx);
  if (lin !== l) {
    const from = [...l.shard, ...l.replica];
    const i = indexOfIter(from, x);
    invariant(i >= 0, `iterValue: ${showIter(x)} is not an iter of the layout`);
    return iterValue(lin, [...lin.shard, ...lin.replica][i]!, ctx);
  }
  const all = itersOn(l, x.axis);
  if (unreadDigit(all, x.axis) >= 0) {
    throw tileDispatchError(
      ctx,
      `the iters of ${x.axis} must be digits of its coordinate (positive strides, each at least the one below times its extent and a multiple of its stride, or of a warp or warpgroup boundary past it) to find a thread's elements`,
      `strides ${all.map((z) => z.stride).join(", ")} → 1, ${all[0]?.extent ?? 1}, …`,
    );
  }
  const i = indexOfIter(all, x);
  invariant(i >= 0, `iterValue: ${showIter(x)} is not an iter of its axis`);
  const read = digitRead(all, i, x.axis)!;
  const off = l.offset[x.axis] ?? 0;
  let c = axisCoord(x.axis, ctx);
  if (off !== 0) c = binary("sub", c, intImm(off));
  if (read.field !== undefined) c = binary("floormod", c, intImm(read.field));
  let v = x.stride === 1 ? c : binary("floordiv", c, intImm(x.stride));
  const extent = layoutAxisExtent(x.axis, ctx.launch) ?? 1;
  // The outermost iter covering the whole axis needs no modulo.
  const whole = read.field === undefined && off === 0 && i === all.length - 1;
  if (read.modulus !== undefined && !(whole && x.stride * x.extent >= extent)) {
    v = binary("floormod", v, intImm(read.modulus));
  }
  return v;
}

/**
 * A predicate true on the threads that hold elements of `l`: on each thread axis whose iters
 * leave coordinates out (an offset, gaps between strides, fewer values than the launch has),
 * the coordinate must equal its own digits, and a digit whose reading can pass its extent
 * (lanes 24..31 beside warp iters, {@link digitRead}) must be below it. A layout over several
 * thread axes is read on the linear thread index ({@link linearThreads}), so e.g.
 * `(32@tid_in_wg, 1@laneid)` needs no guard.
 * `undefined` when every thread holds elements.
 * @throws TirxError TX2022 as linearThreads.
 */
export function ownsGuard(l: TileLayout, ctx: TileContext): Expr | undefined {
  l = linearThreads(l, ctx);
  let guard: Expr | undefined;
  const and = (e: Expr): void => {
    guard = guard ? logical("and", guard, e) : e;
  };
  const axes = new Set<LayoutAxis>();
  for (const x of [...l.shard, ...l.replica]) if (x.axis !== "m" && x.extent > 1) axes.add(x.axis);
  for (const a of Object.keys(l.offset) as LayoutAxis[]) if (a !== "m") axes.add(a);
  for (const a of axes) {
    const all = itersOn(l, a);
    const extent = layoutAxisExtent(a, ctx.launch) ?? 1;
    let reach = 1;
    let dense = (l.offset[a] ?? 0) === 0;
    for (const y of all) {
      if (y.stride !== reach) dense = false;
      reach = y.stride * y.extent;
    }
    if (dense && reach >= extent) continue;
    let rebuilt: Expr = intImm(l.offset[a] ?? 0);
    const below: Expr[] = [];
    // Whether the readings drop part of the coordinate (an offset, bits below the first
    // stride or between digits, values past the top), so that only the coordinate rebuilt
    // from the digits tells an owner; else each digit below its extent does.
    const drops = (l.offset[a] ?? 0) !== 0 || !readsRebuild(all, a, extent);
    all.forEach((y, i) => {
      const v = iterValue(l, y, ctx);
      rebuilt = binary("add", rebuilt, binary("mul", v, intImm(y.stride)));
      const read = digitRead(all, i, a);
      if (read && !exactRead(read)) below.push(compare("lt", v, intImm(y.extent)));
    });
    if (drops || below.length === 0) and(compare("eq", axisCoord(a, ctx), rebuilt));
    for (const b of below) and(b);
  }
  return guard;
}

/**
 * `stmts` under `guard` (one If, its span the primitive's), or `stmts` as they are when there is
 * no guard.
 */
export function underGuard(guard: Expr | undefined, stmts: Stmt[], ctx: TileContext): Stmt[] {
  if (guard === undefined || stmts.length === 0) return stmts;
  const span = ctx.span ? { span: ctx.span } : {};
  const then: Stmt = stmts.length === 1 ? stmts[0]! : { kind: "Seq", stmts, ...span };
  return [{ kind: "If", cond: guard, then, ...span }];
}

/**
 * `stmts` run only by the threads that hold elements of `l` ({@link ownsGuard}): a register-only
 * primitive (element-wise, a register copy, a cast) touches the registers of its own elements
 * only. A thread outside a layout with gaps or an offset (e.g. `S[(16, 4):(1@laneid, 1@m)]`
 * in a warp: lanes 16–31) holds none, so reading its slots would read registers nothing wrote
 * (undefined on the GPU; the simulator's TX6028).
 * @throws TirxError TX2022 as ownsGuard.
 */
export function ownedOnly(l: TileLayout, ctx: TileContext, stmts: Stmt[]): Stmt[] {
  return underGuard(ownsGuard(l, ctx), stmts, ctx);
}

/**
 * A thread iter split into its lane part and its warp part (for reductions): laneid iters are
 * lanes, warpid iters warps; tid, tid_in_wg and wgid iters are split at the warp boundary (32
 * threads). Strides in the result count lanes and warps.
 * @throws TirxError TX2022 for an iter that straddles the warp boundary unevenly.
 */
export function laneWarpParts(
  x: LayoutIter,
  ctx: TileContext,
): { lane?: { extent: number; stride: number }; warp?: { extent: number; stride: number } } {
  if (x.extent === 1) return {};
  switch (x.axis) {
    case "laneid":
      return { lane: { extent: x.extent, stride: x.stride } };
    case "warpid":
      return { warp: { extent: x.extent, stride: x.stride } };
    case "wgid":
      return { warp: { extent: x.extent, stride: 4 * x.stride } };
    case "tid":
    case "tid_in_wg": {
      const s = x.stride;
      if (s * x.extent <= 32) return { lane: { extent: x.extent, stride: s } };
      if (s % 32 === 0) return { warp: { extent: x.extent, stride: s / 32 } };
      if (32 % s === 0 && x.extent % (32 / s) === 0) {
        return {
          lane: { extent: 32 / s, stride: s },
          warp: { extent: (x.extent * s) / 32, stride: 1 },
        };
      }
      throw tileDispatchError(
        ctx,
        `the iter ${x.extent}:${x.stride}@${x.axis} straddles the warp boundary unevenly, so no shuffle pattern reduces it`,
        `an iter whose stride divides 32 and whose extent is a multiple of 32 / stride`,
      );
    }
    default:
      axisCoord(x.axis, ctx);
      return {};
  }
}

/**
 * Nested loops over `extents` (outermost first) with fresh int32 variables; `body` gets the
 * loop variables and returns the innermost statements. Loops of extent 1 are left out (their
 * variable is the constant 0). `last` annotates the innermost loop (default `unroll`).
 */
export function loopNest(
  ctx: TileContext,
  extents: readonly number[],
  body: (vars: readonly Expr[]) => Stmt[],
  last: ForAnnotation = "unroll",
): Stmt[] {
  const vars: Expr[] = [];
  const loops: { v: import("../ir/expr.js").Var; extent: number; annotation: ForAnnotation }[] = [];
  extents.forEach((e, i) => {
    if (e === 1) {
      vars.push(intImm(0));
      return;
    }
    const v = ctx.freshVar(`i${i}`, "int32");
    vars.push(v);
    loops.push({ v, extent: e, annotation: i === extents.length - 1 ? last : "unroll" });
  });
  let stmts: Stmt[] = body(vars);
  for (let k = loops.length - 1; k >= 0; k--) {
    const l = loops[k]!;
    const inner: Stmt =
      stmts.length === 1
        ? stmts[0]!
        : { kind: "Seq", stmts, ...(ctx.span ? { span: ctx.span } : {}) };
    stmts = [
      {
        kind: "For",
        var: l.v,
        min: intImm(0),
        extent: intImm(l.extent),
        annotation: l.annotation,
        body: inner,
        ...(ctx.span ? { span: ctx.span } : {}),
      },
    ];
  }
  return stmts;
}

/** `Σ values[i] · coeffs[i] + base` as int32 (terms with a zero coefficient left out). */
export function affine(values: readonly Expr[], coeffs: readonly number[], base = 0): Expr {
  let e: Expr = intImm(base);
  values.forEach((v, i) => {
    const c = coeffs[i] ?? 0;
    if (c === 0) return;
    e = binary("add", e, c === 1 ? v : binary("mul", v, intImm(c)));
  });
  return e;
}

/**
 * The threads of the scope that a layout leaves unnamed, as parts of the linear thread index:
 * `lane` (laneid), `warp` (the warp in its warpgroup) and `wg` (the warpgroup in the CTA), each
 * present only when the scope has more than one value of it and no thread axis of `l` (shard or
 * replica) covers it. Such threads hold the same elements as the thread with coordinate 0 on
 * every unnamed part: they are implicit replicas.
 */
export function unnamedParts(l: TileLayout, ctx: TileContext): ("lane" | "warp" | "wg")[] {
  if (ctx.scope === "thread") return [];
  const threads = ctx.launch.block.reduce((a, b) => a * b, 1);
  const size = ctx.scope === "warp" ? 32 : ctx.scope === "wg" ? 128 : threads;
  const covered = new Set<string>();
  const cover: Record<LayoutAxis, readonly string[]> = {
    laneid: ["lane"],
    warpid: ["warp", "wg"],
    tid_in_wg: ["lane", "warp"],
    wgid: ["wg"],
    tid: ["lane", "warp", "wg"],
    m: [],
    cta_in_cluster: [],
    pid: [],
  };
  for (const x of [...l.shard, ...l.replica]) {
    if (x.extent > 1) for (const p of cover[x.axis]) covered.add(p);
  }
  for (const a of Object.keys(l.offset) as LayoutAxis[]) for (const p of cover[a]) covered.add(p);
  const out: ("lane" | "warp" | "wg")[] = [];
  if (size > 1 && !covered.has("lane")) out.push("lane");
  if (size > 32 && !covered.has("warp")) out.push("warp");
  if (size > 128 && !covered.has("wg")) out.push("wg");
  return out;
}

/**
 * A predicate true on the first of the implicit replicas {@link unnamedParts} finds (coordinate 0
 * on every unnamed part), so that stores to memory are made once; `undefined` when the layout
 * names every thread of the scope.
 */
export function unnamedFirstGuard(l: TileLayout, ctx: TileContext): Expr | undefined {
  const parts = unnamedParts(l, ctx);
  if (parts.length === 0) return undefined;
  const threads = ctx.launch.block.reduce((a, b) => a * b, 1);
  const zero = (e: Expr): Expr => compare("eq", e, intImm(0));
  const has = (p: "lane" | "warp" | "wg"): boolean => parts.includes(p);
  const conds: Expr[] = [];
  if (has("lane") && has("warp") && (has("wg") || threads <= 128)) {
    conds.push(zero(ctx.tid));
  } else {
    if (has("lane")) conds.push(zero(axisCoord("laneid", ctx)));
    if (has("warp") && (has("wg") || threads <= 128)) conds.push(zero(axisCoord("warpid", ctx)));
    else if (has("warp")) conds.push(zero(binary("floormod", axisCoord("warpid", ctx), intImm(4))));
    if (has("wg") && !has("warp")) conds.push(zero(axisCoord("wgid", ctx)));
  }
  return conds.reduce((a, b) => logical("and", a, b));
}

/**
 * The conditions, each true on one copy, that together pick a single holder of every element
 * of `l` for a store to memory: coordinate 0 on each replica iter (`R[...]`), then
 * {@link unnamedFirstGuard} for the threads the layout leaves unnamed (implicit replicas).
 * Empty when every element has one holder. The caller ands them, in order, onto its guard. A
 * layout over several thread axes is read on the linear thread index ({@link linearThreads}).
 * @throws TirxError TX2022 as linearThreads.
 */
export function storeOnceConds(l: TileLayout, ctx: TileContext): Expr[] {
  l = linearThreads(l, ctx);
  const conds: Expr[] = [];
  for (const r of l.replica) {
    if (r.axis === "m" || r.extent === 1) continue;
    conds.push(compare("eq", iterValue(l, r, ctx), intImm(0)));
  }
  const unnamed = unnamedFirstGuard(l, ctx);
  if (unnamed) conds.push(unnamed);
  return conds;
}

/**
 * Calls `visit(elem, thread, slot)` for every copy of every element of register tile `t`: its
 * logical index (row-major over `t.shape`), a thread of the scope that holds it (on the scope's
 * linear thread index, {@link linearThreads}: tid_in_wg at wg scope, tid otherwise; replicas
 * and unnamed threads included), and its slot in that thread's array.
 * @throws TirxError TX2022 as {@link linearThreads}.
 */
function eachCopy(
  t: RegisterTile,
  ctx: TileContext,
  visit: (elem: number, thread: number, slot: number) => void,
): void {
  // After linearThreads one thread axis is left: a coordinate's thread is the sum of its
  // non-m axes (0 when the layout names none). A replica on m (one element in several slots of
  // a thread) is left out: the element's first slot stands for it.
  const linear = linearThreads(t.layout, ctx, true);
  const lin = { ...linear, replica: linear.replica.filter((x) => x.axis !== "m") };
  const n = t.shape.reduce((x, y) => x * y, 1);
  for (let e = 0; e < n; e++) {
    for (const c of layoutCoordinates(lin, e, t.shape)) {
      let thread = 0;
      for (const [axis, v] of Object.entries(c)) if (axis !== "m") thread += v ?? 0;
      visit(e, thread, c.m ?? 0);
    }
  }
}

/**
 * When every thread of the scope that holds an element in `dst` holds it in `src` too (the
 * element → thread maps of the two layouts compared, not their notations: `S[(4, 8, 4) :
 * (8@laneid, 1@laneid, 1)]` and `S[(32, 4) : (1@laneid, 1)]` are one map), the src slot of
 * each dst slot (`undefined` for a slot no thread uses, -1 where it depends on the thread: then a
 * per-thread scratch serves); `undefined` when some element must move between threads.
 * @throws TirxError TX2022 as {@link linearThreads}.
 */
export function inThreadSlots(
  dst: RegisterTile,
  src: RegisterTile,
  ctx: TileContext,
): (number | undefined)[] | undefined {
  const at = new Map<string, number>();
  eachCopy(src, ctx, (e, t, slot) => at.set(`${e}:${t}`, slot));
  const slots = dst.buffer.shape.reduce<number>((a, b) => a * (b as number), 1);
  const map: (number | undefined)[] = Array.from({ length: slots }, () => undefined);
  let moves = false;
  eachCopy(dst, ctx, (e, t, slot) => {
    const from = at.get(`${e}:${t}`);
    if (from === undefined) {
      moves = true;
      return;
    }
    const was = map[slot];
    map[slot] = was === undefined || was === from ? from : -1;
  });
  return moves ? undefined : map;
}
