import {
  dtypeBits,
  InternalError,
  intImm,
  TirxError,
  type Expr,
  type OperandSpec,
  type Span,
} from "@tirx-ts/core";
import type { EmitContext } from "./context.js";
import { elementReg } from "./register-array.js";

/**
 * A fragment operand (`frag.ptr([i])` of a register array) as the vector operand of a
 * warp-level matrix instruction: `{%r1, %r2, ...}`, one 32-bit register per 32 bits of the
 * fragment. 32-bit elements are their own registers; 16-bit elements are packed in pairs
 * (`mov.b32 %r, {lo, hi}` before a read, the reverse after a write); 8-bit elements (read only)
 * are packed four to a register with `bfi`. Returns the operand text and the instructions to
 * emit after the instruction (unpacking written registers).
 * @throws TirxError TX7001 when the array does not live in registers (an index that is not a
 *   constant after unrolling, its address taken elsewhere, more than 128 elements) or the
 *   element offset is not a constant here; TX2006 when the fragment leaves the array.
 */
export function fragmentOperand(
  ctx: EmitContext,
  spec: Extract<OperandSpec, { kind: "fragment" }>,
  e: Expr,
  surface: string,
  span?: Span,
): { text: string; after: string[] } {
  if (e.kind !== "BufferPtr") {
    throw new TirxError("TX7001", `${spec.name} of ${surface} must be frag.ptr([i])`, span);
  }
  const b = e.buffer;
  const regs = ctx.elementRegs(b);
  const i0 = ctx.staticInt(e.offset);
  if (!regs || i0 === undefined) {
    throw new TirxError(
      "TX7001",
      `${spec.name} of ${surface}: register array "${b.name}" must live in registers with a constant element offset after unrolling (index its elements only with constants and T.unroll variables)`,
      e.span ?? span,
    );
  }
  const el = (k: number): string =>
    elementReg(ctx, regs, b, intImm(Number(i0) + k), e.span ?? span);
  const bits = dtypeBits(b.dtype);
  const reads = spec.access !== "write";
  const writes = spec.access !== "read";
  const after: string[] = [];
  const vec: string[] = [];
  if (bits === 32 && spec.b32 && b.dtype === "float32" && !writes) {
    for (let k = 0; k < spec.count; k++) {
      const r = ctx.reg("uint32");
      ctx.ins(`mov.b32 ${r}, ${el(k)}`);
      vec.push(r);
    }
  } else if (bits === 32) {
    for (let k = 0; k < spec.count; k++) vec.push(el(k));
  } else if (bits === 16) {
    for (let k = 0; k < spec.count; k += 2) {
      const r = ctx.reg("uint32");
      const pair = `{${el(k)}, ${el(k + 1)}}`;
      if (reads) ctx.ins(`mov.b32 ${r}, ${pair}`);
      if (writes) after.push(`mov.b32 ${pair}, ${r}`);
      vec.push(r);
    }
  } else if (bits === 8 && !writes) {
    for (let k = 0; k < spec.count; k += 4) {
      const r = ctx.reg("uint32");
      for (let j = 0; j < 4; j++) {
        const w = ctx.reg("uint32");
        ctx.ins(`cvt.u32.u16 ${w}, ${el(k + j)}`);
        ctx.ins(j === 0 ? `mov.b32 ${r}, ${w}` : `bfi.b32 ${r}, ${w}, ${r}, ${8 * j}, 8`);
      }
      vec.push(r);
    }
  } else {
    throw new InternalError(`fragment of ${bits}-bit ${b.dtype} elements (${spec.access})`);
  }
  return { text: `{${vec.join(", ")}}`, after };
}
