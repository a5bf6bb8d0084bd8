import type { DeviceLike } from "@tirx-ts/core";

/** The simulated CUDA device: kernels run on the CPU with GPU semantics and hazard checks. */
export interface SimDevice extends DeviceLike {
  readonly kind: "sim";
  readonly name: "sim";
}

const SIM: SimDevice = Object.freeze({ kind: "sim", name: "sim" });

/**
 * The simulated device (a singleton: every call returns the same object, so tensors made on it
 * pass core's "one device" argument check).
 */
export function sim(): SimDevice {
  return SIM;
}
