import { findOp, type BinaryOp, type DType, type Expr } from "@tirx-ts/core";

/**
 * float16/bfloat16 arithmetic through float32, as tinygrad's PTX renderer does: sm_80 has no
 * scalar bf16 arithmetic, and f32 results rounded once back to 16 bits equal the correctly rounded
 * 16-bit results for add, sub, mul, div (f32 carries more than 2*11+2 bits), and exactly for min,
 * max and comparisons. Conversions that PTX lacks at sm_80 (anything between bfloat16 and a type
 * other than float32; float16 to or from bool) are routed through float32 too.
 */

const HALF = (dt: DType): boolean => dt === "float16" || dt === "bfloat16";

/** Arithmetic operators computed in float32 for 16-bit floats (bit operators stay refused). */
const PROMOTED: ReadonlySet<BinaryOp> = new Set([
  "add",
  "sub",
  "mul",
  "div",
  "mod",
  "floordiv",
  "floormod",
  "min",
  "max",
]);

const toF32 = (e: Expr): Expr =>
  e.dtype === "float32" ? e : { kind: "Cast", value: e, dtype: "float32" };

/** True when one `cvt` (or a bit trick of the cast emitter) converts `from` to `to` at sm_80. */
export function directCast(from: DType, to: DType): boolean {
  if (from === "bfloat16") return to === "float32";
  if (to === "bfloat16") return from === "float32" || from === "bool";
  if (from === "float16") return to !== "bool";
  return true;
}

/** Rewrite `e` so that no arithmetic, comparison or unsupported conversion has a 16-bit float. */
export function upcastHalf(e: Expr): Expr {
  switch (e.kind) {
    case "Binary": {
      const a = upcastHalf(e.a);
      const b = upcastHalf(e.b);
      if (HALF(e.dtype) && PROMOTED.has(e.op)) {
        const wide: Expr = { kind: "Binary", op: e.op, a: toF32(a), b: toF32(b), dtype: "float32" };
        return { kind: "Cast", value: wide, dtype: e.dtype };
      }
      return a === e.a && b === e.b ? e : { ...e, a, b };
    }
    case "Compare": {
      const a = upcastHalf(e.a);
      const b = upcastHalf(e.b);
      if (HALF(a.dtype)) return { ...e, a: toF32(a), b: toF32(b) };
      return a === e.a && b === e.b ? e : { ...e, a, b };
    }
    case "Cast": {
      const v = upcastHalf(e.value);
      if (!directCast(v.dtype, e.dtype)) return { ...e, value: toF32(v) };
      return v === e.value ? e : { ...e, value: v };
    }
    case "Logical": {
      const a = upcastHalf(e.a);
      const b = upcastHalf(e.b);
      return a === e.a && b === e.b ? e : { ...e, a, b };
    }
    case "Not": {
      const a = upcastHalf(e.a);
      return a === e.a ? e : { ...e, a };
    }
    case "IfThenElse": {
      const cond = upcastHalf(e.cond);
      const t = upcastHalf(e.t);
      const f = upcastHalf(e.f);
      return cond === e.cond && t === e.t && f === e.f ? e : { ...e, cond, t, f };
    }
    case "BufferLoad":
    case "BufferPtr": {
      const offset = upcastHalf(e.offset);
      return offset === e.offset ? e : { ...e, offset };
    }
    case "CallExpr": {
      const args = e.args.map(upcastHalf);
      // Float math/arith ops on 16-bit operands compute in float32 and round back once.
      const fam = findOp(e.op)?.family;
      if ((fam === "math" || fam === "arith") && args.some((a) => HALF(a.dtype))) {
        const wide: Expr = {
          ...e,
          args: args.map(toF32),
          dtype: HALF(e.dtype) ? "float32" : e.dtype,
        };
        return HALF(e.dtype) ? { kind: "Cast", value: wide, dtype: e.dtype } : wide;
      }
      return { ...e, args };
    }
    default:
      return e;
  }
}
