import { dtypeBytes, type AtomSide, type BulkCopyPlan } from "@tirx-ts/core";
import { elementRef, memRef, type ElementRef } from "../emit/address.js";
import type { EmitContext } from "../emit/context.js";
import type { ExprEmitter } from "../emit/expr.js";
import { mbarOperand } from "../emit/intrinsic.js";
import { repeatIndices } from "./repeat.js";

/**
 * The address of a side's origin: 32-bit for shared memory, 64-bit for global memory, with the
 * constant part of the view's offset folded into the displacement. The offset is taken in
 * elements of the view's dtype, so the byte scale is one multiply (a 32-bit `mad` in shared
 * memory, `mul.wide` into the 64-bit global address).
 */
function origin(ctx: EmitContext, ex: ExprEmitter, side: AtomSide): ElementRef {
  return elementRef(ctx, ex, side.buffer, side.view.offset, dtypeBytes(side.view.dtype));
}

const dot = (idx: readonly number[], strides: readonly number[]): number =>
  idx.reduce((acc, i, k) => acc + i * strides[k]!, 0);

/**
 * Emit one verified cp.async.bulk `tile.apply` (PTX ISA "cp.async.bulk", "cp.reduce.async.bulk"):
 * the origins once, then one instruction per repeat index, fully unrolled in row-major repeat
 * order, each repeat's constant byte offset a displacement. Forms, with the plan's opcode spelling:
 *
 *     cp.async.bulk.{shared::cta|shared::cluster}.global.mbarrier::complete_tx::bytes{.L2::cache_hint}
 *         [dst32], [src64], size, [mbar32]{, policy64};
 *     cp.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint} [dst64], [src32], size{, policy64};
 *     cp.reduce.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint}.redOp{.noftz}.type
 *         [dst64], [src32], size{, policy64};
 *
 * `size` is the chunk in bytes (an immediate); `pred` becomes the guard `@%p`. Every thread that
 * executes the statement issues the copies; no commit, wait, fence or arrive is added.
 */
export function emitBulkCopy(ctx: EmitContext, ex: ExprEmitter, plan: BulkCopyPlan): void {
  const { opcode } = plan;
  const dst = origin(ctx, ex, plan.dst);
  const src = origin(ctx, ex, plan.src);
  const mbar = plan.mbar ? `, ${mbarOperand(ex, plan.mbar)}` : "";
  const policy = plan.cachePolicy ? `, ${ex.register(plan.cachePolicy)}` : "";
  const guard = plan.pred ? `@${ex.register(plan.pred)} ` : "";
  const hint = opcode.cacheHint ? ".L2::cache_hint" : "";
  const red = opcode.reduce;
  const name =
    opcode.direction === "g2s"
      ? `cp.async.bulk.${opcode.dstSpace}.global.mbarrier::complete_tx::bytes${hint}`
      : red
        ? `cp.reduce.async.bulk.global.shared::cta.bulk_group${hint}.${red.op}${red.noftz ? ".noftz" : ""}.${red.type}`
        : `cp.async.bulk.global.shared::cta.bulk_group${hint}`;
  for (const idx of repeatIndices(plan.repeatShape)) {
    const d = memRef(dst.reg, dst.disp + dot(idx, plan.dst.repeatStridesBytes));
    const s = memRef(src.reg, src.disp + dot(idx, plan.src.repeatStridesBytes));
    ctx.ins(`${guard}${name} ${d}, ${s}, ${plan.chunkBytes}${mbar}${policy}`);
  }
}
