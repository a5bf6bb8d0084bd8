import type { DType } from "../../dtype.js";
import type { PtxVersion } from "../../target.js";

/*
 * The mma.sync forms of the PTX ISA for sm_80–sm_90 ("Warp Level Matrix Multiply-Accumulate
 * Instructions: mma"), as one table. Every fact about a form's fragments (elements per lane,
 * register-array slots, the [row, col] of each element) is derived here from its shape and
 * types, following the PTX ISA's fragment figures ("Matrix Fragments for mma.m8n8k4 with .f64",
 * "... mma.m16n8k4", "... mma.m16n8k8", "... mma.m16n8k16", "... mma.m16n8k32",
 * "... mma.m16n8k64", "... mma.m8n8k16", "... mma.m8n8k32", "... mma.m8n8k128",
 * "... mma.m16n8k128", "... mma.m16n8k256"). docs/mma-sync-forms.md lists every form of the ISA,
 * offered or refused, with the reason.
 */

/** A PTX type token of an mma.sync operand (`.atype`, `.btype`, `.ctype`/`.dtype`). */
export type MmaType =
  | "f16"
  | "bf16"
  | "tf32"
  | "f32"
  | "f64"
  | "e4m3"
  | "e5m2"
  | "s8"
  | "u8"
  | "s4"
  | "u4"
  | "b1"
  | "s32";

/** The mma.sync shapes of the table (`.m{M}n{N}k{K}`). */
export type MmaFormShape =
  | "m8n8k4"
  | "m8n8k16"
  | "m8n8k32"
  | "m8n8k128"
  | "m16n8k4"
  | "m16n8k8"
  | "m16n8k16"
  | "m16n8k32"
  | "m16n8k64"
  | "m16n8k128"
  | "m16n8k256";

/** The single-bit operation of a `.b1` form (`.xor.popc` or `.and.popc`). */
export type MmaBitOp = "xor" | "and";

/**
 * One offered mma.sync form: `mma.sync.aligned.{shape}.row.col{.satfinite}.{c}.{a}.{b}.{c}
 * {.bitOp.popc}` (D has C's type and registers: the accumulation is in place).
 */
export interface MmaForm {
  readonly shape: MmaFormShape;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  /** A's and B's element types (they differ only in the integer and float8 mixes). */
  readonly a: MmaType;
  readonly b: MmaType;
  /** C's and D's type: f32, f16, f64 or s32. */
  readonly c: MmaType;
  /** `.satfinite` (integer forms only): D clamps to the int32 range instead of wrapping. */
  readonly satfinite: boolean;
  /** `.xor.popc` / `.and.popc` of the `.b1` forms. */
  readonly bitOp?: MmaBitOp;
  /** Lowest sm and PTX ISA version (PTX ISA, mma: "Target ISA notes", "PTX ISA notes"). */
  readonly sm: number;
  readonly ptx: PtxVersion;
}

/** An mma.sync operand: A (M × K), B (K × N), C/D (M × N). */
export type MmaFormOperand = "A" | "B" | "C";

/** Bits of one element of each type in its register. */
const BITS: Readonly<Record<MmaType, number>> = {
  f16: 16,
  bf16: 16,
  tf32: 32,
  f32: 32,
  f64: 64,
  e4m3: 8,
  e5m2: 8,
  s8: 8,
  u8: 8,
  s4: 4,
  u4: 4,
  b1: 1,
  s32: 32,
};

/**
 * The element dtypes of the register array that holds a fragment of each type. tf32 lives in
 * float32 registers (the instruction reads their upper 19 bits); `.s4`, `.u4` and `.b1` have no
 * dtype of their own: each 32-bit array element holds 8 of them (4 bits each) or 32 (one bit
 * each), the first element in the lowest bits.
 */
const ARRAY_DTYPES: Readonly<Record<MmaType, readonly DType[]>> = {
  f16: ["float16"],
  bf16: ["bfloat16"],
  tf32: ["float32"],
  f32: ["float32"],
  f64: ["float64"],
  e4m3: ["float8_e4m3"],
  e5m2: ["float8_e5m2"],
  s8: ["int8"],
  u8: ["uint8"],
  s4: ["uint32", "int32"],
  u4: ["uint32", "int32"],
  b1: ["uint32", "int32"],
  s32: ["int32"],
};

/** Register-array element dtypes a fragment of type `t` may live in (the first is canonical). */
export const mmaArrayDtypes = (t: MmaType): readonly DType[] => ARRAY_DTYPES[t];

/** Elements of type `t` packed in one register-array element: 8 for s4/u4, 32 for b1, else 1. */
export const mmaPerSlot = (t: MmaType): number => (BITS[t] < 8 ? 32 / BITS[t] : 1);

/** True for the integer and single-bit types (exact semantics). */
export const isMmaIntType = (t: MmaType): boolean =>
  t === "s8" || t === "u8" || t === "s4" || t === "u4" || t === "b1" || t === "s32";

const shapeOf = (m: number, n: number, k: number): MmaFormShape =>
  `m${m}n${n}k${k}` as MmaFormShape;

function form(
  m: number,
  k: number,
  a: MmaType,
  b: MmaType,
  c: MmaType,
  sm: number,
  ptx: PtxVersion,
  extra: { satfinite?: boolean; bitOp?: MmaBitOp } = {},
): MmaForm {
  return {
    shape: shapeOf(m, 8, k),
    m,
    n: 8,
    k,
    a,
    b,
    c,
    satfinite: extra.satfinite ?? false,
    ...(extra.bitOp ? { bitOp: extra.bitOp } : {}),
    sm,
    ptx,
  };
}

const INT8: readonly MmaType[] = ["s8", "u8"];
const INT4: readonly MmaType[] = ["s4", "u4"];
const FP8: readonly MmaType[] = ["e4m3", "e5m2"];

/** The integer forms of one shape: every signed/unsigned mix of A and B, with and without `.satfinite`. */
function integerForms(
  m: number,
  k: number,
  types: readonly MmaType[],
  sm: number,
  ptx: PtxVersion,
): MmaForm[] {
  return types.flatMap((a) =>
    types.flatMap((b) =>
      [false, true].map((satfinite) => form(m, k, a, b, "s32", sm, ptx, { satfinite })),
    ),
  );
}

/** The single-bit forms of one shape: `.xor.popc`, and `.and.popc` (PTX 7.1). */
function b1Forms(m: number, k: number, sm: number, ptx: PtxVersion): MmaForm[] {
  return (["xor", "and"] as const).map((bitOp) =>
    form(m, k, "b1", "b1", "s32", sm, bitOp === "and" ? [7, 1] : ptx, { bitOp }),
  );
}

/**
 * Every offered mma.sync form (PTX ISA, mma, "Syntax", "Target ISA notes", "PTX ISA notes";
 * each checked with ptxas 13.0 for sm_90a):
 * - f16 · f16 → f32 or f16 (C and D of one type): m16n8k8 (sm_75), m16n8k16 (sm_80);
 * - bf16 · bf16 → f32: m16n8k8, m16n8k16; tf32 · tf32 → f32: m16n8k4, m16n8k8 (sm_80);
 * - f64: m8n8k4 (sm_80), m16n8k4, m16n8k8, m16n8k16 (sm_90, PTX 7.8);
 * - s8/u8 (any mix) → s32, with or without .satfinite: m8n8k16 (sm_75), m16n8k16, m16n8k32;
 * - s4/u4 (any mix) → s32, with or without .satfinite: m8n8k32 (sm_75), m16n8k32, m16n8k64;
 * - b1 → s32, .xor.popc or .and.popc (PTX 7.1): m8n8k128 (sm_75), m16n8k128, m16n8k256;
 * - e4m3/e5m2 (any mix) → f32: m16n8k32 (sm_89, PTX 8.4); → f16, and m16n8k16: PTX 8.7.
 * The sm_75 shapes need no more than sm_80 here (tirx-ts's lowest target).
 */
export const MMA_FORMS: readonly MmaForm[] = [
  form(16, 8, "f16", "f16", "f32", 75, [6, 5]),
  form(16, 8, "f16", "f16", "f16", 75, [6, 5]),
  form(16, 16, "f16", "f16", "f32", 80, [7, 0]),
  form(16, 16, "f16", "f16", "f16", 80, [7, 0]),
  form(16, 8, "bf16", "bf16", "f32", 80, [7, 0]),
  form(16, 16, "bf16", "bf16", "f32", 80, [7, 0]),
  form(16, 4, "tf32", "tf32", "f32", 80, [7, 0]),
  form(16, 8, "tf32", "tf32", "f32", 80, [7, 0]),
  form(8, 4, "f64", "f64", "f64", 80, [7, 0]),
  form(16, 4, "f64", "f64", "f64", 90, [7, 8]),
  form(16, 8, "f64", "f64", "f64", 90, [7, 8]),
  form(16, 16, "f64", "f64", "f64", 90, [7, 8]),
  ...integerForms(8, 16, INT8, 75, [6, 5]),
  ...integerForms(16, 16, INT8, 80, [7, 0]),
  ...integerForms(16, 32, INT8, 80, [7, 0]),
  ...integerForms(8, 32, INT4, 75, [6, 5]),
  ...integerForms(16, 32, INT4, 80, [7, 0]),
  ...integerForms(16, 64, INT4, 80, [7, 0]),
  ...b1Forms(8, 128, 75, [6, 5]),
  ...b1Forms(16, 128, 80, [7, 0]),
  ...b1Forms(16, 256, 80, [7, 0]),
  ...[32, 16].flatMap((k) =>
    FP8.flatMap((a) =>
      FP8.flatMap((b) =>
        (["f32", "f16"] as const).map((c) =>
          form(16, k, a, b, c, 89, k === 32 && c === "f32" ? [8, 4] : [8, 7]),
        ),
      ),
    ),
  ),
];

/**
 * The PTX spelling of a form, also its op's IR name:
 * `mma.sync.aligned.{shape}.row.col{.satfinite}.{c}.{a}.{b}.{c}{.bitOp.popc}`.
 * @example mmaFormName(MMA_FORMS[2]!) // "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
 */
export const mmaFormName = (f: MmaForm): string =>
  `mma.sync.aligned.${f.shape}.row.col${f.satfinite ? ".satfinite" : ""}.${f.c}.${f.a}.${f.b}.${f.c}${f.bitOp ? `.${f.bitOp}.popc` : ""}`;

/** A short human spelling of a form for messages: `m16n8k16 f32 = f16·f16 + f32`. */
export const showMmaForm = (f: MmaForm): string =>
  `${f.shape} ${f.c} = ${f.a}·${f.b} + ${f.c}${f.satfinite ? " .satfinite" : ""}${f.bitOp ? ` .${f.bitOp}.popc` : ""}`;

/**
 * One operand's fragment of a form, derived from the shape and the type:
 * - `rows` × `cols` of the operand matrix (A: M × K, B: K × N, C/D: M × N);
 * - `perLane`: elements each lane holds (rows · cols / 32);
 * - `slots`: register-array elements each lane passes (`perLane / perSlot`), `perSlot` elements
 *   of the type in each (8 for s4/u4, 32 for b1, else 1), the first in the lowest bits;
 * - `coord(lane, i)`: [row, col] of the lane's element i (slot `i / perSlot`, bits
 *   `(i % perSlot) · bits` up).
 */
export interface MmaFragment {
  readonly type: MmaType;
  readonly rows: number;
  readonly cols: number;
  readonly perLane: number;
  readonly slots: number;
  readonly perSlot: number;
  readonly bits: number;
  coord(lane: number, i: number): [number, number];
}

/**
 * The fragment of `operand` of form `f`. With g = lane >> 2 (groupID), t = lane % 4
 * (threadID_in_group) and e = max(1, 32 / bits) elements of the type per 32-bit register
 * (1 for f64, whose registers are 64-bit), the PTX ISA's figures are, for element i of register
 * j = ⌊i / e⌋, q = i % e:
 * - A (M × K; M / 8 row blocks): [g + 8·(j mod M/8), e·t + q + 4e·⌊j / (M/8)⌋];
 * - B (K × 8): [e·t + q + 4e·j, g];
 * - C/D (M × 8, f32 / f16 / f64 / s32): [g + 8·⌊i / 2⌋, 2t + (i & 1)].
 * E.g. m16n8k16 .f16 A: a_i at [g + 8·((i >> 1) & 1), 2t + (i & 1) + 8·(i >> 2)]; m16n8k4
 * .tf32 A: a0 at [g, t], a1 at [g + 8, t]; m8n8k128 .b1 A: a_i at [g, 32t + i].
 */
export function mmaFragment(f: MmaForm, operand: MmaFormOperand): MmaFragment {
  const type = operand === "A" ? f.a : operand === "B" ? f.b : f.c;
  const bits = BITS[type];
  const [rows, cols] = operand === "A" ? [f.m, f.k] : operand === "B" ? [f.k, f.n] : [f.m, f.n];
  const perLane = (rows * cols) / 32;
  const perSlot = mmaPerSlot(type);
  const e = Math.max(1, 32 / bits);
  const rb = f.m / 8;
  const coord = (lane: number, i: number): [number, number] => {
    const g = lane >> 2;
    const t = lane & 3;
    if (operand === "C") return [g + 8 * (i >> 1), 2 * t + (i & 1)];
    const j = Math.floor(i / e);
    const q = i % e;
    if (operand === "A") return [g + 8 * (j % rb), e * t + q + 4 * e * Math.floor(j / rb)];
    return [e * t + q + 4 * e * j, g];
  };
  return { type, rows, cols, perLane, slots: perLane / perSlot, perSlot, bits, coord };
}

/** The form spelled by these tokens, or undefined. */
export function findMmaForm(
  shape: string,
  a: MmaType,
  b: MmaType,
  c: MmaType,
  satfinite: boolean,
  bitOp: MmaBitOp | undefined,
): MmaForm | undefined {
  return MMA_FORMS.find(
    (f) =>
      f.shape === shape &&
      f.a === a &&
      f.b === b &&
      f.c === c &&
      f.satfinite === satfinite &&
      f.bitOp === bitOp,
  );
}

/**
 * The offered form nearest to a refused request (for TX7004's message): the most of A's type,
 * B's type, the shape, C's type, `.satfinite` and the bit operation in common, in that order of
 * weight; among equals the one of the same M and the nearest K, then the first in table order.
 */
export function nearestMmaForm(
  shape: string,
  a: MmaType | undefined,
  b: MmaType | undefined,
  c: MmaType | undefined,
  satfinite: boolean,
  bitOp: MmaBitOp | undefined,
): MmaForm {
  const [, m, k] = /^m(\d+)n\d+k(\d+)$/.exec(shape) ?? [];
  let best = MMA_FORMS[0]!;
  let score = -Infinity;
  for (const f of MMA_FORMS) {
    const s =
      (f.a === a ? 32 : 0) +
      (f.b === b ? 16 : 0) +
      (f.shape === shape ? 12 : 0) +
      (f.c === c ? 6 : 0) +
      (f.satfinite === satfinite ? 2 : 0) +
      (f.bitOp === bitOp ? 2 : 0) +
      (String(f.m) === m ? 1 : 0) -
      (k ? Math.abs(Math.log2(f.k / Number(k))) / 16 : 0);
    if (s > score) {
      score = s;
      best = f;
    }
  }
  return best;
}
