/**
 * Happens-before race tracking of one simulated CTA (and, for global memory, of every CTA of a
 * launch): read-after-write, write-after-read and write-after-write between threads.
 *
 * Model (a FastTrack-style epoch scheme, sized for the simulator's hot path):
 * - every thread `t` has a clock `clock[t]`; an access is stamped `(t, clock[t])`. A thread's
 *   clock advances at each of its release events (cta_sync, named barrier, __syncwarp,
 *   mbarrier arrive, proxy fences), so a stamp names a segment of that thread's program order;
 * - access `(u, c)` happens before thread `t`'s current point when: `u === t` (program order, same
 *   CTA); or `c <= floor[u]` (a cta_sync after the access: PTX ISA, bar.sync "memory ordering");
 *   or `u` and `t` are lanes of one warp and `c <= wfloor[u]` (a __syncwarp that every lane
 *   of the warp executed after the access); or `K[t][u] >= c` (what `t` acquired from `u` through
 *   named barriers, partial-warp __syncwarp and mbarrier phases: an arrival releases the
 *   arriver's knowledge into the mbarrier, the phase completion freezes it, a successful try_wait
 *   acquires it — PTX ISA, mbarrier "memory ordering"). K is a threads × threads matrix allocated
 *   the first time a fine-grained synchronization runs;
 * - clocks never go back: each CTA starts at `ctaBase`, above every clock of earlier CTAs, so a
 *   stamp below `ctaBase` and at or above `launchBase` comes from another CTA of the same launch,
 *   with which there is no happens-before at all (only atomics among themselves do not race);
 *   a stamp below `launchBase` comes from an earlier launch (ordered). Stamp 0 means "ordered
 *   before everything" (bytes written by the async proxy, whose visibility the bulk-copy guard
 *   checks instead).
 *
 * Per shared byte it keeps the last writer (packed `site << THREAD_BITS | thread`, -1 when never
 * written in this CTA) with its clock, and two readers of the current phase (the first one, and
 * the latest one that was concurrent with it), so a write that races with any reader other than
 * itself is found whichever thread wrote. A report therefore depends only on the happens-before
 * relation, not on the order the simulator happened to run the threads in: of two unordered
 * accesses, the later one finds the earlier one's record.
 *
 * New access paths (ldmatrix / stmatrix reads and writes, TMA tiles) plug in through onRead /
 * onWrite (record false at an async issue, recordWrite at its completion, recordAsyncProxyWrite
 * for async-proxy writes guarded elsewhere) and unfenced (async-proxy reads of shared memory).
 *
 * Lazy uniform ranges (interval shadow state, see `uniformAt`): the bytes of a bulk copy share
 * one entry of records until a smaller access needs them per byte, so a bulk copy costs O(1)
 * shadow work, not O(bytes).
 *
 * Global reads of tensors the kernel may write are recorded in two reader slots per byte too
 * (exec/global-shadow.ts), so a write after another thread's or another CTA's unordered read is
 * TX6013 on global memory as well.
 *
 * Readers: two slots per byte (the first reader, and the latest one concurrent with it); a
 * reader that a new concurrent reader would push out of the second slot moves to an overflow
 * list of the byte, so a write is checked against every reader not ordered before a later one of
 * its slot (complete write-after-read); cta_sync clears the lists.
 *
 * Known limits: clocks are int32 and grow by one per release event per thread, so a process
 * must stay below 2^31 of them.
 *
 * Costs: typed arrays only; an access costs a few array reads per byte; cta_sync is O(threads);
 * named barriers and partial-warp collectives O(participants × threads); mbarrier arrive and
 * successful try_wait O(threads) once K exists.
 */
import { AtomicShadow } from "./atomic-shadow.js";
import { THREAD_BITS, THREAD_MASK } from "./packed.js";

/**
 * Lazy uniform ranges (see RaceTracker.uniformAt) are at least this many bytes: bulk copies;
 * per-element accesses never are.
 */
export const UNIFORM_MIN = 64;

/** Bytes materialised around an access of a lazy uniform range (a power of two). */
const SHARED_BLOCK = 1024;

/** Most uniform ranges kept at once. */
const MAX_UNIFORM = 16;

/** A lazy uniform range of shared memory and the values of its bytes (see RaceTracker). */
export interface Uniform {
  s: number;
  f: number;
  wr: number;
  wc: number;
  r1: number;
  c1: number;
  r2: number;
  c2: number;
  /** Bulk guard (the Machine's shBulk). */
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

/** Clocks start above 0 (0 marks "ordered before everything") and never repeat in a process. */
let nextClock = 1;

/** The other access of a race, as found by a check. */
export interface RaceHit {
  /** Packed `site << THREAD_BITS | thread` of the earlier access. */
  readonly other: number;
  /** Its clock (tells same CTA from another CTA of the launch). */
  readonly clock: number;
}

export class RaceTracker {
  readonly threads: number;
  /** Per thread: current clock. */
  readonly clock: Int32Array;
  /**
   * True when every thread's clock is the same (at a CTA's start, and after a cta_sync that found
   * them equal); every other change of a clock here sets it false.
   */
  clockUniform = true;
  /** Per thread: its clock at its last cta_sync (accesses at or below are ordered for all). */
  readonly floor: Int32Array;
  /**
   * At most every thread's `floor`: an access of this CTA at a clock up to it happens before
   * every thread's current point (a cta_sync came after it).
   */
  floorMin = 0;
  /** Per thread: its clock at its last collective executed by the whole warp. */
  readonly wfloor: Int32Array;
  /** Per thread: its clock at its last proxy fence covering shared memory. */
  readonly proxyFence: Int32Array;
  /** Per thread: its clock at its last proxy fence covering global memory. */
  readonly globalFence: Int32Array;
  /** Per thread: its clock at its last fence.mbarrier_init. */
  readonly initFence: Int32Array;
  /** threads × threads: K[t * threads + u] = highest clock of u that t acquired. */
  K: Int32Array | null = null;
  /** Per mbarrier slot: knowledge released by arrivals (acc) and frozen at phase completion (rel). */
  readonly #acc: Int32Array[] = [];
  readonly #rel: Int32Array[] = [];
  readonly #join: Int32Array;
  /** First clock of the current CTA and of the current launch. */
  ctaBase = 0;
  launchBase = 0;
  /** ctaBase of each CTA run in this launch, and its label, for messages. */
  readonly #ctaStarts: number[] = [];
  readonly #ctaLabels: string[] = [];

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
  readonly atomics = new AtomicShadow();

  // Per shared byte.
  /** Last writer: packed `site << THREAD_BITS | thread`, -1 when never written in this CTA. */
  readonly wr: Int32Array;
  /** Clock of the last write. */
  readonly wc: Int32Array;
  readonly r1: Int32Array;
  readonly c1: Int32Array;
  readonly r2: Int32Array;
  readonly c2: Int32Array;
  /** Bulk guard per byte (Machine.shBulk; see BulkUnit). */
  readonly bk: Int32Array;

  /**
   * Lazy uniform ranges of shared memory (interval shadow state): over `[s, f)` of an entry,
   * every byte's race records and bulk guard are the entry's values, and the per-byte arrays
   * there are stale. Bulk copies (kilobytes each) are checked and recorded on their entry in
   * O(1); an access that needs bytes calls `materialise`, which writes the entry's values into
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

  /** Widen the changed range to [lo, hi) (every writer of the per-byte records calls this). */
  touch(lo: number, hi: number): void {
    if (this.#touchLo >= this.#touchHi) {
      this.#touchLo = lo;
      this.#touchHi = hi;
      return;
    }
    if (lo < this.#touchLo) this.#touchLo = lo;
    if (hi > this.#touchHi) this.#touchHi = hi;
  }

  /**
   * The entry holding all of [a, a + n), when n >= UNIFORM_MIN and one does whose records are
   * the same for every byte (a run-of-threads entry is not: its callers materialise).
   */
  uniformAt(a: number, n: number): Uniform | undefined {
    const u = this.entryAt(a, n);
    return u !== undefined && u.wk < 0 && u.rk < 0 ? u : undefined;
  }

  /** The entry of any kind holding all of [a, a + n), when n >= UNIFORM_MIN and one does. */
  entryAt(a: number, n: number): Uniform | undefined {
    if (n < UNIFORM_MIN) return undefined;
    const list = this.#uni;
    for (let i = 0; i < list.length; i++) {
      const u = list[i]!;
      if (u.s <= a && a + n <= u.f) return u;
    }
    return undefined;
  }

  /** True when an entry overlaps [a, a + n). */
  overlapsEntry(a: number, n: number): boolean {
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
    return clear && !this.overlapsEntry(a, n);
  }

  /**
   * Entry `u` becomes the records of its bytes [u.s, u.f), a write of all of them (see
   * recordWrite): entries there are cut (their parts outside kept), the bytes' overflow readers
   * and atomic records dropped. No cp.async may target the bytes (the caller's condition).
   */
  setEntry(u: Uniform): void {
    const a = u.s;
    const n = u.f - u.s;
    this.#dropMore(a, n);
    if (this.atomics.size > 0) this.atomics.drop(a, n);
    const list = this.#uni;
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
  addEntry(u: Uniform): void {
    this.#uni.push(u);
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
   * without bulk copies never have any).
   */
  materialise(a: number, n: number): void {
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
  isolate(u: Uniform, a: number, n: number): Uniform {
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

  /**
   * A CTA starts: every shared byte holds the never-written records, so all of shared memory
   * is one entry (for kernels with bulk copies).
   */
  allUniform(): void {
    this.#uni.length = 0;
    const n = this.wr.length;
    if (n >= UNIFORM_MIN) {
      this.#uni.push(freshEntry(0, n));
    }
  }

  constructor(threads: number, sharedBytes: number) {
    this.threads = threads;
    this.clock = new Int32Array(threads);
    this.floor = new Int32Array(threads);
    this.wfloor = new Int32Array(threads);
    this.proxyFence = new Int32Array(threads);
    this.globalFence = new Int32Array(threads);
    this.initFence = new Int32Array(threads);
    this.#join = new Int32Array(threads);
    this.wr = new Int32Array(sharedBytes);
    this.wc = new Int32Array(sharedBytes);
    this.r1 = new Int32Array(sharedBytes);
    this.c1 = new Int32Array(sharedBytes);
    this.r2 = new Int32Array(sharedBytes);
    this.c2 = new Int32Array(sharedBytes);
    this.bk = new Int32Array(sharedBytes);
  }

  beginLaunch(): void {
    this.launchBase = nextClock;
    this.#ctaStarts.length = 0;
    this.#ctaLabels.length = 0;
  }

  /** False until the first CTA start has reset every shared byte's records (the arrays start as 0s). */
  #started = false;

  /**
   * A new CTA: clocks above every earlier one, shared-memory records cleared. Only the bytes
   * the last CTA changed are reset (#touchLo..#touchHi: outside it every byte still holds the
   * CTA-start records), and the bulk guards only when `guarded` (some byte's guard may be
   * nonzero: the last CTA issued a bulk copy, BulkUnit.active), so a CTA start costs O(threads)
   * plus the shared bytes the last CTA used.
   */
  beginCta(label: string, guarded = true): void {
    this.endCta();
    const base = nextClock;
    this.ctaBase = base;
    this.clock.fill(base + 1);
    this.clockUniform = true;
    this.floor.fill(0);
    this.floorMin = 0;
    this.wfloor.fill(0);
    this.proxyFence.fill(0);
    this.globalFence.fill(0);
    this.#fenceKnew.length = 0;
    this.#globalKnew.length = 0;
    this.initFence.fill(0);
    this.#ctaStarts.push(base);
    this.#ctaLabels.push(label);
    const lo = this.#started ? this.#touchLo : 0;
    const hi = this.#started ? this.#touchHi : this.wr.length;
    if (lo < hi) {
      this.wr.fill(-1, lo, hi);
      this.r1.fill(-1, lo, hi);
      this.r2.fill(-1, lo, hi);
    }
    // Bulk copies set guards without widening the changed range (BulkUnit.issueG2s).
    if (guarded || !this.#started) this.bk.fill(0);
    this.#started = true;
    this.#touchLo = 0;
    this.#touchHi = 0;
    this.#uni.length = 0;
    if (this.#more.size > 0) this.#more.clear();
    this.atomics.clear();
    this.resetBars();
  }

  /** The CTA (or launch) ended: later CTAs get clocks above every clock it used. */
  endCta(): void {
    let most = this.ctaBase + 1;
    const c = this.clock;
    for (let t = 0; t < c.length; t++) if (c[t]! > most) most = c[t]!;
    if (most + 1 > nextClock) nextClock = most + 1;
  }

  /** The label of the CTA an access with clock `c` ran in (for messages). */
  ctaOf(c: number): string | undefined {
    const s = this.#ctaStarts;
    for (let i = s.length - 1; i >= 0; i--) if (c >= s[i]!) return this.#ctaLabels[i];
    return undefined;
  }

  /** True when `c` was stamped by another CTA of the current launch. */
  otherCta(c: number): boolean {
    return c < this.ctaBase && c >= this.launchBase;
  }

  /** Does access `(u, c)` happen before thread `t`'s current point? */
  ordered(u: number, c: number, t: number): boolean {
    if (c < this.ctaBase) return c < this.launchBase;
    if (u === t) return true;
    if (c <= this.floor[u]!) return true;
    if (u >> 5 === t >> 5 && c <= this.wfloor[u]!) return true;
    const K = this.K;
    return K !== null && K[t * this.threads + u]! >= c;
  }

  // ---------------------------------------------------------------- shared-memory accesses

  /**
   * A read of shared bytes [a, a + n) by thread `t` at `site`: returns the first unordered
   * earlier write (read-after-write), or undefined; records the read.
   */
  onRead(t: number, site: number, a: number, n: number): RaceHit | undefined {
    const me = (site << THREAD_BITS) | t;
    const now = this.clock[t]!;
    let hit: RaceHit | undefined;
    const u = this.uniformAt(a, n);
    if (u !== undefined) {
      // Every byte holds the same records: one decision, recorded on the range's own entry.
      const w = u.wr;
      if (w >= 0 && (w & THREAD_MASK) !== t && u.wc !== 0) {
        if (!this.ordered(w & THREAD_MASK, u.wc, t)) hit = { other: w, clock: u.wc };
      }
      const r = u.r1;
      const first = r < 0 || (r & THREAD_MASK) === t || this.ordered(r & THREAD_MASK, u.c1, t);
      const q = u.r2;
      const evicts =
        !first && q >= 0 && (q & THREAD_MASK) !== t && !this.ordered(q & THREAD_MASK, u.c2, t);
      if (!evicts) {
        const v = this.isolate(u, a, n);
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
    this.materialise(a, n);
    return this.onReadBytes(t, site, a, n, hit);
  }

  /**
   * The first earlier write of shared bytes [a, a + n) not ordered before thread `t`'s current
   * point (read-after-write), like onRead but recording no read: for readers whose reads the
   * caller tracks itself (a wgmma's shared operands, read until a wgmma.wait_group retires it).
   */
  writeHit(t: number, a: number, n: number): RaceHit | undefined {
    const u = this.uniformAt(a, n);
    if (u !== undefined) {
      const w = u.wr;
      if (
        w >= 0 &&
        (w & THREAD_MASK) !== t &&
        u.wc !== 0 &&
        !this.ordered(w & THREAD_MASK, u.wc, t)
      )
        return { other: w, clock: u.wc };
      return undefined;
    }
    this.materialise(a, n);
    const wr = this.wr;
    const wc = this.wc;
    for (let b = a; b < a + n; b++) {
      const w = wr[b]!;
      const cw = wc[b]!;
      if (w >= 0 && (w & THREAD_MASK) !== t && cw !== 0 && !this.ordered(w & THREAD_MASK, cw, t))
        return { other: w, clock: cw };
    }
    return this.atomics.moreHit(this, a, n, t);
  }

  /** Bytes with readers beyond the two slots (cleared by cta_sync and by writes of them). */
  get overflowReaders(): number {
    return this.#more.size;
  }

  /** True when no lazy uniform range exists: the per-byte arrays hold every byte's records. */
  get perByte(): boolean {
    return this.#uni.length === 0;
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
    const wr = this.wr;
    const wc = this.wc;
    const r1 = this.r1;
    const c1 = this.c1;
    const me = (site << THREAD_BITS) | t;
    const now = this.clock[t]!;
    this.touch(a, a + n);
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
          if (!this.ordered(w & THREAD_MASK, cw, t)) hit = { other: w, clock: cw };
        }
        first = r < 0 || (r & THREAD_MASK) === t || this.ordered(r & THREAD_MASK, cr, t);
      }
      if (first) {
        r1[b] = me;
        c1[b] = now;
      } else {
        this.#second(b, me, now, t);
      }
    }
    // Atomics concurrent with the one in the writer record (AtomicShadow).
    if (hit === undefined && this.atomics.more.size > 0) hit = this.atomics.moreHit(this, a, n, t);
    return hit;
  }

  /**
   * Reader `me` (thread `t`) takes the second slot of byte `b`; its previous holder, when
   * concurrent with `t`, moves to the byte's overflow list.
   */
  #second(b: number, me: number, now: number, t: number): void {
    const q = this.r2[b]!;
    if (q >= 0 && (q & THREAD_MASK) !== t && !this.ordered(q & THREAD_MASK, this.c2[b]!, t)) {
      const list = this.#more.get(b);
      if (list) list.push(q, this.c2[b]!);
      else this.#more.set(b, [q, this.c2[b]!]);
    }
    this.r2[b] = me;
    this.c2[b] = now;
  }

  /** An overflow reader of byte `b` not ordered before thread `t`, or undefined. */
  #moreHit(b: number, t: number): (RaceHit & { read: boolean }) | undefined {
    const list = this.#more.get(b);
    if (!list) return undefined;
    for (let i = 0; i < list.length; i += 2) {
      const r = list[i]!;
      if ((r & THREAD_MASK) !== t && !this.ordered(r & THREAD_MASK, list[i + 1]!, t)) {
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
  ): (RaceHit & { read: boolean }) | undefined {
    const wr = this.wr;
    const wc = this.wc;
    let hit: (RaceHit & { read: boolean }) | undefined;
    // Atomics are elements, never lazy uniform ranges (materialised below).
    const u = atomic ? undefined : this.uniformAt(a, n);
    if (u !== undefined) {
      // Over a uniform range its entry decides.
      const w = u.wr;
      if (w >= 0 && (w & THREAD_MASK) !== t && !this.ordered(w & THREAD_MASK, u.wc, t)) {
        if (!(atomic && isAtomic(w >> THREAD_BITS))) hit = { other: w, clock: u.wc, read: false };
      }
      const r = u.r1;
      if (!hit && r >= 0 && (r & THREAD_MASK) !== t && !this.ordered(r & THREAD_MASK, u.c1, t)) {
        hit = { other: r, clock: u.c1, read: true };
      }
      const r2 = u.r2;
      if (!hit && r2 >= 0 && (r2 & THREAD_MASK) !== t && !this.ordered(r2 & THREAD_MASK, u.c2, t)) {
        hit = { other: r2, clock: u.c2, read: true };
      }
      if (record) this.recordWrite(t, site, a, n);
      return hit;
    }
    this.materialise(a, n);
    // Bytes outside the changed range hold CTA-start records: nothing to race with there.
    const lo = a > this.#touchLo ? a : this.#touchLo;
    const hi = a + n < this.#touchHi ? a + n : this.#touchHi;
    for (let b = lo; b < hi && hit === undefined; b++) {
      const w = wr[b]!;
      if (w >= 0 && (w & THREAD_MASK) !== t && !this.ordered(w & THREAD_MASK, wc[b]!, t)) {
        if (!(atomic && isAtomic(w >> THREAD_BITS))) hit = { other: w, clock: wc[b]!, read: false };
      }
      if (hit !== undefined) break;
      const r = this.r1[b]!;
      if (r >= 0 && (r & THREAD_MASK) !== t && !this.ordered(r & THREAD_MASK, this.c1[b]!, t)) {
        hit = { other: r, clock: this.c1[b]!, read: true };
        break;
      }
      const r2 = this.r2[b]!;
      if (r2 >= 0 && (r2 & THREAD_MASK) !== t && !this.ordered(r2 & THREAD_MASK, this.c2[b]!, t)) {
        hit = { other: r2, clock: this.c2[b]!, read: true };
      }
      if (hit === undefined && this.#more.size > 0) hit = this.#moreHit(b, t);
    }
    if (hit === undefined && this.atomics.size > 0) {
      const h = atomic ? this.atomics.plainHit(this, a, n, t) : this.atomics.moreHit(this, a, n, t);
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
   * races with every later unordered atomic).
   */
  recordAtomic(
    t: number,
    site: number,
    a: number,
    n: number,
    isAtomic: (site: number) => boolean,
  ): void {
    this.materialise(a, n);
    this.touch(a, a + n);
    const w = (site << THREAD_BITS) | t;
    this.atomics.take(this, this.wr, this.wc, a, n, w, this.clock[t]!, t, isAtomic);
  }

  /** Record thread `t`'s write of [a, a + n) at `site` as of now (readers of the phase end). */
  recordWrite(t: number, site: number, a: number, n: number): void {
    const w = (site << THREAD_BITS) | t;
    const now = this.clock[t]!;
    this.#dropMore(a, n);
    if (this.atomics.size > 0) this.atomics.drop(a, n);
    const u = this.uniformAt(a, n);
    if (u !== undefined) {
      const v = this.isolate(u, a, n);
      v.wr = w;
      v.wc = now;
      v.r1 = -1;
      v.r2 = -1;
      return;
    }
    this.materialise(a, n);
    this.touch(a, a + n);
    if (n <= 32) {
      // Small ranges: a loop beats four calls of fill.
      const wr = this.wr;
      const wc = this.wc;
      const r1 = this.r1;
      const r2 = this.r2;
      for (let b = a, e = a + n; b < e; b++) {
        wr[b] = w;
        wc[b] = now;
        r1[b] = -1;
        r2[b] = -1;
      }
      return;
    }
    this.wr.fill(w, a, a + n);
    this.wc.fill(now, a, a + n);
    this.r1.fill(-1, a, a + n);
    this.r2.fill(-1, a, a + n);
  }

  /** Bytes written by the async proxy (a landed bulk copy): ordered for every thread. */
  recordAsyncProxyWrite(t: number, site: number, a: number, n: number): void {
    this.#dropMore(a, n);
    if (this.atomics.size > 0) this.atomics.drop(a, n);
    const u = this.uniformAt(a, n);
    if (u !== undefined) {
      const v = this.isolate(u, a, n);
      v.wr = (site << THREAD_BITS) | t;
      v.wc = 0;
      v.r1 = -1;
      v.r2 = -1;
      return;
    }
    this.materialise(a, n);
    this.touch(a, a + n);
    this.wr.fill((site << THREAD_BITS) | t, a, a + n);
    this.wc.fill(0, a, a + n);
    this.r1.fill(-1, a, a + n);
    this.r2.fill(-1, a, a + n);
  }

  // ---------------------------------------------------------------- global memory

  /**
   * An access of global bytes [a, a + n) of a tensor with per-byte `writer`/`clocks` by thread
   * `t`: the first earlier write not ordered before it (same CTA without synchronization, or any
   * other CTA of this launch); atomics do not race with atomics.
   */
  checkGlobal(
    writer: Int32Array,
    clocks: Int32Array,
    a: number,
    n: number,
    t: number,
    atomic: boolean,
    isAtomic: (site: number) => boolean,
  ): RaceHit | undefined {
    const base = this.ctaBase;
    const lb = this.launchBase;
    // The outcome depends only on (writer, clock): a run of equal records (a bulk copy's bytes)
    // is decided by its first byte.
    let pw = -2;
    let pc = 0;
    for (let b = a; b < a + n; b++) {
      const w = writer[b]!;
      if (w < 0) continue;
      const c = clocks[b]!;
      if (w === pw && c === pc) continue;
      pw = w;
      pc = c;
      // Fast paths: an earlier launch, or this thread's own write in this CTA.
      if (c < lb || (c >= base && (w & THREAD_MASK) === t)) continue;
      if (this.ordered(w & THREAD_MASK, c, t)) continue;
      if (atomic && isAtomic(w >> THREAD_BITS)) continue;
      return { other: w, clock: c };
    }
    return undefined;
  }

  /** checkGlobal for bytes that all hold the one record (`w`, `c`). */
  checkGlobalRecord(
    w: number,
    c: number,
    t: number,
    atomic: boolean,
    isAtomic: (site: number) => boolean,
  ): RaceHit | undefined {
    if (w < 0 || c < this.launchBase || (c >= this.ctaBase && (w & THREAD_MASK) === t)) {
      return undefined;
    }
    if (this.ordered(w & THREAD_MASK, c, t)) return undefined;
    if (atomic && isAtomic(w >> THREAD_BITS)) return undefined;
    return { other: w, clock: c };
  }

  // ---------------------------------------------------------------- synchronization

  /** cta_sync: everything every thread did so far happens before everything after. */
  onBarrier(): void {
    this.#more.clear();
    this.atomics.clear();
    const c = this.clock;
    let least = c[0]!;
    let most = least;
    for (let t = 0; t < c.length; t++) {
      if (c[t]! < least) least = c[t]!;
      if (c[t]! > most) most = c[t]!;
      this.floor[t] = c[t]!;
      c[t]!++;
    }
    this.floorMin = least;
    this.clockUniform = least === most;
  }

  #matrix(): Int32Array {
    return (this.K ??= new Int32Array(this.threads * this.threads));
  }

  /**
   * The threads `lanes[0..n)` (plus `offset`) synchronize with each other only (a named barrier,
   * or a warp collective of some lanes): each acquires what any of them knew and did.
   */
  onGroupSync(lanes: ArrayLike<number>, n: number, offset = 0): void {
    const K = this.#matrix();
    const T = this.threads;
    const j = this.#join;
    j.fill(0);
    for (let i = 0; i < n; i++) {
      const p = lanes[i]! + offset;
      const row = p * T;
      for (let u = 0; u < T; u++) if (K[row + u]! > j[u]!) j[u] = K[row + u]!;
    }
    for (let i = 0; i < n; i++) {
      const p = lanes[i]! + offset;
      if (this.clock[p]! > j[p]!) j[p] = this.clock[p]!;
    }
    for (let i = 0; i < n; i++) {
      const p = lanes[i]! + offset;
      K.set(j, p * T);
      this.clock[p]!++;
      this.clockUniform = false;
    }
  }

  /**
   * A warp collective executed by lanes `lanes` (lane numbers) of warp `warp`, `present` lanes in
   * the warp: lanes that execute a collective together are ordered by it.
   */
  onWarpSync(warp: number, lanes: readonly number[], present: number): void {
    const base = warp << 5;
    if (lanes.length === present && this.K === null) {
      for (let i = 0; i < lanes.length; i++) {
        const p = base + lanes[i]!;
        this.wfloor[p] = this.clock[p]!;
        this.clock[p]!++;
        this.clockUniform = false;
      }
      return;
    }
    this.onGroupSync(lanes, lanes.length, base);
  }

  /**
   * Named barrier knowledge released by `bar.arrive` into the current instance of a barrier, by
   * barrier key (exec/named-barriers.ts).
   */
  readonly #named = new Map<number, Int32Array>();

  /**
   * `bar.arrive` by `t` at barrier `key`: releases what `t` knows and did into the barrier's
   * current instance (PTX ISA, bar/barrier "memory ordering"); returns `t`'s clock at the arrival.
   */
  onNamedArrive(key: number, t: number): number {
    const T = this.threads;
    let acc = this.#named.get(key);
    if (!acc) this.#named.set(key, (acc = new Int32Array(T)));
    const K = this.#matrix();
    const row = t * T;
    for (let u = 0; u < T; u++) if (K[row + u]! > acc[u]!) acc[u] = K[row + u]!;
    const c = this.clock[t]!;
    if (c > acc[t]!) acc[t] = c;
    this.clock[t]!++;
    this.clockUniform = false;
    return c;
  }

  /**
   * The current instance of barrier `key` completes: each of `syncers` (the threads that wait in
   * bar.sync, blocked since they arrived) acquires what every arriver released or knew.
   */
  onNamedComplete(key: number, syncers: readonly number[]): void {
    const K = this.#matrix();
    const T = this.threads;
    const j = this.#join;
    const acc = this.#named.get(key);
    if (acc) {
      j.set(acc);
      acc.fill(0);
    } else j.fill(0);
    for (const p of syncers) {
      const row = p * T;
      for (let u = 0; u < T; u++) if (K[row + u]! > j[u]!) j[u] = K[row + u]!;
    }
    for (const p of syncers) if (this.clock[p]! > j[p]!) j[p] = this.clock[p]!;
    for (const p of syncers) {
      K.set(j, p * T);
      this.clock[p]!++;
      this.clockUniform = false;
    }
  }

  /** Forget named barrier releases (CTA start). */
  resetNamed(): void {
    for (const a of this.#named.values()) a.fill(0);
  }

  /** `mbarrier.arrive` by `t` on the mbarrier in `slot`: releases what `t` knows and did. */
  onArrive(slot: number, t: number): void {
    const T = this.threads;
    const acc = (this.#acc[slot] ??= new Int32Array(T));
    const K = this.#matrix();
    const row = t * T;
    for (let u = 0; u < T; u++) if (K[row + u]! > acc[u]!) acc[u] = K[row + u]!;
    if (this.clock[t]! > acc[t]!) acc[t] = this.clock[t]!;
    this.clock[t]!++;
    this.clockUniform = false;
  }

  /** The current phase of the mbarrier in `slot` completed: its releases become acquirable. */
  onPhaseComplete(slot: number): void {
    const acc = this.#acc[slot];
    if (!acc) return;
    const rel = (this.#rel[slot] ??= new Int32Array(this.threads));
    rel.set(acc);
  }

  /** A successful try_wait by `t` on the mbarrier in `slot`. */
  onWaitSuccess(slot: number, t: number): void {
    const rel = this.#rel[slot];
    if (!rel) return;
    const K = this.#matrix();
    const T = this.threads;
    const row = t * T;
    for (let u = 0; u < T; u++) if (rel[u]! > K[row + u]!) K[row + u] = rel[u]!;
  }

  /** Forget mbarrier knowledge (CTA start; stale clocks would be harmless, this keeps it tidy). */
  resetBars(): void {
    for (const a of this.#acc) a?.fill(0);
    for (const r of this.#rel) r?.fill(0);
  }

  /**
   * Per thread: at its last proxy fence covering shared (#fenceKnew) or global (#globalKnew)
   * memory, the highest clock of each thread ordered before it (what `ordered(u, c, t)` held
   * then), or undefined before its first such fence in this CTA.
   */
  readonly #fenceKnew: (Int32Array | undefined)[] = [];
  readonly #globalKnew: (Int32Array | undefined)[] = [];

  /**
   * A proxy fence by `t` (fence.proxy.async of the state spaces `spaces`): every generic-proxy
   * write of those spaces ordered before it (its own, and other threads' it synchronized with)
   * is ordered for the async proxy after it (PTX ISA, fence.proxy.async).
   */
  onProxyFence(t: number, spaces: "shared::cta" | "global" | "all" = "shared::cta"): void {
    const T = this.threads;
    const knew = new Int32Array(T);
    const K = this.K;
    const row = t * T;
    const warp = t >> 5;
    for (let u = 0; u < T; u++) {
      let c = this.floor[u]!;
      if (u >> 5 === warp && this.wfloor[u]! > c) c = this.wfloor[u]!;
      if (K !== null && K[row + u]! > c) c = K[row + u]!;
      knew[u] = c;
    }
    knew[t] = this.clock[t]!;
    if (spaces !== "global") {
      this.#fenceKnew[t] = knew;
      this.proxyFence[t] = this.clock[t]!;
    }
    if (spaces !== "shared::cta") {
      this.#globalKnew[t] = knew;
      this.globalFence[t] = this.clock[t]!;
    }
    this.clock[t]!++;
    this.clockUniform = false;
  }

  /**
   * Is the generic-proxy write of global memory (packed `w`, clock `c`) ordered for the async
   * proxy before thread `t`'s current point? As for shared memory (see #fencedFor), through
   * fences that cover global memory (fence.proxy.async.global or fence.proxy.async).
   */
  globalFenced(w: number, c: number, t: number): boolean {
    return this.#fencedFor(w, c, t, this.globalFence, this.#globalKnew);
  }

  /**
   * Is the generic-proxy write (packed `w`, clock `c`) ordered for the async proxy before thread
   * `t`'s current point? It is when a fence.proxy.async lies on a causality path from the write
   * to `t` (PTX ISA, Memory Consistency Model: proxy-preserved base causality order, "a proxy
   * fence along the base causality path from X to Y"): its writer's fence after it, `t`'s own
   * fence after `t` synchronized with the writer (write, cta_sync, then the issuing thread
   * fences), or a third thread's such fence ordered before `t`.
   */
  #fencedFor(
    w: number,
    c: number,
    t: number,
    fence: Int32Array = this.proxyFence,
    all: readonly (Int32Array | undefined)[] = this.#fenceKnew,
  ): boolean {
    const u = w & THREAD_MASK;
    if (c <= fence[u]!) return true;
    const own = all[t];
    if (own !== undefined && c <= own[u]!) return true;
    for (let f = 0; f < all.length; f++) {
      const knew = all[f];
      if (f === t || knew === undefined || c > knew[u]!) continue;
      if (this.ordered(f, fence[f]!, t)) return true;
    }
    return false;
  }

  /** fence.mbarrier_init by `t`: its earlier mbarrier.init are visible to the async proxy. */
  onInitFence(t: number): void {
    this.initFence[t] = this.clock[t]!;
    this.clock[t]!++;
    this.clockUniform = false;
  }

  /**
   * The first shared byte of [a, a + n) whose last write was a generic-proxy write with no
   * fence.proxy.async between it and thread `t`'s async-proxy access (see #fencedFor; -1 when
   * none).
   */
  unfenced(a: number, n: number, t: number): number {
    const u = this.uniformAt(a, n);
    if (u !== undefined) {
      const w = u.wr;
      return w >= 0 && u.wc >= this.ctaBase && !this.#fencedFor(w, u.wc, t) ? a : -1;
    }
    this.materialise(a, n);
    const wr = this.wr;
    const wc = this.wc;
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
      if (c >= this.ctaBase && !this.#fencedFor(w, c, t)) return b;
    }
    return -1;
  }
}
