import { isFloat, type DType } from "../../dtype.js";
import { invariant } from "../../invariant.js";
import type { Span } from "../../span.js";
import { floatRounder } from "../../numeric/float.js";
import { intWrapper } from "../../numeric/int.js";
import { badDtypes, valueArg } from "../define.js";
import type { LowerCtx, OpDef, ThreadFn } from "../op.js";
import { opType } from "../ptx-type.js";
import { TRANSCENDENTAL_OPS } from "./transcendental.js";

const FLOATS: readonly DType[] = ["float16", "bfloat16", "float32", "float64"];

/** Round half to even, as `cvt.rni` (IEEE 754 roundToIntegralTiesToEven); keeps -0. */
export function rint(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const f = Math.floor(x);
  const d = x - f; // exact: |x| < 2^52 here, or x is already an integer (d = 0)
  const r = d > 0.5 ? f + 1 : d < 0.5 ? f : f % 2 === 0 ? f : f + 1;
  return r === 0 && x < 0 ? -0 : r;
}

interface UnarySpec {
  readonly name: string;
  readonly doc: string;
  readonly source: string;
  readonly dtypes: readonly DType[];
  /** Result dtype for operand dtype `dt` (default: `dt`). */
  readonly result?: DType;
  /** PTX for a float32/float64 (or integer) operand already in a register. */
  readonly lower: (c: LowerCtx, d: string, a: string, dt: DType) => void;
  /** Exact semantics on a value of `dt` (before rounding to the result format). */
  readonly sem: (x: number) => number;
}

/**
 * A unary math op. 16-bit float operands are computed in float32 and rounded once back to their
 * format (codegen: `upcastHalf`); for the ops here that is exact: floor/ceil/round/abs results
 * are representable, and sqrt rounds innocuously through float32 (24 ≥ 2·11 + 2, Figueroa).
 */
function unary(spec: UnarySpec): OpDef {
  const result = (dts: readonly DType[], span?: Span): DType => {
    if (dts.length !== 1 || !spec.dtypes.includes(dts[0]!))
      throw badDtypes(`T.${spec.name}`, dts, span);
    return spec.result ?? dts[0]!;
  };
  return {
    name: spec.name,
    family: "math",
    surface: `T.${spec.name}`,
    form: "value",
    operands: [valueArg("x")],
    result,
    signatures: spec.dtypes.map((dt) => [dt]),
    sm: 30,
    ptx: [6, 0],
    source: `${spec.source}; ${spec.doc}`,
    lower: (c, d, ops, dts) => {
      const dt = dts[0]!;
      invariant(
        dt !== "float16" && dt !== "bfloat16",
        `T.${spec.name} on ${dt} reached PTX unpromoted`,
      );
      spec.lower(c, d, c.toReg(ops[0]!, dt), dt);
    },
    sim: {
      kind: "thread",
      make(dts): ThreadFn {
        const rt = result(dts);
        const r = isFloat(rt)
          ? floatRounder(rt)
          : rt === "bool"
            ? (x: number) => x
            : intWrapper(rt);
        return ((x: number) => r(spec.sem(x))) as ThreadFn;
      },
    },
  };
}

const ins =
  (op: string) =>
  (c: LowerCtx, d: string, a: string, dt: DType): void =>
    c.ins(`${op}.${opType(dt)} ${d}, ${a}`);

const cvtTo =
  (mode: string) =>
  (c: LowerCtx, d: string, a: string, dt: DType): void =>
    c.ins(`cvt.${mode}.${opType(dt)}.${opType(dt)} ${d}, ${a}`);

/**
 * The exact math ops (IEEE 754 results, bit for bit on simulator and GPU): sqrt (correctly
 * rounded), abs, floor, ceil, round (half to even, TIR `round`), isnan, isinf; then the
 * transcendental ops (`transcendental.ts`), accurate and `.approx`.
 */
export const MATH_OPS: readonly OpDef[] = [
  unary({
    name: "sqrt",
    doc: "correctly rounded square root",
    source: "PTX ISA, sqrt (sqrt.rn)",
    dtypes: FLOATS,
    lower: ins("sqrt.rn"),
    sem: Math.sqrt,
  }),
  unary({
    name: "abs",
    doc: "|x|; abs of the most negative integer is itself (two's complement)",
    source: "PTX ISA, abs",
    dtypes: [...FLOATS, "int16", "int32"],
    lower: ins("abs"),
    sem: Math.abs,
  }),
  unary({
    name: "floor",
    doc: "round toward -inf to an integral value",
    source: "PTX ISA, cvt (.rmi)",
    dtypes: FLOATS,
    lower: cvtTo("rmi"),
    sem: Math.floor,
  }),
  unary({
    name: "ceil",
    doc: "round toward +inf to an integral value",
    source: "PTX ISA, cvt (.rpi)",
    dtypes: FLOATS,
    lower: cvtTo("rpi"),
    sem: Math.ceil,
  }),
  unary({
    name: "round",
    doc: "round half to even to an integral value (TIR round)",
    source: "PTX ISA, cvt (.rni)",
    dtypes: FLOATS,
    lower: cvtTo("rni"),
    sem: rint,
  }),
  unary({
    name: "isnan",
    doc: "x is NaN (bool)",
    source: "PTX ISA, testp (.notanumber)",
    dtypes: FLOATS,
    result: "bool",
    lower: (c, d, a, dt) => c.ins(`testp.notanumber.${opType(dt)} ${d}, ${a}`),
    sem: (x) => (x !== x ? 1 : 0),
  }),
  unary({
    name: "isinf",
    doc: "x is +inf or -inf (bool)",
    source: "PTX ISA, testp (.infinite)",
    dtypes: FLOATS,
    result: "bool",
    lower: (c, d, a, dt) => c.ins(`testp.infinite.${opType(dt)} ${d}, ${a}`),
    sem: (x) => (x === Infinity || x === -Infinity ? 1 : 0),
  }),
  ...TRANSCENDENTAL_OPS,
];
