import type { OpDef } from "../op.js";
import { MATRIX_MOVE_OPS } from "./ldmatrix.js";
import { MMA_SYNC_OPS } from "./mma.js";
import { MMA_SP_OPS } from "./sparse.js";

/**
 * The tensor-core family: ldmatrix, stmatrix, mma.sync and sparse mma.sp, with fragments in
 * register arrays.
 */
export const MMA_OPS: readonly OpDef[] = [...MATRIX_MOVE_OPS, ...MMA_SYNC_OPS, ...MMA_SP_OPS];

export * from "./layout.js";
export * from "./ldmatrix.js";
export * from "./mma.js";
export * from "./forms.js";
export * from "./sparse.js";
