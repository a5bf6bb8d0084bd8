import type { SwizzleLayout } from "./swizzle-layout.js";

/**
 * The named physical axes a {@link TileLayout} binds elements to (TIRx `Axis`):
 * - `m`: memory, in elements. For a local (register) tile it is the slot in the owning thread's
 *   array; for a shared or global tile the element offset. Integer strides without `@axis` are `m`.
 * - `laneid` (0..31, the lane in its warp), `warpid` (the warp in its CTA), `tid_in_wg`
 *   (0..127, the thread in its warpgroup of 4 warps), `wgid` (the warpgroup in its CTA), `tid`
 *   (the thread in its CTA, `threadIdx` linearized x fastest), `cta_in_cluster` (the CTA's rank
 *   in its cluster, `%cluster_ctarank`).
 * - `pid`: the device in a multi-GPU launch; reserved (a launch today has one device, pid 0).
 * Source: TIRx docs, "Tensor Layout" (tvm.apache.org/docs/tirx/layout.html), its `Axis` names.
 */
export type LayoutAxis =
  "m" | "laneid" | "warpid" | "tid_in_wg" | "wgid" | "tid" | "cta_in_cluster" | "pid";

/** Every {@link LayoutAxis}, memory first: the order offsets are printed in. */
export const LAYOUT_AXES: readonly LayoutAxis[] = [
  "m",
  "laneid",
  "warpid",
  "tid_in_wg",
  "wgid",
  "tid",
  "cta_in_cluster",
  "pid",
];

/**
 * One iter of a shard or a replica (TIRx `Iter(extent, stride, axis)`): a logical factor of
 * `extent` values, step `i` of which moves `i · stride` along `axis`.
 */
export interface LayoutIter {
  /** Number of values of this factor: a positive integer. */
  readonly extent: number;
  /** Step on `axis` per value: an integer (0 broadcasts; negative runs backwards). */
  readonly stride: number;
  readonly axis: LayoutAxis;
}

/**
 * TIRx's `TileLayout`: a map from a logical index to a set of physical coordinates on named
 * axes, `L(x) = { D(x) + r + O : r ∈ R }` (TIRx docs, "Tensor Layout"):
 * - `shard` (D, written `S[(extents) : (strides)]`): the logical index, split row-major over
 *   the shard extents (the first iter is the outermost), gives `Σ c_i · stride_i` on each axis;
 * - `replica` (R, written `R[...]`): extra iters not indexed by the logical coordinate; every
 *   combination of their values is a copy of the element (e.g. a value held by every warp);
 * - `offset` (O): a constant added on each axis it names (absent: 0).
 * The logical shape is not stored: a layout serves any shape its shard extents group into
 * (`groupLayout`). Plain readonly data; build it with `tileLayout` / `parseTileLayout`.
 */
export interface TileLayout {
  readonly kind: "TileLayout";
  readonly shard: readonly LayoutIter[];
  readonly replica: readonly LayoutIter[];
  /** Per-axis constant, never 0 (a zero offset is left out), keys in `LAYOUT_AXES` order. */
  readonly offset: Readonly<Partial<Record<LayoutAxis, number>>>;
}

/**
 * TIRx's `ComposeLayout(swizzle, tile)`: the tile layout, then the XOR swizzle applied to its
 * memory coordinate `m` (shared-memory tiles). `swizzle` counts elements (`unit: "element"`),
 * as `m` does.
 */
export interface ComposeLayout {
  readonly kind: "ComposeLayout";
  readonly swizzle: SwizzleLayout;
  readonly tile: TileLayout;
}
