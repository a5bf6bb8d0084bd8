// One register tile through the element-wise primitives, casts and copies, on the simulated
// device against host math (test/tile-idle-lanes.test.ts, test/tile-flat-shape.test.ts): a case
// names the scope, the block, the tile's shape and its TileLayout; the kernel reads X into the
// tile and writes Y and H from it, with zero race or unwritten-register reports, its PTX queued
// for ptxas.
import { expect } from "vitest";
import { T, compile, tensor, type DeviceLike, type PrimFunc } from "tirx-ts";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { roundF16 } from "@tirx-ts/core";
import { assembleLater } from "./ptxas-deferred.js";
import { smallInts } from "./small-ints.js";

/** The scope of a tile primitive: T.tile.warp / wg / cta. */
export type Scope = "warp" | "wg" | "cta";

/** A register tile to run through {@link runElementwise}. */
export interface ElementwiseCase {
  what: string;
  scope: Scope;
  /** Threads of the one-CTA launch. */
  block: number;
  shape: number[];
  /** The tile's TileLayout, as TIRx writes it. */
  layout: string;
  /**
   * Columns of the 2-D tensor the tile is a part of (rows `viewCols` apart), when wider than
   * the tile's elements per row; absent, the tensors have the tile's shape.
   */
  viewCols?: number;
}

/** Elements of a shape. */
export const numel = (s: readonly number[]): number => s.reduce((a, b) => a * b, 1);

/** The tensors' shape and the tile's rows × columns as the host sees them. */
function host(c: ElementwiseCase): { shape: number[]; cols: number; wide: number } {
  const rows = c.shape[0]!;
  const cols = numel(c.shape) / rows;
  const wide = c.viewCols ?? cols;
  return { shape: c.viewCols ? [rows, wide] : c.shape, cols, wide };
}

/**
 * The kernel `name` for `c`: Y = 2 · (j < last ? 2x + 3 : 3) (j the tile's last index) through
 * copy, zero, fill, add (a scalar and a tile), fma, select, a round trip through shared memory
 * and add; H the float16 cast before the round trip. X, Y and H have the tile's shape, or are
 * [rows, viewCols] with the tile their first columns.
 */
export function elementwiseKernel(c: ElementwiseCase, name: string): PrimFunc {
  const { shape: s, scope } = c;
  const { shape, cols } = host(c);
  const last = s[s.length - 1]!;
  return T.function(
    name,
    {
      X: T.Tensor(shape, "float32"),
      Y: T.Tensor(shape, "float32"),
      H: T.Tensor(shape, "float16"),
    },
    ({ X, Y, H }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: c.block }) });
      const layout = T.TileLayout(c.layout);
      const f = T.alloc_local(s, "float32", { layout });
      const g = T.alloc_local(s, "float32", { layout });
      const f2 = T.alloc_local(s, "float32", { layout });
      const h = T.alloc_local(s, "float16", { layout });
      const sh = T.alloc_shared(s, "float32");
      const [xs, ys, hs] = [X, Y, H].map((v) => (c.viewCols ? v.sub(":", `0:${cols}`) : v));
      T.tile[scope].copy(f, xs!);
      // g = 3: zero, a scalar add, fill and a tile add.
      T.tile[scope].zero(g);
      T.tile[scope].add(g, g, 1);
      T.tile[scope].fill(f2, 2);
      T.tile[scope].add(g, g, f2);
      T.tile[scope].fma(f, f, 2, g);
      T.tile[scope].select(f, (idx) => idx[idx.length - 1]!.lt(last - 1), f, g);
      T.tile[scope].cast(h, f);
      T.tile[scope].copy(hs!, h);
      T.tile[scope].copy(sh, f);
      T.cuda.cta_sync();
      T.tile[scope].copy(f2, sh);
      T.tile[scope].add(f, f, f2);
      T.tile[scope].copy(ys!, f);
    },
  );
}

/**
 * Run {@link elementwiseKernel} of `c` on `dev` with X small integers from `seed`; expects no
 * report and Y, H equal to host math (columns past the tile 0).
 */
export function runElementwise(
  c: ElementwiseCase,
  name: string,
  dev: DeviceLike,
  seed: number,
): void {
  const fn = elementwiseKernel(c, name);
  assembleLater(compileToPtx(fn, { arch: "sm_80" }).text, "sm_80", `${fn.name} ${c.what}`);
  const { shape, cols, wide } = host(c);
  const last = c.shape[c.shape.length - 1]!;
  const x = smallInts(numel(shape), seed);
  const X = tensor(x, { shape, dtype: "float32", device: dev });
  const Y = tensor.zeros(shape, "float32", dev);
  const H = tensor.zeros(shape, "float16", dev);
  const r = compile(fn, { target: "cuda", hazards: "collect" })(X, Y, H);
  expect(r.reports.map((e) => `${e.code} ${e.message}`)).toEqual([]);
  // Element k's last index: from its column of the wider tensor, else from k itself.
  const before = Array.from(x, (v, k) => {
    const col = k % wide;
    if (col >= cols) return 0;
    return (c.viewCols ? col : k) % last < last - 1 ? 2 * v + 3 : 3;
  });
  expect(Array.from(Y.toArray() as Float32Array)).toEqual(before.map((v) => 2 * v));
  expect(Array.from(H.toArray() as Float32Array, Number)).toEqual(before.map(roundF16));
}
