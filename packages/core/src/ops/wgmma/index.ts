import type { OpDef } from "../op.js";
import { WGMMA_ADVANCE_DESCRIPTOR_OP, WGMMA_DESCRIPTOR_OP } from "./descriptor.js";
import { WGMMA_MMA_OPS } from "./mma-async.js";
import { WGMMA_FP8_OPS } from "./mma-fp8.js";
import { WGMMA_SYNC_OPS } from "./sync.js";

/** The Hopper tensor-core family: wgmma.mma_async, its descriptor, fence/commit/wait, setmaxnreg. */
export const WGMMA_OPS: readonly OpDef[] = [
  WGMMA_DESCRIPTOR_OP,
  WGMMA_ADVANCE_DESCRIPTOR_OP,
  ...WGMMA_MMA_OPS,
  ...WGMMA_FP8_OPS,
  ...WGMMA_SYNC_OPS,
];

export * from "./descriptor.js";
export * from "./mma-async.js";
export * from "./mma-fp8.js";
export * from "./operand.js";
