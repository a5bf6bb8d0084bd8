import { findOp, invariant, type MachineAction } from "@tirx-ts/core";
import type { ActionCompiler, ActionTraits, UnitAction, UnitCompiler } from "./compiled.js";
import { ATOMIC_UNIT } from "./units/atomic.js";
import { BARRIER_UNIT } from "./units/barrier.js";
import { BULK_UNIT } from "./units/bulk.js";
import { CLUSTER_UNIT } from "./units/cluster.js";
import { CP_ASYNC_UNIT } from "./units/cp-async.js";
import { FENCE_UNIT } from "./units/fence.js";
import { MBARRIER_UNIT } from "./units/mbarrier.js";
import { ORDER_UNIT } from "./units/order.js";
import { NVSHMEM_UNIT } from "./units/nvshmem.js";
import { REGS_UNIT, WGMMA_UNIT } from "./units/wgmma.js";

/**
 * The compiler of each machine unit (core `MachineAction`), one file per unit in
 * `compile/units/`: an op record with `sim: { kind: "machine", effect }` is compiled by
 * `MACHINE_UNITS[effect.unit][effect.action]`. A unit left out of this table, or an action left
 * out of its unit's table, does not compile.
 */
export const MACHINE_UNITS = {
  "cp.async": CP_ASYNC_UNIT,
  bulk: BULK_UNIT,
  mbarrier: MBARRIER_UNIT,
  barrier: BARRIER_UNIT,
  fence: FENCE_UNIT,
  atomic: ATOMIC_UNIT,
  wgmma: WGMMA_UNIT,
  regs: REGS_UNIT,
  cluster: CLUSTER_UNIT,
  order: ORDER_UNIT,
  nvshmem: NVSHMEM_UNIT,
} as const satisfies { readonly [U in MachineAction["unit"]]: UnitCompiler<UnitAction<U>> };

/**
 * The compiler of machine action `fx` (its statement and value forms), from its unit's table.
 * Looked up once per op call while a kernel compiles; the closures it makes are what runs.
 * @throws InternalError for an action no unit table lists (the `satisfies` above excludes it).
 */
export function machineAction(fx: MachineAction): ActionCompiler<MachineAction> {
  // Each unit's table pairs each action with its compiler; TypeScript cannot follow the pairing
  // through the lookup, hence the widened type.
  const unit = MACHINE_UNITS[fx.unit] as unknown as Readonly<
    Record<string, ActionCompiler<MachineAction> | undefined>
  >;
  const a = unit[fx.action];
  invariant(a, `machine action ${fx.unit}.${fx.action} has no simulator compiler`);
  return a;
}

/**
 * The traits of op `name`'s machine action (ActionTraits, from its unit's table), or undefined
 * for a name with no record or a record with no machine action. Read while a kernel compiles.
 */
export function actionTraits(name: string): ActionTraits | undefined {
  const sim = findOp(name)?.sim;
  return sim?.kind === "machine" ? machineAction(sim.effect) : undefined;
}
