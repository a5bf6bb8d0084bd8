import type { ApproxBound, OpDef, OperandSpec } from "../op.js";
import { staticArg, valueArg } from "../define.js";
import {
  checkOperandDescriptor,
  checkScales,
  checkWarpgroupBlock,
  predicate,
  WGMMA_NS,
} from "./mma-async.js";

/** A float8 operand type token of wgmma (PTX ISA, wgmma.mma_async: `.atype`/`.btype`). */
export type WgmmaFp8 = "e4m3" | "e5m2";

/** One float8 wgmma.mma_async variant: N, A's and B's types, the accumulator type. SS only. */
export interface WgmmaFp8Variant {
  /** N of m64nNk32: a multiple of 8 in 8..256. */
  readonly n: number;
  readonly a: WgmmaFp8;
  readonly b: WgmmaFp8;
  /** D's type: `f32` (N/2 float32 per thread) or `f16` (N/2 float16 per thread, packed in pairs). */
  readonly acc: "f32" | "f16";
}

const FP8S: readonly WgmmaFp8[] = ["e4m3", "e5m2"];

/** Every float8 variant of the op table: N × A type × B type × accumulator. */
export const WGMMA_FP8_VARIANTS: readonly WgmmaFp8Variant[] = WGMMA_NS.flatMap((n) =>
  FP8S.flatMap((a) =>
    FP8S.flatMap((b) =>
      (["f32", "f16"] as const).map((acc): WgmmaFp8Variant => ({ n, a, b, acc })),
    ),
  ),
);

/** The dtype of a float8 type token. */
export const fp8Dtype = (t: WgmmaFp8): "float8_e4m3" | "float8_e5m2" =>
  t === "e4m3" ? "float8_e4m3" : "float8_e5m2";

/** The PTX spelling (also the IR name): `wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e5m2`. */
export const wgmmaFp8Name = (v: WgmmaFp8Variant): string =>
  `wgmma.mma_async.sync.aligned.m64n${v.n}k32.${v.acc}.${v.a}.${v.b}`;

/**
 * Fraction bits the float32-D float8 wgmma keeps while it sums one instruction's terms, in the
 * model of {@link wgmmaFp8F32Bound}: the terms are aligned to the largest one's exponent and
 * truncated there (DeepSeek-V3 technical report, section 3.3.2, "Increasing Accumulation
 * Precision": Hopper's FP8 tensor cores keep about 14 bits).
 */
export const WGMMA_FP8_F32_KEPT_BITS = 13;

/**
 * The error bound of one float32-D float8 wgmma element against the exact
 * `scale_d·c + Σ_k a_k·b_k` (K = 32 per instruction). The PTX ISA leaves the accumulation order
 * and internal precision unspecified; the model is an aligned sum: every one of the 33 terms
 * (c and the 32 products) is aligned to the exponent E = ⌊log2 max(|c|, |a_k·b_k|)⌋ of the
 * largest and truncated to {@link WGMMA_FP8_F32_KEPT_BITS} fraction bits there, so each loses
 * less than 2^(E − 13), and the sum is rounded once to float32:
 * `33 · 2^(E − 13) + 2^-24 · |exact|`. (A bound relative to Σ|terms| is not one: with products
 * of mixed magnitudes the truncations of the small ones add up past 2^-13 · Σ|terms|; measured
 * on the H200, test/gpu/wgmma-fp8.test.ts.) The simulator sums the exact products in float64 in
 * k order and rounds once to D's type.
 * @param c the accumulator's value before the instruction (0 when scale_d is 0)
 * @param products the 32 exact products a_k·b_k
 * @returns the bound, ≥ 0 (0 when every term is 0)
 */
export function wgmmaFp8F32Bound(c: number, products: readonly number[]): number {
  let max = Math.abs(c);
  let exact = c;
  for (const p of products) {
    max = Math.max(max, Math.abs(p));
    exact += p;
  }
  if (max === 0) return 0;
  const e = Math.floor(Math.log2(max));
  return (products.length + 1) * 2 ** (e - WGMMA_FP8_F32_KEPT_BITS) + 2 ** -24 * Math.abs(exact);
}

/**
 * The float32-D float8 wgmma bound as an {@link ApproxBound} record, for tables that list one per
 * op: its `rel` is the per-term truncation, 2^-13 of the largest term's binade; the bound itself
 * is {@link wgmmaFp8F32Bound}'s.
 */
export const WGMMA_FP8_BOUND: ApproxBound = {
  ulp: 0.5,
  rel: 2 ** -WGMMA_FP8_F32_KEPT_BITS,
  source:
    "PTX ISA, wgmma.mma_async: accumulation order and precision unspecified; FP8 tensor cores align the terms to the largest and keep ~13 fraction bits (DeepSeek-V3 report, 3.3.2): 33·2^(⌊log2 max term⌋ − 13) + 0.5 ulp of float32 per instruction (wgmmaFp8F32Bound)",
};

/**
 * The bound with float16 D: partial sums no more precise than float16's 11 bits are allowed,
 * `2^-10 · (|c| + Σ|a_k·b_k|)`, plus half a float16 ulp of the result (its final rounding).
 */
export const WGMMA_FP8_F16_BOUND: ApproxBound = {
  ulp: 0.5,
  rel: 2 ** -10,
  source:
    "PTX ISA, wgmma.mma_async (.f16 D): accumulation precision unspecified; 2^-10·(|c| + Σ|a·b|) + 0.5 ulp of float16 per instruction",
};

/** float32 (or float16) accumulator elements per thread of m64nN: 64·N / 128. */
const accCount = (n: number): number => n / 2;

function wgmmaFp8Op(v: WgmmaFp8Variant): OpDef {
  const name = wgmmaFp8Name(v);
  const accDtype = v.acc === "f32" ? "float32" : "float16";
  const d: OperandSpec = {
    kind: "fragment",
    name: "d",
    count: accCount(v.n),
    dtypes: [accDtype],
    access: "readwrite",
  };
  const surface = "T.ptx.wgmma.mma_async";
  return {
    name,
    family: "wgmma",
    surface,
    form: "stmt",
    operands: [
      d,
      valueArg("a_desc", ["uint64"]),
      valueArg("b_desc", ["uint64"]),
      valueArg("scale_d", ["bool", "int32"]),
      staticArg("scale_a", -1, 1, "TX7004"),
      staticArg("scale_b", -1, 1, "TX7004"),
    ],
    result: () => undefined,
    signatures: [],
    sm: 90,
    ptx: [8, 0],
    source: `PTX ISA, wgmma.mma_async (m64n${v.n}k32, .${v.acc}.${v.a}.${v.b}: A and B K-major from shared-memory descriptors, no imm-trans for float8); sm_90a`,
    archCode: "TX7006",
    archSpecific: true,
    effects: true,
    approx: v.acc === "f16" ? WGMMA_FP8_F16_BOUND : WGMMA_FP8_BOUND,
    check: (args, span) => {
      checkScales(surface, args, 4, span);
      checkOperandDescriptor(
        surface,
        { n: v.n, abDtype: fp8Dtype(v.a) },
        "A",
        args[1]!,
        false,
        span,
      );
      checkOperandDescriptor(
        surface,
        { n: v.n, abDtype: fp8Dtype(v.b) },
        "B",
        args[2]!,
        false,
        span,
      );
    },
    checkLaunch: (_args, launch, span) => checkWarpgroupBlock(surface, launch, span),
    lower: (c, _d, ops, dts) => {
      const p = predicate(c, ops[3]!, dts[3]!);
      c.ins(`${name} ${ops[0]}, ${ops[1]}, ${ops[2]}, ${p}, ${ops[4]}, ${ops[5]}`);
    },
    sim: {
      kind: "machine",
      effect: {
        unit: "wgmma",
        action: "mma",
        n: v.n,
        ab: fp8Dtype(v.a),
        ...(v.b !== v.a ? { b: fp8Dtype(v.b) } : {}),
        ...(v.acc === "f16" ? { acc: "float16" as const } : {}),
        aRegs: false,
        needsFence: true,
      },
    },
  };
}

/**
 * `wgmma.mma_async.sync.aligned.m64nNk32.{f32,f16}.{e4m3,e5m2}.{e4m3,e5m2}` (PTX ISA,
 * wgmma.mma_async; sm_90a, PTX 8.0), issued by a warpgroup: `D = A·B + scale_d·D` with A 64×32
 * and B N×32 float8, both K-major from shared-memory descriptors (a k32 step is 32 bytes of a row,
 * as a k16 step of a 2-byte type), D N/2 float32 or float16 elements per thread in the layout of
 * the f16/bf16 variants. A in registers (the RS form) is not offered for float8 here.
 */
export const WGMMA_FP8_OPS: readonly OpDef[] = WGMMA_FP8_VARIANTS.map(wgmmaFp8Op);
