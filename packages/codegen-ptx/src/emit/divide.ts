import type { DType } from "@tirx-ts/core";
import type { EmitContext } from "./context.js";

/**
 * 32-bit integer `div`/`mod`/`floordiv`/`floormod` of register `a` by a positive constant `c`
 * as shifts, masks and a multiply-high, instead of `div`/`rem`, which ptxas expands into its
 * generic division sequence (I2F, MUFU.RCP, F2I and fix-ups) even for an immediate divisor:
 * - c = 2^k: floordiv is `shr` (arithmetic for signed: floor, not truncation), floormod
 *   `and c - 1` (two's complement: the non-negative remainder), for every value; the truncating
 *   div/mod only when `a` is known non-negative;
 * - other c, `a` known in [0, 2^31): q = mulhi(a, m) >> (l - 1) with l = ⌈log2 c⌉ and
 *   m = ⌈2^(31+l) / c⌉ < 2^32 (Granlund and Montgomery, "Division by invariant integers using
 *   multiplication", 1994: exact for 31-bit dividends since m·c − 2^(31+l) ≤ 2^l); the
 *   remainder is a − q·c.
 * Returns the result register, or undefined when no rule applies (the caller emits div/rem).
 */
export function divideByConstant(
  ctx: EmitContext,
  op: string,
  a: string,
  c: number,
  dt: DType,
  nonNegative: boolean,
): string | undefined {
  if (dt !== "int32" && dt !== "uint32") return undefined;
  if (!Number.isSafeInteger(c) || c < 2 || c >= 2 ** 31) return undefined;
  const floor = op === "floordiv" || op === "floormod";
  const quotient = op === "floordiv" || op === "div";
  if (!floor && op !== "div" && op !== "mod") return undefined;
  const k = Math.log2(c);
  const d = ctx.regs.fresh("r");
  if (Number.isInteger(k) && (floor || nonNegative || dt === "uint32")) {
    if (quotient) ctx.ins(`shr.${dt === "int32" ? "s" : "u"}32 ${d}, ${a}, ${k}`);
    else ctx.ins(`and.b32 ${d}, ${a}, ${c - 1}`);
    return d;
  }
  if (Number.isInteger(k) || !nonNegative) return undefined;
  const l = Math.ceil(Math.log2(c));
  const m = (2n ** BigInt(31 + l) + BigInt(c) - 1n) / BigInt(c);
  const hi = ctx.regs.fresh("r");
  ctx.ins(`mul.hi.u32 ${hi}, ${a}, ${m}`);
  const q = quotient ? d : ctx.regs.fresh("r");
  ctx.ins(`shr.u32 ${q}, ${hi}, ${l - 1}`);
  if (quotient) return d;
  const qc = ctx.regs.fresh("r");
  ctx.ins(`mul.lo.s32 ${qc}, ${q}, ${c}`);
  ctx.ins(`sub.s32 ${d}, ${a}, ${qc}`);
  return d;
}
