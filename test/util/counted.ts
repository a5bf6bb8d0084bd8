// Counting, not timing: how many kernels a call builds and compiles. The runtime's compile cache is
// imported by its source path; with the packages built, the tests' resolver (built-packages.ts)
// loads the built module for it, so it is the instance `tirx-ts` uses either way.
import { gemmBuildStats } from "@tirx-ts/kernels";
import { COMPILED } from "../../packages/runtime/src/compile.js";

/**
 * Run `f` and count what it added: `built`, gemm's kernel builds (`gemmBuildStats.kernels`), and
 * `compiled`, entries added to the runtime's compile cache (one per kernel compiled to PTX and
 * loaded; a cache hit adds none). Counts are process-wide: run nothing else concurrently in the
 * same module graph. Throws what `f` throws.
 * @example const r = counted(() => gemm(a, b, { alpha: 2 })); expect(r.compiled).toBe(0);
 */
export function counted<R>(f: () => R): { built: number; compiled: number; value: R } {
  const [b0, c0] = [gemmBuildStats.kernels, COMPILED.size];
  const value = f();
  return { built: gemmBuildStats.kernels - b0, compiled: COMPILED.size - c0, value };
}
