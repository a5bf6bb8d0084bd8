// The warpgroup-scope reduction kernel shared by the simulator test (test/tile-reduce-wg.test.ts)
// and the GPU differential test (test/gpu/tile-reduce-wg.test.ts).
import { T, type PrimFunc } from "tirx-ts";
import { intsFrom } from "./lcg.js";

/** Integers in [-50, 50], distinct enough that a wrong partial changes a result. */
export function ints(n: number, seed: number): Float32Array {
  return Float32Array.from({ length: n }, intsFrom(seed, -50, 50));
}

export const ROWS = 4;
export const COLS = 128;
/** A warpgroup's [4, 128] tile: 4 slots per thread, columns over tid_in_wg. */
export const srcLayout = () => T.TileLayout(T.S([ROWS, COLS], [1, "1@tid_in_wg"]));
/** The reduced [4, 1] tile, replicated over the threads that reduced it. */
export const dstLayout = () => T.TileLayout(T.S([ROWS, 1]), T.R([COLS], ["1@tid_in_wg"]));

/**
 * `iters` rounds (a loop when > 1) in which each of 2 warpgroups reduces its own [4, 128] slice
 * of X by sum, max and min at wg scope, with axis `axis` (1 or -1).
 */
export function wgReduce(name: string, iters: number, axis: number): PrimFunc {
  return T.function(
    name,
    {
      X: T.Tensor([iters, 2, ROWS, COLS], "float32"),
      R: T.Tensor([iters, 2, 3, ROWS], "float32"),
    },
    ({ X, R }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 256 }) });
      const wg = T.cuda.thread_idx("x").floordiv(128);
      const a = T.alloc_local([ROWS, COLS], "float32", { layout: srcLayout() });
      const d = T.alloc_local([ROWS, 1], "float32", { layout: dstLayout() });
      const round = (it: number | ReturnType<typeof T.cuda.thread_idx>) => {
        T.tile.wg.copy(a, X.sub(it, wg));
        T.tile.wg.sum(d, a, axis);
        T.tile.wg.copy(R.sub(it, wg, 0), d);
        T.tile.wg.max(d, a, axis);
        T.tile.wg.copy(R.sub(it, wg, 1), d);
        T.tile.wg.min(d, a, axis);
        T.tile.wg.copy(R.sub(it, wg, 2), d);
      };
      if (iters === 1) round(0);
      else for (const it of T.serial(0, iters)) round(it);
    },
  );
}

/**
 * The exact results of {@link wgReduce} on input `x` (iters × 2 × ROWS × COLS): per round and
 * warpgroup, the row sums, maxima and minima (exact: integer inputs keep float32 sums exact).
 */
export function wgReduceReference(x: Float32Array, iters: number): number[] {
  const want: number[] = [];
  for (let it = 0; it < iters; it++)
    for (let g = 0; g < 2; g++) {
      const rows = Array.from({ length: ROWS }, (_, r) => {
        const at = ((it * 2 + g) * ROWS + r) * COLS;
        return Array.from(x.subarray(at, at + COLS));
      });
      want.push(...rows.map((row) => row.reduce((p, v) => p + v, 0)));
      want.push(...rows.map((row) => Math.max(...row)));
      want.push(...rows.map((row) => Math.min(...row)));
    }
  return want;
}
