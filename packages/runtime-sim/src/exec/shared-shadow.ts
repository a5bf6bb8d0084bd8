/**
 * The shadow of a CTA's shared memory (of every CTA window of a cluster): the race rules over the
 * per-byte records of SharedBytes (exec/shared-bytes.ts), with exec/clocks.ts deciding what is
 * ordered. The checks (exec/hazards.ts), the access runs (exec/access-runs.ts) and the units
 * (cp.async, bulk copies, mbarriers) read and change the records only through the methods here
 * and SharedBytes's.
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
 * lists (onBarrier). Atomics keep their own records (exec/atomic-shadow.ts), and so do strong
 * loads (recordStrongRead: a second AtomicShadow, since a strong load does not race with a later
 * strong write it is morally strong with, which the reader slots cannot tell).
 *
 * New access paths (ldmatrix / stmatrix reads and writes, TMA tiles) plug in through onRead /
 * onWrite (record false at an async issue, recordWrite at its completion, recordAsyncProxyWrite
 * for async-proxy writes guarded elsewhere) and unfenced (async-proxy reads of shared memory).
 *
 * Costs: an access costs a few array reads per byte; a bulk copy's bytes are decided on their
 * lazy range in O(1).
 */
import { AtomicShadow } from "./atomic-shadow.js";
import type { Clocks } from "./clocks.js";
import { THREAD_BITS, THREAD_MASK, type RaceHit, type WriteHit } from "./packed.js";
import { SharedBytes, UNIFORM_MIN, freshEntry, type Uniform } from "./shared-bytes.js";
import type { StoreInstances } from "./store-instances.js";
import type { StrongSites } from "./strong-sites.js";

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

/** What readPlain returns when the read is not its case (nothing was checked or recorded). */
export const NOT_PLAIN: RaceHit = Object.freeze({ other: -1, clock: -1 });

/** The shadow of one Machine's shared memory (see the file comment). */
export class SharedShadow extends SharedBytes {
  readonly #clocks: Clocks;
  /** Stores of one instruction by lanes of one warp, which do not race (StoreInstances). */
  readonly #stores: StoreInstances;
  /** The strong sites' scopes and sizes (StrongSites: when two strong accesses race). */
  readonly #strong: StrongSites;

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
  readonly #atomics: AtomicShadow;

  /**
   * The strong loads (ld.relaxed / ld.acquire) of shared bytes since the bytes' last plain write
   * (AtomicShadow.addLoad): a later write checks them, a read does not. Cleared by cta_sync.
   */
  readonly #loads: AtomicShadow;

  /**
   * Atomic and strong-load records beyond the writer records (0 in a CTA with neither since its
   * last cta_sync).
   */
  get atomicRecords(): number {
    return this.#atomics.size + this.#loads.size;
  }

  /**
   * The shadow of `sharedBytes` bytes, its accesses ordered by `clocks`; plain writes noted in
   * `stores` (lanes of one warp storing to the same bytes in one instruction do not race);
   * strong accesses' scopes in `strong`.
   */
  constructor(clocks: Clocks, sharedBytes: number, stores: StoreInstances, strong: StrongSites) {
    super(sharedBytes);
    this.#clocks = clocks;
    this.#stores = stores;
    this.#strong = strong;
    this.#atomics = new AtomicShadow(strong);
    this.#loads = new AtomicShadow(strong);
  }

  // ---------------------------------------------------------------- CTA start, cta_sync

  /**
   * A new CTA: the bytes' CTA-start records (SharedBytes.resetBytes, `guarded` and `uniform` as
   * there), no overflow reader, no atomic or strong-load record.
   */
  beginCta(guarded: boolean, uniform: boolean): void {
    this.resetBytes(guarded, uniform);
    if (this.#more.size > 0) this.#more.clear();
    this.#atomics.clear();
    this.#loads.clear();
  }

  /**
   * cta_sync: every read, strong load and atomic so far is ordered before everything after
   * (Clocks.onBarrier).
   */
  onBarrier(): void {
    // Map.prototype.clear allocates a new table even for an empty map.
    if (this.#more.size > 0) this.#more.clear();
    this.#atomics.clear();
    this.#loads.clear();
  }

  /**
   * Entry `u` becomes the records of its bytes [u.s, u.f), a write of all of them (see
   * recordWrite): entries there are cut (their parts outside kept), the bytes' overflow readers,
   * atomic and strong-load records dropped. No cp.async may target the bytes (the caller's
   * condition).
   */
  #setEntry(u: Uniform): void {
    const a = u.s;
    const n = u.f - u.s;
    this.#dropMore(a, n);
    if (this.#atomics.size > 0) this.#atomics.drop(a, n);
    if (this.#loads.size > 0) this.#loads.drop(a, n);
    this.replaceEntries(u);
  }

  /**
   * The last write of byte `b` when it is not ordered before thread `t`'s current point, as
   * `{ other, clock }` (the packed writer and its clock); undefined when it is ordered or the
   * byte was never written.
   */
  unorderedWrite(b: number, t: number): RaceHit | undefined {
    this.materialise(b, 1);
    const w = this.wr[b]!;
    if (w < 0) return undefined;
    const c = this.wc[b]!;
    return this.#clocks.ordered(w & THREAD_MASK, c, t) ? undefined : { other: w, clock: c };
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
    const u = this.uniformAt(a, n);
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
    return this.#lastWriteHit(t, a, n, undefined, () =>
      this.#atomics.moreHit(this.#clocks, a, n, t),
    );
  }

  /**
   * The walk writeHit and strongReadHit share: the first last-writer record of shared bytes
   * [a, a + n) of another thread, not ordered before thread `t`'s current point (an async-proxy
   * write, stamp 0, aside) and, with a `site` (a strong read's), not morally strong with it.
   * Bytes under a lazy range (plain writes: atomics are never ranges) end there; otherwise the
   * bytes are materialised and, with no hit among them, `beside()` checks the atomics kept
   * beside the records.
   */
  #lastWriteHit(
    t: number,
    a: number,
    n: number,
    site: number | undefined,
    beside: () => RaceHit | undefined,
  ): RaceHit | undefined {
    const clocks = this.#clocks;
    const strong = this.#strong;
    const hits = (w: number, c: number): boolean =>
      w >= 0 &&
      (w & THREAD_MASK) !== t &&
      c !== 0 &&
      !clocks.ordered(w & THREAD_MASK, c, t) &&
      (site === undefined || !strong.moral(w, c, t, site));
    const u = this.uniformAt(a, n);
    if (u !== undefined) return hits(u.wr, u.wc) ? { other: u.wr, clock: u.wc } : undefined;
    this.materialise(a, n);
    const wr = this.wr;
    const wc = this.wc;
    for (let b = a; b < a + n; b++)
      if (hits(wr[b]!, wc[b]!)) return { other: wr[b]!, clock: wc[b]! };
    return beside();
  }

  /**
   * A read of an element's bytes [a, a + n) by thread `t` at `site` in the common case: every
   * byte written, nothing pending or guarding it, no lazy range over it (plainBytes). Then the
   * race check and record of onReadBytes, returning its hit (or undefined); otherwise NOT_PLAIN,
   * with nothing recorded (the caller takes the general path).
   */
  readPlain(t: number, site: number, a: number, n: number): RaceHit | undefined {
    if (!this.plainBytes(a, n)) return NOT_PLAIN;
    return this.onReadBytes(t, site, a, n);
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
    const wr = this.wr;
    const wc = this.wc;
    const r1 = this.r1;
    const c1 = this.c1;
    const me = (site << THREAD_BITS) | t;
    const now = clocks.clock[t]!;
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
    const q = this.r2[b]!;
    if (
      q >= 0 &&
      (q & THREAD_MASK) !== t &&
      !this.#clocks.ordered(q & THREAD_MASK, this.c2[b]!, t)
    ) {
      const list = this.#more.get(b);
      if (list) list.push(q, this.c2[b]!);
      else this.#more.set(b, [q, this.c2[b]!]);
    }
    this.r2[b] = me;
    this.c2[b] = now;
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
   * `{ other, clock, read }` (read: write-after-read, else write-after-write); a strong write
   * (`atomic`: an atomic, a strong store) at `site` does not race with an earlier strong write
   * (`isAtomic` of its site) morally strong with it (StrongSites.moral: each one's scope includes
   * the other's thread and the two have one size: here only CTAs of a cluster, or two sizes,
   * fail it), and a plain write does not
   * race with the write of another lane of its warp in the same instance of the same store
   * instruction (StoreInstances.same). With `record` false only
   * checks (an async copy's issue: its write lands later, see recordWrite). A strong write is also
   * checked against the plain write its byte's atomics replaced and the atomics not morally
   * strong with it, a plain write against every atomic concurrent with the recorded one
   * (AtomicShadow); a strong write is recorded by recordAtomic.
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
    const wr = this.wr;
    const wc = this.wc;
    let hit: WriteHit | undefined;
    // Atomics are elements, never lazy uniform ranges (materialised below).
    const u = atomic ? undefined : this.uniformAt(a, n);
    // Plain stores in an instance of a store instruction (StoreInstances).
    const st = !atomic && this.#stores.active ? this.#stores : undefined;
    if (u !== undefined) {
      // Over a uniform range its entry decides.
      const w = u.wr;
      if (w >= 0 && (w & THREAD_MASK) !== t && !clocks.ordered(w & THREAD_MASK, u.wc, t)) {
        if (
          !this.#exempt(atomic, isAtomic, w, u.wc, t, site) &&
          !st?.same(w, u.wc, t, site, a, clocks.clock)
        )
          hit = { other: w, clock: u.wc, read: false };
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
      if (!hit && this.#loads.size > 0) hit = this.#loadHit(a, n, t, atomic, site);
      if (record) this.recordWrite(t, site, a, n);
      return hit;
    }
    this.materialise(a, n);
    // Bytes outside the changed range hold CTA-start records: nothing to race with there.
    const lo = a > this.touchLo ? a : this.touchLo;
    const hi = a + n < this.touchHi ? a + n : this.touchHi;
    for (let b = lo; b < hi && hit === undefined; b++) {
      const w = wr[b]!;
      if (w >= 0 && (w & THREAD_MASK) !== t && !clocks.ordered(w & THREAD_MASK, wc[b]!, t)) {
        if (
          !this.#exempt(atomic, isAtomic, w, wc[b]!, t, site) &&
          !st?.same(w, wc[b]!, t, site, b, clocks.clock)
        )
          hit = { other: w, clock: wc[b]!, read: false };
      }
      if (hit !== undefined) break;
      const r = this.r1[b]!;
      if (r >= 0 && (r & THREAD_MASK) !== t && !clocks.ordered(r & THREAD_MASK, this.c1[b]!, t)) {
        hit = { other: r, clock: this.c1[b]!, read: true };
        break;
      }
      const r2 = this.r2[b]!;
      if (
        r2 >= 0 &&
        (r2 & THREAD_MASK) !== t &&
        !clocks.ordered(r2 & THREAD_MASK, this.c2[b]!, t)
      ) {
        hit = { other: r2, clock: this.c2[b]!, read: true };
      }
      if (hit === undefined && this.#more.size > 0) hit = this.#moreHit(b, t);
    }
    if (hit === undefined && this.#atomics.size > 0) {
      const h = atomic
        ? (this.#atomics.plainHit(clocks, a, n, t) ??
          this.#atomics.strongHit(clocks, a, n, t, site))
        : this.#atomics.moreHit(clocks, a, n, t);
      if (h) hit = { ...h, read: false };
    }
    if (hit === undefined && this.#loads.size > 0) hit = this.#loadHit(a, n, t, atomic, site);
    if (record) {
      if (atomic) this.recordAtomic(t, site, a, n, isAtomic);
      else this.recordWrite(t, site, a, n);
    }
    return hit;
  }

  /**
   * The first strong load of [a, a + n) (the loads' AtomicShadow) that thread `t`'s write races
   * with, as a read: one not ordered before it and, for a strong write (`atomic`) at `site`, not
   * morally strong with it (StrongSites.moral); undefined when none.
   */
  #loadHit(a: number, n: number, t: number, atomic: boolean, site: number): WriteHit | undefined {
    const h = this.#loads.loadHit(this.#clocks, a, n, t, atomic ? site : undefined);
    return h ? { ...h, read: true } : undefined;
  }

  /**
   * True when a strong write (`atomic`) at `site` by thread `t` does not race with the earlier
   * write packed `w` at clock `c` (unordered): that one is strong too (`isAtomic`) and the two
   * are morally strong (StrongSites.moral).
   */
  #exempt(
    atomic: boolean,
    isAtomic: (site: number) => boolean,
    w: number,
    c: number,
    t: number,
    site: number,
  ): boolean {
    return atomic && isAtomic(w >> THREAD_BITS) && this.#strong.moral(w, c, t, site);
  }

  /**
   * A strong read (ld.relaxed / ld.acquire) of shared bytes [a, a + n) by thread `t` at `site`:
   * the first earlier write not ordered before it that is plain (an async-proxy write, stamp 0,
   * aside) or strong but not morally strong with it (StrongSites.moral), a plain write that
   * atomics replaced, or an atomic beside the writer record not morally strong with it
   * (AtomicShadow); undefined when none. Records nothing (recordStrongRead records the load).
   */
  strongReadHit(t: number, site: number, a: number, n: number): RaceHit | undefined {
    const at = this.#atomics;
    return this.#lastWriteHit(t, a, n, site, () =>
      at.size === 0
        ? undefined
        : (at.plainHit(this.#clocks, a, n, t) ?? at.strongHit(this.#clocks, a, n, t, site)),
    );
  }

  /**
   * Record thread `t`'s strong load (ld.relaxed / ld.acquire) of [a, a + n) at `site` as of now,
   * among the bytes' strong loads (AtomicShadow.addLoad), not in the reader slots: a later write
   * not ordered after it races with it (write-after-read, TX6013) when plain, or strong but not
   * morally strong with it (PTX ISA, Memory Consistency Model, "Data races", "Morally strong
   * operations"). Kept until a plain write of the bytes or cta_sync.
   */
  recordStrongRead(t: number, site: number, a: number, n: number): void {
    const clocks = this.#clocks;
    this.#loads.addLoad(clocks, a, a + n, (site << THREAD_BITS) | t, clocks.clock[t]!, t);
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
    this.materialise(a, n);
    this.touch(a, a + n);
    const w = (site << THREAD_BITS) | t;
    const clocks = this.#clocks;
    this.#atomics.take(clocks, this.wr, this.wc, a, n, w, clocks.clock[t]!, t, isAtomic);
    this.bk.fill(0, a, a + n);
  }

  /**
   * Record thread `t`'s write of [a, a + n) at `site` as of now: readers and strong loads of the
   * phase end, and so do the bytes' bulk guards (an ordinary write by a thread that passed the
   * guard: BulkUnit).
   */
  recordWrite(t: number, site: number, a: number, n: number): void {
    const w = (site << THREAD_BITS) | t;
    const now = this.#clocks.clock[t]!;
    this.#stores.note(t, a, n);
    this.#dropMore(a, n);
    if (this.#atomics.size > 0) this.#atomics.drop(a, n);
    if (this.#loads.size > 0) this.#loads.drop(a, n);
    const u = this.uniformAt(a, n);
    if (u !== undefined) {
      const v = this.isolate(u, a, n);
      v.wr = w;
      v.wc = now;
      v.r1 = -1;
      v.r2 = -1;
      v.bk = 0;
      return;
    }
    this.materialise(a, n);
    this.touch(a, a + n);
    if (n <= 32) {
      // Small ranges: a loop beats five calls of fill.
      const wr = this.wr;
      const wc = this.wc;
      const r1 = this.r1;
      const r2 = this.r2;
      const bk = this.bk;
      for (let b = a, e = a + n; b < e; b++) {
        wr[b] = w;
        wc[b] = now;
        r1[b] = -1;
        r2[b] = -1;
        bk[b] = 0;
      }
      return;
    }
    this.wr.fill(w, a, a + n);
    this.wc.fill(now, a, a + n);
    this.r1.fill(-1, a, a + n);
    this.r2.fill(-1, a, a + n);
    this.bk.fill(0, a, a + n);
  }

  /**
   * The race records of a landed cp.async chunk, shared bytes [a, a + n) written by thread `t`
   * at `site` as of clock `now` (recordWrite's records, in one loop over the chunk's bytes,
   * materialised first so any lazy range is cut around them); the bytes' overflow readers, atomic
   * and strong-load records stay (a later access is checked against them).
   */
  recordLanded(t: number, site: number, a: number, n: number, now: number): void {
    this.materialise(a, n);
    const w = (site << THREAD_BITS) | t;
    const wr = this.wr;
    const wc = this.wc;
    const r1 = this.r1;
    const r2 = this.r2;
    this.touch(a, a + n);
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
    if (this.#loads.size > 0) this.#loads.drop(a, n);
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

  /**
   * The first shared byte of [a, a + n) whose last write was a generic-proxy write with no
   * fence.proxy.async between it and thread `t`'s async-proxy access (Clocks.sharedFenced; -1
   * when none).
   */
  unfenced(a: number, n: number, t: number): number {
    const clocks = this.#clocks;
    const u = this.uniformAt(a, n);
    if (u !== undefined) {
      const w = u.wr;
      return w >= 0 && u.wc >= clocks.ctaBase && !clocks.sharedFenced(w, u.wc, t) ? a : -1;
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
    const u = this.entryAt(a, n);
    if (u === undefined || u.wr < 0 || u.bk !== 0) return false;
    if (!clocks.oneClock(t0, count)) return false;
    if (!clocks.runOrdered(t0, count, a, sh, u.wr, u.wk, u.wo, u.wc)) return false;
    if (!clocks.runOrdered(t0, count, a, sh, u.r1, u.rk, u.ro, u.c1)) return false;
    const v = this.isolate(u, a, n);
    v.r1 = (site << THREAD_BITS) | t0;
    v.rk = sh;
    v.ro = a;
    v.c1 = clocks.clock[t0]!;
    return true;
  }

  /**
   * A run of shared stores (see readRun): taken when the bytes are fresh or one entry holds them,
   * nothing is pending or guarded, no overflow reader, atomic or strong-load record exists, the
   * threads share one clock and every earlier writer and reader is ordered before the element's
   * thread: the run becomes the writer of its bytes. (Pending bulk stores and wgmma operands are
   * the caller's conditions.)
   */
  writeRun(site: number, t0: number, count: number, a: number, sh: number): boolean {
    const n = count << sh;
    if (n < UNIFORM_MIN || this.atomicRecords > 0 || this.#more.size > 0) return false;
    const clocks = this.#clocks;
    if (!clocks.oneClock(t0, count)) return false;
    const u = this.entryAt(a, n);
    if (u !== undefined) {
      if (u.bk !== 0) return false;
      if (!clocks.runOrdered(t0, count, a, sh, u.wr, u.wk, u.wo, u.wc)) return false;
      if (!clocks.runOrdered(t0, count, a, sh, u.r1, u.rk, u.ro, u.c1)) return false;
      if (!clocks.runOrdered(t0, count, a, sh, u.r2, -1, 0, u.c2)) return false;
      writeRecords(this.isolate(u, a, n), site, t0, a, sh, clocks.clock[t0]!);
      this.#stores.noteRun(t0, count, a, 1 << sh, 1 << sh);
      return true;
    }
    if (!this.fresh(a, n) || !this.idle(a, n)) return false;
    const v = freshEntry(a, a + n);
    writeRecords(v, site, t0, a, sh, clocks.clock[t0]!);
    this.addEntry(v);
    this.#stores.noteRun(t0, count, a, 1 << sh, 1 << sh);
    return true;
  }

  /**
   * Shared bytes [a, a + n) become a run's write (thread t0's 2^sh bytes from `a`, then t0 + 1's,
   * ...) at `site` as of clock `now`, whatever they held (recordWrite's records for each
   * thread's bytes, as one entry): a cp.async completion. Returns false, recording nothing,
   * when the bytes are too few for an entry, a cp.async still targets one of them (`inFlight`
   * false: the caller knows none is in flight anywhere), or the CTA has overflow readers, atomic
   * or strong-load records (which a landing keeps, see recordLanded).
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
    // A landing keeps the bytes' overflow readers, atomic and strong-load records (a later access
    // is checked against them); an entry would drop them.
    if (n < UNIFORM_MIN || this.#more.size > 0 || this.atomicRecords > 0) return false;
    const pend = this.pend;
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
    if (this.uni.length > 0 && this.overlapsEntry(a, span)) return false;
    const clocks = this.#clocks;
    const pend = this.pend;
    const wr = this.wr;
    const wc = this.wc;
    const bk = this.bk;
    const r1 = this.r1;
    const c1 = this.c1;
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
      this.touch(b0, b0 + eb);
      for (let b = b0, e = b0 + eb; b < e; b++) {
        r1[b] = me;
        c1[b] = now;
      }
    }
    return true;
  }

  /**
   * A strided run of shared stores (see readStrided): taken when no lazy entry lies over the
   * bytes, no cp.async is pending and no bulk copy guards them, no overflow reader, atomic or
   * strong-load record exists, and every earlier writer and reader of each element is ordered
   * before its thread; then each element's bytes record their thread as writer with no reader, as
   * the element checks would. (Pending bulk stores and wgmma operands are the caller's conditions.)
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
    if (this.atomicRecords > 0 || this.#more.size > 0) return false;
    const span = (count - 1) * step + eb;
    if (this.uni.length > 0 && this.overlapsEntry(a, span)) return false;
    const clocks = this.#clocks;
    const pend = this.pend;
    const wr = this.wr;
    const wc = this.wc;
    const bk = this.bk;
    const r1 = this.r1;
    const c1 = this.c1;
    const r2 = this.r2;
    const c2 = this.c2;
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
      this.touch(b0, b0 + eb);
      for (let b = b0, e = b0 + eb; b < e; b++) {
        wr[b] = w;
        wc[b] = now;
        r1[b] = -1;
        r2[b] = -1;
      }
    }
    this.#stores.noteRun(t0, count, a, eb, step);
    return true;
  }
}
