import { dtypeBits, isFloat, type BinaryOp, type CompareOp, type DType } from "@tirx-ts/core";
import { compareInt, foldInt } from "../lower/fold.js";
import { floatImmediate, intImmediate, isReg } from "../types.js";

const INT_IMM = /^(-?\d+|0x[0-9A-Fa-f]+)$/;
const view = new DataView(new ArrayBuffer(8));

/** The integer an immediate operand spells (`42`, `-1`, `0xFFFFFFFF`), else undefined. */
export function intOf(op: string): bigint | undefined {
  return INT_IMM.test(op) ? BigInt(op) : undefined;
}

/** The number a float32 (`0f3F800000`) or float64 (`0d3FF0...`) immediate spells, else undefined. */
export function floatOf(op: string): number | undefined {
  const m = /^0([fd])([0-9A-Fa-f]+)$/.exec(op);
  if (!m) return undefined;
  if (m[1] === "f") {
    view.setUint32(0, parseInt(m[2]!, 16));
    return view.getFloat32(0);
  }
  view.setBigUint64(0, BigInt(`0x${m[2]!}`));
  return view.getFloat64(0);
}

/**
 * `a op b` as an operand, without an instruction, when PTX's result is known here: both operands
 * immediates (integers wrap as the instruction would; float32/float64 `add`, `sub`, `mul`, `div`
 * round once to nearest even, which the double result rounded to float32 equals), or one of them
 * the identity of an integer operator (`x + 0`, `x * 1`, `x << 0`; `x * 0` is 0). Undefined when
 * the instruction must be emitted.
 */
export function foldBinary(op: BinaryOp, a: string, b: string, dt: DType): string | undefined {
  if (isFloat(dt)) {
    if (isReg(a) || isReg(b) || dtypeBits(dt) < 32) return undefined;
    const x = floatOf(a);
    const y = floatOf(b);
    if (x === undefined || y === undefined) return undefined;
    const exact = { add: x + y, sub: x - y, mul: x * y, div: x / y }[op as "add"];
    if (exact === undefined || Number.isNaN(exact)) return undefined;
    return floatImmediate(dt === "float32" ? Math.fround(exact) : exact, dt);
  }
  if (dt === "bool") return undefined; // bools are always in predicate registers
  const x = intOf(a);
  const y = intOf(b);
  if (x !== undefined && y !== undefined) {
    const v = foldInt(op, x, y, dt);
    return v === undefined ? undefined : intImmediate(v, dt);
  }
  if (y === 0n && (op === "add" || op === "sub" || op === "shl" || op === "shr")) return a;
  if (x === 0n && op === "add") return b;
  if (y === 1n && (op === "mul" || op === "div" || op === "floordiv")) return a;
  if (x === 1n && op === "mul") return b;
  if ((x === 0n || y === 0n) && op === "mul") return "0";
  return undefined;
}

/** `a op b` for two integer immediates of `dt` (wrapped to the dtype first), else undefined. */
export function foldCompare(op: CompareOp, a: string, b: string, dt: DType): boolean | undefined {
  if (isFloat(dt) || dt === "bool") return undefined;
  const x = intOf(a);
  const y = intOf(b);
  if (x === undefined || y === undefined) return undefined;
  return compareInt(op, foldInt("add", x, 0n, dt)!, foldInt("add", y, 0n, dt)!);
}
