import { THREAD_BITS, THREAD_MASK } from "./machine.js";
import type { RaceHit, RaceTracker } from "./races.js";

/**
 * The race records atomics need beyond a byte's last-writer record, for shared memory
 * (RaceTracker) and for each global tensor (GlobalMeta).
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
 * atomic, whichever atomics came between). `more` drops, when an atomic is pushed in, the
 * entries ordered before its thread (the newer atomic stands for them) and keeps one entry of
 * other CTAs (all of them are unordered with every thread of this CTA), so it holds at most one
 * entry per thread of the CTA plus one.
 */
export class AtomicShadow {
  /** Byte → `[packed, clock]` of the plain write an atomic's record replaced. */
  readonly plain = new Map<number, number[]>();
  /** Byte → flat `[packed, clock, ...]` of atomics concurrent with a later atomic of the byte. */
  readonly more = new Map<number, number[]>();

  get size(): number {
    return this.plain.size + this.more.size;
  }

  clear(): void {
    this.plain.clear();
    this.more.clear();
  }

  /**
   * Thread `t`'s atomic replaces the writer record (`w`, `c`) of byte `b`: keep a plain write
   * (as `plain`), or an atomic not ordered before `t` (in `more`).
   */
  displaced(
    races: RaceTracker,
    b: number,
    w: number,
    c: number,
    t: number,
    isAtomic: (site: number) => boolean,
  ): void {
    // Never written in this launch, an earlier launch, or the async proxy (stamp 0): ordered.
    if (w < 0 || c < races.launchBase) return;
    if (!isAtomic(w >> THREAD_BITS)) {
      this.plain.set(b, [w, c]);
      return;
    }
    if (races.ordered(w & THREAD_MASK, c, t)) return;
    const list = this.more.get(b);
    if (!list) {
      this.more.set(b, [w, c]);
      return;
    }
    const other = races.otherCta(c);
    let kept = 0;
    let otherKept = false;
    for (let i = 0; i < list.length; i += 2) {
      const q = list[i]!;
      const qc = list[i + 1]!;
      if (races.ordered(q & THREAD_MASK, qc, t)) continue;
      if (races.otherCta(qc)) otherKept = true;
      list[kept++] = q;
      list[kept++] = qc;
    }
    list.length = kept;
    if (!(other && otherKept)) list.push(w, c);
  }

  /** Forget bytes [a, a + n): a plain write (ordered after them, or reported) replaced them. */
  drop(a: number, n: number): void {
    drop(this.plain, a, n);
    drop(this.more, a, n);
  }

  /** For an atomic of thread `t` on [a, a + n): the first replaced plain write not ordered before it. */
  plainHit(races: RaceTracker, a: number, n: number, t: number): RaceHit | undefined {
    if (this.plain.size === 0) return undefined;
    for (let b = a; b < a + n; b++) {
      const r = this.plain.get(b);
      if (r && !ordered(races, r[0]!, r[1]!, t)) return { other: r[0]!, clock: r[1]! };
    }
    return undefined;
  }

  /** For a plain access of thread `t` to [a, a + n): the first atomic in `more` not ordered before it. */
  moreHit(races: RaceTracker, a: number, n: number, t: number): RaceHit | undefined {
    if (this.more.size === 0) return undefined;
    for (let b = a; b < a + n; b++) {
      const list = this.more.get(b);
      if (!list) continue;
      for (let i = 0; i < list.length; i += 2) {
        if (!ordered(races, list[i]!, list[i + 1]!, t)) {
          return { other: list[i]!, clock: list[i + 1]! };
        }
      }
    }
    return undefined;
  }
}

/** Is the access packed as `w` at clock `c` ordered before thread `t`'s current point? */
function ordered(races: RaceTracker, w: number, c: number, t: number): boolean {
  return races.ordered(w & THREAD_MASK, c, t);
}

function drop(map: Map<number, number[]>, a: number, n: number): void {
  if (map.size === 0) return;
  if (n <= map.size) {
    for (let b = a; b < a + n; b++) map.delete(b);
  } else {
    for (const b of map.keys()) if (b >= a && b < a + n) map.delete(b);
  }
}
