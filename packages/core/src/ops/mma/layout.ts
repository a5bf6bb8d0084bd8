/**
 * Thread ↔ fragment layouts of the warp-level matrix instructions (PTX ISA, "Matrix Fragments
 * for mma.m16n8k16 with floating point type", "... mma.m16n8k8 (.tf32)", "... mma.m16n8k32
 * (.s8)", and "Warp-level matrix load instruction: ldmatrix"). With `g = lane >> 2` (groupID)
 * and `t = lane % 4` (threadID_in_group), element `i` of a lane's fragment sits at
 * `[row, col]` of the operand matrix (A: M × K, B: K × N, C/D: M × N).
 */

/** The operand matrices of an mma shape, by the PTX ISA's fragment figures. */
export type FragmentKind =
  | "a.m16n8k16"
  | "b.m16n8k16"
  | "a.m16n8k8.tf32"
  | "b.m16n8k8.tf32"
  | "a.m16n8k32.s8"
  | "b.m16n8k32.s8"
  | "c.m16n8";

/** Rows × columns of each fragment kind's matrix and elements per lane. */
export const FRAGMENT_SHAPE: Readonly<
  Record<FragmentKind, { rows: number; cols: number; perLane: number }>
> = {
  "a.m16n8k16": { rows: 16, cols: 16, perLane: 8 },
  "b.m16n8k16": { rows: 16, cols: 8, perLane: 4 },
  "a.m16n8k8.tf32": { rows: 16, cols: 8, perLane: 4 },
  "b.m16n8k8.tf32": { rows: 8, cols: 8, perLane: 2 },
  "a.m16n8k32.s8": { rows: 16, cols: 32, perLane: 16 },
  "b.m16n8k32.s8": { rows: 32, cols: 8, perLane: 8 },
  "c.m16n8": { rows: 16, cols: 8, perLane: 4 },
};

/**
 * `[row, col]` in its matrix of element `i` of `lane`'s fragment of kind `kind`.
 * Source: PTX ISA 8.x, section 9.7.14.5 (mma.m16n8k16 / m16n8k8 / m16n8k32 fragment figures).
 */
export function fragmentCoord(kind: FragmentKind, lane: number, i: number): [number, number] {
  const g = lane >> 2;
  const t = lane & 3;
  switch (kind) {
    case "a.m16n8k16":
      return [g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)];
    case "b.m16n8k16":
      return [2 * t + (i & 1) + 8 * (i >> 1), g];
    case "a.m16n8k8.tf32":
      return [g + 8 * (i & 1), t + 4 * (i >> 1)];
    case "b.m16n8k8.tf32":
      return [t + 4 * i, g];
    case "a.m16n8k32.s8":
      return [g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3)];
    case "b.m16n8k32.s8":
      return [4 * t + (i & 3) + 16 * (i >> 2), g];
    case "c.m16n8":
      return [g + 8 * (i >> 1), 2 * t + (i & 1)];
  }
}
