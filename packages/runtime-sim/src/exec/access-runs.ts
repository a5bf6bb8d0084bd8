import { beforeGlobalWrite, type GlobalMem, type Machine } from "./machine.js";
import { THREAD_BITS, THREAD_MASK } from "./packed.js";
import { UNIFORM_MIN, freshEntry, type RaceTracker, type Uniform } from "./races.js";
import { addGlobalEntry, entryAt, materialiseGlobal } from "./global-shadow.js";
import { trackWriters } from "./hazards.js";

/**
 * Runs of element accesses, decided and recorded as one range (exec/access-batch.ts gathers
 * them): `count` elements of 2^sh bytes at consecutive addresses from `a`, element i accessed by
 * thread `t0 + i`. A warp's or a CTA's `B[row, tid] = s[tid]` is one run per access.
 *
 * Each function here takes a run only when its outcome is certain without per-byte work: the
 * bytes lie in one lazy range entry of the shadow (RaceTracker's entries for shared memory,
 * exec/global-shadow.ts's for tensors) or are fresh, the threads are consecutive with one clock,
 * and nothing would be reported (no unordered record, nothing pending or guarded, no atomic or
 * overflow record). It then records the run as one entry whose records name each byte's thread
 * (`wk`/`rk`, `k`: 2^sh bytes per thread) and returns true. Otherwise it records nothing and
 * returns false, and the caller checks the run's elements one by one (checkSharedRead and the
 * other element checks), which report exactly as if no run had been formed.
 *
 * Strided runs (elements a fixed step of more than their size apart: a column, a transpose) have
 * no range entry; their functions (`...Strided`) decide every element's bytes in one loop with
 * the element checks' own conditions for reporting nothing, and record them per byte as the
 * element checks would, or decline the same way.
 */

/** A run: `count` elements of 2^sh bytes from address `a`, element i by thread `t0 + i`, at `site`. */
export interface Run {
  readonly site: number;
  readonly t0: number;
  readonly count: number;
  readonly a: number;
  readonly sh: number;
}

/** Packed record `rec` (-1: none) at clock `c` is of another thread and not ordered before `t`. */
function unordered(races: RaceTracker, rec: number, c: number, t: number): boolean {
  return rec >= 0 && (rec & THREAD_MASK) !== t && !races.ordered(rec & THREAD_MASK, c, t);
}

/** The threads of run `r` (t0, t0 + 1, ...) share one clock. */
function oneClock(races: RaceTracker, { t0, count }: Run): boolean {
  if (races.clockUniform) return true;
  const clock = races.clock;
  const now = clock[t0]!;
  for (let t = t0 + 1, e = t0 + count; t < e; t++) if (clock[t] !== now) return false;
  return true;
}

/**
 * Every element i of run `r` (bytes a + i·2^sh .., thread t0 + i) is ordered after the records
 * over its bytes: packed `rec` (-1: none) at clock `c`, the same for every byte when k < 0, else
 * byte b's thread is rec's plus `(b - o) >> k` (RaceTracker.ordered decides: a record of the
 * element's own thread in this CTA is program order, another CTA's of this launch never ordered).
 */
function recordsOrdered(
  races: RaceTracker,
  r: Run,
  rec: number,
  k: number,
  o: number,
  c: number,
): boolean {
  const { count, a, sh } = r;
  const t0 = r.t0;
  if (rec < 0) return true;
  // Another launch's or CTA's record (ordered or not for every thread alike), or one a cta_sync
  // ordered before every thread.
  if (c < races.ctaBase) return c < races.launchBase;
  if (c <= races.floorMin) return true;
  const base = rec & THREAD_MASK;
  if (k < 0) {
    for (let i = 0; i < count; i++) {
      const t = t0 + i;
      if (!races.ordered(base, c, t)) return false;
    }
    return true;
  }
  const last = (1 << sh) - 1;
  for (let i = 0; i < count; i++) {
    const t = t0 + i;
    const b = a + (i << sh);
    for (let u = base + ((b - o) >> k), e = base + ((b + last - o) >> k); u <= e; u++) {
      if (!races.ordered(u, c, t)) return false;
    }
  }
  return true;
}

/**
 * A run of shared loads (checkSharedRead per element): taken when one entry holds the bytes,
 * every byte is written (no TX6004), unguarded, and its writer and first reader are ordered
 * before the element's thread; the run becomes the first reader of its bytes.
 */
export function sharedReadRun(m: Machine, r: Run): boolean {
  const { site, t0, count, a, sh } = r;
  const races = m.races;
  const n = count << sh;
  if (n < UNIFORM_MIN || m.speculative > 0 || races.atomics.size > 0) return false;
  // No entry covers a byte a cp.async still targets (its issue cut the entry, and entries are
  // only made over idle bytes), so nothing pending needs checking here.
  const u = races.entryAt(a, n);
  if (u === undefined || u.wr < 0 || u.bk !== 0) return false;
  if (!oneClock(races, r)) return false;
  if (!recordsOrdered(races, r, u.wr, u.wk, u.wo, u.wc)) return false;
  if (!recordsOrdered(races, r, u.r1, u.rk, u.ro, u.c1)) return false;
  const v = races.isolate(u, a, n);
  v.r1 = (site << THREAD_BITS) | t0;
  v.rk = sh;
  v.ro = a;
  v.c1 = races.clock[t0]!;
  return true;
}

/**
 * A run of shared stores (checkSharedWrite per element): taken when the bytes are fresh or one
 * entry holds them, nothing is pending, guarded or read by a pending bulk store, no wgmma
 * operand is tracked, and every earlier writer and reader is ordered before the element's
 * thread; the run becomes the writer of its bytes.
 */
export function sharedWriteRun(m: Machine, r: Run): boolean {
  const { site, t0, count, a, sh } = r;
  const races = m.races;
  const n = count << sh;
  if (n < UNIFORM_MIN || races.atomics.size > 0 || races.overflowReaders > 0) return false;
  if (m.wgmma.tracked > 0 || m.bulk.firstUnread(a, n) >= 0) return false;
  if (!oneClock(races, r)) return false;
  const u = races.entryAt(a, n);
  if (u !== undefined) {
    if (u.bk !== 0) return false;
    if (!recordsOrdered(races, r, u.wr, u.wk, u.wo, u.wc)) return false;
    if (!recordsOrdered(races, r, u.r1, u.rk, u.ro, u.c1)) return false;
    if (!recordsOrdered(races, r, u.r2, -1, 0, u.c2)) return false;
    writeRecords(races.isolate(u, a, n), site, t0, a, sh, races.clock[t0]!);
    return true;
  }
  if (!races.fresh(a, n) || !idle(m, a, n)) return false;
  const v = freshEntry(a, a + n);
  writeRecords(v, site, t0, a, sh, races.clock[t0]!);
  races.addEntry(v);
  return true;
}

/**
 * Shared bytes [a, a + n) become a run's write (thread t0's 2^sh bytes from `a`, then t0 + 1's,
 * ...) at `site` as of clock `now`, whatever they held (RaceTracker.recordWrite's records for
 * each thread's bytes, as one entry): a cp.async completion. Returns false, recording nothing,
 * when the bytes are too few for an entry, a cp.async still targets one of them (`inFlight`
 * false: the caller knows none is in flight anywhere), or the CTA has overflow readers or atomic
 * records (which a landing keeps, see recordLanded).
 */
export function recordSharedWriteRun(
  m: Machine,
  site: number,
  t0: number,
  a: number,
  n: number,
  sh: number,
  now: number,
  inFlight = true,
): boolean {
  // A landing keeps the bytes' overflow readers and atomic records (a later access is checked
  // against them); an entry would drop them.
  if (n < UNIFORM_MIN || m.races.overflowReaders > 0 || m.races.atomics.size > 0) return false;
  const pend = m.shPending;
  if (inFlight) for (let b = a, e = a + n; b < e; b++) if (pend[b] !== 0) return false;
  const v = freshEntry(a, a + n);
  writeRecords(v, site, t0, a, sh, now);
  m.races.setEntry(v);
  return true;
}

/** No cp.async pending and no bulk guard on shared bytes [a, a + n). */
function idle(m: Machine, a: number, n: number): boolean {
  const pend = m.shPending;
  const bk = m.shBulk;
  for (let b = a, e = a + n; b < e; b++) if (pend[b] !== 0 || bk[b] !== 0) return false;
  return true;
}

/**
 * Entry `v` becomes a run's write at `site` as of clock `now`: thread t0's 2^sh bytes from `a`,
 * then t0 + 1's, ...; no reader.
 */
function writeRecords(
  v: Uniform,
  site: number,
  t0: number,
  a: number,
  sh: number,
  now: number,
): void {
  v.wr = (site << THREAD_BITS) | t0;
  v.wk = sh;
  v.wo = a;
  v.wc = now;
  v.r1 = -1;
  v.rk = -1;
  v.r2 = -1;
}

/**
 * A run of global stores to `gm` (checkGlobalWrite per element): taken when one entry of the
 * tensor's writer records holds the bytes and every earlier writer is ordered before the
 * element's thread (another CTA's write of this launch never is), no async copy reads them, no
 * bulk store is in flight, and the tensor has no atomic or read records there; the run becomes
 * the writer of its bytes. Declining, it may still have made the tensor's pending-read counts
 * and writer records (beforeGlobalWrite, trackWriters), which the element checks make first too.
 */
export function globalWriteRun(m: Machine, gm: GlobalMem, r: Run): boolean {
  const { site, t0, count, a, sh } = r;
  const n = count << sh;
  if (n < UNIFORM_MIN || !globalWriteQuiet(m, gm, a, count, 1 << sh, 1 << sh)) return false;
  const meta = gm.meta;
  const races = m.races;
  if (!oneClock(races, r)) return false;
  if (!meta.writer) trackWriters(gm);
  const u = entryAt(meta, a, n);
  if (u === undefined) return false;
  if (!recordsOrdered(races, r, u.w, u.k, u.o, u.c)) return false;
  const w = (site << THREAD_BITS) | t0;
  addGlobalEntry(meta, { s: a, f: a + n, w, c: races.clock[t0]!, k: sh, o: a });
  return true;
}

/**
 * The conditions every run of global stores to `gm` shares (`count` elements of `eb` bytes,
 * `step` bytes apart from `a`; `step` is `eb` for consecutive elements): no bulk store in flight,
 * no async copy reading an element, no atomic record, no recorded read in the run's span. Makes
 * the tensor's pending-read counts first (beforeGlobalWrite), as the element checks do.
 */
function globalWriteQuiet(
  m: Machine,
  gm: GlobalMem,
  a: number,
  count: number,
  eb: number,
  step: number,
): boolean {
  if (m.bulk.s2gLive > 0) return false;
  beforeGlobalWrite(m, gm);
  const meta = gm.meta;
  const pr = meta.pendingReads;
  if (pr) {
    for (let i = 0; i < count; i++) {
      for (let b = a + i * step, e = b + eb; b < e; b++) if (pr[b] !== 0) return false;
    }
  }
  if (meta.atomics !== undefined && meta.atomics.size > 0) return false;
  const end = a + (count - 1) * step + eb;
  return !(meta.r1 && meta.readHi! > meta.readLo! && a < meta.readHi! && meta.readLo! < end);
}

/**
 * A run of global loads of `gm` (checkGlobalRead per element): taken when the tensor has no
 * writer records and records no reads in this launch (a tensor the kernel never writes), where
 * the element checks do nothing either.
 */
export function globalReadRun(gm: GlobalMem): boolean {
  return !gm.meta.writer && !gm.meta.recordReads;
}

/**
 * A strided run of shared loads (checkSharedRead per element, elements `step` bytes apart): taken
 * when no lazy entry lies over the bytes and every byte is written, nothing pending or guarding
 * it, its writer ordered before the element's thread, and its first reader ordered too (so the
 * element's thread becomes the first reader, RaceTracker.onReadBytes's common case); then each
 * element's bytes record their thread as first reader, as the element checks would.
 */
export function sharedReadStrided(m: Machine, r: Run, step: number): boolean {
  const { site, t0, count, a, sh } = r;
  const eb = 1 << sh;
  const races = m.races;
  if (m.speculative > 0 || races.atomics.size > 0) return false;
  const span = (count - 1) * step + eb;
  if (!races.perByte && races.overlapsEntry(a, span)) return false;
  const pend = m.shPending;
  const { wr, wc, bk, r1, c1 } = races;
  for (let i = 0; i < count; i++) {
    const t = t0 + i;
    for (let b = a + i * step, e = b + eb; b < e; b++) {
      const w = wr[b]!;
      if (pend[b] !== 0 || w < 0 || bk[b] !== 0) return false;
      const cw = wc[b]!;
      if ((cw !== 0 && unordered(races, w, cw, t)) || unordered(races, r1[b]!, c1[b]!, t)) {
        return false;
      }
    }
  }
  const clock = races.clock;
  for (let i = 0; i < count; i++) {
    const t = t0 + i;
    const me = (site << THREAD_BITS) | t;
    const now = clock[t]!;
    const b0 = a + i * step;
    races.touch(b0, b0 + eb);
    for (let b = b0, e = b0 + eb; b < e; b++) {
      r1[b] = me;
      c1[b] = now;
    }
  }
  return true;
}

/**
 * A strided run of global stores to `gm` (checkGlobalWrite per element, elements `step` bytes
 * apart): taken when no async copy reads the bytes, no bulk store is in flight, the tensor has
 * no atomic records and no recorded read in the run's span, and every earlier writer of each
 * element is ordered before its thread (another CTA's write of this launch never is); then each
 * element's bytes record their thread as writer, as the element checks would. Declining, it
 * may have made the pending-read counts, writer records and materialised blocks that the
 * element checks make first too.
 */
export function globalWriteStrided(m: Machine, gm: GlobalMem, r: Run, step: number): boolean {
  const { site, t0, count, a, sh } = r;
  const eb = 1 << sh;
  if (!globalWriteQuiet(m, gm, a, count, eb, step)) return false;
  const meta = gm.meta;
  if (!meta.writer) trackWriters(gm);
  const races = m.races;
  const wr = meta.writer!;
  const ep = meta.epoch!;
  for (let i = 0; i < count; i++) {
    const t = t0 + i;
    const b0 = a + i * step;
    materialiseGlobal(meta, b0, eb);
    for (let b = b0, e = b0 + eb; b < e; b++) {
      const w = wr[b]!;
      if (w < 0) continue;
      const c = ep[b]!;
      if (c < races.launchBase || (c >= races.ctaBase && (w & THREAD_MASK) === t)) continue;
      if (!races.ordered(w & THREAD_MASK, c, t)) return false;
    }
  }
  const clock = races.clock;
  for (let i = 0; i < count; i++) {
    const t = t0 + i;
    const w = (site << THREAD_BITS) | t;
    const now = clock[t]!;
    for (let b = a + i * step, e = b + eb; b < e; b++) {
      wr[b] = w;
      ep[b] = now;
    }
  }
  return true;
}

/**
 * A strided run of shared stores (checkSharedWrite per element, elements `step` bytes apart):
 * taken when no lazy entry lies over the bytes, no cp.async is pending, no bulk copy guards or
 * still reads them, no wgmma operand, overflow reader or atomic record is tracked, and every
 * earlier writer and reader of each element is ordered before its thread; then each element's
 * bytes record their thread as writer with no reader, as the element checks would.
 */
export function sharedWriteStrided(m: Machine, r: Run, step: number): boolean {
  const { site, t0, count, a, sh } = r;
  const eb = 1 << sh;
  const races = m.races;
  if (races.atomics.size > 0 || races.overflowReaders > 0 || m.wgmma.tracked > 0) return false;
  const span = (count - 1) * step + eb;
  if (!races.perByte && races.overlapsEntry(a, span)) return false;
  if (m.bulk.firstUnread(a, span) >= 0) return false;
  const pend = m.shPending;
  const { wr, wc, bk, r1, c1, r2, c2 } = races;
  for (let i = 0; i < count; i++) {
    const t = t0 + i;
    for (let b = a + i * step, e = b + eb; b < e; b++) {
      if (pend[b] !== 0 || bk[b] !== 0) return false;
      if (
        unordered(races, wr[b]!, wc[b]!, t) ||
        unordered(races, r1[b]!, c1[b]!, t) ||
        unordered(races, r2[b]!, c2[b]!, t)
      ) {
        return false;
      }
    }
  }
  const clock = races.clock;
  for (let i = 0; i < count; i++) {
    const t = t0 + i;
    const w = (site << THREAD_BITS) | t;
    const now = clock[t]!;
    const b0 = a + i * step;
    races.touch(b0, b0 + eb);
    for (let b = b0, e = b0 + eb; b < e; b++) {
      wr[b] = w;
      wc[b] = now;
      r1[b] = -1;
      r2[b] = -1;
    }
  }
  return true;
}
