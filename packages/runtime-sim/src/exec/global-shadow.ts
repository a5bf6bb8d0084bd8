import type { GlobalMeta } from "../tensor.js";
import type { RaceHit, RaceTracker } from "./races.js";
import { UNIFORM_MIN } from "./races.js";
import { AtomicShadow } from "./atomic-shadow.js";
import { THREAD_BITS, THREAD_MASK } from "./packed.js";

/**
 * Lazy uniform ranges of a tensor's per-byte writer records (interval shadow state for global
 * memory, like RaceTracker's for shared memory): over `[s, f)` of an entry every byte's last
 * writer is `w` (packed `site << THREAD_BITS | thread`, -1 for "no write in this launch") with
 * clock `c`, and the per-byte arrays there are stale. A launch starts with one entry over the
 * whole tensor (its arrays come from a pool and keep older launches' records), a bulk copy's
 * write replaces its bytes' entries by one, and an element access materialises the block of
 * GLOBAL_BLOCK bytes around it (so a sweep of element accesses fills each block once).
 * Entries never overlap and are kept sorted by start (binary search); at most MAX_ENTRIES.
 */
export interface GlobalEntry {
  s: number;
  f: number;
  w: number;
  c: number;
  /**
   * Writers of a run of threads: -1 when `w` is every byte's writer; else byte b's writer is
   * `w + ((b - o) >> k)` (a warp's or a CTA's element stores, 2^k bytes per thread).
   */
  k: number;
  o: number;
}

/** Bytes materialised around an element access (a power of two). */
const GLOBAL_BLOCK = 4096;
/** Most entries kept (then the lowest is materialised). */
const MAX_ENTRIES = 4096;

/** Start tracking writers of a tensor for this launch (per-byte arrays from the pool). */
export function startWriters(meta: GlobalMeta, writer: Int32Array, epoch: Int32Array): void {
  meta.writer = writer;
  meta.epoch = epoch;
  meta.lazy = [{ s: 0, f: writer.length, w: -1, c: 0, k: -1, o: 0 }];
  meta.cleanLo = 0;
  meta.cleanHi = 0;
}

function fillFrom(meta: GlobalMeta, u: GlobalEntry, lo: number, hi: number): void {
  if (lo >= hi) return;
  if (u.k < 0) meta.writer!.fill(u.w, lo, hi);
  else for (let b = lo, wr = meta.writer!; b < hi; b++) wr[b] = u.w + ((b - u.o) >> u.k);
  meta.epoch!.fill(u.c, lo, hi);
}

/** Index of the first entry (sorted by start) that ends after `a`. */
function firstAfter(list: readonly GlobalEntry[], a: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]!.f <= a) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Remove the entries' parts inside [a, e): parts outside stay entries (or are materialised when
 * shorter than UNIFORM_MIN); with `fill` the parts inside are materialised. Returns the index
 * where an entry starting at `a` belongs.
 */
function clear(meta: GlobalMeta, a: number, e: number, fill: boolean): number {
  const list = meta.lazy!;
  const i = firstAfter(list, a);
  let j = i;
  while (j < list.length && list[j]!.s < e) j++;
  if (i === j) return i;
  if (j === i + 1) {
    // One entry (a write inside a longer range, the usual case): it is cut in place when at most
    // one part of it stays an entry.
    const u = list[i]!;
    const lo = u.s > a ? u.s : a;
    const hi = u.f < e ? u.f : e;
    const keepLeft = u.s < lo && lo - u.s >= UNIFORM_MIN;
    const keepRight = hi < u.f && u.f - hi >= UNIFORM_MIN;
    if (!keepLeft || !keepRight) {
      if (u.s < lo && !keepLeft) fillFrom(meta, u, u.s, lo);
      if (fill) fillFrom(meta, u, lo, hi);
      if (hi < u.f && !keepRight) fillFrom(meta, u, hi, u.f);
      if (keepLeft) {
        u.f = lo;
        return i + 1;
      }
      if (keepRight) u.s = hi;
      else list.splice(i, 1);
      return i;
    }
  }
  const keep: GlobalEntry[] = [];
  for (let k = i; k < j; k++) {
    const u = list[k]!;
    const lo = u.s > a ? u.s : a;
    const hi = u.f < e ? u.f : e;
    if (u.s < lo) {
      if (lo - u.s >= UNIFORM_MIN) keep.push({ ...u, f: lo });
      else fillFrom(meta, u, u.s, lo);
    }
    if (fill) fillFrom(meta, u, lo, hi);
    if (hi < u.f) {
      if (u.f - hi >= UNIFORM_MIN) keep.push({ ...u, s: hi });
      else fillFrom(meta, u, hi, u.f);
    }
  }
  list.splice(i, j - i, ...keep);
  // A kept left part precedes position `a`.
  return keep.length > 0 && keep[0]!.s < a ? i + 1 : i;
}

/** The entry holding all of [a, a + n), or undefined. */
export function entryAt(meta: GlobalMeta, a: number, n: number): GlobalEntry | undefined {
  const list = meta.lazy!;
  const u = list[firstAfter(list, a)];
  return u !== undefined && u.s <= a && a + n <= u.f ? u : undefined;
}

/** Make the per-byte arrays hold the truth over the blocks around [a, a + n). */
export function materialiseGlobal(meta: GlobalMeta, a: number, n: number): void {
  const list = meta.lazy;
  if (!list || list.length === 0) return;
  if (a >= meta.cleanLo! && a + n <= meta.cleanHi!) return;
  // Arithmetic, not bitwise: tensors may exceed 2^31 bytes.
  const A = a - (a % GLOBAL_BLOCK);
  const E = Math.min(
    a + n + ((GLOBAL_BLOCK - ((a + n) % GLOBAL_BLOCK)) % GLOBAL_BLOCK),
    meta.writer!.length,
  );
  clear(meta, A, E, true);
  // No entry overlaps [A, E) now (clear keeps only the parts outside it).
  meta.cleanLo = A;
  meta.cleanHi = E;
}

/**
 * The first write to [a, a + n) of the tensor not ordered before thread `t`'s access (see
 * RaceTracker.checkGlobal); over an entry its one record decides.
 */
export function checkGlobalWriters(
  races: RaceTracker,
  meta: GlobalMeta,
  a: number,
  n: number,
  t: number,
  atomic: boolean,
  isAtomic: (site: number) => boolean,
): RaceHit | undefined {
  const u = entryAt(meta, a, n);
  if (u !== undefined && u.k < 0) {
    return (
      races.checkGlobalRecord(u.w, u.c, t, atomic, isAtomic) ??
      checkGlobalAtomics(races, meta, a, n, t, atomic)
    );
  }
  materialiseGlobal(meta, a, n);
  return (
    races.checkGlobal(meta.writer!, meta.epoch!, a, n, t, atomic, isAtomic) ??
    checkGlobalAtomics(races, meta, a, n, t, atomic)
  );
}

/**
 * The atomic records of [a, a + n) beyond the writer record (AtomicShadow) not ordered before
 * thread `t`'s access: for an atomic, a plain write that atomics replaced; for a plain access,
 * an atomic concurrent with the recorded one.
 */
export function checkGlobalAtomics(
  races: RaceTracker,
  meta: GlobalMeta,
  a: number,
  n: number,
  t: number,
  atomic: boolean,
): RaceHit | undefined {
  const sh = meta.atomics;
  if (sh === undefined || sh.size === 0) return undefined;
  return atomic ? sh.plainHit(races, a, n, t) : sh.moreHit(races, a, n, t);
}

/**
 * Record thread `t`'s atomic write (packed `w`) of the element [a, a + n) at clock `c`: the
 * records it replaces move to the tensor's AtomicShadow; recorded reads stay.
 */
export function recordGlobalAtomic(
  races: RaceTracker,
  meta: GlobalMeta,
  a: number,
  n: number,
  t: number,
  w: number,
  isAtomic: (site: number) => boolean,
): void {
  materialiseGlobal(meta, a, n);
  const sh = (meta.atomics ??= new AtomicShadow());
  sh.take(races, meta.writer!, meta.epoch!, a, n, w, races.clock[t]!, t, isAtomic);
}

/**
 * The first byte of [a, a + n) of the tensor whose last write was a generic-proxy write of this
 * launch by the running CTA (a site `isAsync` does not name) that `fenced` (a proxy fence on the
 * way to the reader) does not order, as `{ b, w }`; undefined when none. Writes of other CTAs are
 * races already (TX6003), those of earlier launches are ordered.
 */
export function genericWriteIn(
  races: RaceTracker,
  meta: GlobalMeta,
  a: number,
  n: number,
  isAsync: (site: number) => boolean,
  fenced: (w: number, c: number) => boolean,
): { b: number; w: number } | undefined {
  if (!meta.writer) return undefined;
  materialiseGlobal(meta, a, n);
  const wr = meta.writer;
  const ep = meta.epoch!;
  let pw = -2;
  let pc = 0;
  for (let b = a, e = a + n; b < e; b++) {
    const w = wr[b]!;
    const c = ep[b]!;
    if (w < 0 || (w === pw && c === pc)) continue;
    pw = w;
    pc = c;
    if (c >= races.ctaBase && !isAsync(w >> THREAD_BITS) && !fenced(w, c)) return { b, w };
  }
  return undefined;
}

/** Record writer `w` at clock `c` for bytes [a, a + n). */
export function recordGlobalWrite(
  meta: GlobalMeta,
  a: number,
  n: number,
  w: number,
  c: number,
): void {
  // A plain write: the atomics' records of its bytes are ordered before it, or reported.
  if (meta.atomics !== undefined && meta.atomics.size > 0) meta.atomics.drop(a, n);
  const list = meta.lazy!;
  if (n >= UNIFORM_MIN) {
    addGlobalEntry(meta, { s: a, f: a + n, w, c, k: -1, o: 0 });
    return;
  }
  materialiseGlobal(meta, a, n);
  const wr = meta.writer!;
  const ep = meta.epoch!;
  for (let b = a, e = a + n; b < e; b++) {
    wr[b] = w;
    ep[b] = c;
  }
}

/**
 * Make `u` the entry of its bytes [u.s, u.f) (a write of all of them), replacing what entries
 * held there; beyond MAX_ENTRIES the lowest entry is materialised.
 */
export function addGlobalEntry(meta: GlobalMeta, u: GlobalEntry): void {
  const list = meta.lazy!;
  meta.cleanHi = 0;
  const at = clear(meta, u.s, u.f, false);
  list.splice(at, 0, u);
  if (list.length > MAX_ENTRIES) {
    const v = list.shift()!;
    fillFrom(meta, v, v.s, v.f);
  }
}

/** Attach the tensor's reader slots (pool arrays; stale records count as ordered). */
export function startReaders(meta: GlobalMeta, slots: Int32Array[]): void {
  [meta.r1, meta.c1, meta.r2, meta.c2] = slots;
  meta.readLo = 0;
  meta.readHi = 0;
}

/**
 * Record thread `t`'s read of [a, a + n) at `site` (tensors the kernel may write): the first
 * slot keeps a reader unordered with the next one, the second the latest such reader, and a
 * reader pushed out of the second slot while concurrent with the new one goes to the byte's
 * overflow list (the scheme of RaceTracker.onRead; the lists live for the launch).
 */
export function recordGlobalRead(
  races: RaceTracker,
  meta: GlobalMeta,
  a: number,
  n: number,
  t: number,
  site: number,
): void {
  const r1 = meta.r1!;
  const c1 = meta.c1!;
  const r2 = meta.r2!;
  const c2 = meta.c2!;
  const me = (site << THREAD_BITS) | t;
  const now = races.clock[t]!;
  if (meta.readHi === 0) {
    meta.readLo = a;
    meta.readHi = a + n;
  } else {
    if (a < meta.readLo!) meta.readLo = a;
    if (a + n > meta.readHi!) meta.readHi = a + n;
  }
  let pr = -2;
  let pc = 0;
  let first = true;
  for (let b = a, e = a + n; b < e; b++) {
    const r = r1[b]!;
    const c = c1[b]!;
    if (r !== pr || c !== pc) {
      pr = r;
      pc = c;
      first = r < 0 || races.ordered(r & THREAD_MASK, c, t);
    }
    if (first) {
      r1[b] = me;
      c1[b] = now;
    } else {
      // The second slot's reader, when concurrent with this one, moves to the overflow list.
      const q = r2[b]!;
      if (q >= 0 && c2[b]! >= races.launchBase && !races.ordered(q & THREAD_MASK, c2[b]!, t)) {
        const more = (meta.more ??= new Map());
        const list = more.get(b);
        if (list) list.push(q, c2[b]!);
        else more.set(b, [q, c2[b]!]);
      }
      r2[b] = me;
      c2[b] = now;
    }
  }
}

/** The first recorded read of [a, a + n) not ordered before thread `t`'s write, or undefined. */
export function checkGlobalReaders(
  races: RaceTracker,
  meta: GlobalMeta,
  a: number,
  n: number,
  t: number,
): RaceHit | undefined {
  const r1 = meta.r1;
  if (!r1) return undefined;
  // Only bytes inside the span of this launch's recorded reads can hold a record of it.
  const lo = a > meta.readLo! ? a : meta.readLo!;
  const hi = a + n < meta.readHi! ? a + n : meta.readHi!;
  if (lo >= hi) return undefined;
  const c1 = meta.c1!;
  const r2 = meta.r2!;
  const c2 = meta.c2!;
  const lb = races.launchBase;
  for (let b = lo; b < hi; b++) {
    const r = r1[b]!;
    if (r >= 0 && c1[b]! >= lb && !races.ordered(r & THREAD_MASK, c1[b]!, t)) {
      return { other: r, clock: c1[b]! };
    }
    const q = r2[b]!;
    if (q >= 0 && c2[b]! >= lb && !races.ordered(q & THREAD_MASK, c2[b]!, t)) {
      return { other: q, clock: c2[b]! };
    }
    const list = meta.more?.get(b);
    if (list) {
      for (let i = 0; i < list.length; i += 2) {
        if (!races.ordered(list[i]! & THREAD_MASK, list[i + 1]!, t)) {
          return { other: list[i]!, clock: list[i + 1]! };
        }
      }
    }
  }
  return undefined;
}
