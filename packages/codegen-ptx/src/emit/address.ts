import { constInt, dtypeBits, type Buffer, type Expr } from "@tirx-ts/core";
import { cvtType } from "../types.js";
import type { EmitContext } from "./context.js";
import type { ExprEmitter } from "./expr.js";

/** `[reg]`, `[reg+16]` or `[reg+-16]` (nvcc's spelling of a negative displacement). */
export function memRef(reg: string, offset: number): string {
  return offset === 0 ? `[${reg}]` : `[${reg}+${offset}]`;
}

/** Split `e` into a runtime part and a constant addend, so constants become displacements. */
function splitConst(e: Expr): { dyn?: Expr; c: number } {
  const whole = constInt(e);
  if (whole !== undefined) return { c: whole };
  if (e.kind === "Binary" && e.op === "add") {
    const b = constInt(e.b);
    if (b !== undefined) return { dyn: e.a, c: b };
    const a = constInt(e.a);
    if (a !== undefined) return { dyn: e.b, c: a };
  }
  return { dyn: e, c: 0 };
}

/** A 32-bit register (or immediate) holding the integer `op` of `e`'s dtype. */
export function to32(ctx: EmitContext, op: string, e: Expr, signed = true): string {
  const bits = dtypeBits(e.dtype);
  if (bits === 32) return op;
  const r = ctx.regs.fresh("r");
  ctx.ins(`cvt.${signed ? "s" : "u"}32.${cvtType(e.dtype)} ${r}, ${op}`);
  return r;
}

/** An element's address: register plus constant displacement, and the `[reg+disp]` operand. */
export interface ElementRef {
  readonly space: "global" | "shared" | "local";
  readonly reg: string;
  readonly disp: number;
  readonly ref: string;
}

/**
 * Address of element `offset` (counted in `elemBytes`-byte elements) of `buffer`, as a memory
 * operand, with its state space. Shared addresses are 32-bit (`mad.lo.s32`); global and local
 * ones 64-bit (`mul.wide` of the 32-bit index, added to the base).
 */
export function elementRef(
  ctx: EmitContext,
  ex: ExprEmitter,
  buffer: Buffer,
  offset: Expr,
  elemBytes: number,
): ElementRef {
  const base = ctx.bufferBase(buffer);
  const { dyn, c } = splitConst(offset);
  const disp = c * elemBytes;
  const at = (reg: string): ElementRef => ({
    space: base.space,
    reg,
    disp,
    ref: memRef(reg, disp),
  });
  if (!dyn) return at(base.reg);
  const idx = ex.emit(dyn);
  if (base.space === "shared") {
    const i32 = dtypeBits(dyn.dtype) === 64 ? narrow(ctx, idx) : to32(ctx, idx, dyn);
    const r = ctx.regs.fresh("r");
    ctx.ins(`mad.lo.s32 ${r}, ${i32}, ${elemBytes}, ${base.reg}`);
    return at(r);
  }
  const wide = ctx.regs.fresh("rd");
  if (dtypeBits(dyn.dtype) === 64) {
    ctx.ins(`mul.lo.s64 ${wide}, ${idx}, ${elemBytes}`);
  } else {
    const unsigned = dyn.dtype.startsWith("u");
    const i32 = to32(ctx, idx, dyn, !unsigned);
    ctx.ins(`mul.wide.${unsigned ? "u" : "s"}32 ${wide}, ${i32}, ${elemBytes}`);
  }
  const addr = ctx.regs.fresh("rd");
  ctx.ins(`add.s64 ${addr}, ${base.reg}, ${wide}`);
  return at(addr);
}

function narrow(ctx: EmitContext, op: string): string {
  const r = ctx.regs.fresh("r");
  ctx.ins(`cvt.u32.u64 ${r}, ${op}`);
  return r;
}
