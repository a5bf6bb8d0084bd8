import {
  dtypeBytes,
  invariant,
  tilePlanRecord,
  walkStmt,
  type Stmt,
  type TensorMap,
  type TmaPlan,
} from "@tirx-ts/core";
import { elementRef } from "../emit/address.js";
import type { EmitContext } from "../emit/context.js";
import type { ExprEmitter } from "../emit/expr.js";
import { mbarOperand } from "../emit/intrinsic.js";

/**
 * The tensor maps the tile instructions of `body` read (core `TilePlanRecord.tensorMap`: the TMA
 * copies), in first-use order: each becomes one
 * `.param .align 128 .b8 NAME[128]` entry parameter after the declared ones (what nvcc emits for
 * a `const __grid_constant__ CUtensorMap` parameter), and the runtime passes the encoded map there.
 */
export function tensorMapsOf(body: Stmt): TensorMap[] {
  const out: TensorMap[] = [];
  const seen = new Set<number>();
  walkStmt(body, (s) => {
    const m = s.kind === "TileOp" ? tilePlanRecord(s.plan).tensorMap(s.plan) : undefined;
    if (m && !seen.has(m.id)) {
      seen.add(m.id);
      out.push(m);
    }
  });
  return out;
}

/** The generic address of each tensor-map parameter, by map id, set by the entry prologue. */
const MAP_REGS = new WeakMap<EmitContext, Map<number, string>>();

/**
 * Declare the parameter of map `m` named `pname` and take its generic address once in the
 * prologue (`mov.b64 %rd, param; cvta.param.u64 %rd, %rd`, as nvcc does for a
 * `__grid_constant__` map). Returns the `.param` declaration.
 */
export function declareTensorMap(ctx: EmitContext, m: TensorMap, pname: string): string {
  const raw = ctx.regs.fresh("rd");
  const addr = ctx.regs.fresh("rd");
  ctx.pro(`mov.b64 ${raw}, ${pname}`);
  ctx.pro(`cvta.param.u64 ${addr}, ${raw}`);
  let regs = MAP_REGS.get(ctx);
  if (!regs) MAP_REGS.set(ctx, (regs = new Map()));
  regs.set(m.id, addr);
  return `.param .align 128 .b8 ${pname}[128]`;
}

/**
 * Emit one verified TMA `tile.apply` (PTX ISA "cp.async.bulk.tensor",
 * "cp.async.bulk.prefetch.tensor"). Coordinates are given outermost first and emitted innermost
 * first (PTX's `tensorCoords` order). Forms:
 *
 *     cp.async.bulk.tensor.Nd.{shared::cluster|shared::cta}.global.tile.mbarrier::complete_tx::bytes{.multicast::cluster}{.L2::cache_hint}
 *         [dst32], [tmap, {c0, ...}], [mbar32]{, ctaMask16}{, policy64};
 *     cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group{.L2::cache_hint} [tmap, {c0, ...}], [src32]{, policy64};
 *     cp.async.bulk.prefetch.tensor.Nd.L2.global.tile{.L2::cache_hint} [tmap, {c0, ...}]{, policy64};
 *     prefetch.tensormap [tmap];
 *
 * `pred` becomes the guard `@%p`. Nothing else (commit, wait, fence, expect_tx) is added.
 */
export function emitTmaCopy(ctx: EmitContext, ex: ExprEmitter, plan: TmaPlan): void {
  const { opcode } = plan;
  const tmap = MAP_REGS.get(ctx)?.get(plan.map.id);
  invariant(tmap, () => `tensor map "${plan.map.name}" has no parameter`);
  if (opcode.direction === "descriptor") {
    const g = plan.pred ? `@${ex.register(plan.pred)} ` : "";
    ctx.ins(`${g}prefetch.tensormap [${tmap}]`);
    return;
  }
  const coords = [...plan.coords].reverse().map((c) => ex.register(c));
  const tensor = `[${tmap}, {${coords.join(", ")}}]`;
  const policy = plan.cachePolicy ? `, ${ex.register(plan.cachePolicy)}` : "";
  const guard = plan.pred ? `@${ex.register(plan.pred)} ` : "";
  const hint = opcode.cacheHint ? ".L2::cache_hint" : "";
  const nd = `${opcode.rank}d`;
  const shared = (side: TmaPlan["dst"]): string =>
    elementRef(ctx, ex, side.buffer, side.view.offset, dtypeBytes(side.view.dtype)).ref;
  if (opcode.direction === "g2s") {
    const mc = opcode.multicast ? ".multicast::cluster" : "";
    const mask = plan.ctaMask ? `, ${ex.register(plan.ctaMask)}` : "";
    ctx.ins(
      `${guard}cp.async.bulk.tensor.${nd}.${opcode.dstSpace}.global.tile.mbarrier::complete_tx::bytes${mc}${hint} ${shared(plan.dst)}, ${tensor}, ${mbarOperand(ex, plan.mbar!)}${mask}${policy}`,
    );
  } else if (opcode.direction === "s2g") {
    ctx.ins(
      `${guard}cp.async.bulk.tensor.${nd}.global.shared::cta.tile.bulk_group${hint} ${tensor}, ${shared(plan.src)}${policy}`,
    );
  } else {
    ctx.ins(`${guard}cp.async.bulk.prefetch.tensor.${nd}.L2.global.tile${hint} ${tensor}${policy}`);
  }
}
