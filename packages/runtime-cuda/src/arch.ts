import { ARCHS } from "@tirx-ts/codegen-ptx";
import type { CudaDevice } from "./device.js";

/**
 * The PTX target for `device`: its own compute capability (`sm_90` on an H100/H200, `sm_89` on
 * an L4), or, for a GPU newer than every target codegen knows, the newest one (PTX for an older
 * target is JIT-compiled forward by the driver). `sm_90a` (arch-specific features) is chosen only
 * when asked for explicitly: no op of the op table needs it yet.
 * @returns a name from codegen's `ARCHS`.
 */
export function archForDevice(device: Pick<CudaDevice, "computeCapability">): string {
  const [major, minor] = device.computeCapability;
  const sm = major * 10 + minor;
  const exact = ARCHS.find((a) => a.sm === sm && !a.name.endsWith("a"));
  if (exact) return exact.name;
  let best = ARCHS[0]!;
  for (const a of ARCHS) if (!a.name.endsWith("a") && a.sm <= sm && a.sm >= best.sm) best = a;
  return best.name;
}
