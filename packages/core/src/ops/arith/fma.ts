import { isFloat, type DType } from "../../dtype.js";
import type { Span } from "../../span.js";
import { floatRounder } from "../../numeric/float.js";
import { dyadic, roundDyadic } from "../../numeric/dyadic.js";
import { fma32 } from "../../numeric/fma32.js";
import { badDtypes, valueArg } from "../define.js";
import type { OpDef, ThreadFn } from "../op.js";

/**
 * `a * b + c` with one rounding (IEEE 754 fusedMultiplyAdd; PTX ISA, fma: `fma.rn`). float32 and
 * float64 only: 16-bit operands are computed in float32 and rounded back, which is NOT one rounding
 * of the exact result, so `T.fma` refuses them rather than claim exactness.
 * The simulator computes it exactly (see `exactFma`), so simulator and GPU agree bit for bit.
 */
export const FMA: OpDef = {
  name: "fma",
  family: "arith",
  surface: "T.fma",
  form: "value",
  operands: [valueArg("a"), valueArg("b"), valueArg("c")],
  result: fmaResult,
  signatures: [
    ["float32", "float32", "float32"],
    ["float64", "float64", "float64"],
  ],
  sm: 30,
  ptx: [6, 0],
  source: "PTX ISA, fma (fma.rn.f32 / fma.rn.f64)",
  lower: (c, d, ops, dts) => {
    const t = dts[0] === "float64" ? "f64" : "f32";
    c.ins(`fma.rn.${t} ${d}, ${ops[0]}, ${ops[1]}, ${ops[2]}`);
  },
  sim: {
    kind: "thread",
    make(dts): ThreadFn {
      const dt = fmaResult(dts);
      return ((a: number, b: number, c: number) => exactFma(a, b, c, dt)) as ThreadFn;
    },
  },
};

function fmaResult(dts: readonly DType[], span?: Span): DType {
  const dt = dts[0]!;
  if (
    dts.length !== 3 ||
    !dts.every((d) => d === dt) ||
    !isFloat(dt) ||
    (dt !== "float32" && dt !== "float64")
  ) {
    throw badDtypes("T.fma", dts, span);
  }
  return dt;
}

/**
 * `round(a*b + c)` of the exact value, rounded once to the format of `dt` (IEEE 754
 * fusedMultiplyAdd). float32 values go through fma32 (float64 TwoSum and a tie fix-up, no
 * bigints), everything else through dyadicFma.
 */
export function exactFma(a: number, b: number, c: number, dt: string): number {
  if (dt === "float32" && Math.fround(a) === a && Math.fround(b) === b && Math.fround(c) === c) {
    return fma32(a, b, c);
  }
  return dyadicFma(a, b, c, dt);
}

/**
 * `round(a*b + c)` of the exact value, rounded once to the format of `dt` (IEEE 754
 * fusedMultiplyAdd): the product and sum are formed exactly as a bigint times a power of two.
 * The reference fma32 is tested against.
 */
export function dyadicFma(a: number, b: number, c: number, dt: string): number {
  const round = floatRounder(dt);
  if (!Number.isFinite(a) || !Number.isFinite(b) || !Number.isFinite(c)) {
    // Finite a*b plus an infinite c is c, even where a*b overflows a float64.
    if (Number.isFinite(a) && Number.isFinite(b)) return c;
    return round(a * b + c);
  }
  // A zero product is exact, and so is ±0 + c (IEEE sign rules included).
  if (a === 0 || b === 0) return round(a * b + c);
  const x = dyadic(a);
  const y = dyadic(b);
  const z = dyadic(c);
  const pe = x.e + y.e;
  const e = Math.min(pe, z.e);
  const sum = ((x.m * y.m) << BigInt(pe - e)) + (z.m << BigInt(z.e - e));
  // An exact zero sum of nonzero terms is +0 when rounding to nearest (IEEE 754, 6.3).
  return roundDyadic(sum, e, dt);
}
