import type { CpAsyncPlan, Expr } from "@tirx-ts/core";
import { constInt } from "@tirx-ts/core";
import { memRef } from "../emit/address.js";
import { indexBits, widenIndex } from "../emit/index-width.js";
import type { EmitContext } from "../emit/context.js";
import type { ExprEmitter } from "../emit/expr.js";
import { isReg } from "../types.js";
import { repeatIndices } from "./repeat.js";

const dot = (idx: readonly number[], strides: readonly number[]): number =>
  idx.reduce((acc, i, k) => acc + i * strides[k]!, 0);

/**
 * Per-thread byte offset of a side's atom origin: `baseBytes` plus, at CTA scope,
 * `warp * groupStrides[0] + lane * groupStrides[1]` (int32).
 */
function threadOffset(
  ctx: EmitContext,
  ex: ExprEmitter,
  base: Expr,
  group: readonly number[],
): string {
  let off = ex.value(base);
  if (group.length === 0) return off;
  const { warp, lane } = ctx.threadIds();
  for (const [coord, stride] of [
    [warp, group[0]!],
    [lane, group[1]!],
  ] as const) {
    if (stride === 0) continue;
    const r = ctx.regs.fresh("r");
    ctx.ins(
      off === "0"
        ? `mul.lo.s32 ${r}, ${coord}, ${stride}`
        : `mad.lo.s32 ${r}, ${coord}, ${stride}, ${off}`,
    );
    off = r;
  }
  return off;
}

/**
 * {@link threadOffset} in 64 bits, for a global tensor addressed with 64-bit offsets: the base
 * offset widened to int64, the warp and lane terms added with `mad.wide.s32`.
 */
function threadOffset64(
  ctx: EmitContext,
  ex: ExprEmitter,
  base: Expr,
  group: readonly number[],
): string {
  let off = ex.value(widenIndex(base));
  if (group.length === 0) return off;
  const { warp, lane } = ctx.threadIds();
  for (const [coord, stride] of [
    [warp, group[0]!],
    [lane, group[1]!],
  ] as const) {
    if (stride === 0) continue;
    const r = ctx.regs.fresh("rd");
    ctx.ins(
      off === "0"
        ? `mul.wide.s32 ${r}, ${coord}, ${stride}`
        : `mad.wide.s32 ${r}, ${coord}, ${stride}, ${isReg(off) ? off : ex.toReg(off, "int64")}`,
    );
    off = r;
  }
  return off;
}

/**
 * Emit one verified cp.async `tile.apply` (seed "Code generation"; PTX ISA "cp.async"):
 * the per-thread atom addresses once, then one `cp.async` per repeat index, fully unrolled in
 * row-major repeat order, with each repeat's constant byte offset as the address displacement.
 * Destination addresses are 32-bit shared-window addresses, sources 64-bit global addresses.
 * Operands: `src_size` is an immediate when constant, else a 32-bit register; `ignore_src` a
 * predicate register (PTX has no immediate form); `cache_policy` a 64-bit register; `pred` the
 * guard `@%p`. Qualifiers keep the author's order. No commit, wait or barrier is added.
 */
export function emitCpAsync(ctx: EmitContext, ex: ExprEmitter, plan: CpAsyncPlan): void {
  const { dst, src, opcode } = plan;
  const dstBase = ctx.bufferBase(dst.buffer);
  const srcBase = ctx.bufferBase(src.buffer);

  // A constant per-thread offset folds into the displacement instead of an add.
  const dOff = threadOffset(ctx, ex, dst.baseBytes, dst.groupStridesBytes);
  let dAddr = dstBase.reg;
  let dDisp = 0;
  if (isReg(dOff)) {
    dAddr = ctx.regs.fresh("r");
    ctx.ins(`add.s32 ${dAddr}, ${dstBase.reg}, ${dOff}`);
  } else {
    dDisp = Number(dOff);
  }
  // A source over 2^31 - 1 bytes gets its byte offset in 64 bits (index-width.ts).
  const src64 = srcBase.space === "global" && indexBits(src.buffer, ctx.wideSymbolic) === 64;
  const sOff = (src64 ? threadOffset64 : threadOffset)(
    ctx,
    ex,
    src.baseBytes,
    src.groupStridesBytes,
  );
  let sAddr = srcBase.reg;
  let sDisp = 0;
  if (isReg(sOff) && src64) {
    sAddr = ctx.regs.fresh("rd");
    ctx.ins(`add.s64 ${sAddr}, ${srcBase.reg}, ${sOff}`);
  } else if (isReg(sOff)) {
    const wide = ctx.regs.fresh("rd");
    ctx.ins(`cvt.s64.s32 ${wide}, ${sOff}`);
    sAddr = ctx.regs.fresh("rd");
    ctx.ins(`add.s64 ${sAddr}, ${srcBase.reg}, ${wide}`);
  } else if (Math.abs(Number(sOff)) >= 2 ** 31) {
    sAddr = ctx.regs.fresh("rd");
    ctx.ins(`add.s64 ${sAddr}, ${srcBase.reg}, ${sOff}`);
  } else {
    sDisp = Number(sOff);
  }

  let operands = `${plan.chunkBytes}`;
  if (plan.srcSize) {
    const c = constInt(plan.srcSize);
    operands += `, ${c !== undefined ? c : ex.register(plan.srcSize)}`;
  }
  if (plan.ignoreSrc) operands += `, ${ex.register(plan.ignoreSrc)}`;
  if (plan.cachePolicy) operands += `, ${ex.register(plan.cachePolicy)}`;
  const guard = plan.pred ? `@${ex.register(plan.pred)} ` : "";

  const name = `cp.async.${opcode.cache}.${opcode.dstSpace}.global${opcode.qualifiers.map((q) => `.${q}`).join("")}`;
  for (const idx of repeatIndices(plan.repeatShape)) {
    const d = memRef(dAddr, dDisp + dot(idx, dst.repeatStridesBytes));
    const s = memRef(sAddr, sDisp + dot(idx, src.repeatStridesBytes));
    ctx.ins(`${guard}${name} ${d}, ${s}, ${operands}`);
  }
}
