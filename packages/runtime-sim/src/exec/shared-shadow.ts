/**
 * The shadow of a CTA's shared memory (of every CTA window of a cluster): per byte, the race
 * records of the happens-before check (exec/clocks.ts decides what is ordered), the bulk-copy
 * guard and the count of pending cp.async writing the byte. Every per-byte array is private to
 * this module; the checks (exec/hazards.ts), the access runs (exec/access-runs.ts) and the units
 * (cp.async, bulk copies, mbarriers) read and change them through the methods here.
 *
 * Race records (read-after-write, write-after-read and write-after-write between threads): per
 * byte the last writer (packed `site << THREAD_BITS | thread`, -1 when never written in this
 * CTA) with its clock, and two readers of the current phase (the first one, and the latest one
 * that was concurrent with it), so a write that races with any reader other than itself is found
 * whichever thread wrote. A report therefore depends only on the happens-before relation, not on
 * the order the simulator happened to run the threads in: of two unordered accesses, the later
 * one finds the earlier one's record.
 *
 * Readers beyond the two slots: a reader that a new concurrent reader would push out of the
 * second slot moves to an overflow list of the byte, so a write is checked against every reader
 * not ordered before a later one of its slot (complete write-after-read); cta_sync clears the
 * lists (onBarrier). Atomics keep their own records (exec/atomic-shadow.ts).
 *
 * New access paths (ldmatrix / stmatrix reads and writes, TMA tiles) plug in through onRead /
 * onWrite (record false at an async issue, recordWrite at its completion, recordAsyncProxyWrite
 * for async-proxy writes guarded elsewhere) and unfenced (async-proxy reads of shared memory).
 *
 * Lazy uniform ranges (interval shadow state, see `#uniformAt`): the bytes of a bulk copy share
 * one entry of records until a smaller access needs them per byte, so a bulk copy costs O(1)
 * shadow work, not O(bytes). A run of consecutive threads' elements (a warp's store, a CTA's
 * cp.async chunks) is one entry too, its records naming each byte's thread.
 *
 * Costs: typed arrays only; an access costs a few array reads per byte; a CTA start resets only
 * the bytes the last CTA changed.
 */
import { AtomicShadow } from "./atomic-shadow.js";
import type { Clocks } from "./clocks.js";
import { THREAD_BITS, THREAD_MASK, type RaceHit, type WriteHit } from "./packed.js";

/**
 * Lazy uniform ranges (see SharedShadow) are at least this many bytes: bulk copies and
 * runs of elements; single element accesses never are.
 */
export const UNIFORM_MIN = 64;

/** Bytes materialised around an access of a lazy uniform range (a power of two). */
const SHARED_BLOCK = 1024;

/** Most uniform ranges kept at once. */
const MAX_UNIFORM = 16;

/** A lazy uniform range of shared memory and the values of its bytes (see SharedShadow). */
interface Uniform {
  s: number;
  f: number;
  wr: number;
  wc: number;
  r1: number;
  c1: number;
  r2: number;
  c2: number;
  /** Bulk guard. */
  bk: number;
  /**
   * Writers of a run of threads: -1 when `wr` is every byte's writer; else byte b's
   * writer is `wr + ((b - wo) >> wk)`, thread `wr`'s 2^wk bytes from `wo` on, then the next
   * thread's (a warp's element store, a CTA's cp.async chunks).
   */
  wk: number;
  wo: number;
  /** The first reader slot likewise: -1, or byte b's reader is `r1 + ((b - ro) >> rk)`. */
  rk: number;
  ro: number;
}

/** An entry over [s, f) with the CTA-start records: never written, no reader, no guard. */
function freshEntry(s: number, f: number): Uniform {
  return { s, f, wr: -1, wc: 0, r1: -1, c1: 0, r2: -1, c2: 0, bk: 0, wk: -1, wo: 0, rk: -1, ro: 0 };
}

/** Entry `u`'s records over [s, f) (a part of it kept when it is cut). */
function partOf(u: Uniform, s: number, f: number): Uniform {
  return {
    s,
    f,
    wr: u.wr,
    wc: u.wc,
    r1: u.r1,
    c1: u.c1,
    r2: u.r2,
    c2: u.c2,
    bk: u.bk,
    wk: u.wk,
    wo: u.wo,
    rk: u.rk,
    ro: u.ro,
  };
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

/** Who decides whether a bulk-copy guard stops a thread (BulkUnit). */
export interface Guards {
  /** The guard `g` (1 + the copy's id, as the shadow keeps it) stops thread `t` from accessing its bytes. */
  guardFails(g: number, t: number): boolean;
}

/** The shadow of one Machine's shared memory (see the file comment). */
export class SharedShadow {
  readonly #clocks: Clocks;

  /**
   * Readers beyond the two slots, by shared byte: flat `[packed, clock, ...]` of earlier readers
   * that were concurrent with the reader that took their slot (so a write checks every reader not
   * known to be ordered before a later one). Cleared by cta_sync (every read so far is then
   * ordered before everything after) and by writes of the byte.
   */
  readonly #more = new Map<number, number[]>();

  /**
   * Shared bytes' atomic records beyond the writer record (see AtomicShadow): plain writes an
   * atomic replaced, and atomics concurrent with a later one. Cleared by cta_sync.
   */
  readonly #atomics = new AtomicShadow();

  /** Atomic records beyond the writer records (0 in a CTA with no atomic since its last cta_sync). */
  get atomicRecords(): number {
    return this.#atomics.size;
  }

  // Per shared byte.
  /** Last writer: packed `site << THREAD_BITS | thread`, -1 when never written in this CTA. */
  readonly #wr: Int32Array;
  /** Clock of the last write. */
  readonly #wc: Int32Array;
  readonly #r1: Int32Array;
  readonly #c1: Int32Array;
  readonly #r2: Int32Array;
  readonly #c2: Int32Array;
  /**
   * Bulk guard: 1 + id of the global → shared bulk copy that last wrote the byte and still
   * guards it (BulkUnit), 0 when none.
   */
  readonly #bk: Int32Array;
  /** Number of issued, not yet completed cp.async writing the byte (AsyncUnit). */
  readonly #pend: Int32Array;

  /**
   * Lazy uniform ranges of shared memory (interval shadow state): over `[s, f)` of an entry,
   * every byte's race records and bulk guard are the entry's values, and the per-byte arrays
   * there are stale. Bulk copies (kilobytes each) are checked and recorded on their entry in
   * O(1); an access that needs bytes calls `#materialise`, which writes the entry's values into
   * the arrays over the bytes it overlaps and keeps the parts outside. Entries never overlap,
   * never cover a byte with a pending cp.async (an issue materialises its bytes), and are at
   * least UNIFORM_MIN bytes long; at most MAX_UNIFORM are kept (older ones are materialised).
   */
  readonly #uni: Uniform[] = [];

  /**
   * Bytes [#touchLo, #touchHi) hold every per-byte record this CTA changed: outside it the
   * arrays hold the CTA-start records (never written, no reader, no overflow reader), so a
   * write's check skips those bytes.
   */
  #touchLo = 0;
  #touchHi = 0;

  /** False until the first CTA start has reset every shared byte's records (the arrays start as 0s). */
  #started = false;

  /** The shadow of `sharedBytes` bytes, its accesses ordered by `clocks`. */
  constructor(clocks: Clocks, sharedBytes: number) {
    this.#clocks = clocks;
    this.#wr = new Int32Array(sharedBytes);
    this.#wc = new Int32Array(sharedBytes);
    this.#r1 = new Int32Array(sharedBytes);
    this.#c1 = new Int32Array(sharedBytes);
    this.#r2 = new Int32Array(sharedBytes);
    this.#c2 = new Int32Array(sharedBytes);
    this.#bk = new Int32Array(sharedBytes);
    this.#pend = new Int32Array(sharedBytes);
  }

  /** Widen the changed range to [lo, hi) (every writer of the per-byte records calls this). */
  #touch(lo: number, hi: number): void {
    if (this.#touchLo >= this.#touchHi) {
      this.#touchLo = lo;
      this.#touchHi = hi;
      return;
    }
    if (lo < this.#touchLo) this.#touchLo = lo;
    if (hi > this.#touchHi) this.#touchHi = hi;
  }

  // ---------------------------------------------------------------- CTA start, cta_sync

  /**
   * A new CTA: every shared byte holds the never-written records, no reader, no guard (nothing
   * pending: AsyncUnit clears its counts, pendClear). Only the bytes the last CTA changed are
   * reset (outside #touchLo..#touchHi every byte still holds the CTA-start records), and the
   * bulk guards only when `guarded` (some byte's guard may be nonzero: the last CTA issued a
   * bulk copy, BulkUnit.active), so a CTA start costs O(shared bytes the last CTA used). With
   * `uniform` (kernels with bulk copies) all of shared memory starts as one lazy range.
   */
  beginCta(guarded: boolean, uniform: boolean): void {
    const lo = this.#started ? this.#touchLo : 0;
    const hi = this.#started ? this.#touchHi : this.#wr.length;
    if (lo < hi) {
      this.#wr.fill(-1, lo, hi);
      this.#r1.fill(-1, lo, hi);
      this.#r2.fill(-1, lo, hi);
    }
    // Bulk copies set guards without widening the changed range (guardRange).
    if (guarded || !this.#started) this.#bk.fill(0);
    this.#started = true;
    this.#touchLo = 0;
    this.#touchHi = 0;
    this.#uni.length = 0;
    if (this.#more.size > 0) this.#more.clear();
    this.#atomics.clear();
    const n = this.#wr.length;
    if (uniform && n >= UNIFORM_MIN) this.#uni.push(freshEntry(0, n));
  }

  /** cta_sync: every read and atomic so far is ordered before everything after (Clocks.onBarrier). */
  onBarrier(): void {
    this.#more.clear();
    this.#atomics.clear();
  }

  // ---------------------------------------------------------------- lazy uniform ranges

  /**
   * The entry holding all of [a, a + n), when n >= UNIFORM_MIN and one does whose records are
   * the same for every byte (a run-of-threads entry is not: its callers materialise).
   */
  #uniformAt(a: number, n: number): Uniform | undefined {
    const u = this.#entryAt(a, n);
    return u !== undefined && u.wk < 0 && u.rk < 0 ? u : undefined;
  }

  /** The entry of any kind holding all of [a, a + n), when n >= UNIFORM_MIN and one does. */
  #entryAt(a: number, n: number): Uniform | undefined {
    if (n < UNIFORM_MIN) return undefined;
    const list = this.#uni;
    for (let i = 0; i < list.length; i++) {
      const u = list[i]!;
      if (u.s <= a && a + n <= u.f) return u;
    }
    return undefined;
  }

  /** True when an entry overlaps [a, a + n). */
  #overlapsEntry(a: number, n: number): boolean {
    const list = this.#uni;
    for (let i = 0; i < list.length; i++) {
      const u = list[i]!;
      if (u.s < a + n && a < u.f) return true;
    }
    return false;
  }

  /**
   * Bytes [a, a + n) outside every entry and outside the changed range: they hold the
   * CTA-start records (never written, no reader).
   */
  fresh(a: number, n: number): boolean {
    const clear = this.#touchLo >= this.#touchHi || a + n <= this.#touchLo || this.#touchHi <= a;
    return clear && !this.#overlapsEntry(a, n);
  }

  /**
   * Entry `u` becomes the records of its bytes [u.s, u.f), a write of all of them (see
   * recordWrite): entries there are cut (their parts outside kept), the bytes' overflow readers
   * and atomic records dropped. No cp.async may target the bytes (the caller's condition).
   */
  #setEntry(u: Uniform): void {
    const a = u.s;
    const n = u.f - u.s;
    this.#dropMore(a, n);
    if (this.#atomics.size > 0) this.#atomics.drop(a, n);
    const list = this.#uni;
    for (let i = list.length - 1; i >= 0; i--) {
      const v = list[i]!;
      if (v.f <= a || u.f <= v.s) continue;
      list.splice(i, 1);
      this.#cut(v, v.s > a ? v.s : a, v.f < u.f ? v.f : u.f, true);
    }
    this.#addEntry(u);
  }

  /**
   * Add `u` over bytes no entry holds (a run's records over fresh bytes); the per-byte arrays
   * there become stale. The oldest entries are materialised beyond MAX_UNIFORM.
   */
  #addEntry(u: Uniform): void {
    this.#uni.push(u);
    this.#trim();
  }

  /** Write `u`'s values into the per-byte arrays over [lo, hi). */
  #fillFrom(u: Uniform, lo: number, hi: number): void {
    if (lo >= hi) return;
    this.#touch(lo, hi);
    if (u.wk < 0) this.#wr.fill(u.wr, lo, hi);
    else for (let b = lo, wr = this.#wr; b < hi; b++) wr[b] = u.wr + ((b - u.wo) >> u.wk);
    this.#wc.fill(u.wc, lo, hi);
    if (u.rk < 0) this.#r1.fill(u.r1, lo, hi);
    else for (let b = lo, r1 = this.#r1; b < hi; b++) r1[b] = u.r1 + ((b - u.ro) >> u.rk);
    this.#c1.fill(u.c1, lo, hi);
    this.#r2.fill(u.r2, lo, hi);
    this.#c2.fill(u.c2, lo, hi);
    this.#bk.fill(u.bk, lo, hi);
  }

  /** Cut `u` down to [lo, hi) (inside it), keeping or materialising the parts outside. */
  #cut(u: Uniform, lo: number, hi: number, keep: boolean): void {
    const list = this.#uni;
    if (u.s < lo) {
      if (keep && lo - u.s >= UNIFORM_MIN) list.push(partOf(u, u.s, lo));
      else this.#fillFrom(u, u.s, lo);
    }
    if (hi < u.f) {
      if (keep && u.f - hi >= UNIFORM_MIN) list.push(partOf(u, hi, u.f));
      else this.#fillFrom(u, hi, u.f);
    }
    u.s = lo;
    u.f = hi;
  }

  /**
   * Make the per-byte arrays hold the truth over [a, a + n): entries overlapping it are
   * materialised there and keep their parts outside. Cheap when there are no entries (kernels
   * without bulk copies or runs never have any).
   */
  #materialise(a: number, n: number): void {
    const list = this.#uni;
    if (list.length === 0) return;
    // The block around the bytes, so that a sweep of element accesses fills each block once.
    const e = (a + n + SHARED_BLOCK - 1) & ~(SHARED_BLOCK - 1);
    a &= ~(SHARED_BLOCK - 1);
    for (let i = list.length - 1; i >= 0; i--) {
      const u = list[i]!;
      if (u.f <= a || e <= u.s) continue;
      list.splice(i, 1);
      const lo = u.s > a ? u.s : a;
      const hi = u.f < e ? u.f : e;
      this.#cut(u, lo, hi, true);
      this.#fillFrom(u, lo, hi);
    }
  }

  /**
   * The entry for exactly [a, a + n), split out of the entry `u` that holds it (its values
   * stand for the bytes); the caller then changes its values (a uniform write of the range).
   */
  #isolate(u: Uniform, a: number, n: number): Uniform {
    this.#cut(u, a, a + n, true);
    // `u` becomes the newest entry, so trimming (which materialises the oldest) keeps it: the
    // caller's changes to it must not be lost.
    const list = this.#uni;
    list.splice(list.indexOf(u), 1);
    list.push(u);
    this.#trim();
    return u;
  }

  #trim(): void {
    const list = this.#uni;
    while (list.length > MAX_UNIFORM) {
      const u = list.shift()!;
      this.#fillFrom(u, u.s, u.f);
    }
  }

  // ---------------------------------------------------------------- per-byte queries

  /** The last writer of byte `b` (packed; -1 when never written in this CTA). */
  writerAt(b: number): number {
    this.#materialise(b, 1);
    return this.#wr[b]!;
  }

  /** The bulk guard of byte `b` (0 when none; see Guards). */
  guardAt(b: number): number {
    this.#materialise(b, 1);
    return this.#bk[b]!;
  }

  /** The number of pending cp.async writing byte `b`. */
  pendingAt(b: number): number {
    return this.#pend[b]!;
  }

  /**
   * Every byte of [a, a + n) (an element, n < UNIFORM_MIN) is written, with no cp.async pending
   * and no bulk guard, and no lazy range lies over it: a read of it needs only the race check of
   * onReadBytes.
   */
  plainBytes(a: number, n: number): boolean {
    if (n >= UNIFORM_MIN || (this.#uni.length > 0 && this.#overlapsEntry(a, n))) return false;
    const pend = this.#pend;
    const wr = this.#wr;
    const bk = this.#bk;
    for (let b = a, e = a + n; b < e; b++) {
      if (pend[b] !== 0 || wr[b]! < 0 || bk[b] !== 0) return false;
    }
    return true;
  }

  /**
   * The first byte of [a, a + n) a read by thread `t` may not touch: a cp.async pending on it, a
   * bulk copy's guard that `guards` says stops `t`, or (unguarded) never written; -1 when every
   * byte is ready. A lazy uniform range (a bulk copy's bytes, no cp.async pending there) stands
   * for all its bytes, so only a byte to report materialises them.
   */
  firstUnready(a: number, n: number, t: number, guards: Guards): number {
    const u = this.#uniformAt(a, n);
    if (u !== undefined && u.wr >= 0 && (u.bk === 0 || !guards.guardFails(u.bk, t))) return -1;
    this.#materialise(a, n);
    const pend = this.#pend;
    const wr = this.#wr;
    const bk = this.#bk;
    // The guard of a bulk copy this thread passed already (bytes of one copy come in runs).
    let passed = 0;
    for (let b = a, e = a + n; b < e; b++) {
      if (pend[b] !== 0) return b;
      const g = bk[b]!;
      if (g !== 0) {
        if (g === passed) continue;
        if (guards.guardFails(g, t)) return b;
        passed = g;
      } else if (wr[b]! < 0) return b;
    }
    return -1;
  }

  /**
   * The first byte of [a, a + n) a write by thread `t` may not touch: a cp.async pending on it,
   * byte `s2g` (the first one a pending shared → global bulk copy still reads, or -1), or a bulk
   * guard that stops `t`; -1 when none. Materialises the bytes.
   */
  firstBlockedWrite(a: number, n: number, t: number, s2g: number, guards: Guards): number {
    this.#materialise(a, n);
    const pend = this.#pend;
    const bk = this.#bk;
    for (let b = a, e = a + n; b < e; b++) {
      if (pend[b] !== 0 || b === s2g) return b;
      const g = bk[b]!;
      if (g !== 0 && guards.guardFails(g, t)) return b;
    }
    return -1;
  }

  /**
   * The first byte of [a, a + n) an asynchronous write (a cp.async or bulk-copy issue) by
   * thread `t` may not target: byte `s2g` (see firstBlockedWrite), or a bulk guard that stops
   * `t`; -1 when none. Pending cp.async are the issue's own business (pendIssue).
   */
  firstGuardedWrite(a: number, n: number, t: number, s2g: number, guards: Guards): number {
    const u = this.#uniformAt(a, n);
    if (u !== undefined && !(u.bk !== 0 && guards.guardFails(u.bk, t))) {
      // A lazy uniform range whose guard lets `t` write: only a bulk source can stop it.
      return s2g;
    }
    this.#materialise(a, n);
    const bk = this.#bk;
    let passed = 0;
    for (let b = a, e = a + n; b < e; b++) {
      if (b === s2g) return b;
      const g = bk[b]!;
      if (g !== 0 && g !== passed) {
        if (guards.guardFails(g, t)) return b;
        passed = g;
      }
    }
    return -1;
  }

  /** The first byte of [a, a + n) never written in this CTA, or -1. */
  firstUnwritten(a: number, n: number): number {
    this.#materialise(a, n);
    const wr = this.#wr;
    for (let b = a, e = a + n; b < e; b++) if (wr[b]! < 0) return b;
    return -1;
  }

  // ---------------------------------------------------------------- bulk guards

  /** Guard `g` (1 + the bulk copy's id) stands over [a, a + n) (a global → shared bulk copy's issue). */
  guardRange(a: number, n: number, g: number): void {
    const u = this.#uniformAt(a, n);
    if (u !== undefined) {
      this.#isolate(u, a, n).bk = g;
      return;
    }
    this.#materialise(a, n);
    this.#bk.fill(g, a, a + n);
  }

  /**
   * No guard stands over [a, a + n) any more (a cp.async landing: the bytes were pending, so no
   * lazy range covers them). A thread's recorded write ends its bytes' guards itself (recordWrite).
   */
  clearGuards(a: number, n: number): void {
    this.#bk.fill(0, a, a + n);
  }

  /**
   * The last write of byte `b` when it is not ordered before thread `t`'s current point, as
   * `{ other, clock }` (the packed writer and its clock); undefined when it is ordered or the
   * byte was never written.
   */
  unorderedWrite(b: number, t: number): RaceHit | undefined {
    this.#materialise(b, 1);
    const w = this.#wr[b]!;
    if (w < 0) return undefined;
    const c = this.#wc[b]!;
    return this.#clocks.ordered(w & THREAD_MASK, c, t) ? undefined : { other: w, clock: c };
  }

  // ---------------------------------------------------------------- pending cp.async

  /**
   * A cp.async issue counts [a, a + n) as pending (one more copy writing each byte); returns the
   * first byte an earlier pending copy targets already, or -1. The bytes are materialised first
   * (no lazy range covers a pending byte).
   */
  pendIssue(a: number, n: number): number {
    this.#materialise(a, n);
    const pend = this.#pend;
    // One pass: the first byte an earlier cp.async still targets, and every byte counts this
    // copy; four bytes a step (chunks are 4, 8 or 16 bytes).
    let clash = -1;
    const e = a + n;
    let b = a;
    for (; b + 4 <= e; b += 4) {
      const p0 = pend[b]!;
      const p1 = pend[b + 1]!;
      const p2 = pend[b + 2]!;
      const p3 = pend[b + 3]!;
      if (clash < 0 && (p0 | p1 | p2 | p3) !== 0) {
        clash = b + (p0 !== 0 ? 0 : p1 !== 0 ? 1 : p2 !== 0 ? 2 : 3);
      }
      pend[b] = p0 + 1;
      pend[b + 1] = p1 + 1;
      pend[b + 2] = p2 + 1;
      pend[b + 3] = p3 + 1;
    }
    for (; b < e; b++) {
      if (clash < 0 && pend[b] !== 0) clash = b;
      pend[b]!++;
    }
    return clash;
  }

  /** Copies issued over [a, a + n), where nothing is pending yet, count one each (materialised first). */
  pendSet(a: number, n: number): void {
    this.#materialise(a, n);
    this.#pend.fill(1, a, a + n);
  }

  /**
   * Copies over [a, a + n) completed: one fewer pending per byte, or with `last` (no copy left
   * counted anywhere) none.
   */
  pendDone(a: number, n: number, last: boolean): void {
    const pend = this.#pend;
    if (last) pend.fill(0, a, a + n);
    else for (let i = a, e = a + n; i < e; i++) pend[i]!--;
  }

  /** Nothing is pending anywhere (CTA start after copies were left counted). */
  pendClear(): void {
    this.#pend.fill(0);
  }

  // ---------------------------------------------------------------- shared-memory accesses

  /**
   * A read of shared bytes [a, a + n) by thread `t` at `site`: returns the first unordered
   * earlier write (read-after-write), or undefined; records the read.
   */
  onRead(t: number, site: number, a: number, n: number): RaceHit | undefined {
    const clocks = this.#clocks;
    const me = (site << THREAD_BITS) | t;
    const now = clocks.clock[t]!;
    let hit: RaceHit | undefined;
    const u = this.#uniformAt(a, n);
    if (u !== undefined) {
      // Every byte holds the same records: one decision, recorded on the range's own entry.
      const w = u.wr;
      if (w >= 0 && (w & THREAD_MASK) !== t && u.wc !== 0) {
        if (!clocks.ordered(w & THREAD_MASK, u.wc, t)) hit = { other: w, clock: u.wc };
      }
      const r = u.r1;
      const first = r < 0 || (r & THREAD_MASK) === t || clocks.ordered(r & THREAD_MASK, u.c1, t);
      const q = u.r2;
      const evicts =
        !first && q >= 0 && (q & THREAD_MASK) !== t && !clocks.ordered(q & THREAD_MASK, u.c2, t);
      if (!evicts) {
        const v = this.#isolate(u, a, n);
        if (first) {
          v.r1 = me;
          v.c1 = now;
        } else {
          v.r2 = me;
          v.c2 = now;
        }
        return hit;
      }
      // A third concurrent reader: per byte, keeping the second one (below).
      hit = undefined;
    }
    this.#materialise(a, n);
    return this.onReadBytes(t, site, a, n, hit);
  }

  /**
   * The first earlier write of shared bytes [a, a + n) not ordered before thread `t`'s current
   * point (read-after-write), like onRead but recording no read: for readers whose reads the
   * caller tracks itself (a wgmma's shared operands, read until a wgmma.wait_group retires it).
   */
  writeHit(t: number, a: number, n: number): RaceHit | undefined {
    const clocks = this.#clocks;
    const u = this.#uniformAt(a, n);
    if (u !== undefined) {
      const w = u.wr;
      if (
        w >= 0 &&
        (w & THREAD_MASK) !== t &&
        u.wc !== 0 &&
        !clocks.ordered(w & THREAD_MASK, u.wc, t)
      )
        return { other: w, clock: u.wc };
      return undefined;
    }
    this.#materialise(a, n);
    const wr = this.#wr;
    const wc = this.#wc;
    for (let b = a; b < a + n; b++) {
      const w = wr[b]!;
      const cw = wc[b]!;
      if (w >= 0 && (w & THREAD_MASK) !== t && cw !== 0 && !clocks.ordered(w & THREAD_MASK, cw, t))
        return { other: w, clock: cw };
    }
    return this.#atomics.moreHit(clocks, a, n, t);
  }

  /**
   * onRead over materialised bytes (no lazy uniform range holds any of [a, a + n)): returns
   * `hit`, or when undefined the first unordered earlier write; records the read per byte.
   */
  onReadBytes(
    t: number,
    site: number,
    a: number,
    n: number,
    hit: RaceHit | undefined = undefined,
  ): RaceHit | undefined {
    const clocks = this.#clocks;
    const wr = this.#wr;
    const wc = this.#wc;
    const r1 = this.#r1;
    const c1 = this.#c1;
    const me = (site << THREAD_BITS) | t;
    const now = clocks.clock[t]!;
    this.#touch(a, a + n);
    // A byte with the same records as the one before it gets the same outcome (the bytes of one
    // write come in runs): only its recording is repeated.
    let pw = -2;
    let pwc = 0;
    let pr = -2;
    let pc = 0;
    let first = true;
    for (let b = a; b < a + n; b++) {
      const w = wr[b]!;
      const cw = wc[b]!;
      const r = r1[b]!;
      const cr = c1[b]!;
      if (w !== pw || cw !== pwc || r !== pr || cr !== pc) {
        pw = w;
        pwc = cw;
        pr = r;
        pc = cr;
        if (hit === undefined && w >= 0 && (w & THREAD_MASK) !== t && cw !== 0) {
          if (!clocks.ordered(w & THREAD_MASK, cw, t)) hit = { other: w, clock: cw };
        }
        first = r < 0 || (r & THREAD_MASK) === t || clocks.ordered(r & THREAD_MASK, cr, t);
      }
      if (first) {
        r1[b] = me;
        c1[b] = now;
      } else {
        this.#second(b, me, now, t);
      }
    }
    // Atomics concurrent with the one in the writer record (AtomicShadow).
    if (hit === undefined && this.#atomics.more.size > 0) {
      hit = this.#atomics.moreHit(clocks, a, n, t);
    }
    return hit;
  }

  /**
   * Reader `me` (thread `t`) takes the second slot of byte `b`; its previous holder, when
   * concurrent with `t`, moves to the byte's overflow list.
   */
  #second(b: number, me: number, now: number, t: number): void {
    const q = this.#r2[b]!;
    if (
      q >= 0 &&
      (q & THREAD_MASK) !== t &&
      !this.#clocks.ordered(q & THREAD_MASK, this.#c2[b]!, t)
    ) {
      const list = this.#more.get(b);
      if (list) list.push(q, this.#c2[b]!);
      else this.#more.set(b, [q, this.#c2[b]!]);
    }
    this.#r2[b] = me;
    this.#c2[b] = now;
  }

  /** An overflow reader of byte `b` not ordered before thread `t`, or undefined. */
  #moreHit(b: number, t: number): WriteHit | undefined {
    const list = this.#more.get(b);
    if (!list) return undefined;
    for (let i = 0; i < list.length; i += 2) {
      const r = list[i]!;
      if ((r & THREAD_MASK) !== t && !this.#clocks.ordered(r & THREAD_MASK, list[i + 1]!, t)) {
        return { other: r, clock: list[i + 1]!, read: true };
      }
    }
    return undefined;
  }

  /** Forget the overflow readers of [a, a + n) (a write of the bytes). */
  #dropMore(a: number, n: number): void {
    const more = this.#more;
    if (more.size === 0) return;
    if (n <= more.size) {
      for (let b = a; b < a + n; b++) more.delete(b);
    } else {
      for (const b of more.keys()) if (b >= a && b < a + n) more.delete(b);
    }
  }

  /**
   * A write of shared bytes [a, a + n) by thread `t`: the first unordered earlier access, as
   * `{ other, clock, read }` (read: write-after-read, else write-after-write); `atomic` writes do
   * not race with earlier atomic writes (`isAtomic` of the earlier site). With `record` false only
   * checks (an async copy's issue: its write lands later, see recordWrite). An atomic is also
   * checked against the plain write its byte's atomics replaced, a plain write against every
   * atomic concurrent with the recorded one (AtomicShadow); an atomic is recorded by
   * recordAtomic.
   */
  onWrite(
    t: number,
    site: number,
    a: number,
    n: number,
    atomic: boolean,
    isAtomic: (site: number) => boolean,
    record = true,
  ): WriteHit | undefined {
    const clocks = this.#clocks;
    const wr = this.#wr;
    const wc = this.#wc;
    let hit: WriteHit | undefined;
    // Atomics are elements, never lazy uniform ranges (materialised below).
    const u = atomic ? undefined : this.#uniformAt(a, n);
    if (u !== undefined) {
      // Over a uniform range its entry decides.
      const w = u.wr;
      if (w >= 0 && (w & THREAD_MASK) !== t && !clocks.ordered(w & THREAD_MASK, u.wc, t)) {
        if (!(atomic && isAtomic(w >> THREAD_BITS))) hit = { other: w, clock: u.wc, read: false };
      }
      const r = u.r1;
      if (!hit && r >= 0 && (r & THREAD_MASK) !== t && !clocks.ordered(r & THREAD_MASK, u.c1, t)) {
        hit = { other: r, clock: u.c1, read: true };
      }
      const r2 = u.r2;
      if (
        !hit &&
        r2 >= 0 &&
        (r2 & THREAD_MASK) !== t &&
        !clocks.ordered(r2 & THREAD_MASK, u.c2, t)
      ) {
        hit = { other: r2, clock: u.c2, read: true };
      }
      if (record) this.recordWrite(t, site, a, n);
      return hit;
    }
    this.#materialise(a, n);
    // Bytes outside the changed range hold CTA-start records: nothing to race with there.
    const lo = a > this.#touchLo ? a : this.#touchLo;
    const hi = a + n < this.#touchHi ? a + n : this.#touchHi;
    for (let b = lo; b < hi && hit === undefined; b++) {
      const w = wr[b]!;
      if (w >= 0 && (w & THREAD_MASK) !== t && !clocks.ordered(w & THREAD_MASK, wc[b]!, t)) {
        if (!(atomic && isAtomic(w >> THREAD_BITS))) hit = { other: w, clock: wc[b]!, read: false };
      }
      if (hit !== undefined) break;
      const r = this.#r1[b]!;
      if (r >= 0 && (r & THREAD_MASK) !== t && !clocks.ordered(r & THREAD_MASK, this.#c1[b]!, t)) {
        hit = { other: r, clock: this.#c1[b]!, read: true };
        break;
      }
      const r2 = this.#r2[b]!;
      if (
        r2 >= 0 &&
        (r2 & THREAD_MASK) !== t &&
        !clocks.ordered(r2 & THREAD_MASK, this.#c2[b]!, t)
      ) {
        hit = { other: r2, clock: this.#c2[b]!, read: true };
      }
      if (hit === undefined && this.#more.size > 0) hit = this.#moreHit(b, t);
    }
    if (hit === undefined && this.#atomics.size > 0) {
      const h = atomic
        ? this.#atomics.plainHit(clocks, a, n, t)
        : this.#atomics.moreHit(clocks, a, n, t);
      if (h) hit = { ...h, read: false };
    }
    if (record) {
      if (atomic) this.recordAtomic(t, site, a, n, isAtomic);
      else this.recordWrite(t, site, a, n);
    }
    return hit;
  }

  /**
   * Record thread `t`'s atomic write of [a, a + n) at `site`: it takes the writer record, the
   * record it replaces moves to `atomics` (AtomicShadow.take), and readers stay (a plain read
   * races with every later unordered atomic). The bytes' bulk guards end (see recordWrite).
   */
  recordAtomic(
    t: number,
    site: number,
    a: number,
    n: number,
    isAtomic: (site: number) => boolean,
  ): void {
    this.#materialise(a, n);
    this.#touch(a, a + n);
    const w = (site << THREAD_BITS) | t;
    const clocks = this.#clocks;
    this.#atomics.take(clocks, this.#wr, this.#wc, a, n, w, clocks.clock[t]!, t, isAtomic);
    this.#bk.fill(0, a, a + n);
  }

  /**
   * Record thread `t`'s write of [a, a + n) at `site` as of now: readers of the phase end, and so
   * do the bytes' bulk guards (an ordinary write by a thread that passed the guard: BulkUnit).
   */
  recordWrite(t: number, site: number, a: number, n: number): void {
    const w = (site << THREAD_BITS) | t;
    const now = this.#clocks.clock[t]!;
    this.#dropMore(a, n);
    if (this.#atomics.size > 0) this.#atomics.drop(a, n);
    const u = this.#uniformAt(a, n);
    if (u !== undefined) {
      const v = this.#isolate(u, a, n);
      v.wr = w;
      v.wc = now;
      v.r1 = -1;
      v.r2 = -1;
      v.bk = 0;
      return;
    }
    this.#materialise(a, n);
    this.#touch(a, a + n);
    if (n <= 32) {
      // Small ranges: a loop beats five calls of fill.
      const wr = this.#wr;
      const wc = this.#wc;
      const r1 = this.#r1;
      const r2 = this.#r2;
      const bk = this.#bk;
      for (let b = a, e = a + n; b < e; b++) {
        wr[b] = w;
        wc[b] = now;
        r1[b] = -1;
        r2[b] = -1;
        bk[b] = 0;
      }
      return;
    }
    this.#wr.fill(w, a, a + n);
    this.#wc.fill(now, a, a + n);
    this.#r1.fill(-1, a, a + n);
    this.#r2.fill(-1, a, a + n);
    this.#bk.fill(0, a, a + n);
  }

  /**
   * The race records of a landed cp.async chunk, shared bytes [a, a + n) written by thread `t`
   * at `site` as of clock `now` (recordWrite's records, in one loop over the chunk's bytes,
   * materialised first so any lazy range is cut around them); the bytes' overflow readers and
   * atomic records stay (a later access is checked against them).
   */
  recordLanded(t: number, site: number, a: number, n: number, now: number): void {
    this.#materialise(a, n);
    const w = (site << THREAD_BITS) | t;
    const wr = this.#wr;
    const wc = this.#wc;
    const r1 = this.#r1;
    const r2 = this.#r2;
    this.#touch(a, a + n);
    for (let i = a, e = a + n; i < e; i++) {
      wr[i] = w;
      wc[i] = now;
      r1[i] = -1;
      r2[i] = -1;
    }
  }

  /** Bytes written by the async proxy (a landed bulk copy): ordered for every thread. */
  recordAsyncProxyWrite(t: number, site: number, a: number, n: number): void {
    this.#dropMore(a, n);
    if (this.#atomics.size > 0) this.#atomics.drop(a, n);
    const u = this.#uniformAt(a, n);
    if (u !== undefined) {
      const v = this.#isolate(u, a, n);
      v.wr = (site << THREAD_BITS) | t;
      v.wc = 0;
      v.r1 = -1;
      v.r2 = -1;
      return;
    }
    this.#materialise(a, n);
    this.#touch(a, a + n);
    this.#wr.fill((site << THREAD_BITS) | t, a, a + n);
    this.#wc.fill(0, a, a + n);
    this.#r1.fill(-1, a, a + n);
    this.#r2.fill(-1, a, a + n);
  }

  /**
   * The first shared byte of [a, a + n) whose last write was a generic-proxy write with no
   * fence.proxy.async between it and thread `t`'s async-proxy access (Clocks.sharedFenced; -1
   * when none).
   */
  unfenced(a: number, n: number, t: number): number {
    const clocks = this.#clocks;
    const u = this.#uniformAt(a, n);
    if (u !== undefined) {
      const w = u.wr;
      return w >= 0 && u.wc >= clocks.ctaBase && !clocks.sharedFenced(w, u.wc, t) ? a : -1;
    }
    this.#materialise(a, n);
    const wr = this.#wr;
    const wc = this.#wc;
    // Bytes of one write come in runs with one outcome.
    let pw = -2;
    let pc = 0;
    for (let b = a; b < a + n; b++) {
      const w = wr[b]!;
      if (w < 0) continue;
      const c = wc[b]!;
      if (w === pw && c === pc) continue;
      pw = w;
      pc = c;
      if (c >= clocks.ctaBase && !clocks.sharedFenced(w, c, t)) return b;
    }
    return -1;
  }

  // ---------------------------------------------------------------- runs of elements

  /**
   * A run of shared loads (exec/access-runs.ts): `count` elements of 2^sh bytes from `a`,
   * element i by thread t0 + i, at `site`. Taken (true) when one entry holds the bytes, every
   * byte is written, unguarded, its writer and first reader ordered before the element's thread
   * and the threads share one clock, and no atomic record exists: the run becomes the first
   * reader of its bytes. Otherwise nothing is recorded (false). No entry covers a byte a cp.async
   * still targets (its issue cut the entry), so nothing pending needs checking.
   */
  readRun(site: number, t0: number, count: number, a: number, sh: number): boolean {
    const n = count << sh;
    if (n < UNIFORM_MIN || this.#atomics.size > 0) return false;
    const clocks = this.#clocks;
    const u = this.#entryAt(a, n);
    if (u === undefined || u.wr < 0 || u.bk !== 0) return false;
    if (!clocks.oneClock(t0, count)) return false;
    if (!clocks.runOrdered(t0, count, a, sh, u.wr, u.wk, u.wo, u.wc)) return false;
    if (!clocks.runOrdered(t0, count, a, sh, u.r1, u.rk, u.ro, u.c1)) return false;
    const v = this.#isolate(u, a, n);
    v.r1 = (site << THREAD_BITS) | t0;
    v.rk = sh;
    v.ro = a;
    v.c1 = clocks.clock[t0]!;
    return true;
  }

  /**
   * A run of shared stores (see readRun): taken when the bytes are fresh or one entry holds them,
   * nothing is pending or guarded, no overflow reader or atomic record exists, the threads share
   * one clock and every earlier writer and reader is ordered before the element's thread: the
   * run becomes the writer of its bytes. (Pending bulk stores and wgmma operands are the
   * caller's conditions.)
   */
  writeRun(site: number, t0: number, count: number, a: number, sh: number): boolean {
    const n = count << sh;
    if (n < UNIFORM_MIN || this.#atomics.size > 0 || this.#more.size > 0) return false;
    const clocks = this.#clocks;
    if (!clocks.oneClock(t0, count)) return false;
    const u = this.#entryAt(a, n);
    if (u !== undefined) {
      if (u.bk !== 0) return false;
      if (!clocks.runOrdered(t0, count, a, sh, u.wr, u.wk, u.wo, u.wc)) return false;
      if (!clocks.runOrdered(t0, count, a, sh, u.r1, u.rk, u.ro, u.c1)) return false;
      if (!clocks.runOrdered(t0, count, a, sh, u.r2, -1, 0, u.c2)) return false;
      writeRecords(this.#isolate(u, a, n), site, t0, a, sh, clocks.clock[t0]!);
      return true;
    }
    if (!this.fresh(a, n) || !this.#idle(a, n)) return false;
    const v = freshEntry(a, a + n);
    writeRecords(v, site, t0, a, sh, clocks.clock[t0]!);
    this.#addEntry(v);
    return true;
  }

  /** No cp.async pending and no bulk guard on shared bytes [a, a + n). */
  #idle(a: number, n: number): boolean {
    const pend = this.#pend;
    const bk = this.#bk;
    for (let b = a, e = a + n; b < e; b++) if (pend[b] !== 0 || bk[b] !== 0) return false;
    return true;
  }

  /**
   * Shared bytes [a, a + n) become a run's write (thread t0's 2^sh bytes from `a`, then t0 + 1's,
   * ...) at `site` as of clock `now`, whatever they held (recordWrite's records for each
   * thread's bytes, as one entry): a cp.async completion. Returns false, recording nothing,
   * when the bytes are too few for an entry, a cp.async still targets one of them (`inFlight`
   * false: the caller knows none is in flight anywhere), or the CTA has overflow readers or atomic
   * records (which a landing keeps, see recordLanded).
   */
  landRun(
    site: number,
    t0: number,
    a: number,
    n: number,
    sh: number,
    now: number,
    inFlight: boolean,
  ): boolean {
    // A landing keeps the bytes' overflow readers and atomic records (a later access is checked
    // against them); an entry would drop them.
    if (n < UNIFORM_MIN || this.#more.size > 0 || this.#atomics.size > 0) return false;
    const pend = this.#pend;
    if (inFlight) for (let b = a, e = a + n; b < e; b++) if (pend[b] !== 0) return false;
    const v = freshEntry(a, a + n);
    writeRecords(v, site, t0, a, sh, now);
    this.#setEntry(v);
    return true;
  }

  /**
   * A strided run of shared loads (elements 2^sh bytes each, `step` bytes apart from `a`,
   * element i by thread t0 + i): taken when no lazy entry lies over the bytes and every byte is
   * written, nothing pending or guarding it, its writer and its first reader ordered before the
   * element's thread (so the element's thread becomes the first reader, onReadBytes's common
   * case), and no atomic record exists; then each element's bytes record their thread as first
   * reader, as element checks would.
   */
  readStrided(
    site: number,
    t0: number,
    count: number,
    a: number,
    sh: number,
    step: number,
  ): boolean {
    const eb = 1 << sh;
    if (this.#atomics.size > 0) return false;
    const span = (count - 1) * step + eb;
    if (this.#uni.length > 0 && this.#overlapsEntry(a, span)) return false;
    const clocks = this.#clocks;
    const pend = this.#pend;
    const wr = this.#wr;
    const wc = this.#wc;
    const bk = this.#bk;
    const r1 = this.#r1;
    const c1 = this.#c1;
    for (let i = 0; i < count; i++) {
      const t = t0 + i;
      for (let b = a + i * step, e = b + eb; b < e; b++) {
        const w = wr[b]!;
        if (pend[b] !== 0 || w < 0 || bk[b] !== 0) return false;
        const cw = wc[b]!;
        if ((cw !== 0 && clocks.unordered(w, cw, t)) || clocks.unordered(r1[b]!, c1[b]!, t)) {
          return false;
        }
      }
    }
    const clock = clocks.clock;
    for (let i = 0; i < count; i++) {
      const t = t0 + i;
      const me = (site << THREAD_BITS) | t;
      const now = clock[t]!;
      const b0 = a + i * step;
      this.#touch(b0, b0 + eb);
      for (let b = b0, e = b0 + eb; b < e; b++) {
        r1[b] = me;
        c1[b] = now;
      }
    }
    return true;
  }

  /**
   * A strided run of shared stores (see readStrided): taken when no lazy entry lies over the
   * bytes, no cp.async is pending and no bulk copy guards them, no overflow reader or atomic
   * record exists, and every earlier writer and reader of each element is ordered before its
   * thread; then each element's bytes record their thread as writer with no reader, as the
   * element checks would. (Pending bulk stores and wgmma operands are the caller's conditions.)
   */
  writeStrided(
    site: number,
    t0: number,
    count: number,
    a: number,
    sh: number,
    step: number,
  ): boolean {
    const eb = 1 << sh;
    if (this.#atomics.size > 0 || this.#more.size > 0) return false;
    const span = (count - 1) * step + eb;
    if (this.#uni.length > 0 && this.#overlapsEntry(a, span)) return false;
    const clocks = this.#clocks;
    const pend = this.#pend;
    const wr = this.#wr;
    const wc = this.#wc;
    const bk = this.#bk;
    const r1 = this.#r1;
    const c1 = this.#c1;
    const r2 = this.#r2;
    const c2 = this.#c2;
    for (let i = 0; i < count; i++) {
      const t = t0 + i;
      for (let b = a + i * step, e = b + eb; b < e; b++) {
        if (pend[b] !== 0 || bk[b] !== 0) return false;
        if (
          clocks.unordered(wr[b]!, wc[b]!, t) ||
          clocks.unordered(r1[b]!, c1[b]!, t) ||
          clocks.unordered(r2[b]!, c2[b]!, t)
        ) {
          return false;
        }
      }
    }
    const clock = clocks.clock;
    for (let i = 0; i < count; i++) {
      const t = t0 + i;
      const w = (site << THREAD_BITS) | t;
      const now = clock[t]!;
      const b0 = a + i * step;
      this.#touch(b0, b0 + eb);
      for (let b = b0, e = b0 + eb; b < e; b++) {
        wr[b] = w;
        wc[b] = now;
        r1[b] = -1;
        r2[b] = -1;
      }
    }
    return true;
  }
}
