// An independent reference of the packed 16-bit float pair ops (core ops/arith/packed.ts): lanes
// decoded here (float16 through @petamoriken/float16's values, tabled in values.ts; bfloat16 as
// the top half of a float32), computed exactly with reference.ts's dyadic arithmetic and rounded
// once, then packed again. Shares no code with the simulator. A pair travels as its uint32 bits
// (lane 0 low).
import type { DType } from "@tirx-ts/core";
import { fma, roundTo } from "./reference.js";
import { f16Code, f16Value, type Value } from "./values.js";

type Pair = "float16x2" | "bfloat16x2";
type Lane = "float16" | "bfloat16";
const LANE: Record<Pair, Lane> = { float16x2: "float16", bfloat16x2: "bfloat16" };
const SUFFIX: Record<Pair, string> = { float16x2: "f16x2", bfloat16x2: "bf16x2" };
const dv = new DataView(new ArrayBuffer(4));

/** The value of the 16-bit code `bits` in format `lane`. */
export function codeValue(bits: number, lane: Lane): number {
  if (lane === "float16") return f16Value(bits);
  dv.setUint32(0, (bits & 0xffff) << 16, true);
  return dv.getFloat32(0, true);
}

/** The code of `x`, a value of format `lane` or NaN (the canonical NaN 0x7fff). */
export function valueCode(x: number, lane: Lane): number {
  if (x !== x) return 0x7fff;
  if (lane === "float16") return f16Code(x);
  dv.setFloat32(0, x, true);
  return dv.getUint32(0, true) >>> 16;
}

const lanesOf = (x: Value, lane: Lane): [number, number] => [
  codeValue(Number(x) & 0xffff, lane),
  codeValue(Number(x) >>> 16, lane),
];
const join = (lo: number, hi: number): number => ((hi << 16) | lo) >>> 0;

type LaneResult = number | "unspecified";

/** Apply `f` lane by lane to pair operands; an unspecified lane makes the element unspecified. */
function laneWise(
  dt: Pair,
  args: readonly Value[],
  f: (...xs: number[]) => LaneResult,
): Value | "unspecified" {
  const lane = LANE[dt];
  const ls = args.map((a) => lanesOf(a, lane));
  const r0 = f(...ls.map((l) => l[0]));
  const r1 = f(...ls.map((l) => l[1]));
  if (r0 === "unspecified" || r1 === "unspecified") return "unspecified";
  return join(valueCode(r0, lane), valueCode(r1, lane));
}

const isNeg0 = (x: number): boolean => Object.is(x, -0);

/**
 * max/min of one lane (PTX ISA, max/min half precision): a NaN gives the other operand, two
 * NaNs the canonical NaN; +0 against −0 is left unspecified (the ISA does not order them).
 */
function minMax(a: number, b: number, max: boolean): LaneResult {
  if (a !== a) return b;
  if (b !== b) return a;
  if (a === 0 && b === 0 && isNeg0(a) !== isNeg0(b)) return "unspecified";
  return max ? (a >= b ? a : b) : a <= b ? a : b;
}

/** References of the packed ops by op name; arguments and pair results are uint32 bits. */
export function packedReferences(): Record<
  string,
  (args: Value[], rt: DType) => Value | "unspecified"
> {
  const out: Record<string, (args: Value[], rt: DType) => Value | "unspecified"> = {};
  const pairOf = (rt: DType): Pair => {
    if (rt === "float16x2" || rt === "bfloat16x2") return rt;
    throw new Error(`packed reference: ${rt} is not a pair dtype`);
  };
  // Pair ops: the result dtype is the pair (stored as uint32 by the harness).
  const op2 =
    (f: (a: number, b: number, lane: Lane) => LaneResult) =>
    (args: Value[], rt: DType): Value | "unspecified" => {
      const dt = pairOf(rt);
      return laneWise(dt, args, (a, b) => f(a!, b!, LANE[dt]));
    };
  out["x2.add"] = op2((a, b, l) => fma(a, 1, b, l));
  out["x2.sub"] = op2((a, b, l) => fma(a, 1, -b, l));
  out["x2.mul"] = op2((a, b, l) => fma(a, b, -0, l));
  out["x2.max"] = op2((a, b) => minMax(a, b, true));
  out["x2.min"] = op2((a, b) => minMax(a, b, false));
  out["x2.fma"] = (args, rt) => {
    const dt = pairOf(rt);
    return laneWise(dt, args, (a, b, c) => fma(a!, b!, c!, LANE[dt]));
  };
  // neg/abs: a NaN lane's result is some NaN (PTX ISA, neg/abs; `samePairBits` compares NaN
  // lanes by class). pack: the simulator carries a 16-bit float as its value, so a NaN operand
  // packs as the canonical NaN where the GPU moves its bits; the class is the same.
  out["x2.neg"] = (args, rt) => laneWise(pairOf(rt), args, (a) => -a!);
  out["x2.abs"] = (args, rt) => laneWise(pairOf(rt), args, (a) => Math.abs(a!));
  out["x2.pack"] = ([lo, hi], rt) => {
    const lane = LANE[pairOf(rt)];
    return join(valueCode(Number(lo), lane), valueCode(Number(hi), lane));
  };
  for (const dt of ["float16x2", "bfloat16x2"] as const) {
    out[`cvt.rn.${SUFFIX[dt]}.f32`] = ([hi, lo]) =>
      join(
        valueCode(roundTo(Number(lo), LANE[dt]), LANE[dt]),
        valueCode(roundTo(Number(hi), LANE[dt]), LANE[dt]),
      );
    out[`x2.from_bits.${SUFFIX[dt]}`] = ([u]) => Number(u) >>> 0;
  }
  // unpack gives a lane value (NaN compares equal to NaN); bits is the identity.
  out["x2.unpack.0"] = ([x], rt) => codeValue(Number(x) & 0xffff, rt as Lane);
  out["x2.unpack.1"] = ([x], rt) => codeValue(Number(x) >>> 16, rt as Lane);
  out["x2.bits"] = ([x]) => Number(x) >>> 0;
  return out;
}

/** 16-bit lane codes worth meeting: zeros, ones, extremes, subnormals, ±inf, NaN, near-ties. */
const F16_CODES = [
  0x0000, 0x8000, 0x3c00, 0xbc00, 0x7bff, 0xfbff, 0x0001, 0x8001, 0x03ff, 0x0400, 0x7c00, 0xfc00,
  0x7e00, 0x3c01, 0x3bff, 0x4000, 0x5bff, 0x1400,
];
const BF16_CODES = [
  0x0000, 0x8000, 0x3f80, 0xbf80, 0x7f7f, 0xff7f, 0x0001, 0x8001, 0x007f, 0x0080, 0x7f80, 0xff80,
  0x7fc0, 0x3f81, 0x3f7f, 0x4000, 0x4b7f, 0x3400,
];

/**
 * Extra operand columns of the pair ops by op name: every pair of interesting lane codes in both
 * lanes (each operand's column a shifted copy, so lanes meet different partners).
 */
export function packedExtras(): Record<string, (dts: readonly DType[]) => Value[][]> {
  const pairs = (dt: DType): number[] => {
    const codes = dt === "bfloat16x2" ? BF16_CODES : F16_CODES;
    return codes.flatMap((lo) => codes.map((hi) => join(lo, hi)));
  };
  const cols = (dts: readonly DType[]): Value[][] =>
    dts.map((dt, j) => {
      const p = pairs(dt);
      return p.map((_, i) => p[(i * (2 * j + 1) + 7 * j) % p.length]!);
    });
  const out: Record<string, (dts: readonly DType[]) => Value[][]> = {};
  for (const k of [
    "add",
    "sub",
    "mul",
    "fma",
    "max",
    "min",
    "neg",
    "abs",
    "unpack.0",
    "unpack.1",
  ]) {
    out[`x2.${k}`] = cols;
  }
  return out;
}

/**
 * Equality of two pairs' uint32 bits lane by lane, a NaN lane equal to any NaN lane: PTX does not
 * specify a NaN result's payload (the simulator writes the canonical 0x7fff).
 */
export function samePairBits(dt: DType): (got: Value, want: Value) => boolean {
  const lane: Lane = dt === "bfloat16x2" ? "bfloat16" : "float16";
  const nan = (code: number): boolean => {
    const v = codeValue(code, lane);
    return v !== v;
  };
  const same = (g: number, w: number): boolean => g === w || (nan(g) && nan(w));
  return (got, want) => {
    const [g, w] = [Number(got), Number(want)];
    return same(g & 0xffff, w & 0xffff) && same(g >>> 16, w >>> 16);
  };
}
