import { archForSm } from "@tirx-ts/core";
import type { CudaDevice } from "./device.js";

/**
 * The PTX target for `device`: its own compute capability (`sm_90` on an H100/H200, `sm_89` on
 * an L4), or, for a GPU newer than every target tirx-ts knows, the newest one (PTX for an older
 * target is JIT-compiled forward by the driver); core's `archForSm`. Never an architecture-
 * specific target: codegen's `defaultArch` raises `sm_90` to `sm_90a` for a kernel that needs it.
 * @returns a name from core's `ARCHS`.
 */
export function archForDevice(device: Pick<CudaDevice, "computeCapability">): string {
  const [major, minor] = device.computeCapability;
  return archForSm(major * 10 + minor).name;
}
