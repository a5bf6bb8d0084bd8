/**
 * An XOR swizzle of a shared buffer's offsets (TIRx `SwizzleLayout`, CuTe `Swizzle<B, M, S>` with
 * B = `swizzleLen`, M = `perElement`, S = `atomLen`). On an offset x counted in `unit`s:
 *   swizzleInner:  x ^ ((x >> S) & mask)          mask = (2^B - 1) << M
 *   !swizzleInner: x ^ ((x & mask) << S)
 * The low M bits are never changed, so a run of 2^M aligned units stays contiguous (an "atom").
 * A buffer's layout (`Buffer.layout`) is always in `"byte"` units: `T.alloc_shared` converts an
 * element-unit layout with the buffer's dtype. Views (`sub`, `rearrange`, `reinterpret`) stay
 * affine in the logical offset; every access applies the swizzle to the logical byte offset
 * from the buffer's start, last (CuTe's ComposedLayout: swizzle ∘ offset ∘ layout). A swizzled
 * buffer is aligned to the swizzle's period, so the swizzle of an offset equals the swizzle of
 * the shared-window address — the bits the TMA/wgmma hardware swizzles.
 */
export interface SwizzleLayout {
  readonly kind: "SwizzleLayout";
  /** M: low bits of the offset the swizzle leaves unchanged. */
  readonly perElement: number;
  /** B: bits in each XOR group (0 disables the swizzle). */
  readonly swizzleLen: number;
  /** S: distance between the two bit groups, at least B. */
  readonly atomLen: number;
  /** XOR the higher group into the lower one (true, CuTe's) or the lower into the higher. */
  readonly swizzleInner: boolean;
  /** What one step of the offset counts: an element of the buffer's dtype, or a byte. */
  readonly unit: "element" | "byte";
}
