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

/** CU_COMPUTE_ACCELERATED_TARGET_BASE (cuda.h): CU_TARGET_COMPUTE_90A = base + 90. */
const ACCELERATED_TARGET_BASE = 0x10000;

/**
 * The JIT target (CUjit_target) a PTX module needs, from its `.target` directive: for an
 * architecture-specific target (`sm_90a`: wgmma, setmaxnreg, multicast) CU_TARGET_COMPUTE_90A
 * (CU_COMPUTE_ACCELERATED_TARGET_BASE + 90), with its name; `undefined` for any other module,
 * which the driver compiles for the context's device. Passed as CU_JIT_TARGET when the driver
 * compiles (no toolkit ptxas, or TIRX_CACHE=off), and names the cubin's arch in the disk cache.
 * (It did not remove the driver JIT's spills in the FlashAttention kernels on an H200 with the
 * CUDA 13.0 driver; compiling with the toolkit's ptxas did: see ptxas.ts.) Sources: CUDA Driver
 * API, CUjit_option CU_JIT_TARGET and CUjit_target.
 * @param ptx PTX module text.
 */
export function jitTargetOf(
  ptx: string,
): { readonly target: number; readonly arch: string } | undefined {
  const m = /^\s*\.target\s+sm_(\d+)a\b/m.exec(ptx);
  if (!m) return undefined;
  return { target: ACCELERATED_TARGET_BASE + Number(m[1]), arch: `sm_${m[1]}a` };
}
