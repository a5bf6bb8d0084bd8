import type { Note, Span } from "@tirx-ts/core";
import type { Reporter } from "./context.js";

/** One lane's failing poll of a signal word in the current scheduling round. */
export interface SignalWait {
  /** The waiting thread (its PE is `rank[thread]`). */
  readonly thread: number;
  /** The wait's site (the signal_wait_until line). */
  readonly site: number;
  /** `Sig[pe, i]`: the signal word as the program names it, for the report. */
  readonly word: string;
  /** The condition, e.g. `>= 1`, and the value read. */
  readonly cond: string;
  readonly seen: bigint;
  /** Where the signal's tensor is declared (a note), if known. */
  readonly decl: Span | undefined;
}

/**
 * The signal waits of a launch (`T.nvshmem.signal_wait_until`; NVSHMEM device API,
 * nvshmem_signal_wait_until): per thread, the last value its poll read, so that a poll that
 * reads a changed word counts as progress for the scheduler (compile/blocking.ts) whatever wrote
 * it (a put_signal's `atom.release.sys`, a signal_op, a plain store); and the failing polls of
 * the current round, which name the signal when every thread of every PE is blocked (TX6006).
 */
export class SignalWaits {
  /** Per thread: the word's value at its last poll (undefined before its first). */
  readonly #last = new Map<number, bigint>();
  /** Failing polls of the current scheduling round. */
  readonly blocked: SignalWait[] = [];

  /** A new launch or CTA group: no polls yet. */
  reset(): void {
    this.#last.clear();
    this.blocked.length = 0;
  }

  /**
   * Thread `t` read `v` from the signal word it polls: true when that is progress (its first
   * poll, or a value other than its last poll's).
   */
  polled(t: number, v: bigint): boolean {
    const last = this.#last.get(t);
    this.#last.set(t, v);
    return last !== v;
  }

  /**
   * TX6006 when signal waits blocked in a round where no thread of any PE could move: the first
   * waiting lane's PE, warp and thread, the signal word, its value and the condition; notes at
   * the other waits and at the signal tensor's declaration. True when it reported.
   */
  reportDeadlock(
    m: Reporter & {
      readonly sites: readonly (Span | undefined)[];
      readonly rank: Int32Array;
      readonly ctaThreads: number;
    },
  ): boolean {
    const w = this.blocked[0];
    if (!w) return false;
    const notes: Note[] = [];
    const seen = new Set<string>();
    for (const x of this.blocked.slice(1)) {
      const key = `${m.rank[x.thread]!}/${x.site}/${x.word}`;
      if (seen.has(key) || m.rank[x.thread] === m.rank[w.thread]) continue;
      seen.add(key);
      notes.push({
        message: `PE ${m.rank[x.thread]!} also waits here for ${x.word} ${x.cond} (it holds ${x.seen})`,
        span: m.sites[x.site],
      });
      if (notes.length >= 4) break;
    }
    if (w.decl) notes.push({ message: "the signal tensor is declared here", span: w.decl });
    const warp = Math.floor((w.thread % m.ctaThreads) / 32);
    m.hazard(
      "TX6006",
      `PE ${m.rank[w.thread]!} warp ${warp} (thread ${m.thread(w.thread)}) waits forever in signal_wait_until for ${w.word} ${w.cond}: it holds ${w.seen}, and no thread of any PE is left to send the signal (every thread is blocked or done; a put_signal or signal_op to that word on this PE is missing; NVSHMEM device API, nvshmem_signal_wait_until)`,
      w.site,
      notes,
    );
    return true;
  }
}
