// Independent JS models of what a TMA copy writes, for the GPU and simulator tests: the box at
// `coords` of a row-major tensor, zeros outside the tensor, and the shared-memory swizzle
// (CUDA's CU_TENSOR_MAP_SWIZZLE_{32,64,128}B = CuTe Swizzle<B, 4, 3>: the 16-byte chunk bits
// [4, 4+B) of a byte offset are XORed with bits [7, 7+B)).
import type { TmaSwizzle } from "@tirx-ts/core";

/** Elements of the box of `shape` at `coords` (both outermost first), row-major, 0 outside. */
export function boxOf(
  data: ArrayLike<number>,
  shape: readonly number[],
  coords: readonly number[],
  box: readonly number[],
): number[] {
  const out: number[] = [];
  const idx = box.map(() => 0);
  const n = box.reduce((a, b) => a * b, 1);
  for (let e = 0; e < n; e++) {
    let rem = e;
    for (let k = box.length - 1; k >= 0; k--) {
      idx[k] = rem % box[k]!;
      rem = Math.floor(rem / box[k]!);
    }
    let flat = 0;
    let inside = true;
    for (let k = 0; k < shape.length; k++) {
      const g = coords[k]! + idx[k]!;
      if (g < 0 || g >= shape[k]!) inside = false;
      flat = flat * shape[k]! + g;
    }
    out.push(inside ? data[flat]! : 0);
  }
  return out;
}

/** The byte offset a TMA swizzle moves byte offset `o` of a box to. */
export function swizzleOffset(o: number, swizzle: TmaSwizzle): number {
  const b = swizzle === "32B" ? 1 : swizzle === "64B" ? 2 : swizzle === "128B" ? 3 : 0;
  const mask = ((1 << b) - 1) << 4;
  return o ^ ((o >> 3) & mask);
}

/** `elems` (elemBytes each) laid out in shared memory with `swizzle`, read back in element order. */
export function swizzled(
  elems: readonly number[],
  elemBytes: number,
  swizzle: TmaSwizzle,
): number[] {
  const out = new Array<number>(elems.length);
  for (let i = 0; i < elems.length; i++) {
    // Element at offset o holds the element that TMA placed there: the one whose offset maps to o.
    const dst = swizzleOffset(i * elemBytes, swizzle) / elemBytes;
    out[dst] = elems[i]!;
  }
  return out;
}
