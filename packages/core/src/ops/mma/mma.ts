import type { DType } from "../../dtype.js";
import type { ApproxBound, FragmentCall, OpDef, OperandSpec } from "../op.js";
import { FRAGMENT_SHAPE, fragmentCoord, type FragmentKind } from "./layout.js";

/** One mma.sync variant: shape, PTX type tokens, fragment element dtypes. */
export interface MmaVariant {
  readonly shape: "m16n8k16" | "m16n8k8" | "m16n8k32";
  /** PTX type token of A and B (`f16`, `bf16`, `tf32`, `s8`) and of C/D (`f32`, `s32`). */
  readonly ab: "f16" | "bf16" | "tf32" | "s8";
  readonly cd: "f32" | "s32";
  /** Element dtype of the A and B register arrays and of C/D. */
  readonly abDtype: DType;
  readonly cdDtype: DType;
  readonly a: FragmentKind;
  readonly b: FragmentKind;
}

/** The mma.sync variants of the op table (row.col layouts; PTX ISA, mma). */
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

function mmaOp(v: MmaVariant): OpDef {
  const name = mmaName(v);
  const ka = FRAGMENT_SHAPE[v.a];
  const kb = FRAGMENT_SHAPE[v.b];
  const kc = FRAGMENT_SHAPE["c.m16n8"];
  const frag = (
    n: string,
    count: number,
    dt: DType,
    access: "read" | "readwrite",
  ): OperandSpec => ({
    kind: "fragment",
    name: n,
    count,
    dtypes: [dt],
    access,
    ...(v.ab === "tf32" && access === "read" ? { b32: true } : {}),
  });
  const integer = v.cd === "s32";
  const conv = v.ab === "tf32" ? tf32 : (x: number): number => x;
  return {
    name,
    family: "mma",
    surface: "T.ptx.mma",
    form: "stmt",
    operands: [
      frag("a", ka.perLane, v.abDtype, "read"),
      frag("b", kb.perLane, v.abDtype, "read"),
      frag("c", kc.perLane, v.cdDtype, "readwrite"),
    ],
    result: () => undefined,
    signatures: [[v.abDtype, v.abDtype, v.cdDtype]],
    sm: 80,
    ptx: [7, 0],
    source: `PTX ISA, mma (${v.shape}, .${v.ab})`,
    archCode: "TX7003",
    effects: true,
    ...(integer ? {} : { approx: MMA_F32_BOUND }),
    lower: (c, _d, ops) => c.ins(`${name} ${ops[2]}, ${ops[0]}, ${ops[1]}, ${ops[2]}`),
    sim: {
      kind: "fragment",
      make: () => (w: FragmentCall) => {
        const A = new Float64Array(ka.rows * ka.cols);
        const B = new Float64Array(kb.rows * kb.cols);
        const C = new Float64Array(kc.rows * kc.cols);
        for (let lane = 0; lane < 32; lane++) {
          const a = w.values(0, lane);
          const b = w.values(1, lane);
          const cc = w.values(2, lane);
          a.forEach((x, i) => {
            const [r, k] = fragmentCoord(v.a, lane, i);
            A[r * ka.cols + k] = conv(Number(x));
          });
          b.forEach((x, i) => {
            const [k, n] = fragmentCoord(v.b, lane, i);
            B[k * kb.cols + n] = conv(Number(x));
          });
          cc.forEach((x, i) => {
            const [r, n] = fragmentCoord("c.m16n8", lane, i);
            C[r * kc.cols + n] = Number(x);
          });
        }
        const K = ka.cols;
        for (let lane = 0; lane < 32; lane++) {
          const d: number[] = [];
          for (let i = 0; i < kc.perLane; i++) {
            const [r, n] = fragmentCoord("c.m16n8", lane, i);
            // Exact products; float64 sum in k order (integer: exact, |sum| < 2^53), then C.
            let s = 0;
            for (let k = 0; k < K; k++) s += A[r * K + k]! * B[k * kb.cols + n]!;
            s += C[r * kc.cols + n]!;
            // The store rounds once to float32 / wraps to int32 (.s32 without .satfinite).
            d.push(integer ? s | 0 : s);
          }
          w.setValues(2, lane, d);
        }
      },
    },
  };
}

/** mma.sync.aligned m16n8k16 f16/bf16 → f32, m16n8k8 tf32 → f32, m16n8k32 s8 → s32 (sm_80, PTX 7.0). */
export const MMA_SYNC_OPS: readonly OpDef[] = MMA_VARIANTS.map(mmaOp);
