import {
  composeLayout,
  isDType,
  isTileLayout,
  mmaSyncOperandLayout,
  mmaSyncTileLayout,
  parseTileLayout,
  tileLayout,
  TirxError,
  wgLocalLayout,
  wgmmaOperandLayout,
  wgmmaTileLayout,
  type ComposeLayout as ComposeLayoutT,
  type DType,
  type IterSpec,
  type LayoutAxis,
  type MmaOperand,
  type MmaSyncShape,
  type StrideSpec,
  type SwizzleLayout,
  type TileLayout as TileLayoutT,
  type WgmmaOperand,
} from "@tirx-ts/core";
import { show } from "./expr.js";
import { callerSpan } from "./span.js";

/*
 * TIRx's layout surface (`from tvm.tirx.layout import TileLayout, S, R, ...`) in TypeScript.
 * Python writes `TileLayout(S[(8, 2, 4, 2) : (4@laneid, 1@warpid, 1@laneid, 1)])`; TypeScript
 * has no `@` operator or slice syntax, so a stride on an axis is the typed string "4@laneid"
 * (a bare number is the memory axis m), and the parts are calls:
 *   T.TileLayout(T.S([8, 2, 4, 2], ["4@laneid", "1@warpid", "1@laneid", 1]), T.R([2], ["4@warpid"]))
 * or the notation itself, parsed:
 *   T.TileLayout("S[(8, 2, 4, 2) : (4@laneid, 1@warpid, 1@laneid, 1)] + R[2 : 4@warpid]")
 */

/** A stride: a number on the memory axis `m`, or `"k@axis"` (`"4@laneid"`). */
export type Stride = number | `${number}@${LayoutAxis}`;

/** The shard part `S[...]` of a layout (from `T.S`). */
export interface ShardSpec extends IterSpec {
  readonly kind: "S";
}

/** The replica part `R[...]` of a layout (from `T.R`). */
export interface ReplicaSpec extends IterSpec {
  readonly kind: "R";
}

/** The offset part `O[...]` of a layout (from `T.O`). */
export interface OffsetSpec {
  readonly kind: "O";
  readonly terms: readonly StrideSpec[];
}

/**
 * TIRx `S[(extents) : (strides)]`: the shard, a logical factor per extent (outermost first),
 * stride `strides[i]` on its axis. Without strides, contiguous row-major on `m` (`T.S([4, 8])`
 * is TIRx's `S[4, 8]`).
 * @example T.S([8, 2, 4, 2], ["4@laneid", "1@warpid", "1@laneid", 1])
 * @throws TirxError TX1026 (layout/tile-layout) for an extent that is not a positive integer, a
 *   stride that is not an integer, an unknown axis, or counts that differ.
 */
export function S(extents: readonly number[], strides?: readonly Stride[]): ShardSpec {
  const span = callerSpan();
  tileLayout({ shard: { extents, ...(strides ? { strides } : {}) } }, span);
  return { kind: "S", extents: [...extents], ...(strides ? { strides: [...strides] } : {}) };
}

/**
 * TIRx `R[(extents) : (strides)]`: the replica, iters the logical index does not select; every
 * combination of their values holds a copy (`T.R([2], ["4@warpid"])`: warps w and w + 4).
 * @throws TirxError TX1026 as {@link S}.
 */
export function R(extents: readonly number[], strides?: readonly Stride[]): ReplicaSpec {
  const span = callerSpan();
  tileLayout(
    { shard: { extents: [] }, replica: { extents, ...(strides ? { strides } : {}) } },
    span,
  );
  return { kind: "R", extents: [...extents], ...(strides ? { strides: [...strides] } : {}) };
}

/**
 * TIRx's offset O: constant terms summed per axis (`T.O(16, "3@laneid")`: 16 on `m`, 3 on
 * `laneid`). @throws TirxError TX1026 for a term that is not an integer on a known axis.
 */
export function O(...terms: Stride[]): OffsetSpec {
  const span = callerSpan();
  tileLayout({ shard: { extents: [] }, offset: terms }, span);
  return { kind: "O", terms: [...terms] };
}

const kindOf = (x: unknown): unknown =>
  typeof x === "object" && x !== null ? (x as { kind?: unknown }).kind : undefined;

/**
 * TIRx `TileLayout(S[...] + R[...] + offset)`: a map from a tile's logical elements to physical
 * coordinates on the axes `m` (the slot in a thread's array, or the memory offset), `laneid`,
 * `warpid`, `tid_in_wg`, `wgid`, `tid`, `cta_in_cluster` and `pid` (reserved for multi-GPU).
 * Give the parts (`T.S(...)`, then optionally `T.R(...)` and `T.O(...)`) or the notation as one
 * string (`"S[(8, 2, 4, 2) : (4@laneid, 1@warpid, 1@laneid, 1)] + R[2 : 4@warpid] + O[16]"`,
 * what the printers write). For a register tile: `T.alloc_local(shape, dtype, { layout })`.
 * @throws TirxError TX1026 (layout/tile-layout) for notation that does not parse, parts other
 *   than one S then at most one R and one O, or a spec `T.S` rejects.
 */
export function TileLayout(
  spec: string | ShardSpec,
  ...parts: readonly (ReplicaSpec | OffsetSpec)[]
): TileLayoutT {
  const span = callerSpan();
  if (typeof spec === "string") {
    if (parts.length > 0) {
      throw new TirxError(
        "TX1026",
        "T.TileLayout: notation text is the whole layout; write R[...] and O[...] inside it",
        span,
      );
    }
    return parseTileLayout(spec, span);
  }
  if (kindOf(spec) !== "S") {
    throw new TirxError(
      "TX1026",
      `T.TileLayout takes T.S(...) (then T.R(...), T.O(...)) or the notation text, got ${show(spec)}`,
      span,
    );
  }
  let replica: ReplicaSpec | undefined;
  let offset: OffsetSpec | undefined;
  for (const p of parts) {
    const k = kindOf(p);
    if (k === "R" && !replica) replica = p as ReplicaSpec;
    else if (k === "O" && !offset) offset = p as OffsetSpec;
    else {
      throw new TirxError(
        "TX1026",
        `T.TileLayout: after T.S(...) come at most one T.R(...) and one T.O(...), got ${show(p)}`,
        span,
      );
    }
  }
  return tileLayout(
    {
      shard: spec,
      ...(replica ? { replica } : {}),
      ...(offset ? { offset: offset.terms } : {}),
    },
    span,
  );
}

/**
 * TIRx `ComposeLayout(swizzle, tile)`: `tile`, then the XOR swizzle on its memory coordinate
 * `m`; a byte swizzle (`T.swizzle_mode("128B")`) needs the tile's `dtype`.
 * @throws TirxError TX1002 for a `swizzle` that is no swizzle layout (`T.SwizzleLayout`,
 *   `T.swizzle_mode`), a `tile` that is no TileLayout, or a `dtype` that is no dtype name;
 *   TX1016 for a byte swizzle without a dtype whose elements it can count.
 */
export function ComposeLayout(
  swizzle: SwizzleLayout,
  tile: TileLayoutT,
  dtype?: DType,
): ComposeLayoutT {
  const span = callerSpan();
  const kindOf = (x: unknown): unknown =>
    typeof x === "object" && x !== null ? (x as { kind?: unknown }).kind : undefined;
  if (kindOf(swizzle) !== "SwizzleLayout") {
    throw new TirxError(
      "TX1002",
      `T.ComposeLayout: swizzle ${show(swizzle)} is not a swizzle layout; use T.SwizzleLayout(...) or T.swizzle_mode("128B")`,
      span,
    );
  }
  if (!isTileLayout(tile)) {
    throw new TirxError(
      "TX1002",
      `T.ComposeLayout: tile ${show(tile)} is not a TileLayout; use T.TileLayout(...)`,
      span,
    );
  }
  if (dtype !== undefined && !isDType(dtype)) {
    throw new TirxError("TX1002", `T.ComposeLayout: dtype ${show(dtype)} is not a dtype`, span);
  }
  return composeLayout(swizzle, tile, dtype, span);
}

/**
 * The built-in layouts (`T.layout.*`), TIRx's names where TIRx has one:
 * - `wg_local_layout(cols, rows = 128)` (TIRx's): one row per thread of the warpgroup;
 * - `mma_sync_operand_layout(operand, shape, dtype)` (TIRx style; TIRx has none): the warp's
 *   mma.sync fragment of operand "A" | "B" | "C" for "m16n8k16" (float16 / bfloat16 A and B),
 *   "m16n8k8" (tf32 in float32), "m16n8k32" (int8), C float32 (or float16 at m16n8k16) or
 *   int32 (PTX ISA, "Matrix Fragments for mma.m16n8k16 / m16n8k8 / m16n8k32");
 * - `mma_sync_tile_layout(operand, shape, dtype, rows, cols)` (TIRx style): a warp tile of
 *   those fragments, atoms row-major (what `T.tile.warp.gemm` reads);
 * - `wgmma_operand_layout(operand, n, dtype)` (TIRx style; TIRx has none): the warpgroup's
 *   `wgmma.mma_async.m64nNk16` accumulator "D" (64 × n float32) or register "A" (64 × 16
 *   float16 / bfloat16) (PTX ISA, wgmma "Register Fragments");
 * - `wgmma_tile_layout(operand, rows, cols, dtype)` (TIRx style): a warpgroup tile of those
 *   fragments, 64-row blocks one after the other in the thread's array (what
 *   `T.tile.wg.gemm_async` reads: C of M = 64·r and N > 256, a register A of K > 16).
 * Each throws TirxError TX1026 for a shape, operand or dtype the op table does not have.
 */
export const layout = {
  /** TIRx `wg_local_layout(cols, rows=128)`: `S[(rows, cols) : (1@tid_in_wg, 1)]`. */
  wg_local_layout: (cols: number, rows = 128): TileLayoutT =>
    wgLocalLayout(cols, rows, callerSpan()),
  /** The mma.sync fragment of one operand over the warp's 32 lanes (shape [M, K], [K, N] or [M, N]). */
  mma_sync_operand_layout: (operand: MmaOperand, shape: MmaSyncShape, dtype: DType): TileLayoutT =>
    mmaSyncOperandLayout(operand, shape, dtype, callerSpan()),
  /**
   * A warp tile of rows × cols made of mma.sync fragments of one operand, atoms row-major, each
   * atom's slots contiguous (core's `mmaSyncTileLayout`): what `T.tile.warp.gemm` and the
   * ldmatrix `T.tile.warp.copy` read. TX1026 for sizes that are not multiples of the atom.
   */
  mma_sync_tile_layout: (
    operand: MmaOperand,
    shape: MmaSyncShape,
    dtype: DType,
    rows: number,
    cols: number,
  ): TileLayoutT => mmaSyncTileLayout(operand, shape, dtype, rows, cols, callerSpan()),
  /** The wgmma m64nNk16 register fragment of "D" ([64, n]) or "A" ([64, 16]) over 128 threads. */
  wgmma_operand_layout: (operand: WgmmaOperand, n: number, dtype: DType): TileLayoutT =>
    wgmmaOperandLayout(operand, n, dtype, callerSpan()),
  /**
   * A warpgroup tile of rows × cols (multiples of 64 × 8 for "D", 64 × 16 for "A") of wgmma
   * fragments (core's `wgmmaTileLayout`): what `T.tile.wg.gemm_async` reads. TX1026 otherwise.
   */
  wgmma_tile_layout: (
    operand: WgmmaOperand,
    rows: number,
    cols: number,
    dtype: DType,
  ): TileLayoutT => wgmmaTileLayout(operand, rows, cols, dtype, callerSpan()),
};
