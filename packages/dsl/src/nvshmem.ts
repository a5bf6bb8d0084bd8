import { SIGNAL_CMPS, TirxError, constInt, type SignalCmp, type Span } from "@tirx-ts/core";
import { builder } from "./builder.js";
import { checkOptions } from "./check.js";
import { if_, let_, range, while_ } from "./control.js";
import { cta_sync, thread_idx } from "./cuda.js";
import { PrimExpr, show, toExpr, type ExprLike } from "./expr.js";
import { callStmtOp, callValueOp } from "./op-call.js";
import { callerSpan } from "./span.js";
import { TileView } from "./view.js";
import { __syncwarp, atomic_exch, red_add } from "./warp.js";

/**
 * Who calls a put or get (NVSHMEM device API: `nvshmem_putmem` by one thread,
 * `nvshmemx_putmem_warp` by every lane of a converged warp, `nvshmemx_putmem_block` by every
 * thread of the CTA): the elements are shared among the callers, lane by lane or thread by
 * thread.
 */
export type NvshmemScope = "thread" | "warp" | "cta";

/** Options of the puts and gets: `scope` (default `"thread"`). */
export interface NvshmemOptions {
  readonly scope?: NvshmemScope;
}

/** How a signal word is updated (NVSHMEM_SIGNAL_SET, NVSHMEM_SIGNAL_ADD). */
export type SignalOp = "set" | "add";

/**
 * The symmetric tensor `v` (a global tensor whose leading dim is the PE, TIRx's device axis
 * `pid`: PE p's copy at index p; every PE allocates it at the same offset of its symmetric heap)
 * and its PE count.
 * @throws TirxError TX2009 when `v` is not a global tensor of rank ≥ 2 with a static leading dim.
 */
function symmetric(v: unknown, what: string, span?: Span): { view: TileView; pes: number } {
  if (!(v instanceof TileView)) {
    throw new TirxError(
      "TX2009",
      `${what}: a symmetric tensor (a kernel parameter), got ${show(v)}`,
      span,
    );
  }
  const b = v.buffer;
  const p = b.shape[0];
  if (b.scope !== "global" || b.shape.length < 2 || typeof p !== "number") {
    throw new TirxError(
      "TX2009",
      `${what}: ${b.name} is not a symmetric tensor: one is a global tensor [pes, ...shard] whose leading dim is the PE (TIRx's device axis pid), static; got a ${b.scope} buffer of shape [${b.shape.join(", ")}]`,
      span,
    );
  }
  return { view: v, pes: p };
}

/**
 * TX1005 when `pe` is a constant outside [0, pes) (NVSHMEM: a PE index is below nvshmem_n_pes).
 */
function checkPe(pe: ExprLike, pes: number, what: string, span?: Span): PrimExpr {
  const e = pe instanceof PrimExpr ? pe : new PrimExpr(toExpr(pe, "int32", span));
  const k = constInt(e.expr);
  if (k !== undefined && (k < 0 || k >= pes)) {
    throw new TirxError(
      "TX1005",
      `${what}: PE ${k} is out of range: the symmetric tensor spans ${pes} PEs (0..${pes - 1})`,
      span,
    );
  }
  return e;
}

/** The scope option. @throws TirxError TX1002 for an unknown option or scope. */
function scopeOf(opts: unknown, what: string, span?: Span): NvshmemScope {
  const o = checkOptions(opts ?? {}, ["scope"], what, span);
  const s = o.scope ?? "thread";
  if (s !== "thread" && s !== "warp" && s !== "cta") {
    throw new TirxError(
      "TX1002",
      `${what}: scope is "thread", "warp" or "cta", got ${show(s)}`,
      span,
    );
  }
  return s;
}

/**
 * Run `each(k)` for k in [0, count), shared among the callers of `scope`: all by the thread;
 * lane-strided in a warp; thread-strided over the CTA (a 1-D block of the launch's threads).
 */
function spread(
  scope: NvshmemScope,
  count: number,
  each: (k: PrimExpr) => void,
  span?: Span,
): void {
  if (scope === "thread") {
    for (const k of range(count)) each(k);
    return;
  }
  const b = builder("T.nvshmem", span);
  const launch = b.launch;
  const threads = launch ? launch.block[0] * launch.block[1] * launch.block[2] : 0;
  if (scope === "cta" && (!launch || launch.block[1] !== 1 || launch.block[2] !== 1)) {
    throw new TirxError(
      "TX2010",
      "T.nvshmem at cta scope needs T.device_entry's launch first, with a 1-D block",
      span,
    );
  }
  const width = scope === "warp" ? 32 : threads;
  const me = scope === "warp" ? thread_idx("x").mod(32) : thread_idx("x");
  for (const j of range(Math.ceil(count / width))) {
    const k = let_("k", j.mul(width).add(me));
    if (count % width === 0) each(k);
    else if_(k.lt(count), () => each(k));
  }
}

/** The convergence point of a collective call: `__syncwarp()` in a warp, `bar.sync 0` in a CTA. */
function converge(scope: NvshmemScope): void {
  if (scope === "warp") __syncwarp();
  else if (scope === "cta") cta_sync();
}

/** The last index moved by k: elements contiguous along the innermost dim. */
function at(index: readonly ExprLike[], k: PrimExpr, span?: Span): ExprLike[] {
  if (!Array.isArray(index)) {
    throw new TirxError(
      "TX1002",
      `T.nvshmem: an index is an array of element indices, e.g. [row, 0], got ${show(index)}`,
      span,
    );
  }
  const out = [...index];
  const last = out.pop();
  const base = last instanceof PrimExpr ? last : new PrimExpr(toExpr(last ?? 0, "int32", span));
  return [...out, base.add(k)];
}

/** A static element count ≥ 1. @throws TirxError TX2003 otherwise. */
function countOf(count: unknown, what: string, span?: Span): number {
  if (typeof count !== "number" || !Number.isInteger(count) || count < 1) {
    throw new TirxError(
      "TX2003",
      `${what}: count is a static element count ≥ 1, got ${show(count)}`,
      span,
    );
  }
  return count;
}

/**
 * Both sides are buffers (views) and their dtypes agree.
 * @throws TirxError TX1002 for a side that is not a buffer, TX2005 for dtypes that differ.
 */
function sameDtype(a: TileView, b: TileView, what: string, span?: Span): void {
  for (const v of [a, b] as unknown[]) {
    if (!(v instanceof TileView)) {
      throw new TirxError(
        "TX1002",
        `${what}: both sides are buffers (a kernel parameter or a T.alloc_shared / T.alloc_local view), got ${show(v)}`,
        span,
      );
    }
  }
  if (a.dtype !== b.dtype) {
    throw new TirxError(
      "TX2005",
      `${what}: ${a.buffer.name} is ${a.dtype} but ${b.buffer.name} is ${b.dtype}`,
      span,
    );
  }
}

/**
 * `nvshmem_my_pe()`: this PE's index, 0..n_pes - 1 (int32; NVSHMEM device API). On the direct
 * path a module variable the host sets; on the simulator the PE of the thread (runSim's `pes`).
 */
export function my_pe(): PrimExpr {
  return callValueOp("nvshmem.my_pe", [], callerSpan());
}

/** `nvshmem_n_pes()`: the PEs of the launch (int32; NVSHMEM device API). */
export function n_pes(): PrimExpr {
  return callValueOp("nvshmem.n_pes", [], callerSpan());
}

/**
 * `nvshmem_putmem` / `nvshmemx_putmem_warp` / `nvshmemx_putmem_block` (and `_nbi`: the direct
 * path's stores are the same): `count` elements from `src` at `srcIndex` (contiguous along its
 * innermost dim, within it on both sides: the verifier proves each index within its axis,
 * TX2006; a full index, so a symmetric source names its own PE) to PE `pe`'s copy of the
 * symmetric tensor `dst` at `dstIndex` (an index into one shard, without the PE). Weak stores to
 * the peer's memory: nothing orders them before a peer's reads until a signal (put_signal,
 * signal_op after fence), quiet or barrier_all does; the simulator reports an unordered read
 * (TX6003, both lines). Warp scope: every lane of the warp calls it (converged, `__syncwarp` at
 * the end, TX6011 otherwise); cta scope: every thread (`bar.sync 0`, TX6009 otherwise).
 * Example: `T.nvshmem.put(Buf, [0], X, [0], 256, peer, { scope: "cta" })`.
 * @throws TirxError TX2009 (not symmetric), TX2005 (dtypes differ), TX2003 (count), TX1005 (a
 *   static PE out of range), TX1002 (options; a side that is not a buffer or an index that is
 *   not an array).
 */
export function put(
  dst: TileView,
  dstIndex: readonly ExprLike[],
  src: TileView,
  srcIndex: readonly ExprLike[],
  count: number,
  pe: ExprLike,
  opts?: NvshmemOptions,
): void {
  const span = callerSpan();
  const what = "T.nvshmem.put";
  const { pes } = symmetric(dst, what, span);
  sameDtype(dst, src, what, span);
  const n = countOf(count, what, span);
  const p = checkPe(pe, pes, what, span);
  const scope = scopeOf(opts, what, span);
  spread(
    scope,
    n,
    (k) => dst.set([p, ...at(dstIndex, k, span)], src.get(at(srcIndex, k, span))),
    span,
  );
  converge(scope);
}

/**
 * `nvshmem_getmem` (warp and block forms by `scope`, as {@link put}): `count` elements of PE
 * `pe`'s copy of the symmetric tensor `src` at `srcIndex` (an index into one shard) into `dst` at
 * `dstIndex` (a full index). The reads are weak: the peer's writes must be ordered before them
 * (a signal the caller waited for, or barrier_all).
 * @throws TirxError as {@link put}.
 */
export function get(
  dst: TileView,
  dstIndex: readonly ExprLike[],
  src: TileView,
  srcIndex: readonly ExprLike[],
  count: number,
  pe: ExprLike,
  opts?: NvshmemOptions,
): void {
  const span = callerSpan();
  const what = "T.nvshmem.get";
  const { pes } = symmetric(src, what, span);
  sameDtype(dst, src, what, span);
  const n = countOf(count, what, span);
  const p = checkPe(pe, pes, what, span);
  const scope = scopeOf(opts, what, span);
  spread(
    scope,
    n,
    (k) => dst.set(at(dstIndex, k, span), src.get([p, ...at(srcIndex, k, span)])),
    span,
  );
  converge(scope);
}

/** The uint64 signal word's checks. @throws TirxError TX2009, TX2005. */
function signalOf(sig: TileView, what: string, span?: Span): number {
  const { pes } = symmetric(sig, what, span);
  if (sig.dtype !== "uint64") {
    throw new TirxError(
      "TX2005",
      `${what}: a signal is a uint64 word (NVSHMEM device API, Signaling Operations), ${sig.buffer.name} is ${sig.dtype}`,
      span,
    );
  }
  return pes;
}

/**
 * The signal update itself: `atom.exch.release.sys.b64` (SET) or `red.add.release.sys.u64` (ADD)
 * on PE `pe`'s copy of the word: its release orders the caller's earlier stores (and, through a
 * barrier before it, its warp's or CTA's) before the waiter's acquire (PTX ISA, Memory
 * Consistency Model, "Release and Acquire Patterns").
 */
function updateSignal(
  sig: TileView,
  sigIndex: readonly ExprLike[],
  value: ExprLike,
  op: SignalOp,
  p: PrimExpr,
  span?: Span,
): void {
  const ptr = sig.ptr([p, ...sigIndex]);
  const v =
    value instanceof PrimExpr ? value.cast("uint64") : new PrimExpr(toExpr(value, "uint64", span));
  if (op === "add") red_add(ptr, v, { sem: "release", scope: "sys" });
  else atomic_exch(ptr, v, { sem: "release", scope: "sys" });
}

/** The signal op option. @throws TirxError TX1002 otherwise. */
function signalOpOf(op: unknown, what: string, span?: Span): SignalOp {
  if (op !== "set" && op !== "add") {
    throw new TirxError(
      "TX1002",
      `${what}: op is "set" or "add" (NVSHMEM_SIGNAL_SET / ADD), got ${show(op)}`,
      span,
    );
  }
  return op;
}

/**
 * `nvshmem_putmem_signal` (warp and block forms by `scope`): {@link put}, then, once every
 * caller's stores are done (`__syncwarp` / `bar.sync 0`), one caller updates PE `pe`'s copy of
 * the uint64 signal word `sig` at `sigIndex` with `value` (`op` "set" or "add") by a release at
 * system scope, so a peer that waits for it (signal_wait_until) reads the data after.
 * Example: `T.nvshmem.put_signal(A, [row, 0], A, [me, row, 0], 64, Sig, [tile], 1, "set", peer)`.
 * @throws TirxError as {@link put}; TX2005 for a signal that is not uint64; TX1002 for `op`.
 */
export function put_signal(
  dst: TileView,
  dstIndex: readonly ExprLike[],
  src: TileView,
  srcIndex: readonly ExprLike[],
  count: number,
  sig: TileView,
  sigIndex: readonly ExprLike[],
  value: ExprLike,
  op: SignalOp,
  pe: ExprLike,
  opts?: NvshmemOptions,
): void {
  const span = callerSpan();
  const what = "T.nvshmem.put_signal";
  const { pes } = symmetric(dst, what, span);
  signalOf(sig, what, span);
  sameDtype(dst, src, what, span);
  const n = countOf(count, what, span);
  const p = checkPe(pe, pes, what, span);
  const scope = scopeOf(opts, what, span);
  const o = signalOpOf(op, what, span);
  spread(
    scope,
    n,
    (k) => dst.set([p, ...at(dstIndex, k, span)], src.get(at(srcIndex, k, span))),
    span,
  );
  converge(scope);
  if (scope === "thread") updateSignal(sig, sigIndex, value, o, p, span);
  else {
    const first = scope === "warp" ? thread_idx("x").mod(32) : thread_idx("x");
    if_(first.eq(0), () => updateSignal(sig, sigIndex, value, o, p, span));
  }
}

/**
 * `nvshmemx_signal_op(sig, value, op, pe)`: update PE `pe`'s copy of the uint64 signal word by a
 * release at system scope (as put_signal's update), by the calling thread.
 * @throws TirxError TX2009, TX2005, TX1005, TX1002 as {@link put_signal}.
 */
export function signal_op(
  sig: TileView,
  sigIndex: readonly ExprLike[],
  value: ExprLike,
  op: SignalOp,
  pe: ExprLike,
): void {
  const span = callerSpan();
  const what = "T.nvshmem.signal_op";
  const pes = signalOf(sig, what, span);
  updateSignal(
    sig,
    sigIndex,
    value,
    signalOpOf(op, what, span),
    checkPe(pe, pes, what, span),
    span,
  );
}

/**
 * `nvshmem_signal_wait_until(sig, cmp, value)`: the calling thread waits until its own PE's copy
 * of the uint64 signal word `sig` at `sigIndex` compares `cmp` ("eq", "ne", "gt", "ge", "lt",
 * "le"; unsigned) to `value`: a loop of `ld.acquire.sys` polls (nvshmem.signal_test), so the
 * signal's release orders the sender's data before this thread's later reads. The simulator
 * yields at each failing poll and reports a wait no PE can end (TX6006 naming the word, its
 * value and the waiting PE and warp).
 * Example: `T.nvshmem.signal_wait_until(Sig, [tile], "ge", 1)`.
 * @throws TirxError TX2009, TX2005 (not a uint64 symmetric tensor), TX1002 (cmp).
 */
export function signal_wait_until(
  sig: TileView,
  sigIndex: readonly ExprLike[],
  cmp: SignalCmp,
  value: ExprLike,
): void {
  const span = callerSpan();
  const what = "T.nvshmem.signal_wait_until";
  signalOf(sig, what, span);
  const c = SIGNAL_CMPS.indexOf(cmp);
  if (c < 0) {
    throw new TirxError(
      "TX1002",
      `${what}: cmp is one of ${SIGNAL_CMPS.join(", ")}, got ${show(cmp)}`,
      span,
    );
  }
  const ptr = sig.ptr([my_pe(), ...sigIndex]);
  const v =
    value instanceof PrimExpr ? value.cast("uint64") : new PrimExpr(toExpr(value, "uint64", span));
  while_(
    () => callValueOp("nvshmem.signal_test", [ptr, v, c], span).not(),
    () => {},
  );
}

/**
 * `nvshmem_quiet()` / `nvshmem_fence()`: on the direct path both are `fence.sc.sys` (PTX ISA,
 * membar/fence): the caller's earlier puts are ordered before its later strong writes (a
 * signal_op after it releases them).
 */
export function quiet(): void {
  callStmtOp("fence.sc.sys", [], callerSpan());
}

/** `nvshmem_fence()`: see {@link quiet} (the direct path orders every put, not only per PE). */
export function fence(): void {
  callStmtOp("fence.sc.sys", [], callerSpan());
}

/**
 * `nvshmemx_barrier_all_block()` by every thread of every CTA: the CTA waits for the CTAs of
 * the same index on every PE, and every write before it (puts included) happens before every
 * access after it on every PE. The simulator runs it (runSim's `pes`); the direct path has no
 * PTX for it yet (TX4007 at PTX generation).
 */
export function barrier_all(): void {
  const span = callerSpan();
  callStmtOp("nvshmem.barrier_all.arrive", [], span);
  callStmtOp("nvshmem.barrier_all.wait", [], span);
}

/** `nvshmem_sync_all()`: {@link barrier_all} (the direct path's puts are stores already). */
export const sync_all = barrier_all;

/** `T.nvshmem`: NVSHMEM's device API on symmetric tensors (see each function). */
export const nvshmem = {
  my_pe,
  n_pes,
  put,
  put_nbi: put,
  get,
  get_nbi: get,
  put_signal,
  put_signal_nbi: put_signal,
  signal_op,
  signal_wait_until,
  quiet,
  fence,
  barrier_all,
  sync_all,
};
