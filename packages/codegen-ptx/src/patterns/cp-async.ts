import type { CpAsyncPlan, Expr } from "@tirx-ts/core";
import {
  applySwizzle,
  constInt,
  intImm,
  splitAtPeriod,
  swizzlePeriodBytes,
  type SwizzleLayout,
} from "@tirx-ts/core";
import { memRef } from "../emit/address.js";
import { indexBits, widenIndex } from "../emit/index-width.js";
import { exprKey } from "../emit/key.js";
import type { EmitContext } from "../emit/context.js";
import type { ExprEmitter } from "../emit/expr.js";
import { isReg } from "../types.js";
import { repeatIndices } from "./repeat.js";

const dot = (idx: readonly number[], strides: readonly number[]): number =>
  idx.reduce((acc, i, k) => acc + i * strides[k]!, 0);

/**
 * Per-thread byte offset of a side's atom origin: `baseBytes` plus, at CTA scope,
 * `warp * groupStrides[0] + lane * groupStrides[1]`: int32, or int64 (`wide`) for a global
 * tensor addressed with 64-bit offsets (the base widened to int64, terms added with `mad.wide.s32`).
 */
function threadOffset(
  ctx: EmitContext,
  ex: ExprEmitter,
  base: Expr,
  group: readonly number[],
  wide = false,
): string {
  let off = ex.value(wide ? widenIndex(base) : base);
  if (group.length === 0) return off;
  const { warp, lane } = ctx.threadIds();
  const [mul, mad] = wide ? ["mul.wide.s32", "mad.wide.s32"] : ["mul.lo.s32", "mad.lo.s32"];
  for (const [coord, stride] of [
    [warp, group[0]!],
    [lane, group[1]!],
  ] as const) {
    if (stride === 0) continue;
    const r = ctx.regs.fresh(wide ? "rd" : "r");
    const acc = !wide || isReg(off) ? off : ex.toReg(off, "int64");
    ctx.ins(
      off === "0" ? `${mul} ${r}, ${coord}, ${stride}` : `${mad} ${r}, ${coord}, ${stride}, ${acc}`,
    );
    off = r;
  }
  return off;
}

/**
 * `reg` (a 32-bit logical byte offset, or a constant) swizzled by `l`, as a register or constant:
 * `x ^ ((x >> S) & mask)` (or `x ^ ((x & mask) << S)`).
 */
function swizzleReg(ctx: EmitContext, l: SwizzleLayout, x: string): string {
  if (!isReg(x)) return String(applySwizzle(l, Number(x)));
  const mask = (2 ** l.swizzleLen - 1) * 2 ** l.perElement;
  const t = ctx.regs.fresh("r");
  const y = ctx.regs.fresh("r");
  if (l.swizzleInner) {
    ctx.ins(`shr.u32 ${t}, ${x}, ${l.atomLen}`);
    ctx.ins(`and.b32 ${t}, ${t}, ${mask}`);
  } else {
    ctx.ins(`and.b32 ${t}, ${x}, ${mask}`);
    ctx.ins(`shl.b32 ${t}, ${t}, ${l.atomLen}`);
  }
  ctx.ins(`xor.b32 ${y}, ${x}, ${t}`);
  return y;
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

  // A constant per-thread offset folds into the displacement instead of an add. A swizzled
  // destination swizzles only the terms below the swizzle's period (a stage index stays outside
  // the XOR, so the XOR is loop-invariant) and adds the others after it.
  const swz = dst.buffer.layout;
  const split = swz ? splitAtPeriod(swz, dst.baseBytes, 1) : undefined;
  const dRest = split ? (split.rest ?? intImm(0)) : dst.baseBytes;
  // A swizzled destination's per-thread offset and its swizzle are memoized by expression, so
  // a main loop reuses what the prologue computed for the same thread-invariant rest.
  const restKey = swz ? exprKey(dRest) : undefined;
  const keyOf = (what: string): string | undefined =>
    restKey === undefined
      ? undefined
      : `${what} ${swz!.perElement},${swz!.swizzleLen},${swz!.atomLen},${swz!.swizzleInner} ${dst.groupStridesBytes.join(",")} ${restKey}`;
  const dOff = swz
    ? ctx.memo(keyOf("cp.async dst"), () => threadOffset(ctx, ex, dRest, dst.groupStridesBytes))
    : threadOffset(ctx, ex, dRest, dst.groupStridesBytes);
  // The period-multiple part of a swizzled destination's base, added to the buffer's address.
  let passBase: { reg: string; disp: number } | undefined;
  const baseOf = (): { reg: string; disp: number } => {
    if (passBase) return passBase;
    if (!split?.pass) return (passBase = { reg: dstBase.reg, disp: 0 });
    const v = ex.value(split.pass);
    if (!isReg(v)) return (passBase = { reg: dstBase.reg, disp: Number(v) });
    const reg = ctx.regs.fresh("r");
    ctx.ins(`add.s32 ${reg}, ${dstBase.reg}, ${v}`);
    return (passBase = { reg, disp: 0 });
  };
  const at = (off: string): { reg: string; disp: number } => {
    const b = baseOf();
    if (!isReg(off)) return { reg: b.reg, disp: b.disp + Number(off) };
    const reg = ctx.regs.fresh("r");
    ctx.ins(`add.s32 ${reg}, ${b.reg}, ${off}`);
    return { reg, disp: b.disp };
  };
  // A swizzled destination swizzles each atom's logical offset; repeat steps that are multiples
  // of the swizzle's period pass through it and stay displacements (swz(x + kP) = swz(x) + kP).
  const period = swz ? swizzlePeriodBytes(swz) : 0;
  const dstRef = (rep: number): string => {
    if (!swz) {
      const { reg, disp } = dBase;
      return memRef(reg, disp + rep);
    }
    const whole = rep - (((rep % period) + period) % period);
    const part = rep - whole;
    let off = dOff;
    if (part !== 0) {
      if (isReg(dOff)) {
        off = ctx.regs.fresh("r");
        ctx.ins(`add.s32 ${off}, ${dOff}, ${part}`);
      } else off = String(Number(dOff) + part);
    }
    const { reg, disp } = part === 0 ? swzBase() : at(swizzleReg(ctx, swz, off));
    return memRef(reg, disp + whole);
  };
  let swzBaseMemo: { reg: string; disp: number } | undefined;
  const swzBase = (): { reg: string; disp: number } =>
    (swzBaseMemo ??= at(
      ctx.memo(keyOf("cp.async dst swizzled"), () => swizzleReg(ctx, swz!, dOff)),
    ));
  const dBase = swz ? { reg: dstBase.reg, disp: 0 } : at(dOff);
  // A source over 2^31 - 1 bytes gets its byte offset in 64 bits (index-width.ts).
  const src64 = srcBase.space === "global" && indexBits(src.buffer, ctx.wideSymbolic) === 64;
  const sOff = threadOffset(ctx, ex, src.baseBytes, src.groupStridesBytes, src64);
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
    const d = dstRef(dot(idx, dst.repeatStridesBytes));
    const s = memRef(sAddr, sDisp + dot(idx, src.repeatStridesBytes));
    ctx.ins(`${guard}${name} ${d}, ${s}, ${operands}`);
  }
}
