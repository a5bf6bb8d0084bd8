import {
  invariant,
  launchArgError,
  launchGrid,
  NVSHMEM_BARRIER,
  NVSHMEM_STATE,
  type KernelArg,
  type PrimFunc,
} from "@tirx-ts/core";
import type { CudaCompiled } from "./compile.js";
import type { CudaDevice } from "./device.js";
import { driver } from "./driver.js";
import type { LoadedModule } from "./launch.js";
import { peArgs, type PeArg } from "./pe-args.js";
import {
  checkResident,
  peBarrier,
  residentCtas,
  writeBarrierState,
  type PeBarrier,
} from "./pe-barrier.js";
import type { CudaStream } from "./stream.js";
import { writePeState } from "./symmetric.js";

/** The PE state each loaded module holds (written once, again only when it changes). */
const written = new WeakMap<LoadedModule, string>();

/** What one PE's launch will run: its compiled kernel, arguments and loaded module. */
export interface PePlan {
  readonly device: CudaDevice;
  readonly compiled: CudaCompiled;
  readonly args: readonly KernelArg[];
  readonly module: LoadedModule;
}

/**
 * Queue one launch of `fn` per GPU, PE p on devices[p] and streams[p] (null: that GPU's default
 * stream), from one process, without waiting: each PE's arguments from {@link peArgs}; each GPU's
 * module loaded (compiledFor(device) picks the PTX for its arch) and its module state written
 * before the first launch is queued (PE 0's kernel may already wait for PE 1's): my_pe and n_pes
 * (`tirx_nvshmem_state`, writePeState), and for a kernel that calls barrier_all the counters of
 * this set of GPUs (`tirx_nvshmem_barrier`, peBarrier) after checking that every PE has the same
 * grid and that each GPU holds all its CTAs at once. A module whose state changes (the same GPU
 * as another PE, or another set of GPUs) waits for its GPU's earlier work before the write.
 * @returns each PE's plan (for the caller's synchronization and bounds checks).
 * @throws TirxError TX5015 and the rest of {@link peArgs}; TX5015 for a barrier_all kernel whose
 *   PEs' grids differ or whose grid a GPU cannot hold at once; TX5014 when the virtual memory
 *   API is missing; CudaError from the driver.
 */
export function launchPes(
  fn: PrimFunc,
  compiledFor: (device: CudaDevice) => CudaCompiled,
  devices: readonly CudaDevice[],
  args: readonly PeArg[],
  streams: readonly (CudaStream | null)[],
): readonly PePlan[] {
  const lists = peArgs(fn, devices, args);
  const plans: PePlan[] = devices.map((device, p) => {
    const compiled = compiledFor(device);
    const module = compiled.kernelFor(device, lists[p]!).module;
    invariant(module !== undefined, "a compiled kernel's CudaKernel keeps its module");
    return { device, compiled, args: lists[p]!, module };
  });
  const text = plans[0]!.compiled.module.text;
  const barrier = text.includes(NVSHMEM_BARRIER) ? barrierFor(fn, plans) : undefined;
  const P = devices.length;
  plans.forEach((plan, p) => {
    if (!text.includes(NVSHMEM_STATE)) return;
    const key = `${p}/${P}/${barrier ? `${barrier.ptr}/${barrier.stride}/${barrier.slots}` : ""}`;
    const before = written.get(plan.module);
    if (before === key) return;
    // Earlier launches of this module may still read the state being replaced.
    if (before !== undefined) plan.device.synchronize(`before kernel "${fn.name}"'s PE state`);
    plan.device.activate();
    const d = driver();
    writePeState(d.moduleGetGlobal(plan.module.handle, NVSHMEM_STATE).ptr, p, P);
    if (barrier)
      writeBarrierState(d.moduleGetGlobal(plan.module.handle, NVSHMEM_BARRIER).ptr, barrier);
    written.set(plan.module, key);
  });
  plans.forEach((plan, p) =>
    plan.compiled.enqueueChecked(plan.device, plan.args, streams[p] ?? null),
  );
  return plans;
}

/** The barrier counters of a barrier_all kernel's launch, after the grid checks. */
function barrierFor(fn: PrimFunc, plans: readonly PePlan[]): PeBarrier {
  const grids = plans.map((pl) => launchGrid(fn, pl.compiled.module.launch, pl.args));
  const g = grids[0]!;
  const q = grids.findIndex((h) => h.some((n, axis) => n !== g[axis]));
  if (q >= 0) {
    throw launchArgError(
      "TX5015",
      `kernel "${fn.name}" calls T.nvshmem.barrier_all, where CTA b of every PE meets CTA b of the others, but PE 0's grid is [${g.join(", ")}] and PE ${q}'s [${grids[q]!.join(", ")}]: give every PE the same grid`,
      fn,
    );
  }
  const ctas = g[0] * g[1] * g[2];
  const m = plans[0]!.compiled.module;
  const threads = m.launch.block[0] * m.launch.block[1] * m.launch.block[2];
  const launch = { ...m.launch, dynamicSharedBytes: m.dynamicSharedBytes };
  for (const pl of plans) {
    const k = pl.compiled.kernelFor(pl.device, pl.args);
    // The shared-memory opt-in first: the occupancy is computed under the kernel's attributes.
    k.prepareExtended(launch);
    checkResident(
      fn,
      pl.device,
      ctas,
      residentCtas(pl.device, k.handle, threads, launch.dynamicSharedBytes),
    );
  }
  return peBarrier(
    plans.map((pl) => pl.device),
    ctas,
  );
}
