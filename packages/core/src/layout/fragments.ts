import type { DType } from "../dtype.js";
import { TirxError } from "../diagnostics.js";
import { showValue } from "../show.js";
import type { Span } from "../span.js";
import type { LayoutIter, TileLayout } from "../ir/tile-layout.js";
import {
  groupLayout,
  layoutFromIters,
  layoutSize,
  parseTileLayout,
  tileLayout,
} from "./tile-layout.js";

/*
 * The register fragments of the tensor-core instructions the op table supports, as TileLayouts.
 * TIRx names no mma.sync or wgmma register-fragment layout (its CUDA layout factories are
 * `wg_local_layout`, `tmem_datapath_layout`, `tcgen05_atom_layout` and the shared-memory
 * `mma_atom_layout` / `mma_shared_layout`), so these are named in its style after
 * `tmem_mma_operand_layout(operand, shape, dtype)`: `mma_sync_operand_layout` and
 * `wgmma_operand_layout`. In every layout the slot in the thread's register array is `m`, and
 * with g = lane >> 2 (groupID), t = lane % 4 (threadID_in_group), element i of a lane's array
 * sits at the PTX ISA's [row, col] (PTX ISA, "Matrix Fragments for mma.m16n8k16 / mma.m16n8k8 /
 * mma.m16n8k32", and "Register Fragments and Shared Memory Matrix Layouts" of wgmma).
 */

/** The mma.sync shapes of the op table (`MMA_VARIANTS`). */
export type MmaSyncShape = "m16n8k16" | "m16n8k8" | "m16n8k32";

/** An mma.sync operand: A (M × K), B (K × N), C/D (M × N; D has C's layout). */
export type MmaOperand = "A" | "B" | "C";

interface MmaFragments {
  /** Element dtypes of the A and B register arrays (`tf32` lives in float32 registers). */
  readonly ab: readonly DType[];
  /**
   * Element dtypes of C/D, all in the one C/D layout: the PTX ISA gives a .f16 C/D (two .f16x2
   * registers, c0..c3 low to high) the [row, col] of each c_i of the .f32 C/D (four .f32
   * registers), so float16 slots are the float32 slots, two to a 32-bit register.
   */
  readonly cd: readonly DType[];
  readonly A: readonly [number, number, string];
  readonly B: readonly [number, number, string];
}

/**
 * The C/D fragment of every m16n8 shape: c_i at [g + 8·(i >> 1), 2t + (i & 1)], for a .f32 and
 * .s32 C/D (one register per c_i) and a .f16 C/D (c0, c1 in the first .f16x2 register, c2, c3 in
 * the second) alike (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type" and
 * "... mma.m16n8k8": one figure, "accumulator matrix C/D with .f16x2/.f32 type").
 */
const C_M16N8 = "S[(2, 8, 4, 2) : (2, 4@laneid, 1@laneid, 1)]";

/**
 * Rows, columns and the layout of each fragment, written from the PTX ISA's figures, and the
 * dtypes each shape's C/D takes (mma.sync has no bfloat16 accumulator):
 * - m16n8k16 .f16/.bf16: a_i at [g + 8·((i >> 1) & 1), 2t + (i & 1) + 8·(i >> 2)],
 *   b_i at [2t + (i & 1) + 8·(i >> 1), g]; C/D .f32 (f16 or bf16 A/B) or .f16 (f16 A/B);
 * - m16n8k8 .tf32: a_i at [g + 8·(i & 1), t + 4·(i >> 1)], b_i at [t + 4·i, g]; C/D .f32 (the
 *   only C/D of a .tf32 mma; the f16/bf16 forms of m16n8k8 are not in the table);
 * - m16n8k32 .s8: a_i at [g + 8·((i >> 2) & 1), 4t + (i & 3) + 16·(i >> 3)],
 *   b_i at [4t + (i & 3) + 16·(i >> 2), g]; C/D .s32.
 */
const MMA_SYNC_FRAGMENTS: Readonly<Record<MmaSyncShape, MmaFragments>> = {
  m16n8k16: {
    ab: ["float16", "bfloat16"],
    cd: ["float32", "float16"],
    A: [16, 16, "S[(2, 8, 2, 4, 2) : (2, 4@laneid, 4, 1@laneid, 1)]"],
    B: [16, 8, "S[(2, 4, 2, 8) : (2, 1@laneid, 1, 4@laneid)]"],
  },
  m16n8k8: {
    ab: ["float32"],
    cd: ["float32"],
    A: [16, 8, "S[(2, 8, 2, 4) : (1, 4@laneid, 2, 1@laneid)]"],
    B: [8, 8, "S[(2, 4, 8) : (1, 1@laneid, 4@laneid)]"],
  },
  m16n8k32: {
    ab: ["int8"],
    cd: ["int32"],
    A: [16, 32, "S[(2, 8, 2, 4, 4) : (4, 4@laneid, 8, 1@laneid, 1)]"],
    B: [32, 8, "S[(2, 4, 4, 8) : (4, 1@laneid, 1, 4@laneid)]"],
  },
};

/** A value as a message names it: a string as it is, anything else by showValue (never throws). */
const shapeName = (s: unknown): string => (typeof s === "string" ? s : showValue(s));

function mmaEntry(
  shape: MmaSyncShape,
  operand: MmaOperand,
  span?: Span,
): readonly [number, number, string] {
  const f =
    typeof shape === "string" && Object.hasOwn(MMA_SYNC_FRAGMENTS, shape)
      ? MMA_SYNC_FRAGMENTS[shape]
      : undefined;
  if (!f) {
    throw new TirxError(
      "TX1026",
      `mma_sync_operand_layout: shape ${typeof shape === "string" ? JSON.stringify(shape) : showValue(shape)} is not one of ${Object.keys(MMA_SYNC_FRAGMENTS).join(", ")}`,
      span,
    );
  }
  if (operand === "A") return f.A;
  if (operand === "B") return f.B;
  if (operand === "C") return [16, 8, C_M16N8];
  throw new TirxError(
    "TX1026",
    `mma_sync_operand_layout: operand ${typeof operand === "string" ? JSON.stringify(operand) : showValue(operand)} is not "A", "B" or "C"`,
    span,
  );
}

/** [rows, cols] of an mma.sync operand: A is M × K, B is K × N, C is M × N. */
export function mmaSyncOperandShape(
  operand: MmaOperand,
  shape: MmaSyncShape,
  span?: Span,
): [number, number] {
  const [r, c] = mmaEntry(shape, operand, span);
  return [r, c];
}

/**
 * The warp's register fragment of one mma.sync operand (`mma.sync.aligned.{shape}.row.col`)
 * as a TileLayout of the operand's [rows, cols] ({@link mmaSyncOperandShape}) over `laneid`
 * (32 lanes) and `m` (the slot in the lane's array: 8/4/4 for m16n8k16 A/B/C, 4/2/4 for m16n8k8,
 * 16/8/4 for m16n8k32). Named in TIRx's style (TIRx has no mma.sync fragment layout).
 * `dtype` is the array's element dtype: float16 or bfloat16 (m16n8k16 A/B), float32 (tf32 A/B of
 * m16n8k8, and C of both float shapes), float16 (C of m16n8k16: the accumulator of
 * `mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16`, e.g. a float32 C cast to float16 before
 * it is permuted into an A fragment), int8 (m16n8k32 A/B), int32 (m16n8k32 C). A float16 C has
 * the float32 C's layout (PTX ISA: the same [row, col] for c0..c3 of .f16 and .f32 C/D; the
 * .f16 C/D packs c0, c1 and c2, c3 in two .f16x2 registers). No mma.sync has a bfloat16 C/D.
 * Source: PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type",
 * "... mma.m16n8k8" (.tf32), "... mma.m16n8k32" (.s8).
 * @example mmaSyncOperandLayout("C", "m16n8k16", "float32") // S[(2, 8, 4, 2) : (2, 4@laneid, 1@laneid, 1)]
 * @example mmaSyncOperandLayout("C", "m16n8k16", "float16") // the same layout
 * @throws TirxError TX1026 at `span` for another shape, operand, or a dtype the shape's operand
 *   does not take (the message lists every dtype it takes; for a bfloat16 C it says that no
 *   mma.sync accumulates in bfloat16).
 */
export function mmaSyncOperandLayout(
  operand: MmaOperand,
  shape: MmaSyncShape,
  dtype: DType,
  span?: Span,
): TileLayout {
  const [, , text] = mmaEntry(shape, operand, span);
  const f = MMA_SYNC_FRAGMENTS[shape];
  const ok = operand === "C" ? f.cd : f.ab;
  if (!ok.includes(dtype)) {
    const why =
      operand === "C" && dtype === "bfloat16"
        ? " (mma.sync has no bfloat16 accumulator: bfloat16 A and B accumulate into float32)"
        : "";
    throw new TirxError(
      "TX1026",
      `mma_sync_operand_layout: operand ${operand} of ${shape} holds ${ok.join(" or ")}, not ${shapeName(dtype)}${why}`,
      span,
    );
  }
  return parseTileLayout(text, span);
}

/**
 * A warp's register tile of `rows` × `cols` made of mma.sync fragments of one operand: the
 * tile is a grid of (rows / r) × (cols / c) atoms of the operand's [r, c]
 * ({@link mmaSyncOperandShape}), each atom in the layout of {@link mmaSyncOperandLayout}, and
 * atom (I, J) holds the slots `(I · cols / c + J) · s .. + s - 1` of the lane's array (s slots
 * per atom: 8/4/4 for m16n8k16 A/B/C), atoms row-major. This is the layout `T.tile.warp.gemm`
 * and the ldmatrix lowering of `T.tile.warp.copy` read (any layout whose atoms each hold
 * contiguous slots in the fragment's order serves them; this one is the row-major choice).
 * Named in TIRx's style (TIRx has no mma.sync fragment layout).
 * Source: PTX ISA, "Matrix Fragments for mma.m16n8k16 / mma.m16n8k8 / mma.m16n8k32".
 * A float16 C tile (`dtype` "float16") is the float32 C tile's layout: the accumulator of the
 * f16.f16.f16.f16 mma, or a float32 C tile cast to float16 (then `T.tile.warp.permute_layout` to
 * the A tile of the same rows × cols is register moves: the FlashAttention P·V chain).
 * @example mmaSyncTileLayout("C", "m16n8k16", "float32", 32, 16) // 2 × 2 atoms, 16 slots a lane
 * @example mmaSyncTileLayout("C", "m16n8k16", "float16", 16, 16) // 1 × 2 atoms, 8 slots a lane
 * @throws TirxError TX1026 at `span` as {@link mmaSyncOperandLayout}, and when rows or cols is
 *   not a positive multiple of the atom's.
 */
export function mmaSyncTileLayout(
  operand: MmaOperand,
  shape: MmaSyncShape,
  dtype: DType,
  rows: number,
  cols: number,
  span?: Span,
): TileLayout {
  const atom = mmaSyncOperandLayout(operand, shape, dtype, span);
  const [r, c] = mmaSyncOperandShape(operand, shape, span);
  const ok = (n: number, a: number): boolean => Number.isInteger(n) && n >= a && n % a === 0;
  if (!ok(rows, r) || !ok(cols, c)) {
    throw new TirxError(
      "TX1026",
      `mma_sync_tile_layout: a tile of ${operand} atoms of ${shape} is a multiple of ${r} × ${c}, got ${shapeName(rows)} × ${shapeName(cols)}`,
      span,
    );
  }
  const g = groupLayout(atom, [r, c], span);
  const iters = g.layout.shard;
  const s = layoutSize(atom, "m");
  const gc = cols / c;
  const outer = (extent: number, stride: number): LayoutIter[] =>
    extent === 1 ? [] : [{ extent, stride, axis: "m" }];
  return layoutFromIters(
    [
      ...outer(rows / r, gc * s),
      ...iters.slice(g.seps[0], g.seps[1]),
      ...outer(gc, s),
      ...iters.slice(g.seps[1], g.seps[2]),
    ],
    [],
    {},
    span,
  );
}

/** A wgmma register operand: A (64 × 16, register A of `wgmma ... RS`) or D (64 × N). */
export type WgmmaOperand = "A" | "D";

/** [rows, cols] of a wgmma register operand: A is 64 × 16, D is 64 × n. */
export function wgmmaOperandShape(operand: WgmmaOperand, n: number): [number, number] {
  return operand === "A" ? [64, 16] : [64, n];
}

/**
 * The warpgroup's register fragment of a `wgmma.mma_async.m64nNk16` operand as a TileLayout over
 * `tid_in_wg` (128 threads) and `m` (the slot in the thread's array):
 * - `"D"` (the float32 accumulator, 64 × n, n/2 slots): warp w = tid_in_wg >> 5 holds rows
 *   16w..16w+15; d_i of lane (g, t) at [16w + g + 8·((i >> 1) & 1), 8·(i >> 2) + 2t + (i & 1)];
 * - `"A"` (float16 / bfloat16 register A of the RS form, 64 × 16, 8 slots): each warp's 16 rows
 *   in the m16n8k16 A fragment, rows offset by 16w.
 * Named in TIRx's style (TIRx has no wgmma register-fragment layout).
 * Source: PTX ISA, wgmma "Register Fragments and Shared Memory Matrix Layouts" (matrix A and
 * accumulator D of .m64nNk16).
 * @throws TirxError TX1026 at `span` for another operand, n not a multiple of 8 in 8..256, or
 *   a dtype other than float32 (D) or float16 / bfloat16 (A).
 */
export function wgmmaOperandLayout(
  operand: WgmmaOperand,
  n: number,
  dtype: DType,
  span?: Span,
): TileLayout {
  if (operand === "A") {
    if (dtype !== "float16" && dtype !== "bfloat16") {
      throw new TirxError(
        "TX1026",
        `wgmma_operand_layout: register A holds float16 or bfloat16, not ${shapeName(dtype)}`,
        span,
      );
    }
    return parseTileLayout(
      "S[(4, 2, 8, 2, 4, 2) : (32@tid_in_wg, 2, 4@tid_in_wg, 4, 1@tid_in_wg, 1)]",
      span,
    );
  }
  if (operand !== "D") {
    throw new TirxError(
      "TX1026",
      `wgmma_operand_layout: operand ${typeof operand === "string" ? JSON.stringify(operand) : showValue(operand)} is not "A" or "D"`,
      span,
    );
  }
  if (typeof n !== "number" || !Number.isInteger(n) || n < 8 || n > 256 || n % 8 !== 0) {
    throw new TirxError(
      "TX1026",
      `wgmma_operand_layout: N of m64nNk16 is a multiple of 8 in 8..256, got ${shapeName(n)}`,
      span,
    );
  }
  if (dtype !== "float32") {
    throw new TirxError(
      "TX1026",
      `wgmma_operand_layout: the accumulator D of the f16/bf16 wgmma is float32, not ${shapeName(dtype)}`,
      span,
    );
  }
  return parseTileLayout(
    `S[(4, 2, 8, ${n / 8}, 4, 2) : (32@tid_in_wg, 2, 4@tid_in_wg, 4, 1@tid_in_wg, 1)]`,
    span,
  );
}

/**
 * A warpgroup's register tile of `rows` × `cols` made of wgmma m64nNk16 fragments of one operand:
 * rows in blocks of 64, block I holding the slots `I · cols/2 .. (I + 1) · cols/2 - 1` of the
 * thread's array; within a block, the layout of {@link wgmmaOperandLayout} extended along the
 * columns: element [64I + 16w + g + 8h, 8j + 2t + v] at thread 32w + 4g + t, slot
 * `I · cols/2 + 4j + 2h + v`. So for `"D"` any 8-aligned run of columns (N ≤ 256 of one
 * wgmma) holds contiguous slots in the D fragment's order, and for `"A"` each 16-column k step
 * holds the 8 slots of one register-A fragment (`T.tile.wg.gemm_async` reads both).
 * `wgmmaTileLayout("D", 64, n, "float32")` equals `wgmmaOperandLayout("D", n, "float32")`.
 * Named in TIRx's style (TIRx has no wgmma register-fragment layout).
 * Source: PTX ISA, wgmma "Register Fragments and Shared Memory Matrix Layouts" (A and D of
 * .m64nNk16).
 * @example wgmmaTileLayout("D", 128, 64, "float32") // 64 float32 slots a thread, rows 64.. at slot 32
 * @throws TirxError TX1026 at `span` for another operand, a dtype the operand does not hold
 *   (D float32, A float16 / bfloat16), rows not a positive multiple of 64, or cols not a
 *   positive multiple of 8 (D) or 16 (A).
 */
export function wgmmaTileLayout(
  operand: WgmmaOperand,
  rows: number,
  cols: number,
  dtype: DType,
  span?: Span,
): TileLayout {
  // Checks the operand and dtype.
  wgmmaOperandLayout(operand, operand === "D" ? 8 : 16, dtype, span);
  const step = operand === "D" ? 8 : 16;
  const ok = (n: number, a: number): boolean => Number.isInteger(n) && n >= a && n % a === 0;
  if (!ok(rows, 64) || !ok(cols, step)) {
    throw new TirxError(
      "TX1026",
      `wgmma_tile_layout: a tile of ${operand} fragments is a multiple of 64 × ${step}, got ${shapeName(rows)} × ${shapeName(cols)}`,
      span,
    );
  }
  const blocks = rows / 64;
  return tileLayout(
    {
      shard: {
        extents: [...(blocks > 1 ? [blocks] : []), 4, 2, 8, cols / 8, 4, 2],
        strides: [
          ...(blocks > 1 ? [cols / 2] : []),
          "32@tid_in_wg",
          2,
          "4@tid_in_wg",
          4,
          "1@tid_in_wg",
          1,
        ],
      },
    },
    span,
  );
}

/**
 * TIRx's `wg_local_layout(cols, rows=128)`: a (rows, cols) tile with one row per thread of the
 * warpgroup (`1@tid_in_wg`) and the row's `cols` elements contiguous in the thread's array.
 * @throws TirxError TX1026 for a count that is not a positive integer.
 */
export function wgLocalLayout(cols: number, rows = 128, span?: Span): TileLayout {
  return tileLayout({ shard: { extents: [rows, cols], strides: ["1@tid_in_wg", 1] } }, span);
}
