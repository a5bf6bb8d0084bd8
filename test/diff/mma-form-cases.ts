// Differential cases of every mma.sync form of core's MMA_FORMS: one kernel per form (2 warps,
// test/gpu/mma-differential.test.ts), and one kernel of one warp running every form in turn
// (test/mma/forms.test.ts, on the simulator). Each lane loads its fragments (register-array
// slots) from tensors, runs T.ptx.mma and stores D's slots. The host packs every lane's slots
// from matrices A, B, C (formData: random values, the type's extremes, int32 overflow in both
// directions, float exponent spreads, zeros, infinities and NaN) through the PTX ISA's fragment
// figures, written out below (not imported from core), and judges D against the exact
// A·B + C: integer and single-bit forms bit for bit (wrapping, or clamped with .satfinite),
// float forms within the form's documented bound (core's mmaFormBound).
import {
  MMA_FORMS,
  mmaFormBound,
  mmaFormName,
  type DType,
  type MmaForm,
  type MmaType,
  type PrimFunc,
} from "@tirx-ts/core";
import { T, type TileView } from "@tirx-ts/dsl";
import { roundDyadic, roundTo, toDyadic } from "./reference.js";
import { prng } from "./values.js";
import type { MmaCase, Verdict } from "./mma-cases.js";

/** Bits of one element of each type in its register (PTX ISA, "Fundamental Types"; tf32 in .b32). */
const BITS: Record<MmaType, number> = {
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

/** The register array's dtype of each type (sub-byte types packed in uint32, first element low). */
const ARRAY: Record<MmaType, DType> = {
  f16: "float16",
  bf16: "bfloat16",
  tf32: "float32",
  f32: "float32",
  f64: "float64",
  e4m3: "float8_e4m3",
  e5m2: "float8_e5m2",
  s8: "int8",
  u8: "uint8",
  s4: "uint32",
  u4: "uint32",
  b1: "uint32",
  s32: "int32",
};

/** The T.ptx.mma dtype argument of each type (TIRx spellings). */
const ARG: Record<MmaType, string> = {
  f16: "float16",
  bf16: "bfloat16",
  tf32: "tf32",
  f32: "float32",
  f64: "float64",
  e4m3: "float8_e4m3",
  e5m2: "float8_e5m2",
  s8: "int8",
  u8: "uint8",
  s4: "int4",
  u4: "uint4",
  b1: "int1",
  s32: "int32",
};

const INTS: readonly MmaType[] = ["s8", "u8", "s4", "u4", "b1", "s32"];
const isInt = (t: MmaType): boolean => INTS.includes(t);

/** One operand's fragment, as the PTX ISA's figures give it. */
export interface RefFragment {
  readonly rows: number;
  readonly cols: number;
  /** Elements per lane and per register-array slot (8 for s4/u4, 32 for b1). */
  readonly perLane: number;
  readonly perSlot: number;
  /** [row, col] of element i of lane l. */
  at(l: number, i: number): [number, number];
}

/**
 * The figures of "Matrix Fragments for mma.m{M}n8k{K}": a 32-bit register of A holds, in lane
 * (groupID g, threadID_in_group t), the `e = 32 / bits` consecutive elements [g][e·t .. e·t + e)
 * of an 8 × 4e block; A's registers walk its blocks down the M / 8 row blocks first, then along
 * K. A register of B holds the column elements [e·t .. e·t + e)[g] of a 4e × 8 block, blocks
 * along K. f64 registers hold one element (e = 1). C/D: c0, c1 at row g, c2, c3 at row g + 8,
 * columns 2t and 2t + 1, for every accumulator type.
 */
export function refFragment(f: MmaForm, operand: "A" | "B" | "C"): RefFragment {
  const t = operand === "A" ? f.a : operand === "B" ? f.b : f.c;
  const bits = BITS[t];
  const e = bits === 64 ? 1 : 32 / bits;
  const rows = operand === "B" ? f.k : f.m;
  const cols = operand === "A" ? f.k : 8;
  const perSlot = bits < 8 ? e : 1;
  const blocksDown = f.m / 8;
  const at = (l: number, i: number): [number, number] => {
    const g = Math.floor(l / 4);
    const tig = l % 4;
    if (operand === "C") return [i < 2 ? g : g + 8, 2 * tig + (i % 2)];
    const reg = Math.floor(i / e);
    const inReg = i % e;
    if (operand === "B") return [reg * 4 * e + tig * e + inReg, g];
    const blockRow = reg % blocksDown;
    const blockCol = Math.floor(reg / blocksDown);
    return [blockRow * 8 + g, blockCol * 4 * e + tig * e + inReg];
  };
  return { rows, cols, perLane: (rows * cols) / 32, perSlot, at };
}

/** `x` as the nearest value of type `t` (tf32: float32 with the low 13 bits cleared). */
function inType(t: MmaType, x: number): number {
  switch (t) {
    case "f16":
      return roundTo(x, "float16");
    case "bf16":
      return roundTo(x, "bfloat16");
    case "e4m3":
      return roundTo(x, "float8_e4m3");
    case "e5m2":
      // e5m2 holds ±Infinity (roundTo saturates it, as cvt .satfinite does).
      return Number.isFinite(x) ? roundTo(x, "float8_e5m2") : x;
    case "tf32": {
      const v = new Float32Array([x]);
      new Uint32Array(v.buffer)[0]! &= 0xffffe000;
      return v[0]!;
    }
    case "f32":
      return Math.fround(x);
    default:
      return x;
  }
}

/** The integer range of an integer type. */
function range(t: MmaType): [number, number] {
  switch (t) {
    case "s8":
      return [-128, 127];
    case "u8":
      return [0, 255];
    case "s4":
      return [-8, 7];
    case "u4":
      return [0, 15];
    case "b1":
      return [0, 1];
    default:
      return [-(2 ** 31), 2 ** 31 - 1];
  }
}

/** Largest finite magnitude exponent used for a float type's spread (warp 2). */
const SPREAD: Partial<Record<MmaType, [number, number]>> = {
  f16: [-24, 6],
  bf16: [-60, 30],
  tf32: [-60, 30],
  f64: [-200, 200],
  e4m3: [-9, 4],
  e5m2: [-16, 6],
  f32: [-60, 30],
};

/**
 * One warp's A, B and C of a form, each row-major. Rows take turns: r % 4 = 0, 1 random over
 * the type; 2 extremes (integers: the type's least and greatest values) or exponents spread over
 * the type's range (floats); 3 overflow (integers: A at its greatest, C near 2^31 - 1 where B's
 * column holds its greatest value, near -2^31 in column 1, whose B holds the least, so the
 * products all push one way and .satfinite clamps whatever the order of the additions) or zeros,
 * infinities and NaN among small values (floats). B's columns 0-3 hold those extremes (greatest,
 * least, greatest, greatest) for integers and column 6 spread exponents, column 7 specials for
 * floats; the rest random. Integer C elsewhere is random in ±2^30, so no other sum leaves int32.
 * With float16 C the magnitudes keep every partial sum within float16's range.
 */
export function formData(f: MmaForm, rnd: () => number): { A: number[]; B: number[]; C: number[] } {
  const f16Acc = f.c === "f16";
  const uni = (t: MmaType): number => {
    const [lo, hi] = range(t);
    return lo + Math.floor(rnd() * (hi - lo + 1));
  };
  const spread = (t: MmaType): number => {
    const [lo, hi] = f16Acc ? [-14, 3] : SPREAD[t]!;
    const ex = lo + Math.floor(rnd() * (hi - lo + 1));
    return inType(t, (rnd() < 0.5 ? -1 : 1) * (1 + rnd()) * 2 ** ex);
  };
  const special = (t: MmaType): number => {
    const s = t === "e4m3" ? [0, -0, NaN, 1, -2] : [0, -0, Infinity, -Infinity, NaN, 1, -2];
    return inType(t, s[Math.floor(rnd() * s.length)]!);
  };
  const small = (t: MmaType): number => inType(t, rnd() * 2 - 1);
  const A = Array.from({ length: f.m * f.k }, (_, q) => {
    const r = Math.floor(q / f.k);
    if (isInt(f.a)) {
      if (r % 4 === 2) return rnd() < 0.5 ? range(f.a)[0] : range(f.a)[1];
      return r % 4 === 3 ? range(f.a)[1] : uni(f.a);
    }
    if (r % 4 === 2) return spread(f.a);
    return r % 4 === 3 && q % 5 === 0 ? special(f.a) : small(f.a);
  });
  const B = Array.from({ length: f.k * 8 }, (_, q) => {
    const n = q % 8;
    if (isInt(f.b)) return n < 4 ? range(f.b)[n === 1 ? 0 : 1] : uni(f.b);
    if (n === 6) return spread(f.b);
    return n === 7 && q % 3 === 0 ? special(f.b) : small(f.b);
  });
  const C = Array.from({ length: f.m * 8 }, (_, q) => {
    const r = Math.floor(q / 8);
    const n = q % 8;
    if (isInt(f.c)) {
      if (r % 4 === 3 && n < 4) {
        const off = Math.floor(rnd() * 1000);
        return n === 1 ? -(2 ** 31) + off : 2 ** 31 - 1 - off;
      }
      return Math.floor((rnd() * 2 - 1) * 2 ** 30);
    }
    if (r % 4 === 2) return spread(f.c);
    return r % 4 === 3 && n === 5 ? special(f.c) : small(f.c);
  });
  return { A, B, C };
}

/**
 * Why one element's inputs lie outside its form's documented bound (undefined: inside). The
 * float16 D bound holds for |c| + Σ|a·b| ≤ 65504 (MMA_F16_BOUND's domain): past it a partial
 * sum may overflow to ±Infinity in some order of the additions (seen on the H200). Non-finite
 * inputs are outside no domain (the exact value is non-finite too).
 */
export function outsideDomain(
  f: Pick<MmaForm, "c">,
  as: readonly number[],
  bs: readonly number[],
  c: number,
): string | undefined {
  if (f.c !== "f16") return undefined;
  const mag = as.reduce((t, a, k) => t + Math.abs(a * bs[k]!), Math.abs(c));
  if (!Number.isFinite(mag) || mag <= 65504) return undefined;
  return `|c| + Σ|a·b| = ${mag}, outside float16 D's domain (≤ 65504)`;
}

/** One warp's data of each of the GPU cases' warps for form `f` (mmaFormCases' seeds). */
export function formCaseData(f: MmaForm, seed: number): ReturnType<typeof formData>[] {
  const rnd = prng(seed);
  return Array.from({ length: WARPS }, () => formData(f, rnd));
}

/** The exact c + Σ a·b rounded once to float64; IEEE arithmetic for non-finite inputs. */
function exactFloat(as: readonly number[], bs: readonly number[], c: number): number {
  let plain = c;
  as.forEach((a, k) => (plain += a * bs[k]!));
  if (![c, ...as, ...bs].every(Number.isFinite)) return plain;
  const parts = [
    toDyadic(c),
    ...as.map((a, k) => {
      const x = toDyadic(a);
      const y = toDyadic(bs[k]!);
      return { m: x.m * y.m, e: x.e + y.e };
    }),
  ];
  const e = Math.min(...parts.map((p) => p.e));
  const m = parts.reduce((s, p) => s + (p.m << BigInt(p.e - e)), 0n);
  return roundDyadic(m, e, "float64");
}

/** Each lane's register-array slots of matrix `m` through fragment `fr` (sub-byte types packed). */
export function packSlots(m: readonly number[], fr: RefFragment): number[] {
  const out: number[] = [];
  for (let l = 0; l < 32; l++) {
    for (let s = 0; s < fr.perLane / fr.perSlot; s++) {
      if (fr.perSlot === 1) {
        const [r, c] = fr.at(l, s);
        out.push(m[r * fr.cols + c]!);
        continue;
      }
      let word = 0;
      const bits = 32 / fr.perSlot;
      for (let q = 0; q < fr.perSlot; q++) {
        const [r, c] = fr.at(l, s * fr.perSlot + q);
        word |= (m[r * fr.cols + c]! & ((1 << bits) - 1)) << (q * bits);
      }
      out.push(word >>> 0);
    }
  }
  return out;
}

/** One warp's D of a form (its lanes' C slots, `out`) against the exact A·B + C. */
export interface FormVerdict {
  readonly checked: number;
  readonly exact: number;
  /** Largest |got − exact| / bound (float forms). */
  readonly worst: number;
  readonly bad: readonly string[];
}

/**
 * One float element of D, `got`, against the exact `want` = c + Σ as·bs of a form of D type
 * `f.c` (dense or sparse): exact when it equals `want` rounded once to that type (NaN for NaN;
 * zeros of either sign, as the ISA does not say which sign an exact zero sum of signed zeros
 * takes), else its error as a fraction of `bound()`; `bad` holds why it fails (non-finite
 * mismatch, over the bound, data outside the bound's domain).
 */
export function judgeFloatElement(
  f: Pick<MmaForm, "c">,
  where: string,
  got: number,
  want: number,
  as: readonly number[],
  bs: readonly number[],
  c: number,
  bound: () => number,
): { exact: boolean; err: number; bad: string[] } {
  const bad: string[] = [];
  const outside = outsideDomain(f, as, bs, c);
  if (outside !== undefined) bad.push(`${where}: ${outside}`);
  if (got === roundTo(want, ARRAY[f.c]!) || (got !== got && want !== want)) {
    return { exact: true, err: 0, bad };
  }
  if (!Number.isFinite(want) || !Number.isFinite(got)) {
    bad.push(`${where} = ${got}, exact ${want}`);
    return { exact: false, err: 0, bad };
  }
  const err = Math.abs(got - want) / bound();
  if (!(err <= 1)) bad.push(`${where} = ${got}, exact ${want}, ${err.toFixed(2)} of the bound`);
  return { exact: false, err, bad };
}

/** Judge one warp's D slots `out` of form `f` on data `d` (see {@link formData}). */
export function judgeForm(
  f: MmaForm,
  d: { A: readonly number[]; B: readonly number[]; C: readonly number[] },
  out: readonly number[],
): FormVerdict {
  const fc = refFragment(f, "C");
  const bad: string[] = [];
  let exact = 0;
  let worst = 0;
  let checked = 0;
  for (let l = 0; l < 32; l++) {
    for (let i = 0; i < fc.perLane; i++) {
      const [r, n] = fc.at(l, i);
      const as = Array.from({ length: f.k }, (_, k) => d.A[r * f.k + k]!);
      const bs = Array.from({ length: f.k }, (_, k) => d.B[k * 8 + n]!);
      const cv = d.C[r * 8 + n]!;
      const got = Number(out[l * fc.perLane + i]);
      checked++;
      const where = `D[${r}][${n}]`;
      if (isInt(f.c)) {
        let s = BigInt(cv);
        as.forEach((a, k) => {
          const b = bs[k]!;
          s += BigInt(f.bitOp === "xor" ? a ^ b : f.bitOp === "and" ? a & b : a * b);
        });
        const lo = -(2n ** 31n);
        const hi = 2n ** 31n - 1n;
        const want = f.satfinite
          ? Number(s < lo ? lo : s > hi ? hi : s)
          : Number(BigInt.asIntN(32, s));
        if (got === want) exact++;
        else if (bad.length < 3) bad.push(`${where} = ${got}, want ${want}`);
        continue;
      }
      const want = exactFloat(as, bs, cv);
      const t = judgeFloatElement(f, where, got, want, as, bs, cv, () =>
        mmaFormBound(
          f,
          cv,
          as.map((a, k) => a * bs[k]!),
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

/** A kernel's tensor parameter name for the register-array dtype `dt`: inputs X_dt, outputs Y_dt. */
const paramName = (io: "X" | "Y", dt: DType): string => `${io}_${dt}`;

/**
 * One kernel of one warp running every form of `forms` in turn: form j's lanes load their A, B
 * and C slots from the input tensor of each array dtype (`X_<dtype>`, at the form's offsets),
 * run its T.ptx.mma, and store D's slots to the output tensor of C's dtype (`Y_<dtype>`).
 * Returns the kernel, its inputs (one per dtype, in parameter order), its outputs (dtype and
 * length, after the inputs) and where each form's D slots sit in its output.
 */
export function formsKernel(
  name: string,
  forms: readonly MmaForm[],
  data: readonly { A: number[]; B: number[]; C: number[] }[],
): {
  fn: PrimFunc;
  inputs: { dtype: DType; values: number[] }[];
  outputs: { dtype: DType; n: number }[];
  at: { out: number; offset: number }[];
} {
  const ins = new Map<DType, number[]>();
  const outs = new Map<DType, number>();
  const slot = (dt: DType, values: number[]): number => {
    const xs = ins.get(dt) ?? [];
    ins.set(dt, xs);
    const at = xs.length;
    xs.push(...values);
    return at;
  };
  const plan = forms.map((f, j) => {
    const [fa, fb, fc] = [refFragment(f, "A"), refFragment(f, "B"), refFragment(f, "C")];
    const d = data[j]!;
    const a = slot(ARRAY[f.a], packSlots(d.A, fa));
    const b = slot(ARRAY[f.b], packSlots(d.B, fb));
    const c = slot(ARRAY[f.c], packSlots(d.C, fc));
    const y = outs.get(ARRAY[f.c]) ?? 0;
    outs.set(ARRAY[f.c], y + 32 * fc.perLane);
    return {
      f,
      a,
      b,
      c,
      y,
      sa: fa.perLane / fa.perSlot,
      sb: fb.perLane / fb.perSlot,
      sc: fc.perLane,
    };
  });
  const inputs = [...ins].map(([dtype, values]) => ({ dtype, values }));
  const outputs = [...outs].map(([dtype, n]) => ({ dtype, n }));
  const params: Record<string, ReturnType<typeof T.Tensor>> = {};
  for (const x of inputs) params[paramName("X", x.dtype)] = T.Tensor([x.values.length], x.dtype);
  for (const y of outputs) params[paramName("Y", y.dtype)] = T.Tensor([y.n], y.dtype);
  const fn = T.function(name, params, (p) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
    const lane = T.cuda.thread_idx("x");
    plan.forEach(({ f, a, b, c, y, sa, sb, sc }, j) => {
      const X = (t: MmaType): TileView => p[paramName("X", ARRAY[t])]!;
      const ra = T.alloc_local([sa], ARRAY[f.a], { name: `a${j}` });
      const rb = T.alloc_local([sb], ARRAY[f.b], { name: `b${j}` });
      const rc = T.alloc_local([sc], ARRAY[f.c], { name: `c${j}` });
      for (let i = 0; i < sa; i++) ra.set([i], X(f.a).get([lane.mul(sa).add(a + i)]));
      for (let i = 0; i < sb; i++) rb.set([i], X(f.b).get([lane.mul(sb).add(b + i)]));
      for (let i = 0; i < sc; i++) rc.set([i], X(f.c).get([lane.mul(sc).add(c + i)]));
      T.ptx.mma(
        f.shape,
        "row",
        "col",
        ARG[f.a],
        ARG[f.b],
        ARG[f.c],
        ra,
        0,
        rb,
        0,
        rc,
        0,
        f.satfinite,
        f.bitOp,
      );
      const Y: TileView = p[paramName("Y", ARRAY[f.c])]!;
      for (let i = 0; i < sc; i++) Y.set([lane.mul(sc).add(y + i)], rc.get([i]));
    });
  });
  return {
    fn,
    inputs,
    outputs,
    at: plan.map(({ f, y }) => ({
      out: outputs.findIndex((o) => o.dtype === ARRAY[f.c]),
      offset: y,
    })),
  };
}

const WARPS = 2;

/**
 * The differential case of one form: a kernel of {@link WARPS} warps (each its own data from
 * {@link formData}), judged per warp by {@link judgeForm}.
 */
function formCase(f: MmaForm, seed: number): MmaCase {
  const data = formCaseData(f, seed);
  const fa = refFragment(f, "A");
  const fb = refFragment(f, "B");
  const fc = refFragment(f, "C");
  const sa = fa.perLane / fa.perSlot;
  const sb = fb.perLane / fb.perSlot;
  const sc = fc.perLane;
  const tag = mmaFormName(f)
    .replace(/^mma\.sync\.aligned\./, "")
    .replace(/\./g, "_");
  const fn = T.function(
    `mma_form_${tag}`,
    {
      A: T.Tensor([WARPS * 32 * sa], ARRAY[f.a]),
      B: T.Tensor([WARPS * 32 * sb], ARRAY[f.b]),
      C: T.Tensor([WARPS * 32 * sc], ARRAY[f.c]),
      D: T.Tensor([WARPS * 32 * sc], ARRAY[f.c]),
    },
    (p) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 * WARPS }) });
      const tid = T.cuda.thread_idx("x");
      const a = T.alloc_local([sa], ARRAY[f.a], { name: "a" });
      const b = T.alloc_local([sb], ARRAY[f.b], { name: "b" });
      const c = T.alloc_local([sc], ARRAY[f.c], { name: "c" });
      for (let i = 0; i < sa; i++) a.set([i], p.A.get([tid.mul(sa).add(i)]));
      for (let i = 0; i < sb; i++) b.set([i], p.B.get([tid.mul(sb).add(i)]));
      for (let i = 0; i < sc; i++) c.set([i], p.C.get([tid.mul(sc).add(i)]));
      T.ptx.mma(
        f.shape,
        "row",
        "col",
        ARG[f.a],
        ARG[f.b],
        ARG[f.c],
        a,
        0,
        b,
        0,
        c,
        0,
        f.satfinite,
        f.bitOp,
      );
      for (let i = 0; i < sc; i++) p.D.set([tid.mul(sc).add(i)], c.get([i]));
    },
  );
  return {
    id: `mma.${f.shape}${f.satfinite ? ".satfinite" : ""}.${f.c}.${f.a}.${f.b}${f.bitOp ? `.${f.bitOp}` : ""}`,
    fn,
    inputs: [
      { dtype: ARRAY[f.a], values: data.flatMap((d) => packSlots(d.A, fa)) },
      { dtype: ARRAY[f.b], values: data.flatMap((d) => packSlots(d.B, fb)) },
      { dtype: ARRAY[f.c], values: data.flatMap((d) => packSlots(d.C, fc)) },
    ],
    out: { dtype: ARRAY[f.c], n: WARPS * 32 * sc },
    exactness: isInt(f.c) ? "bit-exact" : "bound",
    judge: (out): Verdict => {
      const per = data.map((d, w) =>
        judgeForm(f, d, out.slice(w * 32 * sc, (w + 1) * 32 * sc).map(Number)),
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

/** The seed of MMA_FORMS[0]'s GPU case; form i uses FORM_SEED + i. */
export const FORM_SEED = 1300;

/** One differential case per form of MMA_FORMS (2 warps each), seeded by its index. */
export function mmaFormCases(): MmaCase[] {
  return MMA_FORMS.map((f, i) => formCase(f, FORM_SEED + i));
}
