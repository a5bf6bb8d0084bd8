import type { DType } from "../dtype.js";
import type { LayoutAxis, TileLayout } from "../ir/tile-layout.js";
import { LAYOUT_AXES } from "../ir/tile-layout.js";
import {
  mmaSyncOperandShape,
  mmaSyncTileLayout,
  wgLocalLayout,
  wgmmaOperandLayout,
  wgmmaTileLayout,
  type MmaOperand,
  type MmaSyncShape,
} from "../layout/fragments.js";
import { layoutCoordinates, layoutSize, showTileLayout } from "../layout/tile-layout.js";

/*
 * Layouts as a TX2022 message names them: a layout one of the built-in constructors
 * (`T.layout.*`, dsl/src/layout.ts) builds is shown as that call, which a user can paste and
 * read; any other layout in TIRx notation `S[...] + R[...] + O[...]`.
 */

/** The mma.sync shapes and operands the built-ins take (layout/fragments.ts). */
const MMA_SHAPES: readonly MmaSyncShape[] = ["m16n8k16", "m16n8k8", "m16n8k32"];
const MMA_OPERANDS: readonly MmaOperand[] = ["A", "B", "C"];

/**
 * Every built-in call that could build a `rows` × `cols` tile of `dtype`, as [the call's text,
 * a builder that throws TX1026 when the built-in does not take these arguments].
 */
function candidates(rows: number, cols: number, dtype: DType): [string, () => TileLayout][] {
  const out: [string, () => TileLayout][] = [];
  const d = JSON.stringify(dtype);
  for (const shape of MMA_SHAPES) {
    for (const op of MMA_OPERANDS) {
      // One atom is mma_sync_operand_layout too; the tile call is what gemm and copy document.
      const [r, c] = mmaSyncOperandShape(op, shape);
      if (rows % r === 0 && cols % c === 0) {
        out.push([
          `T.layout.mma_sync_tile_layout("${op}", "${shape}", ${d}, ${rows}, ${cols})`,
          () => mmaSyncTileLayout(op, shape, dtype, rows, cols),
        ]);
      }
    }
  }
  if (rows % 64 === 0) {
    for (const op of ["D", "A"] as const) {
      out.push([
        `T.layout.wgmma_tile_layout("${op}", ${rows}, ${cols}, ${d})`,
        () => wgmmaTileLayout(op, rows, cols, dtype),
      ]);
    }
  }
  if (rows === 64) {
    out.push([
      `T.layout.wgmma_operand_layout("D", ${cols}, ${d})`,
      () => wgmmaOperandLayout("D", cols, dtype),
    ]);
    if (cols === 16) {
      out.push([
        `T.layout.wgmma_operand_layout("A", 16, ${d})`,
        () => wgmmaOperandLayout("A", 16, dtype),
      ]);
    }
  }
  out.push([
    `T.layout.wg_local_layout(${cols}${rows === 128 ? "" : `, ${rows}`})`,
    () => wgLocalLayout(cols, rows),
  ]);
  return out;
}

/** The most elements a tile may have for its layout to be matched against the built-ins. */
const NAME_LIMIT = 1 << 16;

/** Every physical coordinate of element `e` (replicas included), zero axes left out, as text. */
function coordsText(l: TileLayout, e: number): string {
  return layoutCoordinates(l, e)
    .map((c) =>
      LAYOUT_AXES.filter((a: LayoutAxis) => (c[a] ?? 0) !== 0)
        .map((a) => `${a}=${c[a]}`)
        .join(","),
    )
    .sort()
    .join(";");
}

/** True when `a` and `b` send each of the first `n` logical elements to the same coordinates. */
function sameMap(a: TileLayout, b: TileLayout, n: number): boolean {
  if (layoutSize(a) !== n || layoutSize(b) !== n) return false;
  for (let e = 0; e < n; e++) if (coordsText(a, e) !== coordsText(b, e)) return false;
  return true;
}

/**
 * The built-in constructor call (`T.layout.mma_sync_tile_layout(...)`, which a single atom's
 * `mma_sync_operand_layout` equals, `T.layout.wgmma_tile_layout(...)`, which a 64-row
 * `wgmma_operand_layout` equals, then `T.layout.wgmma_operand_layout(...)` and
 * `T.layout.wg_local_layout(...)`) that builds `l` for a tile of `shape` (2-D, rows × cols) and
 * `dtype`: the same coordinates for every element, replicas included. Undefined when none does
 * (or the tile is not 2-D, or has more than 2^16 elements). For messages only: it builds each
 * candidate, so it costs the tile's elements times the candidates (about 20).
 * @example builtinLayoutCall(mmaSyncTileLayout("C", "m16n8k16", "float32", 16, 16), [16, 16], "float32")
 *   // 'T.layout.mma_sync_tile_layout("C", "m16n8k16", "float32", 16, 16)'
 */
export function builtinLayoutCall(
  l: TileLayout,
  shape: readonly number[],
  dtype: DType,
): string | undefined {
  if (shape.length !== 2) return undefined;
  const [rows, cols] = shape as [number, number];
  const n = rows * cols;
  if (layoutSize(l) !== n || n > NAME_LIMIT) return undefined;
  for (const [call, build] of candidates(rows, cols, dtype)) {
    let c: TileLayout;
    try {
      c = build();
    } catch {
      continue;
    }
    if (sameMap(l, c, n)) return call;
  }
  return undefined;
}

/**
 * `l` as a TX2022 message shows a layout for a tile of `shape` and `dtype`: the built-in call
 * that builds it ({@link builtinLayoutCall}), else its TIRx notation (`showTileLayout`).
 * @example layoutText(parseTileLayout("S[(128, 8) : (1@tid_in_wg, 1)]"), [128, 8], "float32")
 *   // "T.layout.wg_local_layout(8)"
 */
export function layoutText(l: TileLayout, shape: readonly number[], dtype: DType): string {
  return builtinLayoutCall(l, shape, dtype) ?? showTileLayout(l);
}
