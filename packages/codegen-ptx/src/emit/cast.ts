import { cvtNanToZero, dtypeBits, invariant, isFloat, isFloat8, type DType } from "@tirx-ts/core";
import { bitType, cvtType, floatImmediate, isReg, opType } from "../types.js";
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
 * Conversions PTX lacks at sm_80 were rewritten through float32 by `lower/upcast-half.ts`; float8
 * arrives only to float16 or from float16/float32 (see {@link emitFloat8Cast}).
 */
export function emitCast(ctx: EmitContext, a: string, from: DType, to: DType): string {
  if (from === to) return a;
  if (isFloat8(from) || isFloat8(to)) return emitFloat8Cast(ctx, a, from, to);
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
    cvtNanToZero(
      (l) => ctx.ins(l),
      d,
      a,
      from,
      to,
      () => ctx.reg("bool"),
    );
  } else if (dtypeBits(from) === dtypeBits(to) && dtypeBits(to) >= 16) {
    ctx.ins(`mov.${bitType(to)} ${d}, ${a}`);
  } else {
    ctx.ins(`cvt.${t}.${f} ${d}, ${a}`);
  }
  return d;
}

/**
 * A scalar float8 conversion through the packed x2 forms of cvt (PTX ISA, cvt; sm_89 with PTX 8.1,
 * sm_90 with PTX 7.8), the value in the low byte / half and the same value in the other: float8 →
 * float16 `cvt.rn.f16x2.{e4m3x2,e5m2x2}` (exact) and its low half; float32 → float8
 * `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d, a, a`; float16 → float8 `mov.b32 {a, a}` then
 * `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f16x2`. Other pairs were routed through these by upcast-half.
 */
function emitFloat8Cast(ctx: EmitContext, a: string, from: DType, to: DType): string {
  const d = ctx.reg(to);
  if (isFloat8(from)) {
    invariant(to === "float16", `cast ${from} → ${to} reached PTX unrouted`);
    const pair = ctx.regs.fresh("r");
    const high = ctx.regs.fresh("h");
    ctx.ins(`cvt.rn.f16x2.${cvtType(from)}x2 ${pair}, ${a}`);
    ctx.ins(`mov.b32 {${d}, ${high}}, ${pair}`);
    return d;
  }
  invariant(from === "float32" || from === "float16", `cast ${from} → ${to} reached PTX unrouted`);
  const f8 = `${cvtType(to)}x2`;
  let src = a;
  if (!isReg(a)) {
    src = ctx.reg(from);
    ctx.ins(`mov.${bitType(from)} ${src}, ${a}`);
  }
  if (from === "float32") {
    ctx.ins(`cvt.rn.satfinite.${f8}.f32 ${d}, ${src}, ${src}`);
    return d;
  }
  const pair = ctx.regs.fresh("r");
  ctx.ins(`mov.b32 ${pair}, {${src}, ${src}}`);
  ctx.ins(`cvt.rn.satfinite.${f8}.f16x2 ${d}, ${pair}`);
  return d;
}
