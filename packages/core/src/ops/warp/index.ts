import type { OpDef } from "../op.js";
import { SHFL_OPS } from "./shfl.js";
import { REDUCE_OPS } from "./reduce.js";
import { VOTE_OPS } from "./vote.js";
import { REDUX_OPS } from "./redux.js";
import { SCAN_OPS } from "./scan.js";

/**
 * The warp family: shuffles, warp reductions, votes, the active mask, __syncwarp, redux.sync, warp
 * scans and argmax/argmin.
 */
export const WARP_OPS: readonly OpDef[] = [
  ...SHFL_OPS,
  ...REDUCE_OPS,
  ...VOTE_OPS,
  ...REDUX_OPS,
  ...SCAN_OPS,
];

export { SHFL_DTYPES } from "./shfl.js";
export { REDUCE_DTYPES, combine, type ReduceKind } from "./reduce.js";
export { reduxCombine, type ReduxKind } from "./redux.js";
export { shflSource, shflC, type ShflMode } from "./lanes.js";
export { SCAN_DTYPES, SCAN_OPS, argBetter, scanIdentity } from "./scan.js";
