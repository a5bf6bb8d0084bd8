import {
  dtypeBits,
  isFloat,
  isFloat8,
  isLaneValue,
  isPacked,
  isSigned,
  isVector,
  isWideInt,
  type DType,
} from "../dtype.js";
import { TirxError } from "../diagnostics.js";
import type { Span } from "../span.js";
import { constInt, intImm, type BinaryOp, type CompareOp, type Expr, type IntImm } from "./expr.js";

/**
 * Smart constructors for expressions: they check operand dtypes (TX1007) and fold integer
 * constants, so that view offsets built from static strides stay small and analysable.
 */

function sp(span?: Span): { span?: Span } {
  return span ? { span } : {};
}

function fold(op: BinaryOp, a: number, b: number): number | undefined {
  switch (op) {
    case "add":
      return a + b;
    case "sub":
      return a - b;
    case "mul":
      return a * b;
    case "div":
      return b === 0 ? undefined : Math.trunc(a / b);
    case "mod":
      return b === 0 ? undefined : a % b;
    case "floordiv":
      return b === 0 ? undefined : Math.floor(a / b);
    case "floormod":
      return b === 0 ? undefined : a - Math.floor(a / b) * b;
    case "min":
      return Math.min(a, b);
    case "max":
      return Math.max(a, b);
    default:
      return undefined;
  }
}

function fits(v: number, dt: DType): boolean {
  if (dt === "bool") return v === 0 || v === 1;
  const bits = dtypeBits(dt);
  return isSigned(dt) ? v >= -(2 ** (bits - 1)) && v < 2 ** (bits - 1) : v >= 0 && v < 2 ** bits;
}

/**
 * TX1007 for an operator on float8: PTX has no float8 arithmetic or comparison (only cvt and the
 * wgmma operands: PTX ISA, "Alternate Floating-Point Data Formats").
 */
function refuseFloat8(what: string, dt: DType, span?: Span): void {
  if (isFloat8(dt)) {
    throw new TirxError(
      "TX1007",
      `${what} is not defined on ${dt}: PTX has no float8 arithmetic; cast to float16 or float32 first (x.cast("float32"))`,
      span,
    );
  }
}

/**
 * TX1007 for an operator on a packed pair (float16x2, bfloat16x2): its arithmetic is the
 * `T.ptx.x2` records (PTX's `.f16x2` forms), and PTX's `setp.f16x2` gives two predicates, not
 * one bool.
 */
function refusePacked(what: string, dt: DType, span?: Span): void {
  if (isVector(dt)) {
    throw new TirxError(
      "TX1007",
      `${what} is not defined on ${dt}: vectors compute with T.ptx.vec.* (one instruction per lane or pair) and compare lane by lane (v.lane(i))`,
      span,
    );
  }
  if (isPacked(dt)) {
    throw new TirxError(
      "TX1007",
      `${what} is not defined on ${dt}: pairs compute with T.ptx.x2.* (the .f16x2 / .bf16x2 instructions) and compare lane by lane (T.ptx.unpack)`,
      span,
    );
  }
}

/**
 * `a op b`; both operands must have the same dtype. Folds integer constants the dtype holds.
 * @throws TirxError TX1007 for operands of two dtypes, a bit operator on floats, an operator on
 *   bool other than the bit operators, or any operator on float8 or a packed pair.
 */
export function binary(op: BinaryOp, a: Expr, b: Expr, span?: Span): Expr {
  if (a.dtype !== b.dtype) {
    throw new TirxError(
      "TX1007",
      `operands of ${op} have dtypes ${a.dtype} and ${b.dtype}; cast one of them explicitly`,
      span ?? a.span ?? b.span,
    );
  }
  refuseFloat8(op, a.dtype, span ?? a.span);
  refusePacked(op, a.dtype, span ?? a.span);
  if (isFloat(a.dtype) && ["bitand", "bitor", "bitxor", "shl", "shr"].includes(op)) {
    throw new TirxError(
      "TX1007",
      `${op} is not defined on ${a.dtype}; bit operations need integer operands`,
      span ?? a.span,
    );
  }
  if (a.dtype === "bool" && op !== "bitand" && op !== "bitor" && op !== "bitxor") {
    throw new TirxError(
      "TX1007",
      `${op} is not defined on bool; cast to an integer first`,
      span ?? a.span,
    );
  }
  const ca = constInt(a);
  const cb = constInt(b);
  if (ca !== undefined && cb !== undefined && !isWideInt(a.dtype) && !isFloat(a.dtype)) {
    const v = fold(op, ca, cb);
    // Fold only results the dtype holds; others wrap, which the simplify pass folds exactly.
    if (v !== undefined && Number.isSafeInteger(v) && fits(v, a.dtype)) {
      return intImm(v, a.dtype, span);
    }
  }
  if (!isFloat(a.dtype)) {
    if (op === "add" && ca === 0) return b;
    if ((op === "add" || op === "sub") && cb === 0) return a;
    if (op === "mul" && (ca === 0 || cb === 0)) return intImm(0, a.dtype, span);
    if (op === "mul" && ca === 1) return b;
    if ((op === "mul" || op === "div" || op === "floordiv") && cb === 1) return a;
  }
  return { kind: "Binary", op, a, b, dtype: a.dtype, ...sp(span) };
}

/**
 * `a cmp b` as a bool.
 * @throws TirxError TX1007 for operands of two dtypes, or float8 operands (no float8 setp).
 */
export function compare(op: CompareOp, a: Expr, b: Expr, span?: Span): Expr {
  if (a.dtype !== b.dtype) {
    throw new TirxError(
      "TX1007",
      `operands of ${op} have dtypes ${a.dtype} and ${b.dtype}; cast one of them explicitly`,
      span ?? a.span ?? b.span,
    );
  }
  refuseFloat8(op, a.dtype, span ?? a.span);
  refusePacked(op, a.dtype, span ?? a.span);
  return { kind: "Compare", op, a, b, dtype: "bool", ...sp(span) };
}

/**
 * Logical and/or of two bools; the result is bool.
 * @throws TirxError TX1007 for an operand that is not bool.
 */
export function logical(op: "and" | "or", a: Expr, b: Expr, span?: Span): Expr {
  for (const x of [a, b]) {
    if (x.dtype !== "bool") {
      throw new TirxError("TX1007", `logical ${op} needs bool operands, got ${x.dtype}`, span);
    }
  }
  return { kind: "Logical", op, a, b, dtype: "bool", ...sp(span) };
}

/**
 * Logical not of a bool.
 * @throws TirxError TX1007 for an operand that is not bool.
 */
export function not(a: Expr, span?: Span): Expr {
  if (a.dtype !== "bool") throw new TirxError("TX1007", `not needs a bool, got ${a.dtype}`, span);
  return { kind: "Not", a, dtype: "bool", ...sp(span) };
}

/**
 * Value conversion to `dtype`; a no-op when the dtype already matches. Into float8 the value is
 * rounded to nearest even and saturated (`cvt.rn.satfinite`: NaN stays NaN, ±inf and overflow
 * give ±max finite); out of float8 it is exact into any float, and truncated as a float is into an
 * integer.
 * @throws TirxError TX1007 for float64 → float8: PTX converts to float8 only from float32 and
 *   float16, and float64 → float32 → float8 would round twice; TX1007 for a cast into or out of a
 *   packed pair (float16x2, bfloat16x2: `packedCastError`).
 */
export function cast(dtype: DType, value: Expr, span?: Span): Expr {
  if (value.dtype === dtype) return value;
  if (isLaneValue(dtype) || isLaneValue(value.dtype)) {
    throw packedCastError(value.dtype, dtype, span ?? value.span);
  }
  if (isFloat8(dtype) && value.dtype === "float64") {
    throw new TirxError(
      "TX1007",
      `no conversion float64 → ${dtype}: PTX converts to float8 only from float32 and float16 (cvt.rn.satfinite.*x2), and through float32 it would round twice; cast to float32 first if that is meant`,
      span ?? value.span,
    );
  }
  const c = constInt(value);
  if (c !== undefined && !isFloat(dtype) && dtype !== "bool" && !isWideInt(dtype)) {
    if (dtype === "int32" && c >= -(2 ** 31) && c < 2 ** 31) return intImm(c, dtype, span);
    if (dtype === "uint32" && c >= 0 && c < 2 ** 32) return intImm(c, dtype, span);
  }
  return { kind: "Cast", value, dtype, ...sp(span) };
}

/**
 * `cond ? t : f`; `t` and `f` share a dtype, `cond` is bool.
 * @throws TirxError TX1007 for a non-bool condition, arms of two dtypes, or vector arms.
 */
export function ifThenElse(cond: Expr, t: Expr, f: Expr, span?: Span): Expr {
  if (cond.dtype !== "bool") {
    throw new TirxError("TX1007", `if_then_else condition must be bool, got ${cond.dtype}`, span);
  }
  if (t.dtype !== f.dtype) {
    throw new TirxError(
      "TX1007",
      `if_then_else arms have dtypes ${t.dtype} and ${f.dtype}; cast one of them explicitly`,
      span,
    );
  }
  if (isVector(t.dtype)) {
    throw new TirxError(
      "TX1007",
      `if_then_else is not defined on ${t.dtype}: PTX's selp takes one register; select lane by lane (T.ptx.vec.make of if_then_else of each v.lane(i))`,
      span,
    );
  }
  return { kind: "IfThenElse", cond, t, f, dtype: t.dtype, ...sp(span) };
}

/** int32 constant. */
export const i32 = (v: number, span?: Span): IntImm => intImm(v, "int32", span);

/**
 * No cast converts into or out of a packed pair or a vector (a vector's lane-wise conversion is
 * the op `T.ptx.vec.cast`): a pair's lanes move with `T.ptx.pack` /
 * `T.ptx.unpack` / `T.ptx.x2.cvt`, its bits with `T.ptx.x2.bits` / `T.ptx.x2.from_bits` (a value
 * cast of the 32 bits would read them as an integer).
 * @returns TirxError TX1007 naming both dtypes.
 */
export function packedCastError(from: DType, to: DType, span?: Span): TirxError {
  if (isVector(from) || isVector(to)) {
    return new TirxError(
      "TX1007",
      `no cast ${from} → ${to}: a vector converts lane by lane to a vector of as many lanes with T.ptx.vec.cast(v, dtype); its lanes move with T.ptx.vec.make / T.ptx.vec.broadcast / v.lane(i)`,
      span,
    );
  }
  return new TirxError(
    "TX1007",
    `no cast ${from} → ${to}: a packed pair's lanes move with T.ptx.pack / T.ptx.unpack / T.ptx.x2.cvt, its 32 bits with T.ptx.x2.bits / T.ptx.x2.from_bits`,
    span,
  );
}
