import {
  dtypeBits,
  isFloat,
  isSigned,
  TirxError,
  type BinaryOp,
  type CompareOp,
  type DType,
  type Span,
} from "@tirx-ts/core";
import { floatRounder } from "./float.js";
import { bigWrapper, intWrapper } from "./int.js";

/**
 * Operators of core's `Binary` and `Compare` on simulator values, per dtype, as PTX computes them:
 * floats round once to their format; integers wrap at their width; `div`/`mod` truncate toward
 * zero, `floordiv`/`floormod` toward negative infinity. Shifts clamp the amount to the width
 * (PTX `shl`/`shr`). Integer division by zero, undefined in PTX, gives all ones for div and the
 * dividend for mod.
 */
export type NumOp = (a: number, b: number) => number;
export type BigOp = (a: bigint, b: bigint) => bigint;

/** PTX min/max: a NaN operand yields the other operand. */
function fmin(a: number, b: number): number {
  return a !== a ? b : b !== b ? a : Math.min(a, b);
}
function fmax(a: number, b: number): number {
  return a !== a ? b : b !== b ? a : Math.max(a, b);
}

function floatOp(op: BinaryOp, dt: DType, span?: Span): NumOp {
  const r = floatRounder(dt);
  switch (op) {
    case "add":
      return (a, b) => r(a + b);
    case "sub":
      return (a, b) => r(a - b);
    case "mul":
      return (a, b) => r(a * b);
    case "div":
      return (a, b) => r(a / b);
    case "mod":
      return (a, b) => r(a % b);
    case "floordiv":
      return (a, b) => r(Math.floor(a / b));
    case "floormod":
      return (a, b) => r(a - Math.floor(a / b) * b);
    case "min":
      return (a, b) => r(fmin(a, b));
    case "max":
      return (a, b) => r(fmax(a, b));
    default:
      throw new TirxError("TX2005", `operator ${op} is not defined on ${dt}`, span);
  }
}

function intOp(op: BinaryOp, dt: DType): NumOp {
  const w = intWrapper(dt);
  const width = dt === "bool" ? 1 : dtypeBits(dt);
  const signed = isSigned(dt);
  const ones = w(-1);
  switch (op) {
    case "add":
      return (a, b) => w(a + b);
    case "sub":
      return (a, b) => w(a - b);
    case "mul":
      return width === 32 ? (a, b) => w(Math.imul(a, b)) : (a, b) => w(a * b);
    case "div":
      return (a, b) => (b === 0 ? ones : w(Math.trunc(a / b)));
    case "mod":
      return (a, b) => (b === 0 ? a : w(a % b));
    case "floordiv":
      return (a, b) => (b === 0 ? ones : w(Math.floor(a / b)));
    case "floormod":
      return (a, b) => {
        if (b === 0) return a;
        let m = a % b;
        if (m !== 0 && m < 0 !== b < 0) m += b;
        return w(m);
      };
    case "min":
      return (a, b) => Math.min(a, b);
    case "max":
      return (a, b) => Math.max(a, b);
    case "bitand":
      return (a, b) => w(a & b);
    case "bitor":
      return (a, b) => w(a | b);
    case "bitxor":
      return (a, b) => w(a ^ b);
    case "shl":
      return (a, b) => (b < 0 || b >= width ? 0 : w(a << b));
    case "shr":
      if (signed) return (a, b) => (b < 0 || b >= width ? (a < 0 ? -1 : 0) : w(a >> b));
      return (a, b) => (b < 0 || b >= width ? 0 : w(a >>> b));
  }
}

/** `a op b` on number-valued dtypes (everything but int64/uint64). */
export function numBinary(op: BinaryOp, dt: DType, span?: Span): NumOp {
  return isFloat(dt) ? floatOp(op, dt, span) : intOp(op, dt);
}

/** `a op b` on int64/uint64. */
export function bigBinary(op: BinaryOp, dt: DType): BigOp {
  const w = bigWrapper(dt);
  const ones = w(-1n);
  switch (op) {
    case "add":
      return (a, b) => w(a + b);
    case "sub":
      return (a, b) => w(a - b);
    case "mul":
      return (a, b) => w(a * b);
    case "div":
      return (a, b) => (b === 0n ? ones : w(a / b));
    case "mod":
      return (a, b) => (b === 0n ? a : w(a % b));
    case "floordiv":
      return (a, b) => {
        if (b === 0n) return ones;
        let q = a / b;
        if (a % b !== 0n && a < 0n !== b < 0n) q -= 1n;
        return w(q);
      };
    case "floormod":
      return (a, b) => {
        if (b === 0n) return a;
        let m = a % b;
        if (m !== 0n && m < 0n !== b < 0n) m += b;
        return w(m);
      };
    case "min":
      return (a, b) => (a < b ? a : b);
    case "max":
      return (a, b) => (a > b ? a : b);
    case "bitand":
      return (a, b) => w(a & b);
    case "bitor":
      return (a, b) => w(a | b);
    case "bitxor":
      return (a, b) => w(a ^ b);
    // The amount is the low 32 bits as unsigned (the emitter's cvt.u32 of a 64-bit operand).
    case "shl":
      return (a, b) => {
        const n = BigInt.asUintN(32, b);
        return n >= 64n ? 0n : w(a << n);
      };
    case "shr":
      return (a, b) => {
        const n = BigInt.asUintN(32, b);
        return n >= 64n ? (a < 0n ? -1n : 0n) : w(a >> n);
      };
  }
}

/**
 * Comparison as 0/1. Floats compare as C does: any comparison with NaN is false except `ne`.
 * Works on numbers and on bigints alike.
 */
export function compareOp(op: CompareOp): <T extends number | bigint>(a: T, b: T) => number {
  switch (op) {
    case "eq":
      return (a, b) => (a === b ? 1 : 0);
    case "ne":
      return (a, b) => (a !== b ? 1 : 0);
    case "lt":
      return (a, b) => (a < b ? 1 : 0);
    case "le":
      return (a, b) => (a <= b ? 1 : 0);
    case "gt":
      return (a, b) => (a > b ? 1 : 0);
    case "ge":
      return (a, b) => (a >= b ? 1 : 0);
  }
}
