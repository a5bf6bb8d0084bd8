/**
 * The bytes of the shadow of a CTA's shared memory (of every CTA window of a cluster): per byte,
 * the race records (last writer and its clock, two readers and their clocks), the bulk-copy guard
 * and the count of pending cp.async writing the byte, kept in typed arrays or, for runs of bytes
 * with one record, as lazy uniform ranges (interval shadow state, see `uniformAt`: the bytes of a
 * bulk copy share one entry of records until a smaller access needs them per byte, so a bulk copy
 * costs O(1) shadow work, not O(bytes); a run of consecutive threads' elements is one entry too,
 * its records naming each byte's thread). SharedBytes is the representation and the readiness
 * queries (written, pending, guarded); SharedShadow (exec/shared-shadow.ts) extends it with the
 * race rules. Only those two classes touch the arrays: everything else goes through their
 * methods.
 *
 * Costs: typed arrays only; a CTA start resets only the bytes the last CTA changed.
 */

/**
 * Lazy uniform ranges (see SharedBytes) are at least this many bytes: bulk copies and
 * runs of elements; single element accesses never are.
 */
export const UNIFORM_MIN = 64;

/** Bytes materialised around an access of a lazy uniform range (a power of two). */
const SHARED_BLOCK = 1024;

/** Most uniform ranges kept at once. */
const MAX_UNIFORM = 16;

/** A lazy uniform range of shared memory and the values of its bytes (see SharedBytes). */
export interface Uniform {
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
export function freshEntry(s: number, f: number): Uniform {
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

/** Who decides whether a bulk-copy guard stops a thread (BulkUnit). */
export interface Guards {
  /**
   * The guard `g` (1 + the copy's id, as the shadow keeps it) stops thread `t` from accessing its
   * bytes.
   */
  guardFails(g: number, t: number): boolean;
}

/** The per-byte records of one Machine's shared memory (see the file comment). */
export class SharedBytes {
  // Per shared byte.
  /** Last writer: packed `site << THREAD_BITS | thread`, -1 when never written in this CTA. */
  protected readonly wr: Int32Array;
  /** Clock of the last write. */
  protected readonly wc: Int32Array;
  protected readonly r1: Int32Array;
  protected readonly c1: Int32Array;
  protected readonly r2: Int32Array;
  protected readonly c2: Int32Array;
  /**
   * Bulk guard: 1 + id of the global → shared bulk copy that last wrote the byte and still
   * guards it (BulkUnit), 0 when none.
   */
  protected readonly bk: Int32Array;
  /** Number of issued, not yet completed cp.async writing the byte (AsyncUnit). */
  protected readonly pend: Int32Array;

  /**
   * Lazy uniform ranges of shared memory (interval shadow state): over `[s, f)` of an entry,
   * every byte's race records and bulk guard are the entry's values, and the per-byte arrays
   * there are stale. Bulk copies (kilobytes each) are checked and recorded on their entry in
   * O(1); an access that needs bytes calls `materialise`, which writes the entry's values into
   * the arrays over the bytes it overlaps and keeps the parts outside. Entries never overlap,
   * never cover a byte with a pending cp.async (an issue materialises its bytes), and are at
   * least UNIFORM_MIN bytes long; at most MAX_UNIFORM are kept (older ones are materialised).
   */
  protected readonly uni: Uniform[] = [];

  /**
   * Bytes [touchLo, touchHi) hold every per-byte record this CTA changed: outside it the
   * arrays hold the CTA-start records (never written, no reader, no overflow reader), so a
   * write's check skips those bytes.
   */
  protected touchLo = 0;
  protected touchHi = 0;

  /** False until the first CTA start has reset every shared byte's records (the arrays start as 0s). */
  #started = false;

  /** The records of `sharedBytes` bytes (every CTA window of the Machine). */
  constructor(sharedBytes: number) {
    this.wr = new Int32Array(sharedBytes);
    this.wc = new Int32Array(sharedBytes);
    this.r1 = new Int32Array(sharedBytes);
    this.c1 = new Int32Array(sharedBytes);
    this.r2 = new Int32Array(sharedBytes);
    this.c2 = new Int32Array(sharedBytes);
    this.bk = new Int32Array(sharedBytes);
    this.pend = new Int32Array(sharedBytes);
  }

  /** Widen the changed range to [lo, hi) (every writer of the per-byte records calls this). */
  protected touch(lo: number, hi: number): void {
    if (this.touchLo >= this.touchHi) {
      this.touchLo = lo;
      this.touchHi = hi;
      return;
    }
    if (lo < this.touchLo) this.touchLo = lo;
    if (hi > this.touchHi) this.touchHi = hi;
  }

  // ---------------------------------------------------------------- CTA start

  /**
   * A new CTA: every shared byte holds the never-written records, no reader, no guard (nothing
   * pending: AsyncUnit clears its counts, pendClear). Only the bytes the last CTA changed are
   * reset (outside touchLo..touchHi every byte still holds the CTA-start records), and the bulk
   * guards only when `guarded` (some byte's guard may be nonzero: the last CTA issued a bulk
   * copy, BulkUnit.active), so a CTA start costs O(shared bytes the last CTA used). With
   * `uniform` (kernels with bulk copies) all of shared memory starts as one lazy range.
   */
  protected resetBytes(guarded: boolean, uniform: boolean): void {
    const lo = this.#started ? this.touchLo : 0;
    const hi = this.#started ? this.touchHi : this.wr.length;
    if (lo < hi) {
      this.wr.fill(-1, lo, hi);
      this.r1.fill(-1, lo, hi);
      this.r2.fill(-1, lo, hi);
    }
    // Bulk copies set guards without widening the changed range (guardRange).
    if (guarded || !this.#started) this.bk.fill(0);
    this.#started = true;
    this.touchLo = 0;
    this.touchHi = 0;
    this.uni.length = 0;
    const n = this.wr.length;
    if (uniform && n >= UNIFORM_MIN) this.uni.push(freshEntry(0, n));
  }

  // ---------------------------------------------------------------- lazy uniform ranges

  /**
   * The entry holding all of [a, a + n), when n >= UNIFORM_MIN and one does whose records are
   * the same for every byte (a run-of-threads entry is not: its callers materialise).
   */
  protected uniformAt(a: number, n: number): Uniform | undefined {
    const u = this.entryAt(a, n);
    return u !== undefined && u.wk < 0 && u.rk < 0 ? u : undefined;
  }

  /** The entry of any kind holding all of [a, a + n), when n >= UNIFORM_MIN and one does. */
  protected entryAt(a: number, n: number): Uniform | undefined {
    if (n < UNIFORM_MIN) return undefined;
    const list = this.uni;
    for (let i = 0; i < list.length; i++) {
      const u = list[i]!;
      if (u.s <= a && a + n <= u.f) return u;
    }
    return undefined;
  }

  /** True when an entry overlaps [a, a + n). */
  protected overlapsEntry(a: number, n: number): boolean {
    const list = this.uni;
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
    const clear = this.touchLo >= this.touchHi || a + n <= this.touchLo || this.touchHi <= a;
    return clear && !this.overlapsEntry(a, n);
  }

  /**
   * Entry `u` becomes the records of its bytes [u.s, u.f) (a write of all of them): entries there
   * are cut (their parts outside kept). No cp.async may target the bytes (the caller's condition).
   */
  protected replaceEntries(u: Uniform): void {
    const a = u.s;
    const list = this.uni;
    for (let i = list.length - 1; i >= 0; i--) {
      const v = list[i]!;
      if (v.f <= a || u.f <= v.s) continue;
      list.splice(i, 1);
      this.#cut(v, v.s > a ? v.s : a, v.f < u.f ? v.f : u.f, true);
    }
    this.addEntry(u);
  }

  /**
   * Add `u` over bytes no entry holds (a run's records over fresh bytes); the per-byte arrays
   * there become stale. The oldest entries are materialised beyond MAX_UNIFORM.
   */
  protected addEntry(u: Uniform): void {
    this.uni.push(u);
    this.#trim();
  }

  /** Write `u`'s values into the per-byte arrays over [lo, hi). */
  #fillFrom(u: Uniform, lo: number, hi: number): void {
    if (lo >= hi) return;
    this.touch(lo, hi);
    if (u.wk < 0) this.wr.fill(u.wr, lo, hi);
    else for (let b = lo, wr = this.wr; b < hi; b++) wr[b] = u.wr + ((b - u.wo) >> u.wk);
    this.wc.fill(u.wc, lo, hi);
    if (u.rk < 0) this.r1.fill(u.r1, lo, hi);
    else for (let b = lo, r1 = this.r1; b < hi; b++) r1[b] = u.r1 + ((b - u.ro) >> u.rk);
    this.c1.fill(u.c1, lo, hi);
    this.r2.fill(u.r2, lo, hi);
    this.c2.fill(u.c2, lo, hi);
    this.bk.fill(u.bk, lo, hi);
  }

  /** Cut `u` down to [lo, hi) (inside it), keeping or materialising the parts outside. */
  #cut(u: Uniform, lo: number, hi: number, keep: boolean): void {
    const list = this.uni;
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
  protected materialise(a: number, n: number): void {
    const list = this.uni;
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
  protected isolate(u: Uniform, a: number, n: number): Uniform {
    this.#cut(u, a, a + n, true);
    // `u` becomes the newest entry, so trimming (which materialises the oldest) keeps it: the
    // caller's changes to it must not be lost.
    const list = this.uni;
    list.splice(list.indexOf(u), 1);
    list.push(u);
    this.#trim();
    return u;
  }

  #trim(): void {
    const list = this.uni;
    while (list.length > MAX_UNIFORM) {
      const u = list.shift()!;
      this.#fillFrom(u, u.s, u.f);
    }
  }

  // ---------------------------------------------------------------- per-byte queries

  /** The last writer of byte `b` (packed; -1 when never written in this CTA). */
  writerAt(b: number): number {
    this.materialise(b, 1);
    return this.wr[b]!;
  }

  /** The bulk guard of byte `b` (0 when none; see Guards). */
  guardAt(b: number): number {
    this.materialise(b, 1);
    return this.bk[b]!;
  }

  /** The number of pending cp.async writing byte `b`. */
  pendingAt(b: number): number {
    return this.pend[b]!;
  }

  /**
   * Every byte of [a, a + n) (an element, n < UNIFORM_MIN) is written, with no cp.async pending
   * and no bulk guard, and no lazy range lies over it: a read of it needs only the race check of
   * onReadBytes (SharedShadow.readPlain).
   */
  protected plainBytes(a: number, n: number): boolean {
    if (n >= UNIFORM_MIN || (this.uni.length > 0 && this.overlapsEntry(a, n))) return false;
    const pend = this.pend;
    const wr = this.wr;
    const bk = this.bk;
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
    const u = this.uniformAt(a, n);
    if (u !== undefined && u.wr >= 0 && (u.bk === 0 || !guards.guardFails(u.bk, t))) return -1;
    this.materialise(a, n);
    const pend = this.pend;
    const wr = this.wr;
    const bk = this.bk;
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
    this.materialise(a, n);
    const pend = this.pend;
    const bk = this.bk;
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
    const u = this.uniformAt(a, n);
    if (u !== undefined && !(u.bk !== 0 && guards.guardFails(u.bk, t))) {
      // A lazy uniform range whose guard lets `t` write: only a bulk source can stop it.
      return s2g;
    }
    this.materialise(a, n);
    const bk = this.bk;
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
    this.materialise(a, n);
    const wr = this.wr;
    for (let b = a, e = a + n; b < e; b++) if (wr[b]! < 0) return b;
    return -1;
  }

  // ---------------------------------------------------------------- bulk guards

  /** Guard `g` (1 + the bulk copy's id) stands over [a, a + n) (a global → shared bulk copy's issue). */
  guardRange(a: number, n: number, g: number): void {
    const u = this.uniformAt(a, n);
    if (u !== undefined) {
      this.isolate(u, a, n).bk = g;
      return;
    }
    this.materialise(a, n);
    this.bk.fill(g, a, a + n);
  }

  /**
   * No guard stands over [a, a + n) any more (a cp.async landing: the bytes were pending, so no
   * lazy range covers them). A thread's recorded write ends its bytes' guards itself (recordWrite).
   */
  clearGuards(a: number, n: number): void {
    this.bk.fill(0, a, a + n);
  }

  // ---------------------------------------------------------------- pending cp.async

  /**
   * A cp.async issue counts [a, a + n) as pending (one more copy writing each byte); returns the
   * first byte an earlier pending copy targets already, or -1. The bytes are materialised first
   * (no lazy range covers a pending byte).
   */
  pendIssue(a: number, n: number): number {
    this.materialise(a, n);
    const pend = this.pend;
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
    this.materialise(a, n);
    this.pend.fill(1, a, a + n);
  }

  /**
   * Copies over [a, a + n) completed: one fewer pending per byte, or with `last` (no copy left
   * counted anywhere) none.
   */
  pendDone(a: number, n: number, last: boolean): void {
    const pend = this.pend;
    if (last) pend.fill(0, a, a + n);
    else for (let i = a, e = a + n; i < e; i++) pend[i]!--;
  }

  /** Nothing is pending anywhere (CTA start after copies were left counted). */
  pendClear(): void {
    this.pend.fill(0);
  }

  /** No cp.async pending and no bulk guard on shared bytes [a, a + n). */
  protected idle(a: number, n: number): boolean {
    const pend = this.pend;
    const bk = this.bk;
    for (let b = a, e = a + n; b < e; b++) if (pend[b] !== 0 || bk[b] !== 0) return false;
    return true;
  }
}
