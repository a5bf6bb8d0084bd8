import { dtypeBytes, type DType } from "../dtype.js";
import { intImm, type Expr } from "../ir/expr.js";
import {
  mmaSyncOperandLayout,
  mmaSyncOperandShape,
  mmaSyncTileLayout,
  type MmaOperand,
  type MmaSyncShape,
} from "../layout/fragments.js";
import { applyLayout } from "../layout/tile-layout.js";
import { bufferPtr } from "../layout/view.js";
import { MMA_VARIANTS, type MmaVariant } from "../ops/mma/mma.js";
import type { Span } from "../span.js";
import type { RegisterTile } from "./operand.js";

/**
 * A register tile recognised as a warp tile of mma.sync fragments of one operand: a grid of
 * `grid[0] × grid[1]` atoms of `atom[0] × atom[1]` elements, atom (I, J) in the PTX ISA's
 * fragment layout of `shape`/`operand` (lane for lane), its `slots` elements in the lane's
 * array at `base[I][J] ..` in the fragment's order.
 */
export interface MmaTiling {
  readonly shape: MmaSyncShape;
  readonly operand: MmaOperand;
  readonly atom: readonly [number, number];
  readonly grid: readonly [number, number];
  readonly slots: number;
  readonly base: readonly (readonly number[])[];
}

/** The mma.sync shapes whose `operand` fragment holds `dtype` (op table `MMA_VARIANTS`). */
export function mmaShapesFor(operand: MmaOperand, dtype: DType): MmaSyncShape[] {
  const ok = (v: MmaVariant): boolean => (operand === "C" ? v.cdDtype : v.abDtype) === dtype;
  return [...new Set(MMA_VARIANTS.filter(ok).map((v) => v.shape))];
}

/** The tile's logical [rows, cols] once extent-1 dims are dropped, or undefined if not 2-D. */
export function matrixShape(shape: readonly number[]): [number, number] | undefined {
  const big = shape.filter((n) => n !== 1);
  if (big.length === 2) return [big[0]!, big[1]!];
  if (big.length === 1 && shape.length >= 2)
    return shape[shape.length - 1] === 1 ? [big[0]!, 1] : [1, big[0]!];
  return undefined;
}

/**
 * The lane and slot of every logical element (row-major over the tile's shape) of `t`, or the
 * reason it is not a warp register tile (a thread axis other than laneid, or a replica).
 */
export function laneSlots(t: RegisterTile): { lane: number[]; slot: number[] } | string {
  const l = t.layout;
  const other = [...l.shard, ...l.replica.filter((x) => x.extent > 1)].find(
    (x) => x.extent > 1 && x.axis !== "m" && x.axis !== "laneid",
  );
  if (other) return `${t.buffer.name} binds ${other.axis}; a warp fragment binds only laneid and m`;
  if (l.replica.some((x) => x.extent > 1)) return `${t.buffer.name} has a replica`;
  const n = t.shape.reduce((a, b) => a * b, 1);
  const lane: number[] = [];
  const slot: number[] = [];
  for (let e = 0; e < n; e++) {
    const c = applyLayout(l, e);
    lane.push(c.laneid ?? 0);
    slot.push(c.m ?? 0);
  }
  return { lane, slot };
}

/**
 * Recognise `t` as a warp tile of mma.sync `operand` fragments of `shape` (see
 * {@link MmaTiling}): every element of atom (I, J) must sit at the lane the PTX ISA's fragment
 * gives it and at slot `base[I][J] + k` where k is its slot in the fragment, `base` a multiple
 * of the elements of one 32-bit register (the fragment operands are b32 registers: a float16 C
 * atom's 4 slots are two .f16x2 registers, so its base is even).
 * @returns the tiling, or one sentence saying which element breaks it (for TX2022).
 */
export function matchMmaTiling(
  t: RegisterTile,
  operand: MmaOperand,
  shape: MmaSyncShape,
): MmaTiling | string {
  const dims = matrixShape(t.shape);
  const [ar, ac] = mmaSyncOperandShape(operand, shape);
  if (!dims) return `${t.buffer.name} [${t.shape.join(", ")}] is not a matrix`;
  const [R, C] = dims;
  if (R % ar !== 0 || C % ac !== 0) {
    return `${t.buffer.name} is ${R} × ${C}, not a grid of ${ar} × ${ac} ${operand} atoms of ${shape}`;
  }
  const ls = laneSlots(t);
  if (typeof ls === "string") return ls;
  const atom = mmaSyncOperandLayout(operand, shape, operand === "C" ? cdOf(shape) : abOf(shape));
  const al: number[] = [];
  const ak: number[] = [];
  for (let e = 0; e < ar * ac; e++) {
    const c = applyLayout(atom, e);
    al.push(c.laneid ?? 0);
    ak.push(c.m ?? 0);
  }
  const slots = Math.max(...ak) + 1;
  const perReg = 4 / dtypeBytes(t.dtype);
  const base: number[][] = [];
  for (let I = 0; I < R / ar; I++) {
    const row: number[] = [];
    for (let J = 0; J < C / ac; J++) {
      let b: number | undefined;
      for (let r = 0; r < ar; r++) {
        for (let c = 0; c < ac; c++) {
          const e = (I * ar + r) * C + J * ac + c;
          const a = r * ac + c;
          b ??= ls.slot[e]! - ak[a]!;
          if (ls.lane[e] !== al[a] || ls.slot[e] !== b + ak[a]!) {
            return `element [${I * ar + r}, ${J * ac + c}] of ${t.buffer.name} is at lane ${ls.lane[e]} slot ${ls.slot[e]}, but the ${shape} ${operand} fragment of its atom puts it at lane ${al[a]} slot ${b + ak[a]!}`;
          }
        }
      }
      if (b! % perReg !== 0) {
        return `atom [${I}, ${J}] of ${t.buffer.name} starts at slot ${b}, not at a 32-bit register (a multiple of ${perReg})`;
      }
      row.push(b!);
    }
    base.push(row);
  }
  return { shape, operand, atom: [ar, ac], grid: [R / ar, C / ac], slots, base };
}

/** The A/B element dtype of the first variant of `shape` (for the atom's layout). */
function abOf(shape: MmaSyncShape): DType {
  return MMA_VARIANTS.find((v) => v.shape === shape)!.abDtype;
}

/**
 * The C/D dtype of the first variant of `shape` (for the atom's layout; a float16 C of m16n8k16
 * has the float32 C's layout, PTX ISA "Matrix Fragments for mma.m16n8k16 with floating point
 * type", so one atom serves both).
 */
function cdOf(shape: MmaSyncShape): DType {
  return MMA_VARIANTS.find((v) => v.shape === shape)!.cdDtype;
}

/**
 * The nearest layout that works for a `t`-shaped tile of `operand` fragments of `shape`, as
 * text for TX2022: the call `T.layout.mma_sync_tile_layout(...)` (atoms row-major) that builds
 * it, which reads better than its S[...] notation; undefined when the built-in refuses the dtype.
 */
export function nearestMmaLayout(
  t: RegisterTile,
  operand: MmaOperand,
  shape: MmaSyncShape,
): string | undefined {
  const dims = matrixShape(t.shape);
  const [ar, ac] = mmaSyncOperandShape(operand, shape);
  if (!dims || dims[0] % ar !== 0 || dims[1] % ac !== 0) {
    return `a [${Math.max(ar, dims?.[0] ?? 0)}, ${Math.max(ac, dims?.[1] ?? 0)}]-multiple tile: T.layout.mma_sync_tile_layout("${operand}", "${shape}", "${t.dtype}", rows, cols)`;
  }
  try {
    mmaSyncTileLayout(operand, shape, t.dtype, dims[0], dims[1]);
    return `T.layout.mma_sync_tile_layout("${operand}", "${shape}", "${t.dtype}", ${dims[0]}, ${dims[1]})`;
  } catch {
    return undefined;
  }
}

/** `frag.ptr([slot])` of a register tile: the b32 fragment operand of ldmatrix / mma. */
export function slotPtr(t: RegisterTile, slot: number, span?: Span): Expr {
  return bufferPtr(t.buffer, intImm(slot), span);
}
