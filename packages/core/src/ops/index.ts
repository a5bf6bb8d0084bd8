import { registerOps } from "./registry.js";
import { CP_ASYNC_OPS } from "./cp-async.js";
import { BULK_OPS } from "./bulk.js";
import { MBARRIER_OPS } from "./mbarrier.js";
import { SYNC_OPS } from "./sync.js";
import { WARP_OPS } from "./warp/index.js";
import { CTA_OPS } from "./cta.js";
import { ATOMIC_OPS } from "./atomic.js";
import { ARITH_OPS } from "./arith/index.js";
import { MATH_OPS } from "./math/index.js";
import { MMA_OPS } from "./mma/index.js";
import { WGMMA_OPS } from "./wgmma/index.js";
import { MBARRIER_CLUSTER_OPS } from "./mbarrier-cluster.js";
import { CLUSTER_OPS } from "./cluster.js";
import { MEMORY_ORDER_OPS } from "./memory-order.js";
import { NVSHMEM_OPS } from "./nvshmem.js";

/**
 * The op table: every family registers its records here, once, when core loads. Adding an op
 * means one record in its family's file plus its tests.
 */
registerOps([
  ...SYNC_OPS,
  ...CP_ASYNC_OPS,
  ...BULK_OPS,
  ...MBARRIER_OPS,
  ...ARITH_OPS,
  ...MATH_OPS,
  ...WARP_OPS,
  ...CTA_OPS,
  ...ATOMIC_OPS,
  ...MMA_OPS,
  ...WGMMA_OPS,
  ...MBARRIER_CLUSTER_OPS,
  ...CLUSTER_OPS,
  ...MEMORY_ORDER_OPS,
  ...NVSHMEM_OPS,
]);

export * from "./op.js";
export * from "./registry.js";
export * from "./define.js";
export * from "./check.js";
export * from "./warp/index.js";
export { atomicName, atomicSurface, type AtomicAction, type AtomicUnitAction } from "./atomic.js";
// Each machine unit's actions, declared beside its records (op.ts, MachineUnits): exporting them
// keeps their declarations in the declaration files the other packages read.
export type { CpAsyncAction } from "./cp-async.js";
export type { BulkAction } from "./bulk.js";
export type { MbarrierAction } from "./mbarrier.js";
export type { BarrierAction, FenceAction } from "./sync.js";
export {
  MEMORY_SCOPES,
  MEMORY_SEMS,
  semScopeOf,
  type MemoryScope,
  type MemorySem,
  type OrderAction,
} from "./memory-order.js";
export type { WgmmaAction, RegsAction } from "./wgmma/sync.js";
export * from "./ptx-type.js";
export * from "./arith/index.js";
export { MATH_OPS, rint } from "./math/index.js";
export * from "./mma/index.js";
export * from "./wgmma/index.js";
export {
  CLUSTER_OPS,
  type ClusterAction,
  type ClusterRegister,
  type ClusterRegisterKind,
} from "./cluster.js";
export {
  NVSHMEM_BARRIER,
  NVSHMEM_OPS,
  NVSHMEM_STATE,
  SIGNAL_CMPS,
  type NvshmemAction,
  type SignalCmp,
} from "./nvshmem.js";
