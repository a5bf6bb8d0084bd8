import { swizzleLayout, swizzleMode, type SwizzleLayout } from "@tirx-ts/core";
import { callerSpan } from "./span.js";

/**
 * An XOR swizzle for `T.alloc_shared(shape, dtype, { layout })` (TIRx
 * `T.SwizzleLayout(per_element, swizzle_len, atom_len, swizzle_inner=True)`, CuTe
 * `Swizzle<swizzle_len, per_element, atom_len>`), counted in elements of the tile's dtype:
 * offset x becomes `x ^ ((x >> atom_len) & ((2^swizzle_len - 1) << per_element))`
 * (`swizzle_inner = false`: `x ^ ((x & mask) << atom_len)`). For float16, `T.SwizzleLayout(3, 3, 3)`
 * is the 128-byte swizzle of 16-byte atoms (`T.swizzle_mode("128B")`).
 * @throws TirxError TX1016 for bit counts outside 0..16 or atom_len < swizzle_len.
 */
export function SwizzleLayout(
  per_element: number,
  swizzle_len: number,
  atom_len: number,
  swizzle_inner = true,
): SwizzleLayout {
  return swizzleLayout(per_element, swizzle_len, atom_len, swizzle_inner, "element", callerSpan());
}

/**
 * TMA's shared-memory swizzles (TIRx `SwizzleMode`, CUtensorMapSwizzle): `"32B"`/1, `"64B"`/2,
 * `"128B"`/3 are `Swizzle<1|2|3, 4, 3>` on byte offsets (16-byte atoms), for any dtype.
 * @throws TirxError TX1016 for another mode.
 */
export function swizzle_mode(mode: 1 | 2 | 3 | "32B" | "64B" | "128B"): SwizzleLayout {
  return swizzleMode(mode, callerSpan());
}

/** TIRx `SwizzleMode` numbers (CUtensorMapSwizzle). */
export const SwizzleMode = {
  SWIZZLE_NONE: 0,
  SWIZZLE_32B_ATOM: 1,
  SWIZZLE_64B_ATOM: 2,
  SWIZZLE_128B_ATOM: 3,
} as const;
