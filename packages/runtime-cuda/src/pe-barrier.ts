import { launchArgError, symmetricShard, type PrimFunc } from "@tirx-ts/core";
import { CudaDevice } from "./device.js";
import { CU_DEVICE_ATTRIBUTE, driver, koffi, libraryPath, type CuHandle } from "./driver.js";
import { SymmetricTensor, symmetricGranularity } from "./symmetric.js";

/**
 * The counters of `T.nvshmem.barrier_all` on the direct path (core ops/nvshmem.ts,
 * NVSHMEM_BARRIER): one symmetric uint64 tensor [P, slots] per set of GPUs, in PE order,
 * allocated on the first launch of a kernel that calls barrier_all and zeroed there, kept for
 * the process (the counters persist across launches: at rest each is a multiple of P). PE q's
 * counter for CTA index b is word b of slice q. `slots` covers the launch's CTAs, rounded up to
 * the allocation granularity (2 MiB: 262144 counters); a launch with more CTAs allocates a
 * larger tensor after waiting for every GPU of the set (the old counters may still be in use).
 */
const barriers = new Map<string, SymmetricTensor>();

/** What a kernel's module is told of its barrier counters (NVSHMEM_BARRIER's three words). */
export interface PeBarrier {
  /** The counters' device address (PE 0's slice). */
  readonly ptr: CuHandle;
  /** Bytes between two PEs' slices. */
  readonly stride: number;
  /** Counters per PE. */
  readonly slots: number;
}

/**
 * The barrier counters of the GPUs `devices` (PE p on devices[p]) for a launch of `ctas` CTAs per
 * PE: allocated and zeroed on first use, reallocated larger when `ctas` exceeds them.
 * @throws TirxError TX5014 when the virtual memory API is missing; CudaError from the driver.
 */
export function peBarrier(devices: readonly CudaDevice[], ctas: number): PeBarrier {
  const key = devices.map((d) => d.ordinal).join(",");
  let sym = barriers.get(key);
  if (sym && sym.shape[1]! < ctas) {
    for (const d of devices) d.synchronize("before barrier_all's counters grow");
    sym.dispose();
    sym = undefined;
  }
  if (!sym || sym.disposed) {
    const granularity = Math.max(...devices.map((d) => symmetricGranularity(d.ordinal)));
    sym = SymmetricTensor.allocate(
      devices,
      symmetricShard([Math.max(1, ctas)], "uint64", granularity),
      "uint64",
    ).zero();
    barriers.set(key, sym);
  }
  return { ptr: sym.ptr, stride: sym.sliceBytes, slots: sym.shape[1]! };
}

type Occupancy = (out: Int32Array, fn: CuHandle, block: number, shared: number) => number;
let occupancy: Occupancy | undefined;

/**
 * CTAs of a kernel that one GPU holds at once: its SM count times
 * cuOccupancyMaxActiveBlocksPerMultiprocessor for the block's threads and dynamic shared bytes.
 * @throws CudaError from the driver; TX5010 when the entry point cannot be bound.
 */
export function residentCtas(
  device: CudaDevice,
  fn: CuHandle,
  threads: number,
  dynamicShared: number,
): number {
  if (!occupancy) {
    const lib = koffi().load(libraryPath());
    occupancy = lib.func("cuOccupancyMaxActiveBlocksPerMultiprocessor", "int", [
      "int32_t *",
      "uint64_t",
      "int",
      "size_t",
    ]) as Occupancy;
  }
  const d = driver();
  device.activate();
  const out = new Int32Array(1);
  d.check(
    "cuOccupancyMaxActiveBlocksPerMultiprocessor",
    occupancy(out, fn, threads, dynamicShared),
  );
  const sms = d.deviceAttribute(
    CU_DEVICE_ATTRIBUTE.MULTIPROCESSOR_COUNT,
    d.deviceGet(device.ordinal),
  );
  return out[0]! * sms;
}

/**
 * TX5015 unless every CTA of a barrier_all kernel's grid can be resident at once on `device`:
 * CTA b of PE p waits in barrier_all for CTA b of every other PE, which a GPU busy with CTAs
 * waiting for p's later CTAs might never start (NVSHMEM's nvshmemx_collective_launch checks the
 * same).
 */
export function checkResident(
  fn: PrimFunc,
  device: CudaDevice,
  ctas: number,
  resident: number,
): void {
  if (ctas <= resident) return;
  throw launchArgError(
    "TX5015",
    `kernel "${fn.name}" calls T.nvshmem.barrier_all, so all its CTAs must be resident at once on each GPU (CTA b of every PE meets CTA b of the others), but its grid has ${ctas} CTAs and ${device.name} (cuda:${device.ordinal}) holds ${resident} of them at once: use a grid of at most ${resident} CTAs (a loop over the work inside each)`,
    fn,
  );
}

/**
 * Write NVSHMEM_BARRIER's three words (the counters' address, the bytes between PEs' slices, the
 * counters per PE) at `global`, a module's `tirx_nvshmem_barrier` on the current context, and
 * wait for the default stream (as writePeState).
 */
export function writeBarrierState(global: CuHandle, b: PeBarrier): void {
  const words = BigUint64Array.from([b.ptr, BigInt(b.stride), BigInt(b.slots)]);
  driver().memcpyHtoD(global, new Uint8Array(words.buffer));
  driver().settleDefaultStream();
}
