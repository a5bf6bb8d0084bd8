import type { Clocks } from "./clocks.js";
import { THREAD_BITS, THREAD_MASK, type RaceHit } from "./packed.js";
import type { StrongSites } from "./strong-sites.js";

/**
 * The race records atomics need beyond a byte's last-writer record, for shared memory
 * (SharedShadow) and for each global tensor (TensorShadow); only those two shadows call it, with
 * their own writer arrays (take). "Atomics" here are the strong writes (atom, red, st.relaxed /
 * st.release, bulk reductions: StrongSites).
 *
 * Rule (PTX ISA, Memory Consistency Model, "Data races"): two conflicting accesses (one a write)
 * that happens-before does not order are a data race unless they are morally strong: both strong,
 * each one's scope including the other's thread, overlapping completely (StrongSites.moral). So
 * two atomics of one word race when a scope is too narrow (`atom.cta` of two CTAs), and each
 * atomic races with every unordered plain load or store of its bytes.
 *
 * The last-writer record alone (FastTrack's epoch) summarises a byte's writes only when every
 * later write would race with an access that raced with an earlier one. Atomics break that twice:
 * - a plain write whose record an atomic replaces still races with later atomics of threads it
 *   is not ordered before (thread 0 initialises a counter, then every thread adds to it with no
 *   barrier between): `plain` keeps it until a plain write of the byte;
 * - atomics of different threads are concurrent with each other, so they form a set, like reads:
 *   an atomic that a later atomic pushes out of the writer record moves to `more` when the two
 *   are concurrent, so a plain access ordered after one of them but not another is still a race,
 *   and so is a strong access not morally strong with one of them (strongHit). One ordered
 *   before the later atomic moves there too unless the later one stands for it (its thread's CTA,
 *   a scope no wider, the same size: StrongSites.dominates), since an access morally strong with
 *   the later one may not be with it (`atom.cta` then `atom.gpu` in one thread, then `atom.gpu`
 *   of another CTA).
 * Atomic writes leave the byte's readers in place (a plain read races with any later unordered
 * atomic, whichever atomics came between). Each time a list of `more` doubles it drops the
 * entries ordered before the thread pushing that its atomic stands for, all but the latest entry
 * of each thread and kind of site (scope and size: the later one of a thread stands for its
 * earlier one), and all but the latest entry of other CTAs per kind of site, PE, and whether the
 * pushing thread acquired it (the others are unordered alike with every thread of this CTA, but
 * for what its threads acquired, and morally strong with the same accesses), so it stays within
 * about twice one entry per thread of the CTA and kind of site, at amortised O(1) per atomic. The
 * atomics of other CTAs the pushing thread acquired stay (one per kind): its atomic stands for
 * them only towards plain accesses. Each list keeps a summary
 * (its entries' narrowest scope and common size, CTA and earliest clock) so that a strong access
 * morally strong with all of them skips the list in O(1) (the hot counter of one CTA, or gpu-scope
 * atomics across CTAs).
 *
 * Strong loads (ld.relaxed / ld.acquire) are a set of the same kind: a second AtomicShadow of each
 * shadow keeps them in `more` (addLoad), with the same pruning, so that a later write is checked
 * against every one not ordered before it (moreHit for a plain write, strongHit for a strong one:
 * a plain read's reader slots know no moral strength, so a strong load never takes one). Reads do
 * not consult it; a plain write of the bytes drops them (drop), cta_sync clears shared memory's.
 */
export class AtomicShadow {
  readonly #strong: StrongSites;
  /** Byte → `[packed, clock]` of the plain write an atomic's record replaced. */
  readonly plain = new Map<number, number[]>();
  /**
   * First byte of a run → the atomics concurrent with a later atomic of the bytes [first, end)
   * (an atomic's element: at most MAX_ATOMIC bytes), or that a later one does not stand for.
   */
  readonly more = new Map<number, Concurrent>();
  /** Scratch of prune: the (thread, kind of site) pairs seen. */
  readonly #seen = new Set<number>();
  /**
   * Of every atomic put in `more` since the last clear: the narrowest scope (4: none yet), and
   * the set of sizes (bit 1 << bytes), so that strongHit skips the lists at once when all of them
   * are morally strong with any access of its scope and size.
   */
  #lowScope = 4;
  #sizes = 0;

  /** The atomic records of a shadow whose strong sites are `strong`. */
  constructor(strong: StrongSites) {
    this.#strong = strong;
  }

  get size(): number {
    return this.plain.size + this.more.size;
  }

  /** Forget every record (CTA start, cta_sync); maps already empty are left as they are. */
  clear(): void {
    // Map.prototype.clear allocates a new table even for an empty map.
    if (this.plain.size > 0) this.plain.clear();
    if (this.more.size > 0) this.more.clear();
    this.#lowScope = 4;
    this.#sizes = 0;
  }

  /**
   * Thread `t`'s atomic at `site` replaces the writer record (`w`, `c`) of bytes [b, e): keep a
   * plain write (as `plain`, per byte), or an atomic not ordered before `t` or that `t`'s does not
   * stand for (in `more`, at `b`).
   */
  displaced(
    clocks: Clocks,
    b: number,
    e: number,
    w: number,
    c: number,
    t: number,
    site: number,
    isAtomic: (site: number) => boolean,
  ): void {
    // Never written in this launch, an earlier launch, or the async proxy (stamp 0): ordered.
    if (w < 0 || c < clocks.launchBase) return;
    if (!isAtomic(w >> THREAD_BITS)) {
      for (let i = b; i < e; i++) this.plain.set(i, [w, c]);
      return;
    }
    if (clocks.ordered(w & THREAD_MASK, c, t) && this.#strong.dominates(site, t, w, c)) return;
    this.#keep(clocks, b, e, w, c, t, site, false);
  }

  /**
   * Keep thread `t`'s strong load at `site` (packed `w`, clock `c`: now) of bytes [b, e) in
   * `more`, the records of a shadow of strong loads (SharedShadow, TensorShadow): later writes
   * check it as moreHit (a plain write) or strongHit (a strong write) do, reads never. The list's
   * entries the load stands for (StrongSites.dominates: its own earlier loads at a scope no
   * narrower, as a spin loop makes) are pruned before it is pushed, as an atomic's are.
   */
  addLoad(clocks: Clocks, b: number, e: number, w: number, c: number, t: number): void {
    this.#keep(clocks, b, e, w, c, t, w >> THREAD_BITS, true);
  }

  /**
   * Put (`w`, `c`, end `e`) into the list of `more` at `b`, pruned for thread `t`'s access at
   * `site` when the list doubled since its last pruning (amortised O(1) per record; a hot
   * counter's list stays within twice the entries not ordered before the thread): after the push
   * for a displaced atomic, before it for `t`'s own load (`own`), which pruning would drop as a
   * record its access stands for.
   */
  #keep(
    clocks: Clocks,
    b: number,
    e: number,
    w: number,
    c: number,
    t: number,
    site: number,
    own: boolean,
  ): void {
    const strong = this.#strong;
    const scope = strong.scopeOf(w >> THREAD_BITS);
    if (scope < this.#lowScope) this.#lowScope = scope;
    this.#sizes |= 1 << strong.bytesOf(w >> THREAD_BITS);
    const entry = this.more.get(b);
    if (!entry) {
      this.more.set(b, newConcurrent(strong, w, c, e));
      return;
    }
    const list = entry.list;
    if (own && list.length + 3 >= 2 * entry.kept) {
      this.#prune(clocks, entry, t, site);
      if (list.length === 0) {
        this.more.set(b, newConcurrent(strong, w, c, e));
        return;
      }
    }
    list.push(w, c, e);
    note(strong, entry, w, c);
    if (!own && list.length >= 2 * entry.kept) this.#prune(clocks, entry, t, site);
  }

  /**
   * Thread `t`'s atomic write (packed `w`, clock `c`) of [a, a + n) takes the writer records
   * `wr`/`wc` (shared memory's or a tensor's): each run of equal records it replaces (the bytes
   * of one earlier write come in runs) goes to `displaced` first; readers stay.
   */
  take(
    clocks: Clocks,
    wr: Int32Array,
    wc: Int32Array,
    a: number,
    n: number,
    w: number,
    c: number,
    t: number,
    isAtomic: (site: number) => boolean,
  ): void {
    const site = w >> THREAD_BITS;
    let s = a;
    for (let b = a + 1; b <= a + n; b++) {
      if (b === a + n || wr[b] !== wr[s] || wc[b] !== wc[s]) {
        this.displaced(clocks, s, b, wr[s]!, wc[s]!, t, site, isAtomic);
        s = b;
      }
    }
    wr.fill(w, a, a + n);
    wc.fill(c, a, a + n);
  }

  /** Forget bytes [a, a + n): a plain write (ordered after them, or reported) replaced them. */
  drop(a: number, n: number): void {
    const plain = this.plain;
    if (plain.size > 0) for (let b = a; b < a + n; b++) plain.delete(b);
    const more = this.more;
    if (more.size === 0) return;
    for (let k = a; k < a + n; k++) {
      const entry = more.get(k);
      if (!entry) continue;
      const list = entry.list;
      let kept = 0;
      for (let i = 0; i < list.length; i += 3) {
        if (list[i + 2]! <= a + n) continue;
        list[kept++] = list[i]!;
        list[kept++] = list[i + 1]!;
        list[kept++] = list[i + 2]!;
      }
      list.length = kept;
      if (kept === 0) more.delete(k);
      else summarise(this.#strong, entry);
    }
  }

  /** For an atomic of thread `t` on [a, a + n): the first replaced plain write not ordered before it. */
  plainHit(clocks: Clocks, a: number, n: number, t: number): RaceHit | undefined {
    if (this.plain.size === 0) return undefined;
    for (let b = a; b < a + n; b++) {
      const r = this.plain.get(b);
      if (r && !ordered(clocks, r[0]!, r[1]!, t)) return { other: r[0]!, clock: r[1]! };
    }
    return undefined;
  }

  /** For a plain access of thread `t` to [a, a + n): the first atomic in `more` not ordered before it. */
  moreHit(clocks: Clocks, a: number, n: number, t: number): RaceHit | undefined {
    if (this.more.size === 0) return undefined;
    for (let k = a - MAX_ATOMIC + 1; k < a + n; k++) {
      const list = this.more.get(k)?.list;
      if (!list) continue;
      for (let i = 0; i < list.length; i += 3) {
        if (list[i + 2]! > a && !ordered(clocks, list[i]!, list[i + 1]!, t)) {
          return { other: list[i]!, clock: list[i + 1]! };
        }
      }
    }
    return undefined;
  }

  /**
   * For thread `t`'s write of [a, a + n) against the strong loads of a loads' shadow (addLoad):
   * a plain write (`site` undefined) races with any not ordered before it (moreHit), a strong
   * one at `site` with those it is not morally strong with too (strongHit).
   */
  loadHit(
    clocks: Clocks,
    a: number,
    n: number,
    t: number,
    site: number | undefined,
  ): RaceHit | undefined {
    return site === undefined
      ? this.moreHit(clocks, a, n, t)
      : this.strongHit(clocks, a, n, t, site);
  }

  /**
   * For a strong access of thread `t` at `site` (-1: a bulk reduction) to [a, a + n): the first
   * atomic in `more` neither ordered before it nor morally strong with it (StrongSites.moral).
   * A list whose summary shows every entry morally strong with the access is skipped.
   */
  strongHit(clocks: Clocks, a: number, n: number, t: number, site: number): RaceHit | undefined {
    if (this.more.size === 0) return undefined;
    const strong = this.#strong;
    const scope = strong.scopeOf(site);
    const bytes = strong.bytesOf(site);
    // Every atomic kept is of a scope that includes every thread, and of this size (or any).
    const lo = scope < this.#lowScope ? scope : this.#lowScope;
    if (lo >= strong.widest && (bytes === 0 || (this.#sizes & ~(1 | (1 << bytes))) === 0)) {
      return undefined;
    }
    for (let k = a - MAX_ATOMIC + 1; k < a + n; k++) {
      const entry = this.more.get(k);
      if (!entry) continue;
      if (allMoral(clocks, strong, entry, t, scope, bytes)) continue;
      const list = entry.list;
      for (let i = 0; i < list.length; i += 3) {
        const q = list[i]!;
        const qc = list[i + 1]!;
        if (list[i + 2]! > a && !strong.moral(q, qc, t, site) && !ordered(clocks, q, qc, t)) {
          return { other: q, clock: qc };
        }
      }
    }
    return undefined;
  }

  /**
   * Drop the entries of `entry` that thread `t`'s atomic at `site` stands for (ordered before it
   * and StrongSites.dominates), all but the latest entry of each thread of this CTA and kind of
   * site, and all but one entry of other CTAs per scope and size; then its summary anew.
   */
  #prune(clocks: Clocks, entry: Concurrent, t: number, site: number): void {
    const strong = this.#strong;
    const list = entry.list;
    const seen = this.#seen;
    seen.clear();
    // From the latest entry back: the first of each kind is the one kept.
    let kept = list.length;
    for (let i = list.length - 3; i >= 0; i -= 3) {
      const q = list[i]!;
      const qc = list[i + 1]!;
      const s = q >> THREAD_BITS;
      const kind = strong.scopeOf(s) + 4 * strong.bytesOf(s);
      let key: number;
      if (clocks.otherCta(qc)) {
        // Other CTAs: one entry per scope and size (and PE), ordered before t or not, stands for
        // the others (t's atomic does not stand for one ordered before it: another CTA's).
        const before = clocks.ordered(q & THREAD_MASK, qc, t) ? 1 : 0;
        key = -1 - (kind + 256 * (2 * strong.peOf(q & THREAD_MASK) + before));
      } else {
        if (clocks.ordered(q & THREAD_MASK, qc, t) && strong.dominates(site, t, q, qc)) continue;
        key = (q & THREAD_MASK) * 256 + kind;
      }
      if (seen.has(key)) continue;
      seen.add(key);
      list[--kept] = list[i + 2]!;
      list[--kept] = qc;
      list[--kept] = q;
    }
    list.splice(0, kept);
    entry.kept = list.length;
    // A load's pruning (before its push) may leave nothing to summarise.
    if (list.length > 0) summarise(strong, entry);
  }
}

/**
 * The atomics of `more` at one first byte: flat `[packed, clock, end, ...]`, and a summary of
 * them (allMoral): the narrowest scope, the common size (-1: mixed), the common CTA rank (-1:
 * mixed) and the earliest clock.
 */
interface Concurrent {
  readonly list: number[];
  /** The list's length after its last pruning (24 before the first: it waits for 48). */
  kept: number;
  scope: number;
  bytes: number;
  rank: number;
  clock: number;
}

/** A list of one entry (`w`, `c`, `e`). */
function newConcurrent(strong: StrongSites, w: number, c: number, e: number): Concurrent {
  const s = w >> THREAD_BITS;
  return {
    list: [w, c, e],
    kept: 24,
    scope: strong.scopeOf(s),
    bytes: strong.bytesOf(s),
    rank: strong.rankOf(w & THREAD_MASK),
    clock: c,
  };
}

/** Fold entry (`w`, `c`) into `entry`'s summary. */
function note(strong: StrongSites, entry: Concurrent, w: number, c: number): void {
  const s = w >> THREAD_BITS;
  const scope = strong.scopeOf(s);
  if (scope < entry.scope) entry.scope = scope;
  if (strong.bytesOf(s) !== entry.bytes) entry.bytes = -1;
  if (strong.rankOf(w & THREAD_MASK) !== entry.rank) entry.rank = -1;
  if (c < entry.clock) entry.clock = c;
}

/** `entry`'s summary from its list (not empty) anew. */
function summarise(strong: StrongSites, entry: Concurrent): void {
  const list = entry.list;
  const s = list[0]! >> THREAD_BITS;
  entry.scope = strong.scopeOf(s);
  entry.bytes = strong.bytesOf(s);
  entry.rank = strong.rankOf(list[0]! & THREAD_MASK);
  entry.clock = list[1]!;
  for (let i = 3; i < list.length; i += 3) note(strong, entry, list[i]!, list[i + 1]!);
}

/**
 * Is every entry of `entry` morally strong with a strong access of thread `t` of `scope` on
 * `bytes` bytes (0: any), by its summary alone? (False: look at each entry.)
 */
function allMoral(
  clocks: Clocks,
  strong: StrongSites,
  entry: Concurrent,
  t: number,
  scope: number,
  bytes: number,
): boolean {
  if (bytes !== 0 && entry.bytes !== bytes) return false;
  const lo = scope < entry.scope ? scope : entry.scope;
  if (lo >= strong.widest) return true;
  // Every entry of the running group, of t's CTA: any scope includes both.
  if (entry.clock >= clocks.ctaBase && entry.rank === strong.rankOf(t)) return true;
  // Every entry of the running cluster (not a group of PEs).
  return entry.clock >= clocks.ctaBase && lo >= strong.clusterWide;
}

/** The widest atomic's bytes (atom.u64). */
const MAX_ATOMIC = 8;

/** Is the access packed as `w` at clock `c` ordered before thread `t`'s current point? */
function ordered(clocks: Clocks, w: number, c: number, t: number): boolean {
  return clocks.ordered(w & THREAD_MASK, c, t);
}
