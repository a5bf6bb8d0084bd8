import type { DType } from "../../dtype.js";
import { dyadic, roundDyadic } from "../../numeric/dyadic.js";
import type { ApproxBound, FragmentCall, OpDef, OperandSpec } from "../op.js";
import {
  isMmaIntType,
  MMA_FORMS,
  mmaArrayDtypes,
  mmaFormName,
  mmaFragment,
  showMmaForm,
  type MmaForm,
  type MmaFragment,
  type MmaType,
} from "./forms.js";
import type { FragmentKind } from "./layout.js";

/**
 * One mma.sync variant of the tile layer: shape, PTX type tokens, fragment element dtypes, and the
 * fragment kinds of layout.ts. `T.tile.warp.gemm` and the built-in fragment layouts
 * (layout/fragments.ts) cover these; `T.ptx.mma` offers every form of `MMA_FORMS` (forms.ts).
 */
export interface MmaVariant {
  readonly shape: "m16n8k16" | "m16n8k8" | "m16n8k32";
  /** PTX type token of A and B (`f16`, `bf16`, `tf32`, `s8`) and of C/D (`f32`, `f16`, `s32`). */
  readonly ab: "f16" | "bf16" | "tf32" | "s8";
  readonly cd: "f32" | "f16" | "s32";
  /** Element dtype of the A and B register arrays and of C/D. */
  readonly abDtype: DType;
  readonly cdDtype: DType;
  readonly a: FragmentKind;
  readonly b: FragmentKind;
}

/**
 * The mma.sync variants of the tile layer (row.col layouts; PTX ISA, mma), each a form of
 * `MMA_FORMS` (whose op record lowers and simulates it). m16n8k16 f16 · f16 accumulates into
 * float32 or float16 (`.f16` C/D: two .f16x2 registers, each c_i where the .f32 C/D has it, so
 * one C layout serves both); bf16 · bf16 into float32 only (mma.sync has no bfloat16 C/D).
 */
export const MMA_VARIANTS: readonly MmaVariant[] = [
  {
    shape: "m16n8k16",
    ab: "f16",
    cd: "f32",
    abDtype: "float16",
    cdDtype: "float32",
    a: "a.m16n8k16",
    b: "b.m16n8k16",
  },
  {
    shape: "m16n8k16",
    ab: "f16",
    cd: "f16",
    abDtype: "float16",
    cdDtype: "float16",
    a: "a.m16n8k16",
    b: "b.m16n8k16",
  },
  {
    shape: "m16n8k16",
    ab: "bf16",
    cd: "f32",
    abDtype: "bfloat16",
    cdDtype: "float32",
    a: "a.m16n8k16",
    b: "b.m16n8k16",
  },
  {
    shape: "m16n8k8",
    ab: "tf32",
    cd: "f32",
    abDtype: "float32",
    cdDtype: "float32",
    a: "a.m16n8k8.tf32",
    b: "b.m16n8k8.tf32",
  },
  {
    shape: "m16n8k32",
    ab: "s8",
    cd: "s32",
    abDtype: "int8",
    cdDtype: "int32",
    a: "a.m16n8k32.s8",
    b: "b.m16n8k32.s8",
  },
];

/** IR name of a variant: `mma.sync.aligned.{shape}.row.col.{cd}.{ab}.{ab}.{cd}`. */
export const mmaName = (v: MmaVariant): string =>
  `mma.sync.aligned.${v.shape}.row.col.${v.cd}.${v.ab}.${v.ab}.${v.cd}`;

/**
 * The float results' documented bound, against the exact `D = A·B + C` of each element.
 * The PTX ISA does not specify the order or the intermediate precision of the accumulation
 * inside mma (products of f16/bf16/tf32 inputs are exact; NVIDIA's tensor cores align the
 * addends to the largest exponent and truncate). The simulator computes every element in
 * float64 (the exact products summed in k order, then C) and rounds once to float32. For one
 * instruction of K products, the GPU may differ from the exact value by
 * `rel · (|c| + Σ_k |a_k·b_k|)` with `rel = 2^-21` (the final rounding and truncation of the sum)
 * **plus** `(K + 1) · 2^-22 · max(|c|, max_k |a_k·b_k|)`: every addend is aligned to the largest
 * one's exponent and truncated (to about float32's 24 bits; the bound allows one bit less), so
 * an addend far enough below the largest is dropped whole. Measured on an H200 (wgmma m64n256k16, c = 0, one product of
 * −2^-24 and the others products of float16 subnormals): D = −2^-24 exactly, 2.6 times the
 * first term alone. {@link mmaF32Bound} evaluates both terms.
 */
export const MMA_F32_BOUND: ApproxBound = {
  ulp: 0,
  rel: 2 ** -21,
  source:
    "PTX ISA, mma: accumulation order and internal precision unspecified; bound 2^-21·(|c| + Σ|a·b|) + (K+1)·2^-22·max(|c|, |a·b|) per instruction (mmaF32Bound)",
};

/**
 * The absolute error bound of {@link MMA_F32_BOUND} for one float mma / wgmma instruction's
 * element: `2^-21 · (|c| + Σ|p|) + (K + 1) · 2^-22 · max(|c|, max |p|)`, where `products` are the
 * K exact products a_k·b_k of the element (float32-scaled units; any K) and `c` the accumulator
 * it adds to (0 when scale-d is 0). Infinite or NaN inputs give a non-finite bound (the result
 * is then judged by NaN/infinity alone). For chained instructions, sum the bound of each with
 * `c` the exact running sum before it.
 * @example mmaF32Bound(0, [-(2 ** -24), 2 ** -48]); // 2^-21·(2^-24 + 2^-48) + 3·2^-22·2^-24
 */
export function mmaF32Bound(c: number, products: ArrayLike<number>): number {
  let sum = Math.abs(c);
  let max = Math.abs(c);
  for (let k = 0; k < products.length; k++) {
    const p = Math.abs(products[k]!);
    sum += p;
    if (p > max) max = p;
  }
  return MMA_F32_BOUND.rel! * sum + (products.length + 1) * 2 ** -22 * max;
}

/** tf32 as the mma reads a 32-bit register: the low 13 mantissa bits are ignored (truncated). */
export function tf32(x: number): number {
  const f = new Float32Array([x]);
  const u = new Uint32Array(f.buffer);
  if ((u[0]! & 0x7f800000) !== 0x7f800000) u[0] = u[0]! & 0xffffe000;
  return f[0]!;
}

/**
 * The bound of a float mma with float16 C/D (f16 or float8 inputs) against the exact
 * `D = A·B + C` of each element: `2^-10 · (|c| + Σ|a·b|)` plus half a float16 ulp of the result
 * (D's final rounding). The PTX ISA leaves the accumulation order and internal precision
 * unspecified; the first term holds the f32-D bound ({@link mmaF32Bound}: the same tensor-core
 * sum, addends aligned and truncated) for any K < 4096, and a sum kept to float16's 11 bits
 * relative to `|c| + Σ|a·b|`. The domain: no partial sum beyond float16's largest finite value
 * (65504), where a float16 accumulation may overflow though the exact result does not. The
 * simulator sums the exact products in float64 in k order, adds C and rounds once to float16.
 */
export const MMA_F16_BOUND: ApproxBound = {
  ulp: 0.5,
  rel: 2 ** -10,
  source:
    "PTX ISA, mma (.f16 C/D): accumulation order and internal precision unspecified; 2^-10·(|c| + Σ|a·b|) + 0.5 ulp of float16 per instruction (mmaFormBound)",
  domain: "|c| + Σ|a·b| ≤ 65504",
};

/**
 * The bound of a float8 (e4m3/e5m2) mma with float32 C/D: `2^-13 · (|c| + Σ|a·b|)` per
 * instruction. The PTX ISA leaves the accumulation precision unspecified; Hopper's float8 tensor
 * cores are reported to keep about 14 significant bits while they sum the products (DeepSeek-V3
 * technical report, 3.3.2), the bound wgmma's float8 forms use too.
 */
export const MMA_FP8_BOUND: ApproxBound = {
  ulp: 0,
  rel: 2 ** -13,
  source:
    "PTX ISA, mma (.e4m3/.e5m2, .f32 C/D): accumulation precision unspecified; FP8 tensor cores keep ~14 bits while summing (DeepSeek-V3 report, 3.3.2): 2^-13·(|c| + Σ|a·b|) per instruction (mmaFormBound)",
};

/**
 * The bound of the f64 forms: the PTX ISA gives each element-wise multiply and add the precision
 * of an .f64 fused multiply-add, rounding to nearest, in an unspecified order, so K + 1 roundings
 * of partial sums no larger than `|c| + Σ|a·b|`: `(K + 1) · 2^-53 · (|c| + Σ|a·b|)` (K ≤ 16, so
 * `rel` here is that of K = 16). The simulator computes the exact `A·B + C` of each element
 * (bigint) and rounds it once to float64, which is exact for small integers.
 */
export const MMA_F64_BOUND: ApproxBound = {
  ulp: 0,
  rel: 17 * 2 ** -53,
  source:
    "PTX ISA, mma (.f64): each multiply-add as precise as fma.rn.f64, order unspecified; (K+1)·2^-53·(|c| + Σ|a·b|) per instruction (mmaFormBound)",
};

/** The documented bound of a float form (undefined for the exact integer and single-bit forms). */
export function mmaFormApprox(f: MmaForm): ApproxBound | undefined {
  if (isMmaIntType(f.c)) return undefined;
  if (f.c === "f64") return MMA_F64_BOUND;
  if (f.c === "f16") return MMA_F16_BOUND;
  return f.a === "e4m3" || f.a === "e5m2" ? MMA_FP8_BOUND : MMA_F32_BOUND;
}

/**
 * The absolute error bound of one element of a float form's D against the exact
 * `c + Σ_k a_k·b_k`: `products` are the K exact products, `exact` the exact value (for the
 * half-ulp term of a float16 D). f16/bf16/tf32 → f32: {@link mmaF32Bound}; float8 → f32:
 * `2^-13·(|c| + Σ|p|)`; → f16: `2^-10·(|c| + Σ|p|)` plus half a float16 ulp of `exact` (2^-25 at
 * least); f64: `(K + 1)·2^-53·(|c| + Σ|p|)` plus the smallest subnormal. Infinite or NaN inputs
 * give a non-finite bound. 0 for the integer forms (exact).
 * @example mmaFormBound(MMA_FORMS[1]!, 0, [1, 1], 2) // 2^-10·2 + 2^-10 (half an ulp at 2)
 */
export function mmaFormBound(
  f: MmaForm,
  c: number,
  products: ArrayLike<number>,
  exact: number,
): number {
  if (isMmaIntType(f.c)) return 0;
  let sum = Math.abs(c);
  for (let k = 0; k < products.length; k++) sum += Math.abs(products[k]!);
  if (f.c === "f64") return (products.length + 1) * 2 ** -53 * sum + Number.MIN_VALUE;
  if (f.c === "f16") {
    const e = Math.max(-14, Math.floor(Math.log2(Math.abs(exact) || 2 ** -24)));
    return 2 ** -10 * sum + 2 ** (e - 11);
  }
  if (f.a === "e4m3" || f.a === "e5m2") return 2 ** -13 * sum;
  return mmaF32Bound(c, products);
}

/** Element `q` (of `perSlot`) of a register-array slot's value `x`, as the type reads it. */
function unpack(t: MmaType, x: number, q: number): number {
  if (t === "b1") return (x >>> q) & 1;
  const v = (x >>> (4 * q)) & 15;
  return t === "s4" && v >= 8 ? v - 16 : v;
}

/** `c + Σ a_k·b_k` exact, rounded once to float64 (non-finite inputs: IEEE arithmetic). */
function exactF64(as: ArrayLike<number>, bs: ArrayLike<number>, c: number): number {
  let plain = c;
  for (let k = 0; k < as.length; k++) plain += as[k]! * bs[k]!;
  if (!Number.isFinite(c) || !Array.from(as).every(Number.isFinite)) return plain;
  if (!Array.from(bs).every(Number.isFinite)) return plain;
  const parts = [dyadic(c)];
  for (let k = 0; k < as.length; k++) {
    const x = dyadic(as[k]!);
    const y = dyadic(bs[k]!);
    parts.push({ m: x.m * y.m, e: x.e + y.e });
  }
  const e = Math.min(...parts.map((p) => p.e));
  const m = parts.reduce((s, p) => s + (p.m << BigInt(p.e - e)), 0n);
  return roundDyadic(m, e, "float64");
}

/**
 * The simulator's D of form `f` for one warp: reads A, B and C per the form's fragments
 * ({@link mmaFragment}), computes every element and writes D over C.
 * - s8/u8/s4/u4: the exact `c + Σ a·b` (|Σ| < 2^53), wrapped to int32, or with `.satfinite`
 *   clamped to [-2^31, 2^31 - 1] (the clamp of the exact value: a partial sum that would clamp in
 *   another order is not modelled);
 * - b1: `c + Σ_k popc(a_k op b_k)` over the K bits of row and column, wrapped;
 * - f64: the exact value rounded once;
 * - other floats: the exact products (tf32 inputs truncated to their 19 bits) summed in float64
 *   in k order, then C, rounded once to D's type (within the form's bound, {@link mmaFormBound}).
 */
function simulate(f: MmaForm): (w: FragmentCall) => void {
  const fa = mmaFragment(f, "A");
  const fb = mmaFragment(f, "B");
  const fc = mmaFragment(f, "C");
  const K = f.k;
  const conv = f.a === "tf32" ? tf32 : (x: number): number => x;
  const intForm = isMmaIntType(f.c);
  return (w) => {
    const A = new Float64Array(f.m * K);
    const B = new Float64Array(K * f.n);
    const C = new Float64Array(f.m * f.n);
    const read = (op: number, fr: MmaFragment, into: Float64Array, cols: number): void => {
      for (let lane = 0; lane < 32; lane++) {
        const v = w.values(op, lane);
        for (let i = 0; i < fr.perLane; i++) {
          const x = Number(v[Math.floor(i / fr.perSlot)]);
          const [r, c] = fr.coord(lane, i);
          into[r * cols + c] =
            fr.perSlot > 1 ? unpack(fr.type, x, i % fr.perSlot) : op === 2 ? x : conv(x);
        }
      }
    };
    read(0, fa, A, K);
    read(1, fb, B, f.n);
    read(2, fc, C, f.n);
    const as = new Float64Array(K);
    const bs = new Float64Array(K);
    for (let lane = 0; lane < 32; lane++) {
      const d: number[] = [];
      for (let i = 0; i < fc.perLane; i++) {
        const [r, n] = fc.coord(lane, i);
        const c = C[r * f.n + n]!;
        for (let k = 0; k < K; k++) {
          as[k] = A[r * K + k]!;
          bs[k] = B[k * f.n + n]!;
        }
        if (f.c === "f64") {
          d.push(exactF64(as, bs, c));
          continue;
        }
        let s = 0;
        if (f.bitOp === "xor") for (let k = 0; k < K; k++) s += as[k]! ^ bs[k]!;
        else if (f.bitOp === "and") for (let k = 0; k < K; k++) s += as[k]! & bs[k]!;
        else for (let k = 0; k < K; k++) s += as[k]! * bs[k]!;
        s += c;
        if (!intForm) d.push(s);
        else if (f.satfinite) d.push(Math.min(2 ** 31 - 1, Math.max(-(2 ** 31), s)));
        else d.push(s | 0);
      }
      w.setValues(2, lane, d);
    }
  };
}

/**
 * The fragment operand `n` of an mma form (dense or sparse): `fr.slots` register-array slots of
 * `fr.type`'s array dtypes (tf32 moved as .b32), read or read and written.
 */
export function mmaFragmentOperand(
  n: string,
  fr: MmaFragment,
  access: "read" | "readwrite",
): OperandSpec {
  return {
    kind: "fragment",
    name: n,
    count: fr.slots,
    dtypes: mmaArrayDtypes(fr.type),
    access,
    ...(fr.type === "tf32" ? { b32: true } : {}),
  };
}

/** The op record of one mma.sync form: fragments, contract, lowering, simulator semantics. */
function mmaFormOp(f: MmaForm): OpDef {
  const name = mmaFormName(f);
  const frag = mmaFragmentOperand;
  const approx = mmaFormApprox(f);
  return {
    name,
    family: "mma",
    surface: "T.ptx.mma",
    form: "stmt",
    operands: [
      frag("a", mmaFragment(f, "A"), "read"),
      frag("b", mmaFragment(f, "B"), "read"),
      frag("c", mmaFragment(f, "C"), "readwrite"),
    ],
    result: () => undefined,
    signatures: [[mmaArrayDtypes(f.a)[0]!, mmaArrayDtypes(f.b)[0]!, mmaArrayDtypes(f.c)[0]!]],
    sm: f.sm,
    ptx: f.ptx,
    source: `PTX ISA, mma (${showMmaForm(f)}; sm_${f.sm}, PTX ${f.ptx.join(".")})`,
    archCode: "TX7003",
    effects: true,
    ...(approx ? { approx } : {}),
    lower: (c, _d, ops) => c.ins(`${name} ${ops[2]}, ${ops[0]}, ${ops[1]}, ${ops[2]}`),
    sim: { kind: "fragment", make: () => simulate(f) },
  };
}

/**
 * The mma.sync op records: one per form of {@link MMA_FORMS} (f16, bf16, tf32, f64, s8/u8,
 * s4/u4, b1 and float8 forms, sm_75–sm_90), built from the table.
 */
export const MMA_SYNC_OPS: readonly OpDef[] = MMA_FORMS.map(mmaFormOp);
