/**
 * The facts (`Note.facts`) of the simulator's deadlock reports: TX6006 (an mbarrier wait that
 * never ends, exec/mbarrier.ts) and TX6012 (a named barrier instance that never completes,
 * exec/named-barriers.ts). Each note says the same in words; tests and tools read these.
 */

/**
 * The state of one mbarrier at the deadlock (the note at its `mbarrier.init`), counted in its
 * current phase (PTX ISA, mbarrier: "phase completion" needs the pending arrival count and the
 * tx-count to reach 0).
 */
export type MbarrierFacts = {
  readonly kind: "mbarrier";
  /** `"bars"[i]` (with its CTA in a cluster of several). */
  readonly barrier: string;
  /** %ctaid of its CTA, `(x, y, z)`. */
  readonly cta: string;
  /** The expected arrival count of each phase (mbarrier.init's count). */
  readonly count: number;
  /** Arrivals received in the current phase (`count - pending`). */
  readonly arrived: number;
  /** Arrivals still pending in the current phase. */
  readonly pending: number;
  /**
   * tx-count in bytes: announced by expect_tx and not yet completed (> 0), or completed beyond
   * those announced (< 0; the phase cannot complete).
   */
  readonly txBytes: number;
  /** The current (incomplete) phase, counted from the last init: phases completed since. */
  readonly phase: number;
  /** Its parity (`phase & 1`): a try_wait.parity with this parity blocks until it completes. */
  readonly parity: number;
};

/**
 * A group of threads blocked in one wait statement on one mbarrier (the note at the wait):
 * `try_wait.parity(P)` returns once the phase of parity P completed, so a blocked wait waits for
 * the barrier's current phase (its parity is P). The group's verdict compares that phase with
 * the phases its threads observed: `"future"` when they observed every completed phase (the
 * wait is for the next one, and the barrier's missing arrivals or bytes are the cause),
 * `"parity"` when a phase completed that they never observed: they wait one (or more) phases
 * ahead of their own, the sign of a parity that flipped once too often or started wrong.
 */
export type MbarrierWaitFacts = {
  readonly kind: "mbarrier-wait";
  readonly barrier: string;
  readonly cta: string;
  /** Warp ids (linear thread index / 32 in the CTA) of the waiting threads, ascending. */
  readonly warps: readonly number[];
  /** How many threads wait here. */
  readonly threads: number;
  /** The parity the wait passes (P of try_wait.parity). */
  readonly parity: number;
  /** The phase it waits for (the barrier's current phase, counted from the last init). */
  readonly waitsFor: number;
  /** Phases of the barrier these threads observed complete (fewest over the group). */
  readonly observed: number;
  readonly verdict: "future" | "parity";
};

/** A named barrier instance that never completes (PTX ISA, bar/barrier: `bar.sync a, b`). */
export type NamedBarrierFacts = {
  readonly kind: "named-barrier";
  /** Barrier id (0..15). */
  readonly id: number;
  readonly cta: string;
  /** The instance's thread count (b of bar.sync a, b). */
  readonly expected: number;
  /** Threads that arrived at the instance. */
  readonly arrived: number;
  /** Warp ids that arrived, ascending. */
  readonly warps: readonly number[];
};

/** The threads of one statement that arrived at an incomplete named barrier instance. */
export type NamedBarrierWaitFacts = {
  readonly kind: "named-barrier-wait";
  readonly id: number;
  readonly cta: string;
  /** Warp ids that arrived from this statement, ascending. */
  readonly warps: readonly number[];
  readonly threads: number;
  /** bar.sync (waits) or bar.arrive (does not wait). */
  readonly sync: boolean;
};

/** Every kind of deadlock fact. */
export type DeadlockFacts =
  MbarrierFacts | MbarrierWaitFacts | NamedBarrierFacts | NamedBarrierWaitFacts;

/** `warps 0, 1` or `warp 3`, for messages. */
export function warpList(warps: readonly number[]): string {
  return `${warps.length === 1 ? "warp" : "warps"} ${warps.join(", ")}`;
}
