// Run a TMA case (cases.ts) on the GPU, for the GPU tests of the instruction-level TMA ops and of
// T.tile.copy_async's TMA and bulk paths; the simulator's twin is sim-run.ts.
import { compileCuda, cudaTensor, cudaZeros } from "@tirx-ts/runtime-cuda";
import type { TmaCase } from "./cases.js";

/** Run a case on cuda(0) (sm_90a); the output's raw bytes. Needs a CUDA driver. */
export function gpuCase(c: TmaCase): Uint8Array {
  const run = compileCuda(c.fn, { arch: "sm_90a" });
  const ts = c.inputs.map((i) => cudaTensor(i.data, { shape: i.shape, dtype: i.dtype }));
  const o = cudaZeros(c.out.shape, c.out.dtype);
  run(...ts, o);
  const bytes = o.toBytes();
  for (const t of [...ts, o]) t.dispose();
  return bytes;
}
