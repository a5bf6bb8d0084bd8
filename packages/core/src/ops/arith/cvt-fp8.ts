import type { DType } from "../../dtype.js";
import type { Span } from "../../span.js";
import { f16Bits, f16Value } from "../../numeric/float.js";
import { fp8Bits, fp8Value, type Fp8Format } from "../../numeric/fp8.js";
import { badDtypes, valueArg } from "../define.js";
import type { OpDef, ThreadFn } from "../op.js";

/**
 * The packed float8 conversions of PTX (PTX ISA, cvt: `cvt.rn.satfinite{.relu}.f8x2type.f32`,
 * `cvt.rn.satfinite{.relu}.f8x2type.f16x2`, `cvt.rn{.relu}.f16x2.f8x2type`, `.f8x2type` one of
 * `.e4m3x2`, `.e5m2x2`; sm_90 with PTX ISA 7.8, sm_89 with PTX ISA 8.1 (ptxas: "cvt with
 * .e4m3x2/.e5m2x2 on sm_89 requires PTX ISA .version 8.1"), recorded as sm_89 + PTX 8.1 so one
 * contract covers both). Packed values travel as unsigned integers: a pair of float8 codes is a
 * uint16 (first element in the low byte), a pair of float16 a uint32 (first element in the low
 * half), as the `.b16` / `.b32` operands of cvt are.
 *
 * - `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d, a, b` (float32, float32 → uint16): `a` into the high
 *   byte, `b` into the low byte, each rounded to nearest even and saturated (numeric/fp8.ts
 *   `roundFp8`: NaN → NaN, ±inf and overflow → ±max finite). `.satfinite` is mandatory in PTX.
 * - `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f16x2 d, a` (uint32 → uint16): the high half of `a` into the
 *   high byte, the low half into the low byte, rounded and saturated the same way.
 * - `cvt.rn.f16x2.{e4m3x2,e5m2x2} d, a` (uint16 → uint32): each byte widened exactly to float16,
 *   the high byte into the high half.
 *
 * NaN codes: the simulator writes 0x7f for a float8 NaN and 0x7fff for a float16 NaN; PTX does not
 * document the payload or the sign of a NaN result, and the differential test leaves elements with
 * a NaN input unspecified (a NaN's class is checked by the scalar casts, which decode to values).
 * There is no bfloat16 form at sm_90 (none in the PTX ISA through 9.0): convert bfloat16 to float32
 * (exact) and use the `.f32` form.
 */
interface Fp8Cvt {
  readonly name: string;
  readonly surface: string;
  readonly operands: readonly DType[];
  readonly result: DType;
  readonly doc: string;
  readonly sem: ThreadFn;
}

const SOURCE =
  "PTX ISA, cvt (.e4m3x2/.e5m2x2: sm_90 with PTX ISA 7.8, sm_89 with PTX ISA 8.1; .satfinite mandatory into float8)";

function fp8Cvts(fmt: Fp8Format): Fp8Cvt[] {
  const code = (x: number): number => fp8Bits(x, fmt);
  return [
    {
      name: `cvt.rn.satfinite.${fmt}x2.f32`,
      surface: `T.ptx.cvt.${fmt}x2_f32`,
      operands: ["float32", "float32"],
      result: "uint16",
      doc: `two float32 → ${fmt} pair (a high byte, b low byte), RNE, satfinite`,
      sem: ((a: number, b: number) => (code(a) << 8) | code(b)) as ThreadFn,
    },
    {
      name: `cvt.rn.satfinite.${fmt}x2.f16x2`,
      surface: `T.ptx.cvt.${fmt}x2_f16x2`,
      operands: ["uint32"],
      result: "uint16",
      doc: `float16 pair → ${fmt} pair (half by half), RNE, satfinite`,
      sem: ((a: number) =>
        (code(f16Value(a >>> 16)) << 8) | code(f16Value(a & 0xffff))) as ThreadFn,
    },
    {
      name: `cvt.rn.f16x2.${fmt}x2`,
      surface: `T.ptx.cvt.f16x2_${fmt}x2`,
      operands: ["uint16"],
      result: "uint32",
      doc: `${fmt} pair → float16 pair (byte by byte), exact`,
      sem: ((a: number) =>
        ((f16Bits(fp8Value(a >>> 8, fmt)) << 16) | f16Bits(fp8Value(a & 0xff, fmt))) >>>
        0) as ThreadFn,
    },
  ];
}

function record(spec: Fp8Cvt): OpDef {
  const result = (dts: readonly DType[], span?: Span): DType => {
    if (dts.length !== spec.operands.length || dts.some((d, i) => d !== spec.operands[i])) {
      throw badDtypes(spec.surface, dts, span);
    }
    return spec.result;
  };
  return {
    name: spec.name,
    family: "arith",
    surface: spec.surface,
    form: "value",
    operands: spec.operands.map((dt, i) => valueArg("abc"[i]!, [dt])),
    result,
    signatures: [spec.operands],
    sm: 89,
    ptx: [8, 1],
    source: `${SOURCE}; ${spec.doc}`,
    lower: (c, d, ops, dts) => {
      const regs = ops.map((o, i) => c.toReg(o, dts[i]!));
      c.ins(`${spec.name} ${d}, ${regs.join(", ")}`);
    },
    sim: { kind: "thread", make: () => spec.sem },
  };
}

/** The six packed float8 conversions, e4m3 then e5m2 (see the comment above `Fp8Cvt`). */
export const FP8_CVT_OPS: readonly OpDef[] = [...fp8Cvts("e4m3"), ...fp8Cvts("e5m2")].map(record);

/**
 * The packed cvt a scalar cast between `from` and `to` is emitted as (codegen's cast emitter, after
 * upcast-half routed other pairs through float16/float32), or undefined when neither is float8:
 * its record carries the cast's target requirement (sm_89 + PTX 8.1) for the verifier.
 */
export function fp8CastOp(from: DType, to: DType): string | undefined {
  const f8 = (dt: DType): Fp8Format | undefined =>
    dt === "float8_e4m3" ? "e4m3" : dt === "float8_e5m2" ? "e5m2" : undefined;
  const src = f8(from);
  if (src) return `cvt.rn.f16x2.${src}x2`;
  const dst = f8(to);
  if (dst) return `cvt.rn.satfinite.${dst}x2.f32`;
  return undefined;
}
