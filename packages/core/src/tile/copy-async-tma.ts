import { dtypeBytes } from "../dtype.js";
import { isExpr, isView } from "../visit.js";
import { numel, rowMajorStrides, type View } from "../ir/buffer.js";
import { tensorView } from "../layout/view.js";
import { intImm, type Expr } from "../ir/expr.js";
import type { Stmt, TileParam } from "../ir/stmt.js";
import { tileDispatchError, type TileContext, type TileLowering } from "./operand.js";
import { planTma, viewAlignment } from "./tma-plan.js";
import { withArticle } from "../show.js";

/** TMA and bulk copies need sm_90 (PTX ISA, cp.async.bulk / cp.async.bulk.tensor). */
const SM_TMA = 90;

/** The options of `copy_async` on its TMA and bulk paths, as the record reads them. */
export interface AsyncCopyOptions {
  /** The mbarrier a load completes on: a one-element uint64 shared view or a pointer Expr. */
  readonly mbar?: View | Expr;
  /** Multicast: uint16 mask of the cluster's CTA ranks the load writes to (TIRx `cta_mask`). */
  readonly cta_mask?: Expr | number;
  /** Force a variant: "ldgsts" (cp.async), "tma" or "bulk" (TIRx `dispatch`). */
  readonly dispatch?: "ldgsts" | "tma" | "bulk";
}

/** The direction of a copy between a shared and a global view. */
export type AsyncDirection = "g2s" | "s2g";

function applyStmt(
  opcode: string,
  dst: View,
  src: View,
  params: Record<string, TileParam>,
  ctx: TileContext,
): Stmt {
  return {
    kind: "TileApply",
    opcode,
    dst,
    src,
    params,
    ...(ctx.span ? { span: ctx.span } : {}),
  };
}

function ctaMaskExpr(m: Expr | number | undefined, ctx: TileContext): Expr | undefined {
  if (m === undefined) return undefined;
  if (typeof m === "number") {
    if (!Number.isInteger(m) || m < 1 || m > 0xffff) {
      throw tileDispatchError(
        ctx,
        `cta_mask must be a uint16 mask of CTA ranks (1..65535), got ${m}`,
        "{ cta_mask: T.uint16(0b11) }",
      );
    }
    return intImm(m, "uint16");
  }
  if (isExpr(m) && m.dtype === "uint16") return m;
  throw tileDispatchError(
    ctx,
    `cta_mask must be a uint16 (a number or a uint16 expression), got ${isExpr(m) ? m.dtype : typeof m}`,
    "{ cta_mask: T.uint16(0b11) }",
  );
}

function checkCommon(shared: View, global: View, ctx: TileContext, what: string): void {
  if (ctx.scope !== "thread") {
    throw tileDispatchError(
      ctx,
      `${what} is issued by one thread: call T.tile.copy_async inside T.if_(tid == 0) at thread scope`,
      `T.if_(tid.eq(0), () => T.tile.copy_async(dst, src, { mbar }))`,
    );
  }
  if (ctx.sm !== undefined && ctx.sm < SM_TMA) {
    throw tileDispatchError(
      ctx,
      `${what} needs sm_90, the target is sm_${ctx.sm}`,
      "the cp.async path: T.tile.warp.copy_async(dst, src) without mbar",
    );
  }
  for (const v of [shared, global]) {
    if (v.dtype !== v.buffer.dtype) {
      throw tileDispatchError(
        ctx,
        `${what} moves ${v.buffer.name}'s own elements (${v.buffer.dtype}), not ${withArticle(v.dtype)} reinterpretation`,
        `a view of ${v.buffer.name} in ${v.buffer.dtype}`,
      );
    }
  }
}

/**
 * True when `v`'s dims of extent > 1 are one contiguous row-major run (and it is 16-byte
 * aligned and a whole number of 16-byte units): a `cp.async.bulk` can move it.
 */
function oneRun(v: View): boolean {
  const big = v.shape.flatMap((n, d) => (n === 1 ? [] : [d]));
  const shape = big.map((d) => v.shape[d]!);
  const dense = rowMajorStrides(shape).every((s, k) => s === v.strides[big[k]!]);
  const bytes = numel(v.shape) * dtypeBytes(v.dtype);
  return dense && bytes % 16 === 0 && viewAlignment(v) % 16 === 0;
}

/** True when the bulk path serves the copy: both sides one run, the shared side unswizzled. */
export function bulkFits(shared: View, global: View): boolean {
  const l = shared.buffer.layout;
  return oneRun(shared) && oneRun(global) && (!l || l.swizzleLen === 0);
}

function mbarOf(o: AsyncCopyOptions, ctx: TileContext, what: string): View | Expr {
  const m = o.mbar;
  if (m !== undefined && ((isView(m) && numel(m.shape) === 1) || isExpr(m))) return m;
  throw tileDispatchError(
    ctx,
    m === undefined
      ? `a global → shared ${what} completes on an mbarrier: pass { mbar }`
      : `mbar must be one mbarrier (a one-element uint64 shared view such as bar.sub(0), or bar.ptr([0]))`,
    `T.tile.copy_async(dst, src, { mbar: bar.sub(0) }) after T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), bytes)`,
  );
}

/**
 * The TMA path of `copy_async` (TIRx copy_async → tma): `cp.async.bulk.tensor` issues of one
 * tensor map planned from the two views ({@link planTma}; a second map for the narrower last box
 * of a dim cut into 256-element or swizzle-span boxes, 264 rows as 256 + 8), global → shared completing on the
 * caller's mbarrier (`.mbarrier::complete_tx::bytes`; `.multicast::cluster` with `cta_mask`) or
 * shared → global in the thread's bulk group (`.bulk_group`: the author commits and waits, and
 * fences the shared writes with `T.ptx.fence.proxy_async()` first). No completion op is emitted:
 * the author's one `mbarrier.arrive.expect_tx(mbar, bytes)` covers every issue (explain states the
 * bytes; a wrong count is the simulator's TX4008 report).
 * @throws TirxError TX2022 (scope, target, dtype, missing mbar, cta_mask on a store, plan).
 */
export function lowerTma(
  dir: AsyncDirection,
  shared: View,
  global: View,
  o: AsyncCopyOptions,
  ctx: TileContext,
): TileLowering {
  checkCommon(shared, global, ctx, "TMA");
  const mbar = dir === "g2s" ? mbarOf(o, ctx, "TMA") : undefined;
  const mask = ctaMaskExpr(o.cta_mask, ctx);
  if (mask && dir === "s2g") {
    throw tileDispatchError(
      ctx,
      "cta_mask multicasts a load to the CTAs of a cluster; a TMA store has no multicast",
      "T.tile.copy_async(global, shared) without cta_mask",
    );
  }
  if (mask && !ctx.launch.cluster) {
    throw tileDispatchError(
      ctx,
      "cta_mask multicasts to the CTAs of a cluster, but the launch has no cluster",
      "T.cuda.LaunchConfig({ ..., cluster: [2, 1, 1] })",
    );
  }
  const plan = planTma(shared, global, ctx);
  const R = plan.map.box.length;
  const opcode =
    dir === "g2s"
      ? `cp.async.bulk.tensor.${R}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes${mask ? ".multicast::cluster" : ""}`
      : `cp.async.bulk.tensor.${R}d.global.shared::cta.tile.bulk_group`;
  const whole = tensorView(global.buffer, ctx.span);
  const stmts = plan.issues.map((is) => {
    const params: Record<string, TileParam> = {
      tensor_map: is.map,
      coords: is.coords,
      ...(mbar ? { mbar } : {}),
      ...(mask ? { cta_mask: mask } : {}),
    };
    return dir === "g2s"
      ? applyStmt(opcode, is.shared, whole, params, ctx)
      : applyStmt(opcode, whole, is.shared, params, ctx);
  });
  const n = plan.issues.length;
  const box = `[${plan.map.box.join(", ")}] of ${plan.map.name}${plan.tailMap ? ` and a last box [${plan.tailMap.box.join(", ")}] of ${plan.tailMap.name}` : ""}`;
  const tail =
    dir === "s2g"
      ? `${plan.totalBytes} B in the thread's bulk group (commit/wait are the author's)`
      : mask
        ? `${plan.totalBytes} B into each CTA of cta_mask, completing on its mbarrier there (its expect_tx counts every multicast into that CTA; no completion op emitted)`
        : `completing ${plan.totalBytes} B on the caller's mbarrier (expect_tx ${plan.totalBytes}; no completion op emitted)`;
  return {
    stmts,
    explain: `TMA cp.async.bulk.tensor.${R}d ×${n}${mask ? " multicast" : ""} (box ${box}, ${plan.map.swizzle === "none" ? "unswizzled" : `${plan.map.swizzle} swizzle`} as ${shared.buffer.name}'s layout${n > 1 ? `, ${n} boxes at their shared offsets` : ""}), ${tail}`,
  };
}

/**
 * The bulk path of `copy_async` (PTX ISA cp.async.bulk; sm_90): one non-tensor bulk copy of a
 * contiguous run, global → shared completing on the caller's mbarrier
 * (`cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes`), or shared → global in the
 * bulk group (`cp.async.bulk.global.shared::cta.bulk_group`). No tensor map.
 * @throws TirxError TX2022 (scope, target, dtype, missing mbar, not one 16-byte-aligned run of
 *   whole 16-byte units, a swizzled shared side, cta_mask).
 */
export function lowerBulk(
  dir: AsyncDirection,
  shared: View,
  global: View,
  o: AsyncCopyOptions,
  ctx: TileContext,
): TileLowering {
  checkCommon(shared, global, ctx, "a bulk copy");
  const mbar = dir === "g2s" ? mbarOf(o, ctx, "bulk copy") : undefined;
  if (o.cta_mask !== undefined) {
    throw tileDispatchError(
      ctx,
      "cta_mask (multicast) is served by the TMA path",
      '{ dispatch: "tma" }',
    );
  }
  if (!bulkFits(shared, global)) {
    throw tileDispatchError(
      ctx,
      `cp.async.bulk copies one contiguous run of whole 16-byte units, 16-byte aligned, into unswizzled shared memory; ${shared.buffer.name} [${shared.shape.join(", ")}] / ${global.buffer.name} [${global.shape.join(", ")}] are not that`,
      `the TMA path ({ dispatch: "tma" }, or no dispatch option)`,
    );
  }
  const n = numel(shared.shape);
  const bytes = n * dtypeBytes(shared.dtype);
  const flat = (v: View): View => ({ ...v, shape: [n], strides: [1], axes: [""] });
  const stmt =
    dir === "g2s"
      ? applyStmt(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
          flat(shared),
          flat(global),
          { chunk_bytes: bytes, mbar: mbar! },
          ctx,
        )
      : applyStmt(
          "cp.async.bulk.global.shared::cta.bulk_group",
          flat(global),
          flat(shared),
          { chunk_bytes: bytes },
          ctx,
        );
  return {
    stmts: [stmt],
    explain:
      dir === "g2s"
        ? `bulk cp.async.bulk ×1 (${bytes} B, both sides one contiguous run, unswizzled: no tensor map), completing on the caller's mbarrier (expect_tx ${bytes}; no completion op emitted)`
        : `bulk cp.async.bulk ×1 (${bytes} B, both sides one contiguous run: no tensor map), in the thread's bulk group (commit/wait are the author's)`,
  };
}
