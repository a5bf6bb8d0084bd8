import type { AccessLog } from "./access-log.js";
import type { Tracer } from "./trace.js";

/**
 * How hazards are handled: the first one throws, or all are collected and the run continues, or
 * (`"off"`) hazard tracking is skipped where it costs time (bounds are still checked, TX6005, and
 * so are deadlocks and runtime contracts); for measuring the cost of tracking.
 */
export type HazardMode = "throw" | "collect" | "off";

/**
 * What one launch runs under, resolved from runSim's SimOptions and the launch's arguments, and
 * frozen: the Machine of a kernel holds the object of its current launch (`Machine.opts`) and
 * every compiled closure reads the options there; nothing changes them during the launch, and
 * the next launch brings a new object. The trace and the access log are the launch's sinks
 * (their own state changes as the launch records into them).
 */
export interface LaunchOptions {
  /** Hazard handling (SimOptions.hazards). */
  readonly mode: HazardMode;
  /** False in mode "off": loads and stores skip their hazard bookkeeping. */
  readonly track: boolean;
  /**
   * The schedule (SimOptions.simSeed, or TIRX_SIM_SEED): 0 runs the threads of a CTA in
   * lockstep, warps in ascending order; any other seed runs each stretch of statements with no
   * barrier in it warp by warp, in an order drawn from the Machine's `rng` (compile/schedule.ts).
   */
  readonly seed: number;
  /**
   * Lanes a plain statement runs on closures before its generated function (SimOptions.jitAfter,
   * default JIT_AFTER_LANES of compile/jit.ts).
   */
  readonly jitAfter: number;
  /**
   * Whether element accesses of consecutive threads are checked and recorded as ranges
   * (SimOptions.rangeChecks; exec/access-batch.ts); false checks every access as it is made.
   */
  readonly rangeChecks: boolean;
  /** The grid of the launch (runtime extents evaluated from its scalar arguments). */
  readonly grid: readonly [number, number, number];
  /** The launch's trace, when one is recorded (SimOptions.trace). */
  readonly tracer: Tracer | undefined;
  /** The launch's per-site shared access log (SimOptions.accesses), or undefined. */
  readonly accesses: AccessLog | undefined;
}

/** The options of one launch, frozen (see LaunchOptions). */
export function launchOptions(o: LaunchOptions): LaunchOptions {
  return Object.freeze({
    mode: o.mode,
    track: o.track,
    seed: o.seed,
    jitAfter: o.jitAfter,
    rangeChecks: o.rangeChecks,
    grid: Object.freeze([o.grid[0], o.grid[1], o.grid[2]] as const),
    tracer: o.tracer,
    accesses: o.accesses,
  });
}

/**
 * The options a Machine holds before its first launch (no closure runs then): hazards throw,
 * tracked, lockstep, closures only, range checks on, a grid of one CTA, no sinks.
 */
export const NO_LAUNCH: LaunchOptions = launchOptions({
  mode: "throw",
  track: true,
  seed: 0,
  jitAfter: Infinity,
  rangeChecks: true,
  grid: [1, 1, 1],
  tracer: undefined,
  accesses: undefined,
});
