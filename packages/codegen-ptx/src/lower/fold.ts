import {
  dtypeBits,
  dtypeKind,
  isFloat,
  type BinaryOp,
  type CompareOp,
  type DType,
  type Expr,
} from "@tirx-ts/core";

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

/**
 * The value of an integer expression built from constants and variables that `lookup` knows
 * (unrolled loop variables bound to their iteration, lets of such values), with PTX's wrap-around
 * semantics; undefined when any part is unknown or unspecified (a load, a thread index, a
 * division by zero). Used for the element index of register arrays and for alignment proofs.
 */
export function evalInt(e: Expr, lookup: (id: number) => bigint | undefined): bigint | undefined {
  if (isFloat(e.dtype) || e.dtype === "bool") return undefined;
  switch (e.kind) {
    case "IntImm":
      return BigInt(e.value);
    case "Var":
      return lookup(e.id);
    case "Binary": {
      const a = evalInt(e.a, lookup);
      const b = a === undefined ? undefined : evalInt(e.b, lookup);
      return b === undefined ? undefined : foldInt(e.op, a!, b, e.dtype);
    }
    case "Cast": {
      const v = evalInt(e.value, lookup);
      if (v === undefined) return undefined;
      const bits = dtypeBits(e.dtype);
      return dtypeKind(e.dtype) === "int" ? BigInt.asIntN(bits, v) : BigInt.asUintN(bits, v);
    }
    default:
      return undefined;
  }
}

/**
 * True when {@link evalInt} can evaluate `e` once the variables in `known` are bound: it is built
 * only from integer constants, those variables, integer binary operators and integer casts.
 */
export function isStaticInt(e: Expr, known: ReadonlySet<number>): boolean {
  if (isFloat(e.dtype) || e.dtype === "bool") return false;
  switch (e.kind) {
    case "IntImm":
      return true;
    case "Var":
      return known.has(e.id);
    case "Binary":
      return isStaticInt(e.a, known) && isStaticInt(e.b, known);
    case "Cast":
      return !isFloat(e.value.dtype) && e.value.dtype !== "bool" && isStaticInt(e.value, known);
    default:
      return false;
  }
}
