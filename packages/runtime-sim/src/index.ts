/**
 * @tirx-ts/runtime-sim: a simulated CUDA device. Runs verified tirx-ts kernels on the CPU with the
 * GPU's numerics and the PTX ISA's cp.async semantics, and reports async-copy and synchronisation
 * hazards as TirxErrors pointing at the author's source.
 */
export { sim, type SimDevice } from "./device.js";
export { SimTensor, simTensor, simZeros, simEmpty, POISON_BYTE } from "./tensor.js";
export { runSim, type SimOptions, type SimResult } from "./run.js";
export { simCounters } from "./counters.js";
export type { HazardMode } from "./exec/launch-options.js";
export { MAX_WHILE_ITERATIONS } from "./compile/stmt.js";
export { MAX_COROUTINE_DEPTH } from "./compile/blocking.js";
export type { TraceEvent } from "./exec/trace.js";
export type {
  DeadlockFacts,
  MbarrierFacts,
  MbarrierWaitFacts,
  NamedBarrierFacts,
  NamedBarrierWaitFacts,
} from "./exec/deadlock-facts.js";
export {
  phaseWavefronts,
  lanesPerPhase,
  type LaneMove,
  type MovePiece,
  type SiteAccesses,
} from "./exec/access-log.js";
