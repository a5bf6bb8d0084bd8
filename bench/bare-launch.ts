// The bare koffi launch of bench/launch.ts's and bench/launch-cpu.ts's floor rows: one
// cuLaunchKernelEx of a kernel with one pointer parameter, its CUlaunchConfig and kernelParams
// built once in memory that never moves, so that a call is the FFI call and nothing else.
import koffi from "koffi";

/**
 * A CUlaunchConfig (cuda.h, CUDA 12.0: grid 1 × 1 × 1, block `threads` × 1 × 1, no dynamic
 * shared memory, the default stream, no attributes; 56 bytes) at `config`, and at `params` a
 * kernelParams array whose one entry points at a slot holding `ptr` (a CUdeviceptr). The
 * arguments of `cuLaunchKernelEx(config, fn, params, 0n)`.
 */
export function bareLaunch(threads: number, ptr: bigint): { config: bigint; params: bigint } {
  const config = koffi.alloc("uint8_t", 96) as bigint;
  const view = new DataView(koffi.view(config, 96));
  for (let i = 0; i < 96; i += 4) view.setUint32(i, 0, true);
  [1, 1, 1, threads, 1, 1, 0].forEach((x, i) => view.setUint32(4 * i, x, true));
  view.setBigUint64(64, ptr, true);
  view.setBigUint64(72, config + 64n, true);
  return { config, params: config + 72n };
}
