// Row softmax with the tile layer: the kernel of examples/softmax.ts (one CTA per float16 row,
// 16-byte vector loads, warp butterflies, one partial per warp in shared memory, ex2.approx)
// written with T.tile primitives over a register tile whose TileLayout gives each thread its
// 8-element vectors. Same result bit for bit as examples/softmax.ts on the simulator.
// Run: npx tsx examples/tile/softmax.ts
import {
  T,
  compile,
  device,
  explainTile,
  isMain,
  runAsMain,
  tensor,
  type DeviceLike,
  type ExampleResult,
} from "tirx-ts";
import type { PrimFunc } from "@tirx-ts/core";
import { BENCH_THREADS, runExample as check, softmax as instructionLevel } from "../softmax.js";

const LOG2E = Math.fround(Math.LOG2E);

/**
 * The kernel for a rows × cols float16 matrix with `threads` threads per row: cols a multiple
 * of 8 · threads (TX2022 or TX1026 otherwise, from the layout).
 */
export function makeTileSoftmax(rows: number, cols: number, threads = 256): PrimFunc {
  const vectors = cols / (8 * threads);
  // Element (j · threads + t) · 8 + e of the row is slot j · 8 + e of thread t.
  const rowLayout = T.TileLayout(T.S([vectors, threads, 8], ["8@m", "1@tid", "1@m"]));
  const oneLayout = T.TileLayout(T.S([1]), T.R([threads], ["1@tid"]));
  return T.function(
    "softmax",
    { X: T.Tensor([rows, cols], "float16"), Y: T.Tensor([rows, cols], "float16") },
    ({ X, Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: rows, block: threads }) });
      const row = T.cuda.block_idx("x");
      const h = T.alloc_local([cols], "float16", { layout: rowLayout });
      const f = T.alloc_local([cols], "float32", { layout: rowLayout });
      const mx = T.alloc_local([1], "float32", { layout: oneLayout });
      const sum = T.alloc_local([1], "float32", { layout: oneLayout });
      T.tile.cta.copy(h, X.sub(row));
      T.tile.cta.cast(f, h);
      T.tile.cta.max(mx, f, 0);
      const nb = T.let_("nb", mx.get([0]).mul(LOG2E).mul(-1));
      T.tile.cta.fma(f, f, LOG2E, nb);
      T.tile.cta.exp2(f, f, { approx: true });
      T.tile.cta.sum(sum, f, 0);
      T.tile.cta.mul(f, f, T.float32(1).div(sum.get([0])));
      T.tile.cta.cast(h, f);
      T.tile.cta.copy(Y.sub(row), h);
    },
  );
}

/** The example's size, as examples/softmax.ts. */
export const softmax = makeTileSoftmax(32, 2048);

/** The benchmark's kernel (bench/compute-kernels.ts): examples/softmax.ts's threads per row. */
export function makeBenchKernel(sizes: { rows: number; cols: number }): { fn: PrimFunc } {
  return { fn: makeTileSoftmax(sizes.rows, sizes.cols, BENCH_THREADS) };
}

/**
 * Run at 32 × 2048 on `dev` with examples/softmax.ts's check, and compare the output bytes with
 * the instruction-level kernel's.
 */
export function runExample(dev: DeviceLike = device(), kernel: PrimFunc = softmax): ExampleResult {
  const r = check(dev, kernel);
  const twin = check(dev, instructionLevel);
  const a = r.outputs?.[0];
  const b = twin.outputs?.[0];
  const same =
    a !== undefined && b !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);
  return {
    ...r,
    ok: r.ok && same,
    summary: `${r.summary}; ${same ? "bit for bit" : "NOT bit for bit"} the output of examples/softmax.ts`,
  };
}

if (isMain(import.meta.url)) {
  for (const line of explainTile(softmax)) console.error(line);
  runAsMain("softmax", runExample);
}
