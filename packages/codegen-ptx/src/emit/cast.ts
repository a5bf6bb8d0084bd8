import { dtypeBits, isFloat, type DType } from "@tirx-ts/core";
import { bitType, cvtType, floatImmediate, opType } from "../types.js";
import type { EmitContext } from "./context.js";

/** `selp` operands for true/false of a bool converted to `to`. */
function boolValues(to: DType): [string, string] {
  if (isFloat(to)) return [floatImmediate(1, to), floatImmediate(0, to)];
  return ["1", "0"];
}

/**
 * Value conversion of operand `a` from `from` to `to` (PTX ISA "cvt"). Rounding: int to float
 * and float narrowing round to nearest even (`.rn`); float to int truncates toward zero and
 * saturates (`.rzi`); widening is exact (no modifier); int to int chops or extends by the source
 * type. bool becomes 1/0 (`selp`), and anything becomes bool by `!= 0` (`setp.ne`, `setp.neu` for
 * floats so NaN is true). bfloat16 widens by a 16-bit shift, which needs no PTX 7.1.
 * Conversions PTX lacks at sm_80 were rewritten through float32 by `lower/upcast-half.ts`.
 */
export function emitCast(ctx: EmitContext, a: string, from: DType, to: DType): string {
  if (from === to) return a;
  const d = ctx.reg(to);
  if (from === "bool") {
    const [t, f] = boolValues(to);
    ctx.ins(`selp.${bitType(to)} ${d}, ${t}, ${f}, ${a}`);
    return d;
  }
  if (to === "bool") {
    const zero = isFloat(from) ? floatImmediate(0, from) : "0";
    ctx.ins(`setp.${isFloat(from) ? "neu" : "ne"}.${opType(from)} ${d}, ${a}, ${zero}`);
    return d;
  }
  if (from === "bfloat16") {
    const t = ctx.regs.fresh("r");
    ctx.ins(`cvt.u32.u16 ${t}, ${a}`);
    ctx.ins(`shl.b32 ${t}, ${t}, 16`);
    ctx.ins(`mov.b32 ${d}, ${t}`);
    return d;
  }
  const f = cvtType(from);
  const t = cvtType(to);
  if (isFloat(from) && isFloat(to)) {
    ctx.ins(
      dtypeBits(to) > dtypeBits(from) ? `cvt.${t}.${f} ${d}, ${a}` : `cvt.rn.${t}.${f} ${d}, ${a}`,
    );
  } else if (isFloat(to)) {
    ctx.ins(`cvt.rn.${t}.${f} ${d}, ${a}`);
  } else if (isFloat(from)) {
    ctx.ins(`cvt.rzi.${t}.${f} ${d}, ${a}`);
    if (from === "float64" || dtypeBits(to) === 64) {
      // These conversions give the most negative integer's bits for NaN on sm_80/sm_90 (seen on
      // an H200); the IR defines NaN → 0, as the 32-bit conversions from float32 give it.
      const nan = ctx.reg("bool");
      ctx.ins(`setp.nan.${f} ${nan}, ${a}, ${a}`);
      ctx.ins(`selp.${bitType(to)} ${d}, 0, ${d}, ${nan}`);
    }
  } else if (dtypeBits(from) === dtypeBits(to) && dtypeBits(to) >= 16) {
    ctx.ins(`mov.${bitType(to)} ${d}, ${a}`);
  } else {
    ctx.ins(`cvt.${t}.${f} ${d}, ${a}`);
  }
  return d;
}
