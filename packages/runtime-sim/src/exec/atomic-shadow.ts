import type { Clocks } from "./clocks.js";
import { THREAD_BITS, THREAD_MASK, type RaceHit } from "./packed.js";

/**
 * The race records atomics need beyond a byte's last-writer record, for shared memory
 * (SharedShadow) and for each global tensor (TensorShadow); only those two shadows call it, with
 * their own writer arrays (take).
 *
 * Rule (PTX ISA, Memory Consistency Model, "Data races"): two conflicting accesses (one a write)
 * that happens-before does not order are a data race unless both are morally strong; `atom` and
 * `red` are, `ld` and `st` are not. So atomics never race with each other, but each races with
 * every unordered plain load or store of its bytes.
 *
 * The last-writer record alone (FastTrack's epoch) summarises a byte's writes only when every
 * later write would race with an access that raced with an earlier one. Atomics break that twice:
 * - a plain write whose record an atomic replaces still races with later atomics of threads it
 *   is not ordered before (thread 0 initialises a counter, then every thread adds to it with no
 *   barrier between): `plain` keeps it until a plain write of the byte;
 * - atomics of different threads are concurrent with each other, so they form a set, like reads:
 *   an atomic that a concurrent atomic pushes out of the writer record moves to `more`, so a
 *   plain access ordered after one of them but not another is still a race.
 * Atomic writes leave the byte's readers in place (a plain read races with any later unordered
 * atomic, whichever atomics came between). Each time a list of `more` doubles it drops the
 * entries ordered before the thread pushing (its atomic stands for them) and all but one entry
 * of other CTAs (all of them are unordered with every thread of this CTA), so it stays within
 * about twice one entry per thread of the CTA, at amortised O(1) per atomic.
 */
export class AtomicShadow {
  /** Byte → `[packed, clock]` of the plain write an atomic's record replaced. */
  readonly plain = new Map<number, number[]>();
  /**
   * First byte of a run → flat `[packed, clock, end, ...]` of atomics concurrent with a later
   * atomic of the bytes [first, end) (an atomic's element: at most MAX_ATOMIC bytes).
   */
  readonly more = new Map<number, number[]>();
  /** Per key of `more`: its list's length after its last pruning. */
  readonly #kept = new Map<number, number>();

  get size(): number {
    return this.plain.size + this.more.size;
  }

  /** Forget every record (CTA start, cta_sync); maps already empty are left as they are. */
  clear(): void {
    // Map.prototype.clear allocates a new table even for an empty map.
    if (this.plain.size > 0) this.plain.clear();
    if (this.more.size > 0) this.more.clear();
    if (this.#kept.size > 0) this.#kept.clear();
  }

  /**
   * Thread `t`'s atomic replaces the writer record (`w`, `c`) of bytes [b, e): keep a plain
   * write (as `plain`, per byte), or an atomic not ordered before `t` (in `more`, at `b`).
   */
  displaced(
    clocks: Clocks,
    b: number,
    e: number,
    w: number,
    c: number,
    t: number,
    isAtomic: (site: number) => boolean,
  ): void {
    // Never written in this launch, an earlier launch, or the async proxy (stamp 0): ordered.
    if (w < 0 || c < clocks.launchBase) return;
    if (!isAtomic(w >> THREAD_BITS)) {
      for (let i = b; i < e; i++) this.plain.set(i, [w, c]);
      return;
    }
    if (clocks.ordered(w & THREAD_MASK, c, t)) return;
    const list = this.more.get(b);
    if (!list) {
      this.more.set(b, [w, c, e]);
      return;
    }
    list.push(w, c, e);
    // Prune when the list doubled since its last pruning (amortised O(1) per atomic; a hot
    // counter's list stays within twice the entries that are not ordered before the thread).
    if (list.length >= 2 * (this.#kept.get(b) ?? 24)) this.#kept.set(b, prune(clocks, list, t));
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
    let s = a;
    for (let b = a + 1; b <= a + n; b++) {
      if (b === a + n || wr[b] !== wr[s] || wc[b] !== wc[s]) {
        this.displaced(clocks, s, b, wr[s]!, wc[s]!, t, isAtomic);
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
      const list = more.get(k);
      if (!list) continue;
      let kept = 0;
      for (let i = 0; i < list.length; i += 3) {
        if (list[i + 2]! <= a + n) continue;
        list[kept++] = list[i]!;
        list[kept++] = list[i + 1]!;
        list[kept++] = list[i + 2]!;
      }
      list.length = kept;
      if (kept === 0) {
        more.delete(k);
        this.#kept.delete(k);
      }
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
      const list = this.more.get(k);
      if (!list) continue;
      for (let i = 0; i < list.length; i += 3) {
        if (list[i + 2]! > a && !ordered(clocks, list[i]!, list[i + 1]!, t)) {
          return { other: list[i]!, clock: list[i + 1]! };
        }
      }
    }
    return undefined;
  }
}

/** The widest atomic's bytes (atom.u64). */
const MAX_ATOMIC = 8;

/** Is the access packed as `w` at clock `c` ordered before thread `t`'s current point? */
function ordered(clocks: Clocks, w: number, c: number, t: number): boolean {
  return clocks.ordered(w & THREAD_MASK, c, t);
}

/**
 * Drop the entries of `list` ordered before thread `t` (its atomic stands for them) and all but
 * one entry of other CTAs (every one is unordered with every thread of this CTA); returns the
 * new length.
 */
function prune(clocks: Clocks, list: number[], t: number): number {
  let kept = 0;
  let otherKept = false;
  for (let i = 0; i < list.length; i += 3) {
    const q = list[i]!;
    const qc = list[i + 1]!;
    if (clocks.ordered(q & THREAD_MASK, qc, t)) continue;
    if (clocks.otherCta(qc)) {
      if (otherKept) continue;
      otherKept = true;
    }
    list[kept++] = q;
    list[kept++] = qc;
    list[kept++] = list[i + 2]!;
  }
  list.length = kept;
  return kept;
}
