/**
 * Work the simulator did in this process, counted so that tests can bound it by counts instead
 * of by time: a warm launch that reuses its compiled closures, a deadlock found in one scheduling
 * round, a held report that stops a runaway loop. The counts only grow; read the difference
 * around a call. Each is a plain increment where the work already happens (no cost worth
 * measuring on a launch).
 */
export const simCounters = {
  /** Kernels compiled into closures: the first launch of each VerifiedFunc (runSim caches them). */
  compiles: 0,
  /**
   * Loop iterations run: one per iteration of a T.while_, an mbarrier wait loop or a T.range
   * loop that a group of lanes runs together, however many lanes the group has (a wait loop
   * counts one per scheduling round in which it polls).
   * Added at the end of each launch, also one that throws.
   */
  loopIterations: 0,
};
