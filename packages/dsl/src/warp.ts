import {
  atomicName,
  atomicSurface,
  numel,
  TirxError,
  type ReduceKind,
  type Span,
} from "@tirx-ts/core";
import { semScopeOperands, type MemoryOrderOptions } from "./memory-order.js";
import { callStmtOp, callValueOp } from "./op-call.js";
import { if_, let_ } from "./control.js";
import { cta_sync } from "./cuda.js";
import { if_then_else, PrimExpr, show, toExpr, type ExprLike } from "./expr.js";
import { callerSpan } from "./span.js";
import { TileView } from "./view.js";

const FULL = 0xffffffff;

/**
 * A warp collective or atomic bound to a variable where the author wrote it, so it executes
 * there, once, with the lanes that reach that line (an expression would be evaluated where it
 * is used, possibly under another guard, or twice).
 */
function bound(name: string, op: string, args: readonly unknown[], span?: Span): PrimExpr {
  return let_(name, callValueOp(op, args, span));
}

/**
 * `__shfl_sync(mask, value, srcLane, width = 32)`: `value` of lane `srcLane` of this lane's group
 * of `width` lanes (PTX ISA, shfl.sync.idx). `mask` (uint32) names the lanes taking part; each
 * of them must execute the call. 8/16/64-bit values and bools are moved too.
 * @throws TirxError TX2010 for a width that is not a static power of two in 1..32, TX2005 for a
 *   value dtype a shuffle cannot move.
 */
export function __shfl_sync(
  mask: ExprLike,
  value: ExprLike,
  srcLane: ExprLike,
  width = 32,
): PrimExpr {
  return bound("shfl", "shfl.sync.idx", [mask, value, srcLane, width], callerSpan());
}

/** `__shfl_up_sync(mask, value, delta, width = 32)`: the value of lane `lane - delta` of the group, or the lane's own below the group start (PTX ISA, shfl.sync.up). */
export function __shfl_up_sync(
  mask: ExprLike,
  value: ExprLike,
  delta: ExprLike,
  width = 32,
): PrimExpr {
  return bound("shfl", "shfl.sync.up", [mask, value, delta, width], callerSpan());
}

/** `__shfl_down_sync(mask, value, delta, width = 32)`: the value of lane `lane + delta`, or the lane's own past the group end (PTX ISA, shfl.sync.down). */
export function __shfl_down_sync(
  mask: ExprLike,
  value: ExprLike,
  delta: ExprLike,
  width = 32,
): PrimExpr {
  return bound("shfl", "shfl.sync.down", [mask, value, delta, width], callerSpan());
}

/** `__shfl_xor_sync(mask, value, laneMask, width = 32)`: the value of lane `lane ^ laneMask` (PTX ISA, shfl.sync.bfly). */
export function __shfl_xor_sync(
  mask: ExprLike,
  value: ExprLike,
  laneMask: ExprLike,
  width = 32,
): PrimExpr {
  return bound("shfl", "shfl.sync.bfly", [mask, value, laneMask, width], callerSpan());
}

function reduceKind(op: unknown, span?: Span): ReduceKind {
  if (op === "sum" || op === "max" || op === "min") return op;
  throw new TirxError(
    "TX2010",
    `reduction op must be "sum", "max" or "min", got ${show(op)}`,
    span,
  );
}

/**
 * TIRx `warp_reduce(value, op, width = 32)`: the `op` ("sum" | "max" | "min") of `value` over
 * each group of `width` adjacent lanes, in every lane of the group. Emitted as log2(width) steps
 * `v = v op __shfl_xor_sync(0xffffffff, v, m)`, m = width/2 .. 1, so every lane of the warp must
 * execute it. Dtypes: float16, bfloat16 (each step rounded to the format), float32, float64,
 * int32, uint32, int64, uint64.
 * @throws TirxError TX2010 for an unknown op or a width that is not a static power of two in
 *   2..32; TX2005 for other dtypes.
 */
export function warp_reduce(value: ExprLike, op: ReduceKind, width = 32): PrimExpr {
  const span = callerSpan();
  const kind = reduceKind(op, span);
  return bound(`warp_${kind}`, `warp_${kind}`, [value, width], span);
}

/** TIRx `warp_sum(value, width = 32)` = `warp_reduce(value, "sum", width)`. */
export function warp_sum(value: ExprLike, width = 32): PrimExpr {
  return bound("warp_sum", "warp_sum", [value, width], callerSpan());
}

/** TIRx `warp_max(value, width = 32)` = `warp_reduce(value, "max", width)`. */
export function warp_max(value: ExprLike, width = 32): PrimExpr {
  return bound("warp_max", "warp_max", [value, width], callerSpan());
}

/** TIRx `warp_min(value, width = 32)` = `warp_reduce(value, "min", width)`. */
export function warp_min(value: ExprLike, width = 32): PrimExpr {
  return bound("warp_min", "warp_min", [value, width], callerSpan());
}

/** Options of {@link warp_scan}: the group width (a static power of two, default 32) and the kind. */
export interface WarpScanOptions {
  readonly width?: number;
  /** Exclusive scan: lane k of a group gets the op over lanes 0..k−1 (the identity at k = 0). */
  readonly exclusive?: boolean;
}

/**
 * Prefix `op` ("sum" | "max" | "min") of `value` over each group of `width` adjacent lanes (CUB's
 * WarpScan): inclusive by default (lane k gets lanes 0..k of its group), exclusive with
 * `{ exclusive: true }` (lanes 0..k−1; the first lane gets the identity: 0, −∞ / +∞ for float
 * max / min, the dtype's minimum / maximum for integers). Emitted as log2(width) Hillis–Steele
 * steps with `shfl.sync.up` (PTX ISA, shfl.sync): step d = 1, 2, …, width/2 makes lane l's value
 * v[l−d] ⊕ v[l] when l is at least d into its group, each ⊕ one `add/min/max` instruction (float
 * sums round at every step, in that order; the simulator follows it bit for bit); an exclusive
 * scan shifts the inclusive one up a lane. Every lane of the warp must execute it. Dtypes:
 * float32, float64, int32, uint32, int64, uint64 (integer sums wrap).
 * @throws TirxError TX2010 for an unknown op or width; TX2005 for other dtypes.
 * @example const prefix = T.cuda.warp_scan(x, "sum", { exclusive: true })
 */
export function warp_scan(value: ExprLike, op: ReduceKind, opts: WarpScanOptions = {}): PrimExpr {
  const span = callerSpan();
  const kind = reduceKind(op, span);
  const args = [value, opts.width ?? 32, opts.exclusive ? 1 : 0];
  return bound(`warp_scan_${kind}`, `warp_scan_${kind}`, args, span);
}

/**
 * The int32 `index` that goes with the largest `value` of each group of `width` adjacent lanes,
 * in every lane of the group (a key–value butterfly: `shfl.sync.bfly` on both, `setp`/`selp`).
 * NaN values never win unless every value is NaN; equal values (−0 == +0) and NaNs tie; a tie
 * goes to the lowest index. The winning value is `warp_max(value, width)` (same NaN rule).
 * Dtypes of `value`: float32, float64, int32, uint32, int64, uint64.
 * @throws TirxError TX2010 for a width that is not a static power of two in 2..32; TX2005.
 * @example const best = T.cuda.warp_argmax(score, T.cuda.thread_idx("x"))
 */
export function warp_argmax(value: ExprLike, index: ExprLike, width = 32): PrimExpr {
  return bound("warp_argmax", "warp_argmax", [value, index, width], callerSpan());
}

/** The index of the smallest `value` (see {@link warp_argmax}: same NaN and tie rules). */
export function warp_argmin(value: ExprLike, index: ExprLike, width = 32): PrimExpr {
  return bound("warp_argmin", "warp_argmin", [value, index, width], callerSpan());
}

/** The linear thread index in the CTA (x fastest), as int32. */
function linearTid(): PrimExpr {
  const s = (name: "tid.x" | "tid.y" | "tid.z" | "ntid.x" | "ntid.y") =>
    new PrimExpr({ kind: "Special", name, dtype: "int32" });
  return s("tid.x").add(
    s("tid.y")
      .add(s("tid.z").mul(s("ntid.y")))
      .mul(s("ntid.x")),
  );
}

/**
 * TIRx `cta_reduce(value, op, num_warps, scratch)`: the `op` of `value` over every thread of the
 * CTA, returned to every thread. All threads of the CTA must call it (it holds cta_syncs).
 * The statements, in order (GPU and simulator combine in the same order, so float sums agree
 * bit for bit):
 *   1. `w = warp_reduce(value, op, 32)` in every warp;
 *   2. lane 0 of warp i stores `scratch[i] = w`;
 *   3. `cta_sync`;
 *   4. warp 0: `r = warp_reduce(scratch[lane % num_warps], op, num_warps)`; `__syncwarp()`
 *      (the shuffles order no memory, and lane 0 overwrites a partial other lanes read);
 *      lane 0 stores `scratch[0] = r`;
 *   5. `cta_sync`;
 *   6. every thread reads `scratch[0]`.
 * With `num_warps == 1` it is `warp_reduce(value, op, 32)` and `scratch` is not touched.
 * Reusing `scratch` for another reduction needs a cta_sync after this result is read (step 2 of
 * the next one writes `scratch[0]`).
 * @param num_warps the CTA's warps: a power of two in 1..32, equal to threads / 32.
 * @param scratch a shared buffer of at least `num_warps` elements of `value`'s dtype.
 * @throws TirxError TX2015 (scratch or num_warps), and the errors of warp_reduce.
 */
export function cta_reduce(
  value: ExprLike,
  op: ReduceKind,
  num_warps: number,
  scratch: TileView,
): PrimExpr {
  const span = callerSpan();
  const kind = reduceKind(op, span);
  const v = value instanceof PrimExpr ? value : new PrimExpr(toExpr(value, undefined, span));
  if (
    typeof num_warps !== "number" ||
    !Number.isSafeInteger(num_warps) ||
    num_warps < 1 ||
    num_warps > 32 ||
    (num_warps & (num_warps - 1)) !== 0
  ) {
    throw new TirxError(
      "TX2015",
      `num_warps of T.cuda.cta_reduce must be a static power of two in 1..32, got ${show(num_warps)}`,
      span,
    );
  }
  if (!(scratch instanceof TileView)) {
    throw new TirxError(
      "TX2015",
      `scratch of T.cuda.cta_reduce must be a shared buffer (T.alloc_shared), got ${show(scratch)}`,
      span,
    );
  }
  const scope = scratch.buffer.scope;
  if (
    (scope !== "shared" && scope !== "shared.dyn") ||
    scratch.dtype !== v.dtype ||
    numel(scratch.shape) < num_warps
  ) {
    throw new TirxError(
      "TX2015",
      `scratch of T.cuda.cta_reduce must be a shared buffer of at least ${num_warps} ${v.dtype} elements, got ${scope} "${scratch.name}" of ${numel(scratch.shape)} ${scratch.dtype}`,
      span,
    );
  }
  const warp = bound("cta_partial", `warp_${kind}`, [v, 32], span);
  if (num_warps === 1) return warp;
  const flat =
    scratch.shape.length === 1 ? scratch : scratch.rearrange(flatPattern(scratch.shape.length));
  const tid = let_("cta_tid", linearTid());
  const lane = tid.bitand(31);
  if_(lane.eq(0), () => flat.set([tid.shr(5)], warp));
  cta_sync();
  if_(tid.shr(5).eq(0), () => {
    const r = let_(
      "cta_total",
      callValueOp(`warp_${kind}`, [flat.get([lane.bitand(num_warps - 1)]), num_warps], span),
    );
    // Lane 0 overwrites a partial other lanes of warp 0 read: only bar.warp.sync orders those
    // reads before the write (shfl.sync orders no memory; PTX ISA, bar.warp.sync).
    callStmtOp("bar.warp.sync", [FULL], span);
    if_(lane.eq(0), () => flat.set([0], r));
  });
  cta_sync();
  return let_("cta_result", flat.get([0]));
}

/** An einops pattern flattening `n` axes into one. */
function flatPattern(n: number): string {
  const axes = Array.from({ length: n }, (_, i) => `a${i}`).join(" ");
  return `${axes} -> (${axes})`;
}

/**
 * The prefix `op` ("sum" | "max" | "min") of `value` over the threads of the CTA in linear
 * thread order (x fastest): inclusive by default, exclusive with `{ exclusive: true }` (thread 0
 * gets the identity of {@link warp_scan}). Every thread of the CTA calls it; `num_warps` (a static
 * power of two in 1..32) is the CTA's warp count and `scratch` a shared buffer of at least
 * `num_warps` elements of `value`'s dtype. Order of operations (the simulator follows it, so
 * float sums agree with a GPU bit for bit): each warp scans its lanes (`warp_scan`, width 32);
 * lane 31 stores its warp's total to `scratch[warp]`; after a CTA barrier warp 0 replaces the
 * totals by their exclusive scan (`warp_scan` over `num_warps` lanes); after a second barrier
 * every thread of warp w > 0 computes `scratch[w] ⊕ own` (warp 0 keeps its own). A sum whose
 * offset is −0 and own value +0 is +0 (IEEE). Dtypes of {@link warp_scan}.
 * @throws TirxError TX2015 for a bad `num_warps` or `scratch`, TX2010 for an unknown op, TX2005
 *   for other dtypes.
 * @example const offset = T.cuda.cta_scan(count, "sum", 4, scratch, { exclusive: true })
 */
export function cta_scan(
  value: ExprLike,
  op: ReduceKind,
  num_warps: number,
  scratch: TileView,
  opts: { readonly exclusive?: boolean } = {},
): PrimExpr {
  const span = callerSpan();
  const kind = reduceKind(op, span);
  const v = value instanceof PrimExpr ? value : new PrimExpr(toExpr(value, undefined, span));
  checkCtaScratch("cta_scan", v, num_warps, scratch, span);
  const ex = opts.exclusive ? 1 : 0;
  const inc = bound("cta_scan_inc", `warp_scan_${kind}`, [v, 32, 0], span);
  const own = ex ? bound("cta_scan_own", `warp_scan_${kind}`, [v, 32, 1], span) : inc;
  if (num_warps === 1) return own;
  const flat =
    scratch.shape.length === 1 ? scratch : scratch.rearrange(flatPattern(scratch.shape.length));
  const tid = let_("cta_tid", linearTid());
  const lane = tid.bitand(31);
  const warp = tid.shr(5);
  if_(lane.eq(31), () => flat.set([warp], inc));
  cta_sync();
  if_(warp.eq(0), () => {
    const offs = let_(
      "cta_offsets",
      callValueOp(
        `warp_scan_${kind}`,
        [flat.get([lane.bitand(num_warps - 1)]), num_warps, 1],
        span,
      ),
    );
    // Lanes write totals other lanes of warp 0 read: bar.warp.sync orders those reads first.
    callStmtOp("bar.warp.sync", [FULL], span);
    if_(lane.lt(num_warps), () => flat.set([lane], offs));
  });
  cta_sync();
  const off = flat.get([warp]);
  const joined = kind === "sum" ? off.add(own) : kind === "max" ? off.max(own) : off.min(own);
  return let_("cta_scan", if_then_else(warp.eq(0), own, joined));
}

/**
 * The int32 `index` that goes with the largest `value` over the threads of the CTA (the rules of
 * {@link warp_argmax}: NaN never wins unless every value is NaN, equal values tie, a tie goes to
 * the lowest index), in every thread. Every thread calls it; `scratch` (≥ num_warps elements of
 * `value`'s dtype) and `indices` (≥ num_warps int32) are shared buffers. Each warp finds its
 * winner (`warp_argmax`, its value `warp_max`); lane 0 stores both; `bar.sync`; warp 0 runs
 * `warp_argmax` over the `num_warps` winners and lane 0 stores the index; `bar.sync`; all read it.
 * The order makes no difference (the rule is a total preorder).
 * @throws TirxError TX2015 for a bad `num_warps`, `scratch` or `indices`, TX2005 for other dtypes.
 * @example const best = T.cuda.cta_argmax(score, tid, 4, sv, si)
 */
export function cta_argmax(
  value: ExprLike,
  index: ExprLike,
  num_warps: number,
  scratch: TileView,
  indices: TileView,
): PrimExpr {
  return ctaArg("max", value, index, num_warps, scratch, indices, callerSpan());
}

/** The index of the smallest `value` over the CTA (see {@link cta_argmax}). */
export function cta_argmin(
  value: ExprLike,
  index: ExprLike,
  num_warps: number,
  scratch: TileView,
  indices: TileView,
): PrimExpr {
  return ctaArg("min", value, index, num_warps, scratch, indices, callerSpan());
}

function ctaArg(
  kind: "max" | "min",
  value: ExprLike,
  index: ExprLike,
  num_warps: number,
  scratch: TileView,
  indices: TileView,
  span?: Span,
): PrimExpr {
  const what = `cta_arg${kind}`;
  const v = value instanceof PrimExpr ? value : new PrimExpr(toExpr(value, undefined, span));
  const i = index instanceof PrimExpr ? index : new PrimExpr(toExpr(index, "int32", span));
  checkCtaScratch(what, v, num_warps, scratch, span);
  checkCtaScratch(what, i, num_warps, indices, span);
  const best = bound("cta_arg_warp", `warp_arg${kind}`, [v, i, 32], span);
  if (num_warps === 1) return best;
  const bestV = bound("cta_arg_value", `warp_${kind}`, [v, 32], span);
  const flat = (t: TileView): TileView =>
    t.shape.length === 1 ? t : t.rearrange(flatPattern(t.shape.length));
  const [sv, si] = [flat(scratch), flat(indices)];
  const tid = let_("cta_tid", linearTid());
  const lane = tid.bitand(31);
  const warp = tid.shr(5);
  if_(lane.eq(0), () => {
    sv.set([warp], bestV);
    si.set([warp], best);
  });
  cta_sync();
  if_(warp.eq(0), () => {
    const k = lane.bitand(num_warps - 1);
    const r = let_(
      "cta_arg_total",
      callValueOp(`warp_arg${kind}`, [sv.get([k]), si.get([k]), num_warps], span),
    );
    // Lane 0 overwrites an index other lanes of warp 0 read: bar.warp.sync orders those reads.
    callStmtOp("bar.warp.sync", [FULL], span);
    if_(lane.eq(0), () => si.set([0], r));
  });
  cta_sync();
  return let_("cta_arg", si.get([0]));
}

/**
 * The contract of a CTA collective's `num_warps` and `scratch` (shared, ≥ num_warps elements of
 * the value's dtype). @throws TirxError TX2015.
 */
function checkCtaScratch(
  what: string,
  v: PrimExpr,
  num_warps: number,
  scratch: TileView,
  span?: Span,
): void {
  if (
    typeof num_warps !== "number" ||
    !Number.isSafeInteger(num_warps) ||
    num_warps < 1 ||
    num_warps > 32 ||
    (num_warps & (num_warps - 1)) !== 0
  ) {
    throw new TirxError(
      "TX2015",
      `num_warps of T.cuda.${what} must be a static power of two in 1..32, got ${show(num_warps)}`,
      span,
    );
  }
  const scope = scratch instanceof TileView ? scratch.buffer.scope : undefined;
  if (
    !(scratch instanceof TileView) ||
    (scope !== "shared" && scope !== "shared.dyn") ||
    scratch.dtype !== v.dtype ||
    numel(scratch.shape) < num_warps
  ) {
    throw new TirxError(
      "TX2015",
      `scratch of T.cuda.${what} must be a shared buffer (T.alloc_shared) of at least ${num_warps} ${v.dtype} elements, got ${show(scratch)}`,
      span,
    );
  }
}

/** TIRx `cta_sum(value, num_warps, scratch)` = `cta_reduce(value, "sum", num_warps, scratch)`. */
export const cta_sum = (value: ExprLike, num_warps: number, scratch: TileView): PrimExpr =>
  cta_reduce(value, "sum", num_warps, scratch);
/** TIRx `cta_max(value, num_warps, scratch)`. */
export const cta_max = (value: ExprLike, num_warps: number, scratch: TileView): PrimExpr =>
  cta_reduce(value, "max", num_warps, scratch);
/** TIRx `cta_min(value, num_warps, scratch)`. */
export const cta_min = (value: ExprLike, num_warps: number, scratch: TileView): PrimExpr =>
  cta_reduce(value, "min", num_warps, scratch);

/** `__activemask()`: the uint32 mask of the lanes executing together (PTX ISA, activemask). */
export function __activemask(): PrimExpr {
  return bound("activemask", "activemask", [], callerSpan());
}

/** `__syncwarp(mask = 0xffffffff)`: the lanes of `mask` meet (PTX ISA, bar.warp.sync). */
export function __syncwarp(mask: ExprLike = FULL): void {
  callStmtOp("bar.warp.sync", [mask], callerSpan());
}

/** `__all_sync(mask, predicate)`: true when `predicate` (bool) holds in every lane of `mask` (PTX ISA, vote.sync.all). */
export function __all_sync(mask: ExprLike, predicate: ExprLike): PrimExpr {
  return bound("vote", "vote.sync.all", [mask, predicate], callerSpan());
}

/** `__any_sync(mask, predicate)`: true when `predicate` holds in some lane of `mask` (vote.sync.any). */
export function __any_sync(mask: ExprLike, predicate: ExprLike): PrimExpr {
  return bound("vote", "vote.sync.any", [mask, predicate], callerSpan());
}

/** `__ballot_sync(mask, predicate)`: uint32 with bit l set when lane l of `mask` has `predicate` (vote.sync.ballot). */
export function __ballot_sync(mask: ExprLike, predicate: ExprLike): PrimExpr {
  return bound("vote", "vote.sync.ballot", [mask, predicate], callerSpan());
}

/**
 * `__reduce_add_sync(mask, value)` (CUDA, sm_80): the sum modulo 2^32 of `value` (int32 or
 * uint32) over the lanes of `mask`, every one of which must execute it (PTX ISA, redux.sync).
 * @throws TirxError TX2005 for other dtypes (float32 min/max is sm_100a only).
 */
export function __reduce_add_sync(mask: ExprLike, value: ExprLike): PrimExpr {
  return bound("redux", "redux.sync.add", [mask, value], callerSpan());
}
/** `__reduce_min_sync(mask, value)`: the minimum over the lanes of `mask` (redux.sync.min, sm_80). */
export function __reduce_min_sync(mask: ExprLike, value: ExprLike): PrimExpr {
  return bound("redux", "redux.sync.min", [mask, value], callerSpan());
}
/** `__reduce_max_sync(mask, value)`: the maximum over the lanes of `mask` (redux.sync.max, sm_80). */
export function __reduce_max_sync(mask: ExprLike, value: ExprLike): PrimExpr {
  return bound("redux", "redux.sync.max", [mask, value], callerSpan());
}
/** `__reduce_and_sync(mask, value)`: bitwise and over the lanes of `mask` (redux.sync.and, sm_80). */
export function __reduce_and_sync(mask: ExprLike, value: ExprLike): PrimExpr {
  return bound("redux", "redux.sync.and", [mask, value], callerSpan());
}
/** `__reduce_or_sync(mask, value)`: bitwise or over the lanes of `mask` (redux.sync.or, sm_80). */
export function __reduce_or_sync(mask: ExprLike, value: ExprLike): PrimExpr {
  return bound("redux", "redux.sync.or", [mask, value], callerSpan());
}
/** `__reduce_xor_sync(mask, value)`: bitwise xor over the lanes of `mask` (redux.sync.xor, sm_80). */
export function __reduce_xor_sync(mask: ExprLike, value: ExprLike): PrimExpr {
  return bound("redux", "redux.sync.xor", [mask, value], callerSpan());
}

/**
 * Named barrier `bar.sync id, count`: waits until `count` threads (a multiple of 32, at most the
 * CTA's threads) arrived at barrier `id` (0..15; id 0 is the one cta_sync uses).
 * @throws TirxError TX2010 (id), TX2014 (count).
 */
export function bar_sync(id: number, count: number): void {
  callStmtOp("bar.sync.named", [id, count], callerSpan());
}

/**
 * Named barrier `bar.arrive id, count`: signals the arrival of the executing threads at barrier
 * `id` without waiting (PTX ISA, bar/barrier). The arrivals count toward the same barrier instance
 * as `bar_sync(id, count)` of other threads: a producer writes, then arrives; consumers
 * `bar_sync(id, count)` and then read. The arriving threads acquire nothing.
 * @throws TirxError TX2010 (id), TX2014 (count).
 */
export function bar_arrive(id: number, count: number): void {
  callStmtOp("bar.arrive", [id, count], callerSpan());
}

/** Value operands of an atomic in the addressed element's dtype (JS literals included). */
function atomicArgs(ptr: PrimExpr, values: readonly ExprLike[], span?: Span): unknown[] {
  const e = ptr instanceof PrimExpr ? ptr.expr : undefined;
  const dt = e?.kind === "BufferPtr" ? e.buffer.dtype : undefined;
  return [
    ptr,
    ...values.map((v) => (v instanceof PrimExpr ? v : new PrimExpr(toExpr(v, dt, span)))),
  ];
}

function atom(
  kind: string,
  ptr: PrimExpr,
  values: readonly ExprLike[],
  opts?: MemoryOrderOptions,
): PrimExpr {
  const span = callerSpan();
  const args = atomicArgs(ptr, values, span);
  if (opts === undefined) return bound("old", atomicName(true, kind), args, span);
  const order = semScopeOperands(opts, "relaxed", atomicSurface(true, kind), span);
  return bound("old", atomicName(true, kind, true), [...args, ...order], span);
}

function red(kind: string, ptr: PrimExpr, value: ExprLike, opts?: MemoryOrderOptions): void {
  const span = callerSpan();
  const args = atomicArgs(ptr, [value], span);
  if (opts === undefined) {
    callStmtOp(atomicName(false, kind), args, span);
    return;
  }
  const order = semScopeOperands(opts, "relaxed", atomicSurface(false, kind), span);
  callStmtOp(atomicName(false, kind, true), [...args, ...order], span);
}

/**
 * Atomics on a global or shared element `ptr` (`buf.ptr([i])`), returning the old value (PTX ISA,
 * atom; relaxed, GPU scope). Element dtypes: add int32/uint32/uint64/float32; min/max
 * int32/uint32/uint64; cas/exch int32/uint32/float32/uint64. `*_f16x2` / `*_bf16x2` add packed
 * pairs: the element is a uint32 holding two halves (low 16 bits at the lower address).
 * `opts` (`{ sem, scope }`, not for the packed forms) emits `atom.<sem>.<scope>` (sm_70; sem
 * relaxed, acquire, release or acq_rel; scope cta, cluster (sm_90), gpu or sys):
 * `T.cuda.atomic_add(count.ptr([0]), 1, { sem: "acq_rel", scope: "gpu" })`.
 * @throws TirxError TX2009 (ptr not a global/shared element), TX2005 (dtypes), TX1002 (opts).
 */
export const atomic_add = (ptr: PrimExpr, value: ExprLike, opts?: MemoryOrderOptions): PrimExpr =>
  atom("add", ptr, [value], opts);
/** `atom.min`: see {@link atomic_add}. */
export const atomic_min = (ptr: PrimExpr, value: ExprLike, opts?: MemoryOrderOptions): PrimExpr =>
  atom("min", ptr, [value], opts);
/** `atom.max`: see {@link atomic_add}. */
export const atomic_max = (ptr: PrimExpr, value: ExprLike, opts?: MemoryOrderOptions): PrimExpr =>
  atom("max", ptr, [value], opts);
/** `atom.exch`: stores `value`, returns the old value; `opts` as {@link atomic_add}. */
export const atomic_exch = (ptr: PrimExpr, value: ExprLike, opts?: MemoryOrderOptions): PrimExpr =>
  atom("exch", ptr, [value], opts);
/** TIRx `atomic_cas(ptr, old_val, new_val)`: stores `new_val` when the element's bits equal `old_val`'s; returns the old value; `opts` as {@link atomic_add}. */
export const atomic_cas = (
  ptr: PrimExpr,
  old_val: ExprLike,
  new_val: ExprLike,
  opts?: MemoryOrderOptions,
): PrimExpr => atom("cas", ptr, [old_val, new_val], opts);
/** `atom.add.noftz.f16x2` on a uint32 element holding two float16 (sm_60+). */
export const atomic_add_f16x2 = (ptr: PrimExpr, value: ExprLike): PrimExpr =>
  atom("f16x2", ptr, [value]);
/** `atom.add.noftz.bf16x2` on a uint32 element holding two bfloat16 (sm_90+). */
export const atomic_add_bf16x2 = (ptr: PrimExpr, value: ExprLike): PrimExpr =>
  atom("bf16x2", ptr, [value]);
/** `red.add` (no result): see {@link atomic_add}; `opts.sem` is relaxed or release. */
export const red_add = (ptr: PrimExpr, value: ExprLike, opts?: MemoryOrderOptions): void =>
  red("add", ptr, value, opts);
/** `red.min` (no result); `opts` as {@link red_add}. */
export const red_min = (ptr: PrimExpr, value: ExprLike, opts?: MemoryOrderOptions): void =>
  red("min", ptr, value, opts);
/** `red.max` (no result); `opts` as {@link red_add}. */
export const red_max = (ptr: PrimExpr, value: ExprLike, opts?: MemoryOrderOptions): void =>
  red("max", ptr, value, opts);
/** `red.add.noftz.f16x2` (no result). */
export const red_add_f16x2 = (ptr: PrimExpr, value: ExprLike): void => red("f16x2", ptr, value);
/** `red.add.noftz.bf16x2` (no result, sm_90+). */
export const red_add_bf16x2 = (ptr: PrimExpr, value: ExprLike): void => red("bf16x2", ptr, value);
