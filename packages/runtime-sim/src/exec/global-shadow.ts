import type { Clocks } from "./clocks.js";
import { AtomicShadow } from "./atomic-shadow.js";
import { THREAD_BITS, THREAD_MASK, type RaceHit } from "./packed.js";
import type { StoreInstances } from "./store-instances.js";
import type { StrongSites } from "./strong-sites.js";

/**
 * Lazy uniform ranges of a tensor's writer records are at least this many bytes (a bulk copy's,
 * a run of element stores); a write of fewer bytes is recorded per byte.
 */
export const GLOBAL_RANGE_MIN = 64;

/**
 * A lazy uniform range of a tensor's per-byte writer records (interval shadow state for global
 * memory, like SharedShadow's for shared memory): over `[s, f)` of an entry every byte's last
 * writer is `w` (packed `site << THREAD_BITS | thread`, -1 for "no write in this launch") with
 * clock `c`, and the per-byte arrays there are stale. A launch starts with one entry over the
 * whole tensor (its arrays come from a pool and keep older launches' records), a bulk copy's
 * write replaces its bytes' entries by one, and an element access materialises the block of
 * GLOBAL_BLOCK bytes around it (so a sweep of element accesses fills each block once).
 * Entries never overlap and are kept sorted by start (binary search); at most MAX_ENTRIES.
 */
interface GlobalEntry {
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
 * Per-byte shadow arrays of one tensor of a launch, taken from the process's idle pools when the
 * launch begins and given back when it ends (takeShadowPool, giveShadowPools), so that launches
 * of every Machine reuse them (grown when a larger tensor comes) and a launch allocates nothing
 * proportional to tensor bytes. Writer and clock arrays need no reset (clocks are unique in the
 * process, Clocks: an earlier launch's record, of any Machine, counts as ordered);
 * pending-read counts are back to 0 at the end of every launch (AsyncUnit/BulkUnit.dropAll).
 */
export class ShadowPool {
  #writer = new Int32Array(0);
  #epoch = new Int32Array(0);
  #pendingReads = new Int32Array(0);
  #readers: Int32Array[] = [];

  /** Bytes the writer arrays hold now (what a tensor of that many bytes uses without growing). */
  get capacity(): number {
    return this.#writer.length;
  }

  /** Writer and clock arrays of `n` bytes. */
  writers(n: number): { writer: Int32Array; epoch: Int32Array } {
    if (this.#writer.length < n) {
      this.#writer = new Int32Array(n);
      this.#epoch = new Int32Array(n);
    }
    return { writer: this.#writer.subarray(0, n), epoch: this.#epoch.subarray(0, n) };
  }

  /**
   * Reader slots of `n` bytes (r1, c1, r2, c2). Stale records of earlier launches carry clocks
   * below the launch's first clock, so they count as ordered and need no reset.
   */
  readers(n: number): Int32Array[] {
    if ((this.#readers[0]?.length ?? -1) < n) {
      this.#readers = [0, 1, 2, 3].map(() => new Int32Array(n).fill(-1));
    }
    return this.#readers.map((a) => a.subarray(0, n));
  }

  /** Pending-read counts of `n` bytes (all 0). */
  pendingReads(n: number): Int32Array {
    if (this.#pendingReads.length < n) this.#pendingReads = new Int32Array(n);
    return this.#pendingReads.subarray(0, n);
  }
}

/**
 * Pools no launch holds. A launch is synchronous and takes a pool per tensor before it runs, so a
 * pool is held by one launch at a time; the simulator compiles a Machine per kernel, and the
 * pools, the largest part of a small kernel's set-up (filling the reader slots), move from one
 * kernel's launches to the next.
 */
const idlePools: ShadowPool[] = [];

/**
 * An idle pool for a tensor of `bytes` bytes: the smallest one that holds it without growing,
 * else the smallest one (which grows; larger idle ones stay for larger tensors), else a new one.
 */
export function takeShadowPool(bytes: number): ShadowPool {
  let best = -1;
  let bestFits = false;
  for (let i = 0; i < idlePools.length; i++) {
    const c = idlePools[i]!.capacity;
    const fits = c >= bytes;
    if (best < 0 || (fits && !bestFits) || (fits === bestFits && c < idlePools[best]!.capacity)) {
      best = i;
      bestFits = fits;
    }
  }
  if (best < 0) return new ShadowPool();
  const pool = idlePools[best]!;
  idlePools[best] = idlePools[idlePools.length - 1]!;
  idlePools.pop();
  return pool;
}

/** Give back the pools a launch took (its pending-read counts back to 0), and empty `pools`. */
export function giveShadowPools(pools: ShadowPool[]): void {
  for (const p of pools) idlePools.push(p);
  pools.length = 0;
}

/**
 * The shadow of one tensor during a launch (one per distinct tensor: a tensor passed as two
 * parameters shares it): per byte, which thread last wrote it (packed `site << THREAD_BITS |
 * thread`) at which clock, two reader slots when the kernel may write the tensor (write after
 * read, TX6013), the atomics' extra records and the strong loads' (AtomicShadow, one each), and
 * how many pending async copies (cp.async, global → shared bulk) read the byte (pending shared →
 * global bulk copies are found by interval, BulkUnit). Every array is private to this module and made at its first use, from the
 * parameter's ShadowPool; the checks (exec/hazards.ts), access runs and copy units change them
 * through the methods here. Happens-before is decided by the launch's Clocks: a record of another
 * CTA of the launch is never ordered, one of an earlier launch always.
 */
export class TensorShadow {
  readonly #pool: ShadowPool;
  readonly #clocks: Clocks;
  /** Stores of one instruction by lanes of one warp, which do not race (StoreInstances). */
  readonly #stores: StoreInstances;
  /** The strong sites' scopes and sizes (StrongSites: when two strong accesses race). */
  readonly #strong: StrongSites;
  readonly #bytes: number;
  /**
   * True when the kernel may write this tensor (through any parameter it is passed as): only
   * then are reads recorded, for write-after-read.
   */
  readonly recordReads: boolean;
  #watched: boolean;

  #writer: Int32Array | undefined;
  #epoch: Int32Array | undefined;
  #pendingReads: Int32Array | undefined;
  /** Lazy uniform ranges of `#writer`/`#epoch` (see GlobalEntry). */
  #lazy: GlobalEntry[] = [];
  /**
   * Bytes [#cleanLo, #cleanHi) overlap no entry of `#lazy` (the block last materialised), so an
   * element access there needs no lookup; reset whenever an entry is added.
   */
  #cleanLo = 0;
  #cleanHi = 0;
  /** Per byte: two reader slots (packed reader and clock), like shared memory's. */
  #r1: Int32Array | undefined;
  #c1: Int32Array | undefined;
  #r2: Int32Array | undefined;
  #c2: Int32Array | undefined;
  /**
   * Readers pushed out of the second slot while concurrent with the reader that took it, by byte
   * (flat `[packed, clock, ...]`), so write-after-read stays complete with many readers.
   */
  #more: Map<number, number[]> | undefined;
  /** Atomic records beyond the writers (exec/atomic-shadow.ts), from the launch's first atomic. */
  #atomics: AtomicShadow | undefined;
  /**
   * The strong loads of the launch (AtomicShadow.addLoad: ld.relaxed / ld.acquire, reads
   * recorded), from its first one; a plain write of their bytes drops them.
   */
  #loads: AtomicShadow | undefined;
  /** The bytes [#readLo, #readHi) hold every read recorded in this launch (empty: none). */
  #readLo = 0;
  #readHi = 0;

  /**
   * The shadow of a tensor of `bytes` bytes for one launch (`recordReads`: see the field); plain
   * writes noted in `stores` (lanes of one warp storing to the same bytes in one instruction do
   * not race); strong accesses' scopes in `strong`.
   */
  constructor(
    pool: ShadowPool,
    clocks: Clocks,
    bytes: number,
    recordReads: boolean,
    stores: StoreInstances,
    strong: StrongSites,
  ) {
    this.#pool = pool;
    this.#clocks = clocks;
    this.#stores = stores;
    this.#strong = strong;
    this.#bytes = bytes;
    this.recordReads = recordReads;
    this.#watched = recordReads;
  }

  /**
   * True when a read of the tensor has anything to check or record: its writers are tracked
   * (a tracked write happened), or its reads are recorded.
   */
  get watched(): boolean {
    return this.#watched;
  }

  /** True once writers are tracked (the first tracked write, or a bulk store's issue). */
  get tracksWriters(): boolean {
    return this.#writer !== undefined;
  }

  /** True when reader slots exist (reads are recorded). */
  get hasReaders(): boolean {
    return this.#r1 !== undefined;
  }

  /** Start keeping per-byte writers (and readers, when reads are recorded), if not yet. */
  trackWriters(): void {
    if (this.#writer) return;
    const { writer, epoch } = this.#pool.writers(this.#bytes);
    this.#writer = writer;
    this.#epoch = epoch;
    this.#lazy = [{ s: 0, f: writer.length, w: -1, c: 0, k: -1, o: 0 }];
    this.#cleanLo = 0;
    this.#cleanHi = 0;
    this.#watched = true;
    if (this.recordReads) {
      [this.#r1, this.#c1, this.#r2, this.#c2] = this.#pool.readers(this.#bytes);
      this.#readLo = 0;
      this.#readHi = 0;
    }
  }

  // ---------------------------------------------------------------- pending async reads

  /** True once the per-byte pending-read counts exist (see startPendingReads). */
  get hasPendingReads(): boolean {
    return this.#pendingReads !== undefined;
  }

  /**
   * Make the per-byte pending-read counts (all 0, from the pool) and let `fill` count the
   * copies in flight into them: `fill(add)` calls `add(src, len)` for each.
   */
  startPendingReads(fill: (add: (src: number, len: number) => void) => void): void {
    const made = this.#pool.pendingReads(this.#bytes);
    fill((src, len) => {
      for (let i = src, e = src + len; i < e; i++) made[i]!++;
    });
    this.#pendingReads = made;
  }

  /**
   * An async copy reading [src, src + len) is issued (`d` 1) or completed or dropped (`d` -1):
   * counted per byte once the counts exist (else nothing).
   */
  pendingRead(src: number, len: number, d: 1 | -1): void {
    const pr = this.#pendingReads;
    if (pr) for (let i = src, e = src + len; i < e; i++) pr[i]! += d;
  }

  /** The first byte of [a, a + n) a pending async copy reads (per-byte counts), or -1. */
  firstPendingRead(a: number, n: number): number {
    const pr = this.#pendingReads;
    if (pr) for (let b = a, e = a + n; b < e; b++) if (pr[b] !== 0) return b;
    return -1;
  }

  // ---------------------------------------------------------------- lazy ranges

  #fillFrom(u: GlobalEntry, lo: number, hi: number): void {
    if (lo >= hi) return;
    if (u.k < 0) this.#writer!.fill(u.w, lo, hi);
    else for (let b = lo, wr = this.#writer!; b < hi; b++) wr[b] = u.w + ((b - u.o) >> u.k);
    this.#epoch!.fill(u.c, lo, hi);
  }

  /**
   * Remove the entries' parts inside [a, e): parts outside stay entries (or are materialised when
   * shorter than GLOBAL_RANGE_MIN); with `fill` the parts inside are materialised. Returns the
   * index where an entry starting at `a` belongs.
   */
  #clear(a: number, e: number, fill: boolean): number {
    const list = this.#lazy;
    const i = firstAfter(list, a);
    let j = i;
    while (j < list.length && list[j]!.s < e) j++;
    if (i === j) return i;
    if (j === i + 1) {
      // One entry (a write inside a longer range, the usual case): it is cut in place when at
      // most one part of it stays an entry.
      const u = list[i]!;
      const lo = u.s > a ? u.s : a;
      const hi = u.f < e ? u.f : e;
      const keepLeft = u.s < lo && lo - u.s >= GLOBAL_RANGE_MIN;
      const keepRight = hi < u.f && u.f - hi >= GLOBAL_RANGE_MIN;
      if (!keepLeft || !keepRight) {
        if (u.s < lo && !keepLeft) this.#fillFrom(u, u.s, lo);
        if (fill) this.#fillFrom(u, lo, hi);
        if (hi < u.f && !keepRight) this.#fillFrom(u, hi, u.f);
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
        if (lo - u.s >= GLOBAL_RANGE_MIN) keep.push({ ...u, f: lo });
        else this.#fillFrom(u, u.s, lo);
      }
      if (fill) this.#fillFrom(u, lo, hi);
      if (hi < u.f) {
        if (u.f - hi >= GLOBAL_RANGE_MIN) keep.push({ ...u, s: hi });
        else this.#fillFrom(u, hi, u.f);
      }
    }
    list.splice(i, j - i, ...keep);
    // A kept left part precedes position `a`.
    return keep.length > 0 && keep[0]!.s < a ? i + 1 : i;
  }

  /** The entry holding all of [a, a + n), or undefined. */
  #entryAt(a: number, n: number): GlobalEntry | undefined {
    const list = this.#lazy;
    const u = list[firstAfter(list, a)];
    return u !== undefined && u.s <= a && a + n <= u.f ? u : undefined;
  }

  /** Make the per-byte arrays hold the truth over the blocks around [a, a + n). */
  #materialise(a: number, n: number): void {
    const list = this.#lazy;
    if (list.length === 0) return;
    if (a >= this.#cleanLo && a + n <= this.#cleanHi) return;
    // Arithmetic, not bitwise: tensors may exceed 2^31 bytes.
    const A = a - (a % GLOBAL_BLOCK);
    const E = Math.min(
      a + n + ((GLOBAL_BLOCK - ((a + n) % GLOBAL_BLOCK)) % GLOBAL_BLOCK),
      this.#writer!.length,
    );
    this.#clear(A, E, true);
    // No entry overlaps [A, E) now (#clear keeps only the parts outside it).
    this.#cleanLo = A;
    this.#cleanHi = E;
  }

  /**
   * Make `u` the entry of its bytes [u.s, u.f) (a write of all of them), replacing what entries
   * held there; beyond MAX_ENTRIES the lowest entry is materialised.
   */
  #addEntry(u: GlobalEntry): void {
    const list = this.#lazy;
    this.#cleanHi = 0;
    const at = this.#clear(u.s, u.f, false);
    list.splice(at, 0, u);
    if (list.length > MAX_ENTRIES) {
      const v = list.shift()!;
      this.#fillFrom(v, v.s, v.f);
    }
  }

  // ---------------------------------------------------------------- writers

  /**
   * The first write to [a, a + n) (writers tracked) not ordered before thread `t`'s access:
   * same CTA without synchronization, or any other CTA of this launch. A strong access
   * (`atomic`: an atomic, a strong load or store) at `site` (-1: a bulk reduction, relaxed.gpu)
   * does not race with an earlier strong write (`isAtomic` of its site) when the two are morally
   * strong (StrongSites.moral: each one's scope includes the other's thread). A plain store at
   * `site` (-1: a read, or no store) does not race with the store of another lane of its warp in
   * the same instance of the same store instruction (StoreInstances.same). Over an entry its one
   * record decides; then the atomic records (checkAtomics).
   */
  checkWriters(
    a: number,
    n: number,
    t: number,
    atomic: boolean,
    isAtomic: (site: number) => boolean,
    site = -1,
  ): RaceHit | undefined {
    const u = this.#entryAt(a, n);
    if (u !== undefined && u.k < 0) {
      return (
        this.#checkRecord(u.w, u.c, t, atomic, isAtomic, site, a) ??
        this.#checkAtomics(a, n, t, atomic, site)
      );
    }
    this.#materialise(a, n);
    return (
      this.#checkBytes(a, n, t, atomic, isAtomic, site) ?? this.#checkAtomics(a, n, t, atomic, site)
    );
  }

  /**
   * checkWriters for an element (fewer than GLOBAL_RANGE_MIN bytes): its bytes per byte, the
   * block around them materialised.
   */
  checkElement(
    a: number,
    n: number,
    t: number,
    atomic: boolean,
    isAtomic: (site: number) => boolean,
    site = -1,
  ): RaceHit | undefined {
    this.#materialise(a, n);
    return (
      this.#checkBytes(a, n, t, atomic, isAtomic, site) ?? this.#checkAtomics(a, n, t, atomic, site)
    );
  }

  /**
   * The store instance `site` of a plain store in (StoreInstances), or undefined: reads
   * (`site` -1), atomics, and stores outside an instance.
   */
  #instance(atomic: boolean, site: number): StoreInstances | undefined {
    return !atomic && site >= 0 && this.#stores.active ? this.#stores : undefined;
  }

  /** checkWriters over materialised bytes [a, a + n), atomic records aside. */
  #checkBytes(
    a: number,
    n: number,
    t: number,
    atomic: boolean,
    isAtomic: (site: number) => boolean,
    site: number,
  ): RaceHit | undefined {
    const st = this.#instance(atomic, site);
    const writer = this.#writer!;
    const clocks = this.#epoch!;
    const hb = this.#clocks;
    const base = hb.ctaBase;
    const lb = hb.launchBase;
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
      if (hb.ordered(w & THREAD_MASK, c, t)) continue;
      if (atomic && isAtomic(w >> THREAD_BITS) && this.#strong.moral(w, c, t, site)) continue;
      if (st?.same(w, c, t, site, b, hb.clock)) continue;
      return { other: w, clock: c };
    }
    return undefined;
  }

  /** checkWriters for bytes that all hold the one record (`w`, `c`). */
  #checkRecord(
    w: number,
    c: number,
    t: number,
    atomic: boolean,
    isAtomic: (site: number) => boolean,
    site: number,
    a: number,
  ): RaceHit | undefined {
    const hb = this.#clocks;
    if (w < 0 || c < hb.launchBase || (c >= hb.ctaBase && (w & THREAD_MASK) === t)) {
      return undefined;
    }
    if (hb.ordered(w & THREAD_MASK, c, t)) return undefined;
    if (atomic && isAtomic(w >> THREAD_BITS) && this.#strong.moral(w, c, t, site)) {
      return undefined;
    }
    if (this.#instance(atomic, site)?.same(w, c, t, site, a, hb.clock)) return undefined;
    return { other: w, clock: c };
  }

  /**
   * The atomic records of [a, a + n) beyond the writer record (AtomicShadow) not ordered before
   * thread `t`'s access: for a strong access at `site`, a plain write that atomics replaced or an
   * atomic not morally strong with it; for a plain access, an atomic concurrent with the recorded
   * one.
   */
  #checkAtomics(
    a: number,
    n: number,
    t: number,
    atomic: boolean,
    site: number,
  ): RaceHit | undefined {
    const sh = this.#atomics;
    if (sh === undefined || sh.size === 0) return undefined;
    const hb = this.#clocks;
    if (!atomic) return sh.moreHit(hb, a, n, t);
    return sh.plainHit(hb, a, n, t) ?? sh.strongHit(hb, a, n, t, site);
  }

  /**
   * Record thread `t`'s atomic write (packed `w`) of the element [a, a + n) as of its clock: the
   * records it replaces move to the tensor's AtomicShadow; recorded reads stay.
   */
  recordAtomic(
    a: number,
    n: number,
    t: number,
    w: number,
    isAtomic: (site: number) => boolean,
  ): void {
    this.#materialise(a, n);
    const sh = (this.#atomics ??= new AtomicShadow(this.#strong));
    const hb = this.#clocks;
    sh.take(hb, this.#writer!, this.#epoch!, a, n, w, hb.clock[t]!, t, isAtomic);
  }

  /** Record writer `w` at clock `c` for bytes [a, a + n) (writers tracked). */
  recordWrite(a: number, n: number, w: number, c: number): void {
    this.#stores.note(w & THREAD_MASK, a, n);
    // A plain write: the atomics' and strong loads' records of its bytes are ordered before it,
    // or reported.
    if (this.#atomics !== undefined && this.#atomics.size > 0) this.#atomics.drop(a, n);
    if (this.#loads !== undefined && this.#loads.size > 0) this.#loads.drop(a, n);
    if (n >= GLOBAL_RANGE_MIN) {
      this.#addEntry({ s: a, f: a + n, w, c, k: -1, o: 0 });
      return;
    }
    this.#materialise(a, n);
    const wr = this.#writer!;
    const ep = this.#epoch!;
    for (let b = a, e = a + n; b < e; b++) {
      wr[b] = w;
      ep[b] = c;
    }
  }

  /**
   * The first byte of [a, a + n) whose last write was a generic-proxy write of this launch by
   * the running CTA (a site `isAsync` does not name) that `fenced` (a proxy fence on the way to
   * the reader) does not order, as `{ b, w }`; undefined when none (or writers are not tracked).
   * Writes of other CTAs are races already (TX6003), those of earlier launches are ordered.
   */
  genericWriteIn(
    a: number,
    n: number,
    isAsync: (site: number) => boolean,
    fenced: (w: number, c: number) => boolean,
  ): { b: number; w: number } | undefined {
    if (!this.#writer) return undefined;
    this.#materialise(a, n);
    const wr = this.#writer;
    const ep = this.#epoch!;
    const ctaBase = this.#clocks.ctaBase;
    let pw = -2;
    let pc = 0;
    for (let b = a, e = a + n; b < e; b++) {
      const w = wr[b]!;
      const c = ep[b]!;
      if (w < 0 || (w === pw && c === pc)) continue;
      pw = w;
      pc = c;
      if (c >= ctaBase && !isAsync(w >> THREAD_BITS) && !fenced(w, c)) return { b, w };
    }
    return undefined;
  }

  // ---------------------------------------------------------------- readers

  /**
   * Record thread `t`'s read of [a, a + n) at `site` (reads recorded, writers tracked): the
   * first slot keeps a reader unordered with the next one, the second the latest such reader,
   * and a reader pushed out of the second slot while concurrent with the new one goes to the
   * byte's overflow list (the scheme of SharedShadow.onRead; the lists live for the launch).
   */
  recordRead(a: number, n: number, t: number, site: number): void {
    const r1 = this.#r1!;
    const c1 = this.#c1!;
    const r2 = this.#r2!;
    const c2 = this.#c2!;
    const hb = this.#clocks;
    const me = (site << THREAD_BITS) | t;
    const now = hb.clock[t]!;
    if (this.#readHi === 0) {
      this.#readLo = a;
      this.#readHi = a + n;
    } else {
      if (a < this.#readLo) this.#readLo = a;
      if (a + n > this.#readHi) this.#readHi = a + n;
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
        first = r < 0 || hb.ordered(r & THREAD_MASK, c, t);
      }
      if (first) {
        r1[b] = me;
        c1[b] = now;
      } else {
        // The second slot's reader, when concurrent with this one, moves to the overflow list.
        const q = r2[b]!;
        if (q >= 0 && c2[b]! >= hb.launchBase && !hb.ordered(q & THREAD_MASK, c2[b]!, t)) {
          const more = (this.#more ??= new Map());
          const list = more.get(b);
          if (list) list.push(q, c2[b]!);
          else more.set(b, [q, c2[b]!]);
        }
        r2[b] = me;
        c2[b] = now;
      }
    }
  }

  /**
   * Record thread `t`'s strong load (ld.relaxed / ld.acquire) of [a, a + n) at `site` (reads
   * recorded, writers tracked) among the tensor's strong loads (AtomicShadow.addLoad), not in the
   * reader slots: a later write not ordered after it races with it (TX6013) when plain, or
   * strong but not morally strong with it (PTX ISA, Memory Consistency Model, "Data races",
   * "Morally strong operations"). Kept for the launch, until a plain write of the bytes.
   */
  recordStrongRead(a: number, n: number, t: number, site: number): void {
    const hb = this.#clocks;
    const loads = (this.#loads ??= new AtomicShadow(this.#strong));
    loads.addLoad(hb, a, a + n, (site << THREAD_BITS) | t, hb.clock[t]!, t);
  }

  /**
   * The first recorded read of [a, a + n) not ordered before thread `t`'s write, or undefined;
   * then the first strong load not ordered before it (recordStrongRead) that a plain write
   * (`strongSite` -1) races with, or a strong write at `strongSite` is not morally strong with
   * (StrongSites.moral).
   */
  checkReaders(a: number, n: number, t: number, strongSite = -1): RaceHit | undefined {
    const loads = this.#loads;
    const hit = this.#checkSlots(a, n, t);
    if (hit !== undefined || loads === undefined || loads.size === 0) return hit;
    return loads.loadHit(this.#clocks, a, n, t, strongSite < 0 ? undefined : strongSite);
  }

  /** checkReaders over the reader slots and overflow lists (plain reads). */
  #checkSlots(a: number, n: number, t: number): RaceHit | undefined {
    const r1 = this.#r1;
    if (!r1) return undefined;
    // Only bytes inside the span of this launch's recorded reads can hold a record of it.
    const lo = a > this.#readLo ? a : this.#readLo;
    const hi = a + n < this.#readHi ? a + n : this.#readHi;
    if (lo >= hi) return undefined;
    const c1 = this.#c1!;
    const r2 = this.#r2!;
    const c2 = this.#c2!;
    const hb = this.#clocks;
    const lb = hb.launchBase;
    for (let b = lo; b < hi; b++) {
      const r = r1[b]!;
      if (r >= 0 && c1[b]! >= lb && !hb.ordered(r & THREAD_MASK, c1[b]!, t)) {
        return { other: r, clock: c1[b]! };
      }
      const q = r2[b]!;
      if (q >= 0 && c2[b]! >= lb && !hb.ordered(q & THREAD_MASK, c2[b]!, t)) {
        return { other: q, clock: c2[b]! };
      }
      const list = this.#more?.get(b);
      if (list) {
        for (let i = 0; i < list.length; i += 2) {
          if (!hb.ordered(list[i]! & THREAD_MASK, list[i + 1]!, t)) {
            return { other: list[i]!, clock: list[i + 1]! };
          }
        }
      }
    }
    return undefined;
  }

  // ---------------------------------------------------------------- runs of element stores

  /**
   * A run of stores (`count` elements of `eb` bytes, `step` bytes apart from `a`; `step` is `eb`
   * for consecutive elements) finds nothing here: no async copy reads an element (per-byte
   * counts), no atomic or strong-load record, no recorded read in the run's span. (Bulk stores in
   * flight are the caller's condition.)
   */
  quiet(a: number, count: number, eb: number, step: number): boolean {
    const pr = this.#pendingReads;
    if (pr) {
      for (let i = 0; i < count; i++) {
        for (let b = a + i * step, e = b + eb; b < e; b++) if (pr[b] !== 0) return false;
      }
    }
    if (this.#atomics !== undefined && this.#atomics.size > 0) return false;
    if (this.#loads !== undefined && this.#loads.size > 0) return false;
    const end = a + (count - 1) * step + eb;
    return !(this.#r1 && this.#readHi > this.#readLo && a < this.#readHi && this.#readLo < end);
  }

  /**
   * A run of element stores (`count` elements of 2^sh bytes from `a`, element i by thread t0 + i,
   * at `site`; quiet, writers tracked): taken when one entry holds the bytes, the threads share
   * one clock and every earlier writer is ordered before the element's thread (another CTA's
   * write of this launch never is); the run becomes the writer of its bytes (one entry naming
   * each byte's thread). Otherwise nothing is recorded (false).
   */
  writeRun(site: number, t0: number, count: number, a: number, sh: number): boolean {
    const n = count << sh;
    const hb = this.#clocks;
    if (!hb.oneClock(t0, count)) return false;
    const u = this.#entryAt(a, n);
    if (u === undefined) return false;
    if (!hb.runOrdered(t0, count, a, sh, u.w, u.k, u.o, u.c)) return false;
    const w = (site << THREAD_BITS) | t0;
    this.#addEntry({ s: a, f: a + n, w, c: hb.clock[t0]!, k: sh, o: a });
    this.#stores.noteRun(t0, count, a, 1 << sh, 1 << sh);
    return true;
  }

  /**
   * A strided run of element stores (elements 2^sh bytes each, `step` bytes apart; quiet,
   * writers tracked): taken when every earlier writer of each element is ordered before its
   * thread (another CTA's write of this launch never is); then each element's bytes record their
   * thread as writer, as the element checks would. Declining, it may have materialised the
   * blocks the element checks materialise too.
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
    const hb = this.#clocks;
    const wr = this.#writer!;
    const ep = this.#epoch!;
    for (let i = 0; i < count; i++) {
      const t = t0 + i;
      const b0 = a + i * step;
      this.#materialise(b0, eb);
      for (let b = b0, e = b0 + eb; b < e; b++) {
        const w = wr[b]!;
        if (w < 0) continue;
        const c = ep[b]!;
        if (c < hb.launchBase || (c >= hb.ctaBase && (w & THREAD_MASK) === t)) continue;
        if (!hb.ordered(w & THREAD_MASK, c, t)) return false;
      }
    }
    const clock = hb.clock;
    for (let i = 0; i < count; i++) {
      const t = t0 + i;
      const w = (site << THREAD_BITS) | t;
      const now = clock[t]!;
      for (let b = a + i * step, e = b + eb; b < e; b++) {
        wr[b] = w;
        ep[b] = now;
      }
    }
    this.#stores.noteRun(t0, count, a, eb, step);
    return true;
  }
}
