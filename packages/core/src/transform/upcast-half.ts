import { isFloat8, type DType } from "../dtype.js";
import type { BinaryOp, Expr } from "../ir/expr.js";
import { mapExpr, mapStmt } from "./map.js";
import { findOp } from "../ops/registry.js";
import { entryPass, type Pass } from "./pass.js";

/**
 * float16/bfloat16 arithmetic through float32, as tinygrad's PTX renderer does: sm_80 has no
 * scalar bf16 arithmetic, and f32 results rounded once back to 16 bits equal the correctly rounded
 * 16-bit results for add, sub, mul, div (f32 carries more than 2*11+2 bits), and exactly for min,
 * max and comparisons. Conversions that PTX lacks at sm_80 (anything between bfloat16 and a type
 * other than float32; float16 to or from bool) are routed through float32 too. float8 converts
 * only to and from float16 and float32 (`cvt.rn.f16x2.e4m3x2`, `cvt.rn.satfinite.e4m3x2.{f32,f16x2}`):
 * out of float8 to anything else goes through float16 (exact) then float32 (exact), into float8
 * from anything else (not float64: refused when the cast is built) through float32 (exact for
 * bfloat16 and bool; for integers the one rounding into float32 moves only values far beyond the
 * float8 range, which saturate either way).
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

const toF16 = (e: Expr): Expr =>
  e.dtype === "float16" ? e : { kind: "Cast", value: e, dtype: "float16" };

/** True when one `cvt` (or a bit trick of the cast emitter) converts `from` to `to` at sm_80. */
export function directCast(from: DType, to: DType): boolean {
  if (isFloat8(from)) return to === "float16";
  if (isFloat8(to)) return from === "float32" || from === "float16";
  if (from === "bfloat16") return to === "float32";
  if (to === "bfloat16") return from === "float32" || from === "bool";
  if (from === "float16") return to !== "bool";
  return true;
}

/** One node, whose children are already rewritten. */
function upcastNode(e: Expr): Expr {
  switch (e.kind) {
    case "Binary":
      if (HALF(e.dtype) && PROMOTED.has(e.op)) {
        const wide: Expr = {
          kind: "Binary",
          op: e.op,
          a: toF32(e.a),
          b: toF32(e.b),
          dtype: "float32",
        };
        return { kind: "Cast", value: wide, dtype: e.dtype };
      }
      return e;
    case "Compare":
      return HALF(e.a.dtype) ? { ...e, a: toF32(e.a), b: toF32(e.b) } : e;
    case "Cast": {
      const from = e.value.dtype;
      if (directCast(from, e.dtype)) return e;
      if (isFloat8(from)) {
        const half = toF16(e.value);
        return e.dtype === "float32" ? { ...e, value: half } : { ...e, value: toF32(half) };
      }
      return { ...e, value: toF32(e.value) };
    }
    case "CallExpr": {
      // Float math/arith ops on 16-bit operands compute in float32 and round back once, but for
      // the ops whose instruction takes 16-bit registers (OpDef.halfNative).
      const rec = findOp(e.op);
      const fam = rec?.family;
      if (
        (fam === "math" || fam === "arith") &&
        !rec?.halfNative &&
        e.args.some((a) => HALF(a.dtype))
      ) {
        const wide: Expr = {
          ...e,
          args: e.args.map(toF32),
          dtype: HALF(e.dtype) ? "float32" : e.dtype,
        };
        return HALF(e.dtype) ? { kind: "Cast", value: wide, dtype: e.dtype } : wide;
      }
      return e;
    }
    default:
      return e;
  }
}

/**
 * Rewrite `e` so that no arithmetic, comparison or unsupported conversion has a 16-bit float.
 * Idempotent; iterative (any depth).
 */
export function upcastHalf(e: Expr): Expr {
  return mapExpr(e, upcastNode);
}

/** The `upcast-half` pass: {@link upcastHalf} on every expression of the device entry. */
export const upcastHalfPass: Pass = entryPass(
  "upcast-half",
  "float16/bfloat16 arithmetic, comparisons and unsupported casts → through float32",
  (body) => mapStmt(body, { expr: upcastNode }),
);
