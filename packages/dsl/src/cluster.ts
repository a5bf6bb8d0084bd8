import { TirxError } from "@tirx-ts/core";
import { builder } from "./builder.js";
import { PrimExpr, show } from "./expr.js";
import { callStmtOp, callValueOp } from "./op-call.js";
import { callerSpan } from "./span.js";

type Axis = "x" | "y" | "z";

function axisOp(prefix: string, axis: unknown, label: string): PrimExpr {
  const span = callerSpan();
  if (axis !== "x" && axis !== "y" && axis !== "z") {
    throw new TirxError("TX1002", `${label} takes "x", "y" or "z", got ${show(axis)}`, span);
  }
  builder(label, span);
  return callValueOp(`${prefix}.${axis}`, [], span);
}

/** `%cluster_ctarank`: this CTA's rank in its cluster, 0..cluster size - 1 (int32; sm_90). */
export function cluster_ctarank(): PrimExpr {
  const span = callerSpan();
  builder("T.cuda.cluster_ctarank", span);
  return callValueOp("cluster.ctarank", [], span);
}

/** `%cluster_nctarank`: CTAs per cluster (int32; sm_90). */
export function cluster_nctarank(): PrimExpr {
  const span = callerSpan();
  builder("T.cuda.cluster_nctarank", span);
  return callValueOp("cluster.nctarank", [], span);
}

/** `%cluster_ctaid.{x,y,z}`: this CTA's index within its cluster along an axis (int32). */
export const cluster_cta_idx = (axis: Axis = "x"): PrimExpr =>
  axisOp("cluster.ctaid", axis, "T.cuda.cluster_cta_idx");
/** `%cluster_nctaid.{x,y,z}`: the cluster's extent in CTAs along an axis (int32). */
export const cluster_dim = (axis: Axis = "x"): PrimExpr =>
  axisOp("cluster.nctaid", axis, "T.cuda.cluster_dim");
/** `%clusterid.{x,y,z}`: the cluster's index in the grid along an axis (int32). */
export const cluster_idx = (axis: Axis = "x"): PrimExpr =>
  axisOp("clusterid", axis, "T.cuda.cluster_idx");
/** `%nclusterid.{x,y,z}`: clusters in the grid along an axis (int32). */
export const cluster_grid_dim = (axis: Axis = "x"): PrimExpr =>
  axisOp("nclusterid", axis, "T.cuda.cluster_grid_dim");

/**
 * `T.ptx.barrier.cluster`: the cluster barrier (PTX ISA, barrier.cluster; sm_90). Every thread
 * of every CTA of the cluster arrives, then waits: `arrive()` (release), `arrive_relaxed()`,
 * `wait()` (acquire).
 */
export const barrierCluster = {
  arrive(): void {
    callStmtOp("barrier.cluster.arrive", [], callerSpan());
  },
  arrive_relaxed(): void {
    callStmtOp("barrier.cluster.arrive.relaxed", [], callerSpan());
  },
  wait(): void {
    callStmtOp("barrier.cluster.wait", [], callerSpan());
  },
};

/**
 * `T.cuda.cluster_sync()`: `barrier.cluster.arrive` (release) then `barrier.cluster.wait`
 * (acquire), CUDA's `cluster.sync()`: every thread of every CTA of the cluster waits here, and
 * each one's accesses before it are ordered before every thread's after it (PTX ISA,
 * barrier.cluster; sm_90).
 */
export function cluster_sync(): void {
  const span = callerSpan();
  callStmtOp("barrier.cluster.arrive", [], span);
  callStmtOp("barrier.cluster.wait", [], span);
}

/**
 * `mapa.shared::cluster.u32`: the shared::cluster address of the variable at shared address
 * `addr` (e.g. `bars.ptr([i])`) in the CTA of cluster rank `rank` (PTX ISA, mapa; sm_90).
 */
export function mapa(addr: unknown, rank: unknown): PrimExpr {
  return callValueOp("mapa.shared::cluster", [addr, rank], callerSpan());
}

/**
 * `mbarrier.arrive.release.cluster.shared::cluster.b64`: arrive on the mbarrier at the
 * shared::cluster address `addr` (from {@link mapa}), e.g. a consumer releasing a stage that a
 * peer CTA's producer multicasts into (PTX ISA, mbarrier.arrive; sm_90).
 */
export function arrive_remote(addr: unknown): void {
  callStmtOp("mbarrier.arrive.release.cluster.shared::cluster", [addr], callerSpan());
}
