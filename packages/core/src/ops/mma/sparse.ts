import { invariant } from "../../invariant.js";
import type { PtxVersion } from "../../target.js";
import type { ApproxBound, FragmentCall, OpDef } from "../op.js";
import {
  mmaArrayDtypes,
  mmaFragment,
  type MmaForm,
  type MmaFormShape,
  type MmaFragment,
  type MmaType,
} from "./forms.js";
import { mmaFormApprox, mmaFormBound, mmaFragmentOperand } from "./mma.js";

/*
 * Sparse mma.sync (PTX ISA, "Matrix multiply-accumulate operation using mma.sp instruction with
 * sparse matrix A", "Multiply-and-Accumulate Instruction: mma.sp/mma.sp::ordered_metadata"):
 * A (M × K) is 2:4 structured sparse, each 4-wide chunk of a row holding at most two non-zero
 * elements; the instruction takes the M × K/2 kept elements and, per chunk, their two 2-bit
 * column indices in a metadata register `e`. The sparsity selector `f` (an immediate) names the
 * lanes of each quad whose `e` registers hold the metadata.
 */

/** A sparse mma form: `mma.sp::ordered_metadata.sync.aligned.{shape}.row.col.{c}.{a}.{b}.{c}`. */
export interface MmaSpForm {
  readonly shape: "m16n8k16" | "m16n8k32" | "m16n8k64";
  readonly m: number;
  readonly n: number;
  /** K of the dense product; A's fragment holds K / 2 columns of kept elements. */
  readonly k: number;
  readonly a: MmaType;
  readonly b: MmaType;
  /** C's and D's type (D is written over C's registers). */
  readonly c: MmaType;
  /**
   * Values the sparsity selector may take: 4 (m16n8k16 .f16/.bf16: one lane of each quad holds
   * the metadata), 2 (m16n8k32: a pair of lanes), 1 (m16n8k64 with 8-bit types: all four lanes).
   * PTX ISA, "Sparse matrix storage"; any other value is undefined behaviour.
   */
  readonly selectors: number;
  /** Lowest sm and PTX ISA version (`.sp::ordered_metadata`: PTX 8.5; float8: sm_89). */
  readonly sm: number;
  readonly ptx: PtxVersion;
}

function spForm(k: 16 | 32 | 64, a: MmaType, b: MmaType, c: MmaType, sm: number): MmaSpForm {
  return {
    shape: `m16n8k${k}`,
    m: 16,
    n: 8,
    k,
    a,
    b,
    c,
    selectors: 64 / k,
    sm,
    ptx: [8, 5],
  };
}

const FP8: readonly MmaType[] = ["e4m3", "e5m2"];

/**
 * The offered sparse forms (PTX ISA, mma.sp: Syntax, "PTX ISA Notes", "Target ISA Notes"; each
 * assembled by ptxas 13.0 for sm_90a, and for sm_80 or sm_89 at its own sm):
 * - f16 · f16 → f32 or f16, bf16 · bf16 → f32: m16n8k16 and m16n8k32 (sm_80);
 * - e4m3/e5m2 (any mix) → f32: m16n8k64 (sm_89), their metadata placement measured on an H200
 *   ({@link mmaSpMetadataAt}). The → f16 float8 form needs PTX 8.7 and ptxas 13.0 refuses it
 *   for sm_90a (it assembles for sm_120a): not offered; nor are tf32, s8/u8 and s4/u4.
 * Only `.sp::ordered_metadata` is offered: ptxas advises against plain `.sp` ("expected to have
 * substantially reduced performance on some future architectures").
 */
export const MMA_SP_FORMS: readonly MmaSpForm[] = [
  ...([16, 32] as const).flatMap((k) => [
    spForm(k, "f16", "f16", "f32", 80),
    spForm(k, "f16", "f16", "f16", 80),
    spForm(k, "bf16", "bf16", "f32", 80),
  ]),
  ...FP8.flatMap((a) => FP8.map((b) => spForm(64, a, b, "f32", 89))),
];

/**
 * The PTX spelling of a sparse form, also its op's IR name.
 * @example mmaSpFormName(MMA_SP_FORMS[3]!) // "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32"
 */
export const mmaSpFormName = (f: MmaSpForm): string =>
  `mma.sp::ordered_metadata.sync.aligned.${f.shape}.row.col.${f.c}.${f.a}.${f.b}.${f.c}`;

/** A short spelling for messages: `m16n8k32 f32 = sparse f16 · f16 + f32`. */
export const showMmaSpForm = (f: MmaSpForm): string =>
  `${f.shape} ${f.c} = sparse ${f.a} · ${f.b} + ${f.c}`;

/** The sparse form spelled by these tokens, or undefined. */
export function findMmaSpForm(
  shape: string,
  a: MmaType,
  b: MmaType,
  c: MmaType,
): MmaSpForm | undefined {
  return MMA_SP_FORMS.find((f) => f.shape === shape && f.a === a && f.b === b && f.c === c);
}

/** The dense mma form of K = `k` with `f`'s types, whose fragment figures the sparse ones reuse. */
function denseOf(f: MmaSpForm, k: number): MmaForm {
  return {
    shape: `m${f.m}n${f.n}k${k}` as MmaFormShape,
    m: f.m,
    n: f.n,
    k,
    a: f.a,
    b: f.b,
    c: f.c,
    satfinite: false,
    sm: f.sm,
    ptx: f.ptx,
  };
}

/**
 * One operand's fragment of a sparse form ({@link MmaFragment}: rows, cols, elements per lane,
 * [row, col] of each). A's columns are those of the M × K/2 matrix of kept elements: kept column
 * `2q + j` is the j-th kept element of the row's chunk q (columns 4q..4q + 3 of the dense A).
 * The PTX ISA's figures ("Matrix Fragments for sparse mma.m16n8k16 / m16n8k32 with .f16 and
 * .bf16 types", "... sparse mma.m16n8k64 with .u8/.s8/.e4m3/.e5m2 type") put a_i of lane
 * (groupID g, threadID_in_group t) in row g or g + 8 and in the chunks from column `firstcol`
 * on, which is the dense fragment of K / 2 laid on the kept matrix:
 * - m16n8k32 .f16: a0, a1 row g, chunk t; a2, a3 row g + 8, chunk t; a4..a7 the same rows at
 *   chunk 4 + t (columns 16 + 4t ..);
 * - m16n8k64 8-bit: a0..a3 row g, chunks 2t and 2t + 1 (columns 8t .. 8t + 7); a4..a7 row
 *   g + 8; a8..a15 the same rows at columns 32 + 8t ..;
 * - m16n8k16 .f16: a0, a1 row g, chunk t; a2, a3 row g + 8, chunk t.
 * B (K × 8) and C/D are the dense fragments of K ("Sparse MMA .m16n8k32 fragment layout for
 * matrix B", four registers of two halves: rows 2t + (i & 1) + 8·⌊i / 2⌋, column g; m16n8k64
 * 8-bit: four registers of four bytes, rows 4t + (i & 3) + 16·⌊i / 4⌋, column g). One-hot
 * probes on an H200 (one A element and one B element 1.0, the rest 0) reproduced these A and B
 * fragments for m16n8k32 .f16 and for m16n8k64 with every float8 type mix.
 */
export function mmaSpFragment(f: MmaSpForm, operand: "A" | "B" | "C"): MmaFragment {
  return operand === "A"
    ? mmaFragment(denseOf(f, f.k / 2), "A")
    : mmaFragment(denseOf(f, f.k), operand);
}

/**
 * Where the metadata of chunk `chunk` (columns 4·chunk .. 4·chunk + 3) of row `row` of A sits
 * under sparsity selector `selector`: the lane whose `e` register holds it and the bit of its
 * 4-bit field (bits [1:0] the column in the chunk of the first kept element, [3:2] of the
 * second).
 * - m16n8k16 / m16n8k32 .f16/.bf16 (PTX ISA, "Sparse MMA .m16n8k16 / .m16n8k32 metadata layout
 *   for .f16/.bf16 type"): with Q = K / 16 lanes of each quad holding metadata (1, 2), lane
 *   4·(row mod 8) + Q·selector + j holds the chunks of columns 16j .. 16j + 15 of rows g and
 *   g + 8, row g in bits [15:0] and row g + 8 in bits [31:16], chunk by chunk from the low bits
 *   (MLIR's sparse-mma-2-4-f16 integration test builds m16n8k32's metadata the same way: lane
 *   2i + j of a pair holds the 16-bit words of rows g and g + 8 of column block j, row g's in
 *   the low half); confirmed on an H200 by one-hot probes.
 * - m16n8k64 .e4m3/.e5m2 (measured on an H200, every type mix alike: one-hot A and B elements
 *   under uniform metadata, and each 4-bit field of each lane changed alone): each lane holds
 *   32 columns of one row, lane 4·(row mod 8) + ⌊row / 8⌋ + 2·⌊chunk / 8⌋, bits 4·(chunk mod 8);
 *   so lanes 4g and 4g + 2 hold row g's columns 0..31 and 32..63, lanes 4g + 1 and 4g + 3 row
 *   g + 8's. The PTX ISA's figure ("Sparse MMA .m16n8k64 metadata layout for .e4m3/.e5m2/...
 *   type"), read as the 16-bit forms' rule with Q = 4, disagreed with the GPU.
 * @example mmaSpMetadataAt(MMA_SP_FORMS[3]!, 1, 9, 5) // { lane: 7, bit: 20 }
 */
export function mmaSpMetadataAt(
  f: MmaSpForm,
  selector: number,
  row: number,
  chunk: number,
): { lane: number; bit: number } {
  invariant(row >= 0 && row < f.m && chunk >= 0 && chunk < f.k / 4, "metadata chunk out of A");
  if (f.k === 64) {
    invariant(selector === 0, "m16n8k64 has sparsity selector 0 alone");
    return {
      lane: 4 * (row % 8) + Math.floor(row / 8) + 2 * Math.floor(chunk / 8),
      bit: 4 * (chunk % 8),
    };
  }
  const q = f.k / 16;
  return {
    lane: 4 * (row % 8) + q * selector + Math.floor(chunk / 4),
    bit: 16 * Math.floor(row / 8) + 4 * (chunk % 4),
  };
}

/**
 * True when a 4-bit metadata field is one `.sp::ordered_metadata` defines: two column indices
 * of the chunk, the first below the second (0b0100, 0b1000, 0b1001, 0b1100, 0b1101, 0b1110;
 * PTX ISA, "Sparse matrix storage": "any other values result in an undefined behavior").
 */
export const mmaSpFieldValid = (field: number): boolean => (field & 3) < field >> 2;

/**
 * The documented bound of a sparse float form: the dense form's ({@link mmaFormApprox}) over
 * the K / 2 products the instruction forms (each kept element of A times the row of B its
 * metadata names; the pruned zeros are not multiplied).
 */
export function mmaSpFormApprox(f: MmaSpForm): ApproxBound {
  const b = mmaFormApprox(denseOf(f, f.k / 2));
  invariant(b !== undefined, "every sparse form is a float form");
  return b;
}

/**
 * The absolute bound of one element of D against the exact `c + Σ a·b` over its K / 2
 * products (`products`; `exact` for the half-ulp term of a float16 D): the dense form's
 * `mmaFormBound` with K / 2 products.
 */
export function mmaSpFormBound(
  f: MmaSpForm,
  c: number,
  products: ArrayLike<number>,
  exact: number,
): number {
  return mmaFormBound(denseOf(f, f.k / 2), c, products, exact);
}

/**
 * The simulator's D of sparse form `f` for one warp (operands: a, b, c, e, selector): each kept
 * element of A multiplies the row of B its metadata names (from the lanes the selector picks,
 * {@link mmaSpMetadataAt}); D = C + Σ of the K / 2 exact products, summed in float64 in k order,
 * rounded once to D's type (within {@link mmaSpFormBound}). A metadata field that is not
 * increasing is TX6029 (undefined behaviour), and D is left as it was.
 */
function simulateSp(f: MmaSpForm): (w: FragmentCall) => void {
  const fa = mmaSpFragment(f, "A");
  const fb = mmaSpFragment(f, "B");
  const fc = mmaSpFragment(f, "C");
  const H = f.k / 2;
  return (w) => {
    const sel = w.staticArg(4);
    const kept = new Float64Array(f.m * H);
    const B = new Float64Array(f.k * f.n);
    const C = new Float64Array(f.m * f.n);
    const read = (op: number, fr: MmaFragment, into: Float64Array, cols: number): void => {
      for (let lane = 0; lane < 32; lane++) {
        const v = w.values(op, lane);
        for (let i = 0; i < fr.perLane; i++) {
          const [r, c] = fr.coord(lane, i);
          into[r * cols + c] = Number(v[i]);
        }
      }
    };
    read(0, fa, kept, H);
    read(1, fb, B, f.n);
    read(2, fc, C, f.n);
    // The dense column of each kept element, from the metadata lanes the selector names.
    const col = new Int32Array(f.m * H);
    const words = new Map<number, number>();
    for (let r = 0; r < f.m; r++) {
      for (let q = 0; q < f.k / 4; q++) {
        const { lane, bit } = mmaSpMetadataAt(f, sel, r, q);
        let word = words.get(lane);
        if (word === undefined) words.set(lane, (word = Number(w.values(3, lane)[0]) >>> 0));
        const field = (word >>> bit) & 15;
        if (!mmaSpFieldValid(field)) {
          w.hazard(
            "TX6029",
            `the metadata of row ${r}, columns ${4 * q}..${4 * q + 3} of A (lane ${lane}'s e, bits ${bit + 3}..${bit}) is 0b${field.toString(2).padStart(4, "0")}; .sp::ordered_metadata takes two increasing column indices (0b0100, 0b1000, 0b1001, 0b1100, 0b1101, 0b1110), anything else is undefined behaviour (PTX ISA, "Sparse matrix storage")`,
          );
          return;
        }
        col[r * H + 2 * q] = 4 * q + (field & 3);
        col[r * H + 2 * q + 1] = 4 * q + (field >> 2);
      }
    }
    for (let lane = 0; lane < 32; lane++) {
      const d: number[] = [];
      for (let i = 0; i < fc.perLane; i++) {
        const [r, n] = fc.coord(lane, i);
        let s = 0;
        for (let j = 0; j < H; j++) s += kept[r * H + j]! * B[col[r * H + j]! * f.n + n]!;
        d.push(s + C[r * f.n + n]!);
      }
      w.setValues(2, lane, d);
    }
  };
}

/** The op record of one sparse form: fragments, selector, contract, lowering, semantics. */
function mmaSpFormOp(f: MmaSpForm): OpDef {
  const name = mmaSpFormName(f);
  const frag = mmaFragmentOperand;
  return {
    name,
    family: "mma",
    surface: "T.ptx.mma_sp",
    form: "stmt",
    operands: [
      frag("a", mmaSpFragment(f, "A"), "read"),
      frag("b", mmaSpFragment(f, "B"), "read"),
      frag("c", mmaSpFragment(f, "C"), "readwrite"),
      {
        kind: "fragment",
        name: "e",
        count: 1,
        dtypes: ["uint32", "int32"],
        access: "read",
        scalar: true,
      },
      { kind: "static", name: "sparsity selector", min: 0, max: f.selectors - 1, code: "TX7013" },
    ],
    result: () => undefined,
    signatures: [
      [mmaArrayDtypes(f.a)[0]!, mmaArrayDtypes(f.b)[0]!, mmaArrayDtypes(f.c)[0]!, "uint32"],
    ],
    sm: f.sm,
    ptx: f.ptx,
    source: `PTX ISA, mma.sp::ordered_metadata (${showMmaSpForm(f)}; sm_${f.sm}, PTX ${f.ptx.join(".")})`,
    archCode: "TX7003",
    effects: true,
    approx: mmaSpFormApprox(f),
    lower: (c, _d, ops) =>
      c.ins(`${name} ${ops[2]}, ${ops[0]}, ${ops[1]}, ${ops[2]}, ${ops[3]}, ${ops[4]}`),
    sim: { kind: "fragment", make: () => simulateSp(f) },
  };
}

/** The sparse mma op records: one per form of {@link MMA_SP_FORMS}. */
export const MMA_SP_OPS: readonly OpDef[] = MMA_SP_FORMS.map(mmaSpFormOp);
