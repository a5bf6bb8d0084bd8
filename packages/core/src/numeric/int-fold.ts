import { dtypeBits, dtypeKind, type DType } from "../dtype.js";
import type { BinaryOp, CompareOp } from "../ir/expr.js";

/**
 * Integer arithmetic with PTX's semantics on `dt` (two's complement, wrapped to the dtype's
 * width): what one instruction computes when both operands are known. Undefined where PTX leaves
 * the result unspecified (division by zero, `INT_MIN / -1`), so the caller emits the instruction.
 * Rules: PTX ISA "Integer Arithmetic Instructions" (`add`, `mul.lo`, `div`, `rem`, `min`, `max`),
 * "Logic and Shift Instructions" (shift amounts are clamped to the register width).
 */
export function foldInt(op: BinaryOp, a: bigint, b: bigint, dt: DType): bigint | undefined {
  const bits = dtypeBits(dt);
  const signed = dtypeKind(dt) === "int";
  const wrap = (v: bigint): bigint => (signed ? BigInt.asIntN(bits, v) : BigInt.asUintN(bits, v));
  a = wrap(a);
  b = wrap(b);
  const min = signed ? -(2n ** BigInt(bits - 1)) : 0n;
  const divisible = b !== 0n && !(signed && a === min && b === -1n);
  switch (op) {
    case "add":
      return wrap(a + b);
    case "sub":
      return wrap(a - b);
    case "mul":
      return wrap(a * b);
    case "div":
      return divisible ? wrap(a / b) : undefined; // BigInt division truncates, as PTX div
    case "mod":
      return divisible ? wrap(a % b) : undefined;
    case "floordiv": {
      if (!divisible) return undefined;
      const q = a / b;
      return wrap(a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q);
    }
    case "floormod": {
      if (!divisible) return undefined;
      const r = a % b;
      return wrap(r !== 0n && r < 0n !== b < 0n ? r + b : r);
    }
    case "min":
      return a < b ? a : b;
    case "max":
      return a > b ? a : b;
    case "bitand":
      return wrap(a & b);
    case "bitor":
      return wrap(a | b);
    case "bitxor":
      return wrap(a ^ b);
    case "shl": {
      const n = BigInt.asUintN(32, b);
      return n >= BigInt(bits) ? 0n : wrap(a << n);
    }
    case "shr": {
      const n = BigInt.asUintN(32, b);
      if (n >= BigInt(bits)) return signed && a < 0n ? -1n : 0n;
      return wrap(a >> n); // a is already sign- or zero-extended: >> is arithmetic or logical
    }
  }
}

/** `a op b` on two known integers of one dtype (PTX `setp`). */
export function compareInt(op: CompareOp, a: bigint, b: bigint): boolean {
  switch (op) {
    case "lt":
      return a < b;
    case "le":
      return a <= b;
    case "gt":
      return a > b;
    case "ge":
      return a >= b;
    case "eq":
      return a === b;
    case "ne":
      return a !== b;
  }
}
