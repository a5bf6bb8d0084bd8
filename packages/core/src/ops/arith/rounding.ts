import { dtypeBits, isFloat, isSigned, type DType } from "../../dtype.js";
import type { Expr } from "../../ir/expr.js";
import type { Span } from "../../span.js";
import {
  addRounded,
  cvtFloatRounded,
  cvtFloatToInt,
  cvtIntToFloat,
  fmaRounded,
  mulRounded,
  type IntRoundMode,
  type RoundMode,
} from "../../numeric/directed.js";
import { badDtypes, valueArg } from "../define.js";
import type { OpDef, OpNeed, SimValue, ThreadFn } from "../op.js";
import { cvtNanToZero, cvtType } from "../ptx-type.js";

declare module "../op.js" {
  interface OpDef {
    /**
     * The instruction takes float16/bfloat16 operands and results in their own 16-bit registers
     * (`fma.rn.f16`, `cvt.rz.f16.f32`): the upcast-half pass leaves its calls alone instead of
     * computing them in float32, which would round twice or change the instruction. Declared
     * beside the records that set it (the rounding-mode ops).
     */
    readonly halfNative?: true;
  }
}

/** The float rounding modifiers of PTX add/sub/mul/fma and float-destination cvt. */
export const ROUND_MODES: readonly RoundMode[] = ["rn", "rz", "rm", "rp"];
/** The integer rounding modifiers of PTX cvt with a float source and integer destination. */
export const INT_ROUND_MODES: readonly IntRoundMode[] = ["rni", "rzi", "rmi", "rpi"];

/** The float dtypes of the rounding-mode ops. */
const FLOATS: readonly DType[] = ["float16", "bfloat16", "float32", "float64"];
/** The integer dtypes cvt converts from or to (8-bit ones through their 16-bit registers). */
const INTS: readonly DType[] = [
  "int8",
  "uint8",
  "int16",
  "uint16",
  "int32",
  "uint32",
  "int64",
  "uint64",
];

const half = (dt: DType): boolean => dt === "float16" || dt === "bfloat16";

/**
 * The float dtypes `add/sub/mul.<mode>` takes (PTX ISA, add/sub/mul: `.rn/.rz/.rm/.rp` on `.f32`
 * and `.f64`; `.f16`/`.bf16` take `.rn` only; ptxas: "Illegal rounding modifier" otherwise).
 */
const arithDtypes = (mode: RoundMode): readonly DType[] =>
  mode === "rn" ? FLOATS : ["float32", "float64"];

/** The target need of a bfloat16 add/sub/mul (PTX ISA, add/sub/mul: `.bf16` needs sm_90). */
function halfNeed(name: string, args: readonly Expr[]): OpNeed | undefined {
  if (args[0]?.dtype !== "bfloat16") return undefined;
  return {
    instr: `${name}.rn.bf16`,
    sm: 90,
    ptx: [7, 8],
    code: "TX5006",
    source: "PTX ISA, add/sub/mul (.bf16: sm_90, PTX 7.8)",
  };
}

function arithRecord(kind: "add" | "sub" | "mul", mode: RoundMode): OpDef {
  const name = `${kind}.${mode}`;
  const surface = `T.ptx.rnd.${kind}`;
  const accepts = arithDtypes(mode);
  const result = (dts: readonly DType[], span?: Span): DType => {
    const dt = dts[0]!;
    if (dts.length !== 2 || dts[1] !== dt || !accepts.includes(dt)) {
      throw badDtypes(`${surface}(…, "${mode}")`, dts, span);
    }
    return dt;
  };
  return {
    name,
    family: "arith",
    surface,
    form: "value",
    operands: [valueArg("a"), valueArg("b")],
    result,
    signatures: accepts.map((dt) => [dt, dt]),
    // .f16 needs sm_53 and .bf16 sm_90 (needs); every target tirx-ts takes is sm_80 or later.
    sm: 30,
    ptx: [6, 0],
    source: `PTX ISA, Floating-Point Instructions: ${kind} (.${mode}; .f16/.bf16 take .rn only)`,
    needs: (args) => halfNeed(kind, args),
    lower(c, d, ops, dts) {
      const dt = dts[0]!;
      c.ins(
        `${kind}.${mode}.${cvtType(dt)} ${d}, ${c.toReg(ops[0]!, dt)}, ${c.toReg(ops[1]!, dt)}`,
      );
    },
    halfNative: true,
    sim: {
      kind: "thread",
      make(dts): ThreadFn {
        const dt = result(dts);
        if (kind === "mul")
          return ((a: number, b: number) => mulRounded(a, b, dt, mode)) as ThreadFn;
        const sub = kind === "sub";
        return ((a: number, b: number) => addRounded(a, b, dt, mode, sub)) as ThreadFn;
      },
    },
  };
}

function fmaRecord(mode: RoundMode): OpDef {
  const name = `fma.${mode}`;
  const surface = "T.ptx.rnd.fma";
  const accepts = arithDtypes(mode);
  const result = (dts: readonly DType[], span?: Span): DType => {
    const dt = dts[0]!;
    if (dts.length !== 3 || !dts.every((d) => d === dt) || !accepts.includes(dt)) {
      throw badDtypes(`${surface}(…, "${mode}")`, dts, span);
    }
    return dt;
  };
  return {
    name,
    family: "arith",
    surface,
    form: "value",
    operands: [valueArg("a"), valueArg("b"), valueArg("c")],
    result,
    signatures: accepts.map((dt) => [dt, dt, dt]),
    sm: 30,
    ptx: [6, 0],
    source: `PTX ISA, Floating-Point Instructions: fma (.${mode}; .f16 sm_53, .bf16 sm_80: .rn only)`,
    lower(c, d, ops, dts) {
      const dt = dts[0]!;
      const [a, b, x] = ops.map((o) => c.toReg(o, dt));
      c.ins(`fma.${mode}.${cvtType(dt)} ${d}, ${a}, ${b}, ${x}`);
    },
    halfNative: true,
    sim: {
      kind: "thread",
      make(dts): ThreadFn {
        const dt = result(dts);
        return ((a: number, b: number, x: number) => fmaRounded(a, b, x, dt, mode)) as ThreadFn;
      },
    },
  };
}

/** Float formats a float source narrows into (a wider or equal target is exact: use cast). */
function narrows(from: DType, to: DType): boolean {
  if (from === to) return false;
  if (half(from) && half(to)) return true; // float16 ↔ bfloat16: range or precision is lost
  return dtypeBits(from) > dtypeBits(to);
}

/**
 * bfloat16 with an 8-bit integer: PTX has no such cvt (ptxas 13.0: "Arguments mismatch"); int8 →
 * bfloat16 is exact through a cast, bfloat16 → int8 goes through float32 (exact) first.
 */
function bf16Byte(from: DType, to: DType): boolean {
  const other = from === "bfloat16" ? to : to === "bfloat16" ? from : undefined;
  return other !== undefined && dtypeBits(other) === 8 && !isFloat(other);
}

/** bfloat16 with anything but float32 needs sm_90 (ptxas: "cvt with .bf16.f64 requires sm_90"). */
function cvtNeed(from: DType, to: DType): OpNeed | undefined {
  const bf = from === "bfloat16" || to === "bfloat16";
  const other = from === "bfloat16" ? to : from;
  if (!bf || other === "float32") return undefined;
  return {
    instr: `cvt.${cvtType(to)}.${cvtType(from)}`,
    sm: 90,
    ptx: [7, 8],
    code: "TX5006",
    source: "PTX ISA, cvt (.bf16 with types other than .f32: sm_90, PTX 7.8)",
  };
}

/** `cvt.<mode>.<float to>.<from>`: one record per mode and destination; the source is an operand. */
function cvtToFloatRecord(mode: RoundMode, to: DType): OpDef {
  const name = `cvt.${mode}.${cvtType(to)}`;
  const surface = `T.ptx.rnd.cvt(x, "${to}", "${mode}")`;
  const accepts = (from: DType): boolean =>
    (INTS.includes(from) && !bf16Byte(from, to)) || (FLOATS.includes(from) && narrows(from, to));
  const result = (dts: readonly DType[], span?: Span): DType => {
    if (dts.length !== 1 || !accepts(dts[0]!)) throw badDtypes(surface, dts, span);
    return to;
  };
  return {
    name,
    family: "arith",
    surface,
    form: "value",
    operands: [valueArg("x")],
    result,
    signatures: [...FLOATS, ...INTS].filter(accepts).map((dt) => [dt]),
    sm: 30,
    ptx: [6, 0],
    source: `PTX ISA, cvt (.frnd = .${mode}: float → narrower float, integer → float; a widening float cvt is exact and takes no rounding modifier)`,
    needs: (args) => cvtNeed(args[0]!.dtype, to),
    lower(c, d, ops, dts) {
      const from = dts[0]!;
      c.ins(`cvt.${mode}.${cvtType(to)}.${cvtType(from)} ${d}, ${c.toReg(ops[0]!, from)}`);
    },
    halfNative: true,
    sim: {
      kind: "thread",
      make(dts): ThreadFn {
        const from = dts[0]!;
        result(dts);
        if (isFloat(from)) return ((x: number) => cvtFloatRounded(x, to, mode)) as ThreadFn;
        return ((x: SimValue) => cvtIntToFloat(x, to, mode)) as ThreadFn;
      },
    },
  };
}

/** `cvt.<mode>i.<int to>.<float from>`: rounds to an integral value, clamps, NaN → 0. */
function cvtToIntRecord(mode: IntRoundMode, to: DType): OpDef {
  const name = `cvt.${mode}.${cvtType(to)}`;
  const surface = `T.ptx.rnd.cvt(x, "${to}", "${mode}")`;
  const result = (dts: readonly DType[], span?: Span): DType => {
    if (dts.length !== 1 || !FLOATS.includes(dts[0]!) || bf16Byte(dts[0]!, to)) {
      throw badDtypes(surface, dts, span);
    }
    return to;
  };
  const bits = dtypeBits(to);
  const signed = isSigned(to);
  const lo = signed ? -(1n << BigInt(bits - 1)) : 0n;
  const hi = signed ? (1n << BigInt(bits - 1)) - 1n : (1n << BigInt(bits)) - 1n;
  return {
    name,
    family: "arith",
    surface,
    form: "value",
    operands: [valueArg("x")],
    result,
    signatures: FLOATS.filter((dt) => !bf16Byte(dt, to)).map((dt) => [dt]),
    sm: 30,
    ptx: [6, 0],
    source: `PTX ISA, cvt (.irnd = .${mode}: float → integer, clamped to the destination's range, NaN → 0)`,
    needs: (args) => cvtNeed(args[0]!.dtype, to),
    lower(c, d, ops, dts) {
      const from = dts[0]!;
      const x = c.toReg(ops[0]!, from);
      c.ins(`cvt.${mode}.${cvtType(to)}.${cvtType(from)} ${d}, ${x}`);
      cvtNanToZero(
        (l) => c.ins(l),
        d,
        x,
        from,
        to,
        () => c.tmp("bool"),
      );
    },
    halfNative: true,
    sim: {
      kind: "thread",
      make(dts): ThreadFn {
        result(dts);
        const wide = bits === 64;
        return ((x: number) => {
          const i = cvtFloatToInt(x, mode, lo, hi);
          return wide ? i : Number(i);
        }) as ThreadFn;
      },
    },
  };
}

/**
 * The rounding-mode variants of PTX's float arithmetic and conversions (`T.ptx.rnd`), one record
 * per instruction spelling without its type suffix:
 * - `add/sub/mul.{rn,rz,rm,rp}` on float32/float64, `.rn` also on float16/bfloat16 (bfloat16
 *   add/sub/mul need sm_90); `fma.{rn,rz,rm,rp}` likewise (`fma.rn` on float16/bfloat16);
 * - `cvt.{rn,rz,rm,rp}.{f16,bf16,f32,f64}` from a narrower-making float or any integer;
 * - `cvt.{rni,rzi,rmi,rpi}.{s8..u64}` from any float (clamped, NaN → 0).
 * The simulator computes each result exactly and rounds once in the named direction
 * (numeric/directed.ts), so it matches the GPU bit for bit. 8-bit floats are not operands (PTX
 * has no arithmetic on them). Dtypes outside a record's list are TX2005.
 */
export const ROUNDING_OPS: readonly OpDef[] = [
  ...(["add", "sub", "mul"] as const).flatMap((k) => ROUND_MODES.map((m) => arithRecord(k, m))),
  ...ROUND_MODES.map(fmaRecord),
  ...ROUND_MODES.flatMap((m) => FLOATS.map((to) => cvtToFloatRecord(m, to))),
  ...INT_ROUND_MODES.flatMap((m) => INTS.map((to) => cvtToIntRecord(m, to))),
];
