// Differential cases of the sparse mma forms (core's MMA_SP_FORMS, T.ptx.mma_sp): one kernel of
// two warps per form and sparsity selector. Each lane loads its fragments and its metadata
// register from tensors, runs T.ptx.mma_sp and stores D. The host builds a 2:4-sparse A (random
// kept columns per 4-wide chunk), B and C, and packs every lane's registers through the PTX ISA's
// figures (the float8 forms' metadata as measured on an H200), written out below (not imported
// from core): the kept elements of A, B, C, and the metadata of the lanes the selector names
// (the other lanes' metadata registers hold 0, a field the ISA leaves undefined, so reading the
// wrong lanes shows). D is judged against the exact
// C + Σ (kept a)·b over the K / 2 products the instruction forms, within the form's documented
// bound (core's mmaSpFormBound). Warp 1's rows keep no element in column 3 of their first chunk
// and B's row 3 is NaN: a pruned zero is not multiplied, so D stays finite there.
import {
  MMA_SP_FORMS,
  mmaSpFormBound,
  mmaSpFormName,
  type DType,
  type MmaSpForm,
  type MmaType,
} from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { roundDyadic, roundTo, toDyadic } from "./reference.js";
import { prng } from "./values.js";
import type { MmaCase, Verdict } from "./mma-cases.js";
import { judgeFloatElement } from "./mma-form-cases.js";

/** The register array's dtype of each type the sparse forms use. */
const ARRAY: Partial<Record<MmaType, DType>> = {
  f16: "float16",
  bf16: "bfloat16",
  e4m3: "float8_e4m3",
  e5m2: "float8_e5m2",
  f32: "float32",
};

/** The T.ptx.mma_sp dtype argument of each type (TIRx spellings). */
const ARG: Partial<Record<MmaType, string>> = {
  f16: "fp16",
  bf16: "bf16",
  e4m3: "e4m3",
  e5m2: "e5m2",
  f32: "fp32",
};

const dtOf = (t: MmaType): DType => ARRAY[t]!;

/**
 * The PTX ISA's sparse figures, per lane l (groupID g = l >> 2, threadID_in_group t = l % 4):
 * - A ("Matrix Fragments for sparse mma.m16n8k16 / m16n8k32 with .f16 and .bf16 types",
 *   "... sparse mma.m16n8k64 with .u8/.s8/.e4m3/.e5m2 type"): element i is the kept element
 *   `slot` (0 or 1, in column order) of chunk `chunk` (columns 4·chunk .. 4·chunk + 3) of row
 *   `row`. m16n8k16: a0, a1 row g, a2, a3 row g + 8, all at firstcol 4t (chunk t).
 *   m16n8k32: rows g for a0, a1, a4, a5, else g + 8; firstcol 4t for i < 4, 4t + 16 for i ≥ 4.
 *   m16n8k64: rows g for a0..a3 and a8..a11, else g + 8; firstcol 8t for i < 8, 8t + 32 for
 *   i ≥ 8, the four kept elements of the 8 columns from firstcol two per chunk.
 * - B: m16n8k16/k32 .f16: b_i at row 2t + (i & 1) + 8·⌊i / 2⌋, column g; m16n8k64 8-bit: b_i
 *   at row 4t + (i & 3) + 16·⌊i / 4⌋, column g.
 * - C/D: c0, c1 at row g, c2, c3 at row g + 8, columns 2t and 2t + 1.
 * One-hot probes on an H200 (one A element and one B element 1.0, the rest 0) reproduced these
 * A and B figures for m16n8k32 .f16 and m16n8k64 with every float8 type mix.
 */
export function refA(
  f: MmaSpForm,
  l: number,
  i: number,
): { row: number; chunk: number; slot: number } {
  const g = l >> 2;
  const t = l & 3;
  if (f.k === 16) return { row: g + (i >= 2 ? 8 : 0), chunk: t, slot: i & 1 };
  if (f.k === 32) {
    return {
      row: g + ([2, 3, 6, 7].includes(i) ? 8 : 0),
      chunk: t + (i >= 4 ? 4 : 0),
      slot: i & 1,
    };
  }
  const up = (i >= 4 && i < 8) || i >= 12;
  return { row: g + (up ? 8 : 0), chunk: 2 * t + ((i >> 1) & 1) + (i >= 8 ? 8 : 0), slot: i & 1 };
}

export function refB(f: MmaSpForm, l: number, i: number): [number, number] {
  const g = l >> 2;
  const t = l & 3;
  if (f.k === 64) return [4 * t + (i & 3) + 16 * Math.floor(i / 4), g];
  return [2 * t + (i & 1) + 8 * Math.floor(i / 2), g];
}

export function refC(l: number, i: number): [number, number] {
  return [(l >> 2) + (i >= 2 ? 8 : 0), 2 * (l & 3) + (i & 1)];
}

/**
 * Where each chunk's metadata sits: [lane, bit of its 4-bit field]. A field's bits [1:0] are the
 * column (in its chunk) of the first kept element, [3:2] of the second.
 * - m16n8k16 / m16n8k32 .f16/.bf16, the PTX ISA's figures ("Sparse MMA .m16n8k16 / .m16n8k32
 *   metadata layout for .f16/.bf16 type"): in each quad the lanes the selector names
 *   (m16n8k16: lane `sel`; m16n8k32: lanes 2·sel and 2·sel + 1) hold, one per 16 columns of A
 *   in order, the 4-bit fields of the four chunks of those columns, row g's in bits 0..15 and
 *   row g + 8's in bits 16..31, the chunk of the lowest columns lowest.
 * - m16n8k64 .e4m3/.e5m2 (selector 0), as measured on an H200 with one-hot probes (each 4-bit
 *   field of each lane changed alone; the ISA figure's reading above, with all four lanes of a
 *   quad holding 16 columns each, disagreed): lane 4g of a quad holds row g's columns 0..31,
 *   lane 4g + 2 its columns 32..63, lanes 4g + 1 and 4g + 3 the same of row g + 8; the 8
 *   chunks of a lane's 32 columns fill its bits 0..31 from the low end.
 */
export function refMetaLane(
  f: MmaSpForm,
  sel: number,
  row: number,
  chunk: number,
): [number, number] {
  const g = row % 8;
  if (f.k === 64) {
    const lanes = row < 8 ? [4 * g, 4 * g + 2] : [4 * g + 1, 4 * g + 3];
    return [lanes[chunk < 8 ? 0 : 1]!, 4 * (chunk % 8)];
  }
  const perQuad = f.k === 16 ? 1 : 2;
  const lane = 4 * g + perQuad * sel + Math.floor(chunk / 4);
  return [lane, (row >= 8 ? 16 : 0) + 4 * (chunk % 4)];
}

/** Elements per lane of A (kept), B and C. */
export const spCounts = (f: MmaSpForm): { a: number; b: number; c: number } => ({
  a: f.k / 4,
  b: f.k / 4,
  c: 4,
});

/** The kept columns of each (row, chunk) of A: an increasing pair in 0..3. */
const PAIRS: readonly [number, number][] = [
  [0, 1],
  [0, 2],
  [0, 3],
  [1, 2],
  [1, 3],
  [2, 3],
];

/** One warp's sparse A (kept values and their columns), B, C. */
export interface SpData {
  /** kept[row][chunk] = the two kept values; cols[row][chunk] = their columns (0..3, increasing). */
  readonly kept: number[][][];
  readonly cols: [number, number][][];
  /** B row-major K × 8, C row-major 16 × 8. */
  readonly B: number[];
  readonly C: number[];
}

function inType(t: MmaType, x: number): number {
  return roundTo(x, dtOf(t));
}

/**
 * One warp's data of form `f`. `prune3`: chunk 0 of every row keeps columns among 0..2 and B's
 * row 3 is NaN (a pruned zero times NaN would give NaN if it were multiplied). Values: small
 * random ones in [-1, 1] of the type, and in every fourth row of A and column 6 of B exponents
 * spread over the type's range (float8: 2^-9 .. 2^4; 16-bit: 2^-14 .. 2^3, which keeps a float16
 * D's sums in range).
 */
export function spData(f: MmaSpForm, rnd: () => number, prune3: boolean): SpData {
  const small = (t: MmaType): number => inType(t, rnd() * 2 - 1);
  const spread = (t: MmaType): number => {
    const [lo, hi] = t === "e4m3" || t === "e5m2" ? [-9, 4] : [-14, 3];
    const ex = lo + Math.floor(rnd() * (hi - lo + 1));
    return inType(t, (rnd() < 0.5 ? -1 : 1) * (1 + rnd()) * 2 ** ex);
  };
  const chunks = f.k / 4;
  const kept: number[][][] = [];
  const cols: [number, number][][] = [];
  for (let r = 0; r < 16; r++) {
    kept.push([]);
    cols.push([]);
    for (let q = 0; q < chunks; q++) {
      const choices = prune3 && q === 0 ? PAIRS.filter((p) => p[1] !== 3) : PAIRS;
      cols[r]!.push(choices[Math.floor(rnd() * choices.length)]!);
      kept[r]!.push([0, 1].map(() => (r % 4 === 2 ? spread(f.a) : small(f.a))));
    }
  }
  const B = Array.from({ length: f.k * 8 }, (_, x) => {
    const [k, n] = [Math.floor(x / 8), x % 8];
    if (prune3 && k === 3) return NaN;
    return n === 6 ? spread(f.b) : small(f.b);
  });
  const C = Array.from({ length: 16 * 8 }, () => small(f.c));
  return { kept, cols, B, C };
}

/** Each lane's registers of one warp: kept A, B, C slots, and the metadata word. */
export function spPack(
  f: MmaSpForm,
  sel: number,
  d: SpData,
): { a: number[]; b: number[]; c: number[]; e: number[] } {
  const n = spCounts(f);
  const a: number[] = [];
  const b: number[] = [];
  const c: number[] = [];
  const e = new Array<number>(32).fill(0);
  for (let l = 0; l < 32; l++) {
    for (let i = 0; i < n.a; i++) {
      const { row, chunk, slot } = refA(f, l, i);
      a.push(d.kept[row]![chunk]![slot]!);
    }
    for (let i = 0; i < n.b; i++) {
      const [k, col] = refB(f, l, i);
      b.push(d.B[k * 8 + col]!);
    }
    for (let i = 0; i < n.c; i++) {
      const [r, col] = refC(l, i);
      c.push(d.C[r * 8 + col]!);
    }
  }
  for (let r = 0; r < 16; r++) {
    for (let q = 0; q < f.k / 4; q++) {
      const [lane, bit] = refMetaLane(f, sel, r, q);
      const [i0, i1] = d.cols[r]![q]!;
      e[lane] = (e[lane]! | (((i1 << 2) | i0) << bit)) >>> 0;
    }
  }
  return { a, b, c, e };
}

/** c + Σ products, exact, rounded once to float64 (IEEE arithmetic for non-finite inputs). */
function exactSum(c: number, as: readonly number[], bs: readonly number[]): number {
  let plain = c;
  as.forEach((x, k) => (plain += x * bs[k]!));
  if (![c, ...as, ...bs].every(Number.isFinite)) return plain;
  const parts = [toDyadic(c)];
  as.forEach((x, k) => {
    const p = toDyadic(x);
    const q = toDyadic(bs[k]!);
    parts.push({ m: p.m * q.m, e: p.e + q.e });
  });
  const e = Math.min(...parts.map((p) => p.e));
  const m = parts.reduce((s, p) => s + (p.m << BigInt(p.e - e)), 0n);
  return roundDyadic(m, e, "float64");
}

/** One warp's D (its lanes' 4 elements each, `out`) against the exact sparse product. */
export function judgeSp(
  f: MmaSpForm,
  d: SpData,
  out: readonly number[],
): { checked: number; exact: number; worst: number; bad: string[] } {
  const bad: string[] = [];
  let exact = 0;
  let worst = 0;
  let checked = 0;
  for (let l = 0; l < 32; l++) {
    for (let i = 0; i < 4; i++) {
      const [r, n] = refC(l, i);
      const as: number[] = [];
      const bs: number[] = [];
      for (let q = 0; q < f.k / 4; q++) {
        for (let s = 0; s < 2; s++) {
          as.push(d.kept[r]![q]![s]!);
          bs.push(d.B[(4 * q + d.cols[r]![q]![s]!) * 8 + n]!);
        }
      }
      const cv = d.C[r * 8 + n]!;
      const want = exactSum(cv, as, bs);
      const got = out[l * 4 + i]!;
      checked++;
      const t = judgeFloatElement(f, `D[${r}][${n}]`, got, want, as, bs, cv, () =>
        mmaSpFormBound(
          f,
          cv,
          as.map((x, k) => x * bs[k]!),
          want,
        ),
      );
      if (t.exact) exact++;
      worst = Math.max(worst, t.err);
      for (const b of t.bad) if (bad.length < 3) bad.push(b);
    }
  }
  return { checked, exact, worst, bad };
}

const WARPS = 2;

/** The kernel of one form and selector: each lane loads a, b, c and e, runs mma_sp, stores D. */
function spKernel(f: MmaSpForm, sel: number, name: string) {
  const n = spCounts(f);
  return T.function(
    name,
    {
      A: T.Tensor([WARPS * 32 * n.a], dtOf(f.a)),
      B: T.Tensor([WARPS * 32 * n.b], dtOf(f.b)),
      C: T.Tensor([WARPS * 32 * n.c], dtOf(f.c)),
      E: T.Tensor([WARPS * 32], "uint32"),
      D: T.Tensor([WARPS * 32 * n.c], dtOf(f.c)),
    },
    (p) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 * WARPS }) });
      const tid = T.cuda.thread_idx("x");
      const a = T.alloc_local([n.a], dtOf(f.a), { name: "a" });
      const b = T.alloc_local([n.b], dtOf(f.b), { name: "b" });
      const c = T.alloc_local([n.c], dtOf(f.c), { name: "c" });
      const e = T.alloc_local([1], "uint32", { name: "e" });
      for (let i = 0; i < n.a; i++) a.set([i], p.A.get([tid.mul(n.a).add(i)]));
      for (let i = 0; i < n.b; i++) b.set([i], p.B.get([tid.mul(n.b).add(i)]));
      for (let i = 0; i < n.c; i++) c.set([i], p.C.get([tid.mul(n.c).add(i)]));
      e.set([0], p.E.get([tid]));
      T.ptx.mma_sp(
        f.shape,
        "row",
        "col",
        ARG[f.a]!,
        ARG[f.b]!,
        ARG[f.c]!,
        a,
        0,
        b,
        0,
        c,
        0,
        e,
        0,
        sel,
      );
      for (let i = 0; i < n.c; i++) p.D.set([tid.mul(n.c).add(i)], c.get([i]));
    },
  );
}

/** The differential case of form `f` and selector `sel` (2 warps; warp 1 prunes column 3). */
export function spCase(f: MmaSpForm, sel: number, seed: number): MmaCase {
  const rnd = prng(seed);
  const data = [spData(f, rnd, false), spData(f, rnd, true)];
  const packed = data.map((d) => spPack(f, sel, d));
  const tag = mmaSpFormName(f)
    .replace(/^mma\.sp::ordered_metadata\.sync\.aligned\./, "")
    .replace(/\./g, "_");
  const nc = spCounts(f).c;
  return {
    id: `mma.sp.${f.shape}.${f.c}.${f.a}.${f.b}.sel${sel}`,
    fn: spKernel(f, sel, `mma_sp_${tag}_sel${sel}`),
    inputs: [
      { dtype: dtOf(f.a), values: packed.flatMap((x) => x.a) },
      { dtype: dtOf(f.b), values: packed.flatMap((x) => x.b) },
      { dtype: dtOf(f.c), values: packed.flatMap((x) => x.c) },
      { dtype: "uint32", values: packed.flatMap((x) => x.e) },
    ],
    out: { dtype: dtOf(f.c), n: WARPS * 32 * nc },
    exactness: "bound",
    judge: (out): Verdict => {
      const per = data.map((d, w) =>
        judgeSp(f, d, out.slice(w * 32 * nc, (w + 1) * 32 * nc).map(Number)),
      );
      return {
        checked: per.reduce((s, v) => s + v.checked, 0),
        exact: per.reduce((s, v) => s + v.exact, 0),
        worst: Math.max(...per.map((v) => v.worst)),
        inexactWarps: per.flatMap((v, w) => (v.exact === v.checked ? [] : [w])),
        bad: per.flatMap((v, w) => v.bad.map((b) => `warp ${w}: ${b}`)),
      };
    },
  };
}

/** One case per sparse form and selector value, seeded from 2500 in table order. */
export function mmaSpCases(): MmaCase[] {
  let seed = 2500;
  return MMA_SP_FORMS.flatMap((f) =>
    Array.from({ length: f.selectors }, (_, sel) => spCase(f, sel, seed++)),
  );
}
