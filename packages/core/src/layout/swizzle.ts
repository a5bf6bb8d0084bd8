import { dtypeBytes, type DType } from "../dtype.js";
import { TirxError } from "../diagnostics.js";
import { showValue } from "../show.js";
import { binary } from "../ir/arith.js";
import { intImm, type Expr } from "../ir/expr.js";
import type { Span } from "../span.js";
import type { SwizzleLayout } from "../ir/swizzle-layout.js";

export type { SwizzleLayout };

/** TMA's swizzle modes (CUtensorMapSwizzle, TIRx `SwizzleMode`): 0 none, 1 32B, 2 64B, 3 128B. */
export type SwizzleModeNumber = 0 | 1 | 2 | 3;

const isBits = (v: unknown): v is number =>
  typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= 16;

/**
 * A swizzle layout (TIRx `T.SwizzleLayout(per_element, swizzle_len, atom_len, swizzle_inner)`).
 * `unit: "element"` (TIRx's) counts elements of the buffer it is given to; `"byte"` counts bytes.
 * @throws TirxError TX1016 unless the three counts are integers in 0..16 and atom_len ≥ swizzle_len.
 */
export function swizzleLayout(
  perElement: number,
  swizzleLen: number,
  atomLen: number,
  swizzleInner = true,
  unit: "element" | "byte" = "element",
  span?: Span,
): SwizzleLayout {
  if (!isBits(perElement) || !isBits(swizzleLen) || !isBits(atomLen)) {
    throw new TirxError(
      "TX1016",
      `SwizzleLayout(${showValue(perElement)}, ${showValue(swizzleLen)}, ${showValue(atomLen)}): the bit counts must be integers in 0..16`,
      span,
    );
  }
  if (atomLen < swizzleLen) {
    throw new TirxError(
      "TX1016",
      `SwizzleLayout(${perElement}, ${swizzleLen}, ${atomLen}): atom_len must be at least swizzle_len, or the two XOR groups overlap`,
      span,
    );
  }
  if (typeof swizzleInner !== "boolean") {
    throw new TirxError("TX1016", `SwizzleLayout: swizzle_inner must be true or false`, span);
  }
  return { kind: "SwizzleLayout", perElement, swizzleLen, atomLen, swizzleInner, unit };
}

/**
 * The byte swizzle of TMA's `CU_TENSOR_MAP_SWIZZLE_{32B,64B,128B}` and wgmma's matching shared
 * layouts: CuTe `Swizzle<mode, 4, 3>` on byte offsets (16-byte atoms; within each 2^(mode+4)·8
 * byte block, the 16-byte chunk index of row r is XORed with r mod 2^mode, rows 2^(mode+4) bytes).
 * Mode 0 is no swizzle (`undefined`). Source: CUDA driver API, CUtensorMapSwizzle; CUTLASS
 * `GMMA::Layout_K_SW{32,64,128}_Atom`.
 * @throws TirxError TX1016 for another mode.
 */
export function swizzleMode(
  mode: SwizzleModeNumber | "32B" | "64B" | "128B",
  span?: Span,
): SwizzleLayout {
  const bits = mode === "32B" ? 1 : mode === "64B" ? 2 : mode === "128B" ? 3 : mode;
  if (bits !== 1 && bits !== 2 && bits !== 3) {
    throw new TirxError(
      "TX1016",
      (mode as unknown) === "none" || mode === 0
        ? `swizzle mode ${typeof mode === "string" ? JSON.stringify(mode) : showValue(mode)} is no swizzle: leave the layout out (an unswizzled buffer) instead of T.swizzle_mode; modes are "32B", "64B", "128B" (or 1, 2, 3)`
        : `swizzle mode ${typeof mode === "string" ? JSON.stringify(mode) : showValue(mode)} is not one of "32B", "64B", "128B" (or 1, 2, 3)`,
      span,
    );
  }
  return swizzleLayout(4, bits, 3, true, "byte", span);
}

/** The TMA swizzle mode a byte layout equals, or undefined when it is none of them. */
export function swizzleModeOf(layout: SwizzleLayout): SwizzleModeNumber | undefined {
  const l = layout;
  if (l.unit !== "byte" || !l.swizzleInner || l.perElement !== 4 || l.atomLen !== 3) return;
  return l.swizzleLen === 0 ? 0 : l.swizzleLen <= 3 ? (l.swizzleLen as 1 | 2 | 3) : undefined;
}

/**
 * `layout` counted in bytes for a buffer of `dtype` (an element layout shifts M by log2 of the
 * element size). @throws TirxError TX1016 when the element size is not a power of two.
 */
export function swizzleInBytes(layout: SwizzleLayout, dtype: DType, span?: Span): SwizzleLayout {
  if (layout.unit === "byte") return layout;
  const eb = dtypeBytes(dtype);
  const shift = Math.log2(eb);
  if (!Number.isInteger(shift)) {
    throw new TirxError("TX1016", `a swizzle needs power-of-two elements, not ${dtype}`, span);
  }
  return { ...layout, perElement: layout.perElement + shift, unit: "byte" };
}

/** Bytes of one atom: the aligned run the swizzle never splits (2^M of a byte layout). */
export function swizzleAtomBytes(layout: SwizzleLayout): number {
  return 2 ** layout.perElement;
}

/** The period in bytes of a byte layout: offsets are permuted within aligned blocks of it. */
export function swizzlePeriodBytes(layout: SwizzleLayout): number {
  return 2 ** (layout.perElement + layout.swizzleLen + layout.atomLen);
}

/** The swizzled byte offset of logical byte offset `x` (a byte layout; x ≥ 0). */
export function applySwizzle(layout: SwizzleLayout, x: number): number {
  const mask = (2 ** layout.swizzleLen - 1) * 2 ** layout.perElement;
  const s = 2 ** layout.atomLen;
  // Offsets stay below 2^31 (shared memory), so 32-bit bit operations are exact.
  return layout.swizzleInner ? x ^ (Math.floor(x / s) & mask) : x ^ ((x & mask) * s);
}

/**
 * `x` swizzled, as an int32 expression of logical byte offset `x` (a byte layout):
 * `x ^ ((x >> S) & mask)` or `x ^ ((x & mask) << S)`.
 */
export function swizzleExpr(layout: SwizzleLayout, x: Expr, span?: Span): Expr {
  if (layout.swizzleLen === 0) return x;
  const mask = intImm((2 ** layout.swizzleLen - 1) * 2 ** layout.perElement);
  const s = intImm(layout.atomLen);
  const moved = layout.swizzleInner
    ? binary("bitand", binary("shr", x, s, span), mask, span)
    : binary("shl", binary("bitand", x, mask, span), s, span);
  return binary("bitxor", x, moved, span);
}

/** `T.SwizzleLayout(3, 3, 3)`-style text of a layout, for messages and the printers. */
export function showSwizzle(layout: SwizzleLayout): string {
  const inner = layout.swizzleInner ? "" : ", false";
  return layout.unit === "byte"
    ? `Swizzle<${layout.swizzleLen}, ${layout.perElement}, ${layout.atomLen}> on bytes${inner ? " (outer)" : ""}`
    : `SwizzleLayout(${layout.perElement}, ${layout.swizzleLen}, ${layout.atomLen}${inner})`;
}

/**
 * Whether `bytes` bytes from logical byte offset `at` (known to be a multiple of `divisor`)
 * stay one contiguous run under `layout`: the run must lie in one atom, i.e. fit in it and
 * start at a known multiple of its size or of the run's power-of-two size that divides it.
 */
export function swizzleKeepsContiguous(
  layout: SwizzleLayout | undefined,
  divisor: number,
  bytes: number,
): boolean {
  if (!layout || layout.swizzleLen === 0) return true;
  const atom = swizzleAtomBytes(layout);
  if (bytes > atom) return false;
  // The run starts at a multiple of g = gcd(divisor, atom); it lies in one atom when g ≥ bytes
  // and bytes divides the atom (both are powers of two here).
  let g = atom;
  while (g > 1 && divisor % g !== 0) g /= 2;
  return g >= bytes && atom % bytes === 0;
}
