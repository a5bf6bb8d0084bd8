import {
  dtypeBits,
  InternalError,
  intImm,
  invariant,
  type Expr,
  type OperandSpec,
} from "@tirx-ts/core";
import type { EmitContext } from "./context.js";
import { elementReg } from "./register-array.js";

/**
 * A fragment operand (`frag.ptr([i])` of a register array) as the vector operand of a
 * warp-level matrix instruction: `{%r1, %r2, ...}`, one 32-bit register per 32 bits of the
 * fragment (or per 64 bits: an f64 mma's fragments are .f64 registers). 32- and 64-bit elements
 * are their own registers; 16-bit elements are packed in pairs
 * (`mov.b32 %r, {lo, hi}` before a read, the reverse after a write); 8-bit elements (read only)
 * are packed four to a register with `bfi`. A `scalar` fragment is its one 32-bit register
 * without braces (mma.sp's metadata). Returns the operand text and the instructions to
 * emit after the instruction (unpacking written registers). The verifier checked that the
 * operand is `frag.ptr([i])` of a local array (TX7001, the op's record), that the array lives in
 * registers and that the fragment stays inside it in every unrolled iteration (TX7001, core
 * `checkRegisterArrays`).
 */
export function fragmentOperand(
  ctx: EmitContext,
  spec: Extract<OperandSpec, { kind: "fragment" }>,
  e: Expr,
  surface: string,
): { text: string; after: string[] } {
  invariant(e.kind === "BufferPtr", () => `${spec.name} of ${surface} is not frag.ptr([i])`);
  const b = e.buffer;
  const regs = ctx.elementRegs(b);
  const i0 = ctx.staticInt(e.offset);
  invariant(
    regs !== undefined && i0 !== undefined,
    () => `${spec.name} of ${surface}: "${b.name}" is not a register array at a constant offset`,
  );
  const el = (k: number): string => elementReg(ctx, regs, b, intImm(Number(i0) + k));
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
  } else if (bits === 32 || bits === 64) {
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
  // A scalar fragment (mma.sp's metadata `e`) is its one register, not a vector expression.
  if (spec.scalar) return { text: vec[0]!, after };
  return { text: `{${vec.join(", ")}}`, after };
}
