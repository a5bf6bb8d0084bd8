import type { DType } from "@tirx-ts/core";
import { memType } from "../types.js";
import type { ElementRef } from "./address.js";
import type { EmitContext } from "./context.js";

/** One register as itself, several as a PTX vector operand `{%a, %b}`. */
export const braced = (words: readonly string[]): string =>
  words.length === 1 ? words[0]! : `{${words.join(", ")}}`;

/** `.v4.`, `.v2.` or `.` before the type of an access of `n` registers. */
const vec = (n: number): string => (n === 1 ? "." : `.v${n}.`);

/** Load `n` (1, 2 or 4) `.u32` words at `at` as one access; their fresh `%r` registers. */
export function loadWords(ctx: EmitContext, at: ElementRef, n: number): string[] {
  const words = Array.from({ length: n }, () => ctx.regs.fresh("r"));
  ctx.ins(`ld.${at.space}${vec(n)}u32 ${braced(words)}, ${at.ref}`);
  return words;
}

/** Store `words` (1, 2 or 4 `%r` registers) at `at` as one `.u32` access. */
export function storeWords(ctx: EmitContext, at: ElementRef, words: readonly string[]): void {
  ctx.ins(`st.${at.space}${vec(words.length)}u32 ${at.ref}, ${braced(words)}`);
}

/**
 * Load lanes `regs` (1, 2, 4, 8 or 16 of them) of an 8-bit `dtype` (int8, uint8, bool) at `at`
 * as one access. int8/uint8 lanes are 16-bit `%rs` registers holding the byte sign- or
 * zero-extended, bool lanes predicates (byte ≠ 0), as the scalar load leaves them (PTX ISA
 * "Fundamental Types": no 8-bit registers). One or two bytes load as `.u8`/`.s8` (`.v2`); four
 * or more as `.u32` words (`.v2`/`.v4`, little-endian), each split into halves by
 * `mov.b32 {%lo, %hi}` and the halves into bytes: the low byte by `and.b16 255` (`cvt.s16.s8`
 * for int8), the high by `shr.u16`/`shr.s16` 8 (PTX ISA "ld", "mov", "cvt", "shr").
 */
export function loadBytes(
  ctx: EmitContext,
  at: ElementRef,
  dtype: DType,
  regs: readonly string[],
): void {
  const bool = dtype === "bool";
  const signed = dtype === "int8";
  // bool lanes get their byte in a scratch register first, then a setp.
  const bytes = bool ? regs.map(() => ctx.regs.fresh("rs")) : [...regs];
  if (regs.length <= 2) {
    ctx.ins(`ld.${at.space}${vec(regs.length)}${memType(dtype)} ${braced(bytes)}, ${at.ref}`);
  } else {
    loadWords(ctx, at, regs.length / 4).forEach((w, i) => {
      const [lo, hi] = [ctx.regs.fresh("rs"), ctx.regs.fresh("rs")];
      ctx.ins(`mov.b32 {${lo}, ${hi}}, ${w}`);
      [lo, hi].forEach((h, j) => {
        const [b0, b1] = [bytes[4 * i + 2 * j]!, bytes[4 * i + 2 * j + 1]!];
        ctx.ins(signed ? `cvt.s16.s8 ${b0}, ${h}` : `and.b16 ${b0}, ${h}, 255`);
        ctx.ins(`shr.${signed ? "s" : "u"}16 ${b1}, ${h}, 8`);
      });
    });
  }
  if (bool) regs.forEach((p, i) => ctx.ins(`setp.ne.u16 ${p}, ${bytes[i]}, 0`));
}

/**
 * Store lanes `values` (1, 2, 4, 8 or 16 registers, as {@link loadBytes} leaves them) of an
 * 8-bit `dtype` at `at` as one access: bool as 1 or 0 (`selp.u16`), as the scalar store writes
 * it; one or two bytes as `.u8`/`.s8` (`.v2`, each register's low byte); four or more packed
 * into `.u32` words, `(b0 & 255) | b1 << 8` per half and `mov.b32 %r, {%lo, %hi}` (PTX ISA
 * "st", "mov", "shl").
 */
export function storeBytes(
  ctx: EmitContext,
  at: ElementRef,
  dtype: DType,
  values: readonly string[],
): void {
  const bool = dtype === "bool";
  const bytes = values.map((v) => {
    if (!bool) return v;
    const b = ctx.regs.fresh("rs");
    ctx.ins(`selp.u16 ${b}, 1, 0, ${v}`);
    return b;
  });
  if (values.length <= 2) {
    ctx.ins(`st.${at.space}${vec(values.length)}${memType(dtype)} ${at.ref}, ${braced(bytes)}`);
    return;
  }
  const halves: string[] = [];
  for (let k = 0; k < bytes.length; k += 2) {
    let b0 = bytes[k]!;
    // A bool byte is 0 or 1 already; an integer lane may carry its sign extension.
    if (!bool) {
      const x = ctx.regs.fresh("rs");
      ctx.ins(`and.b16 ${x}, ${b0}, 255`);
      b0 = x;
    }
    const [y, h] = [ctx.regs.fresh("rs"), ctx.regs.fresh("rs")];
    ctx.ins(`shl.b16 ${y}, ${bytes[k + 1]}, 8`);
    ctx.ins(`or.b16 ${h}, ${b0}, ${y}`);
    halves.push(h);
  }
  const words: string[] = [];
  for (let k = 0; k < halves.length; k += 2) {
    const w = ctx.regs.fresh("r");
    ctx.ins(`mov.b32 ${w}, {${halves[k]}, ${halves[k + 1]}}`);
    words.push(w);
  }
  storeWords(ctx, at, words);
}
