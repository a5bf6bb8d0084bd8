/**
 * Packed access records of the race shadow: `site << THREAD_BITS | thread`, the source site (an
 * index into Machine.sites) and the simulated thread of one access, in one int32 (-1: none).
 * Threads are numbered across a cluster in 10 bits (at most 1024 simulated threads, run.ts
 * refuses larger clusters with TX2010), sites in the remaining 21.
 */

/** Thread bits of a packed record. */
export const THREAD_BITS = 10;
/** The thread of a packed record `w` is `w & THREAD_MASK`, its site `w >> THREAD_BITS`. */
export const THREAD_MASK = (1 << THREAD_BITS) - 1;

/** The other access of a race, as found by a check of the shadow. */
export interface RaceHit {
  /** Packed `site << THREAD_BITS | thread` of the earlier access. */
  readonly other: number;
  /** Its clock (tells same CTA from another CTA of the launch; see exec/clocks.ts). */
  readonly clock: number;
}

/** A race hit of a write: `read` when the earlier access was a read (TX6013), else a write (TX6014). */
export type WriteHit = RaceHit & { readonly read: boolean };
