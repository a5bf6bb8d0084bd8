import { dtypeBytes } from "../dtype.js";
import { binary, compare } from "../ir/arith.js";
import { constInt, intImm, type Expr } from "../ir/expr.js";
import { knownDivisor } from "../analysis/bounds.js";
import { isStaticShape, showShape, type View } from "../ir/buffer.js";
import type { Stmt } from "../ir/stmt.js";
import { showSwizzle, swizzleAtomBytes } from "../layout/swizzle.js";
import { tileDispatchError, viewRows, type TileContext, type TileLowering } from "./operand.js";
import { asArg, DST_SRC, type TilePrimitive } from "./primitive.js";
import {
  bulkFits,
  lowerBulk,
  lowerTma,
  type AsyncCopyOptions,
  type AsyncDirection,
} from "./copy-async-tma.js";
import { loopNest, scopeThreads } from "./threads.js";
import { viewAlignment } from "./tma-plan.js";

/** Bytes of one cp.async.cg chunk (PTX ISA, cp.async: `.cg` copies 16 bytes). */
const CHUNK = 16;
/** Chunk sizes, widest first (PTX ISA, cp.async: `.ca` copies 4, 8 or 16 bytes, `.cg` 16). */
const CHUNKS = [16, 8, 4] as const;

/** A view's element offset for a message: the number, or what is known of a runtime one. */
function showOffset(e: Expr): string {
  const c = constInt(e);
  if (c !== undefined) return String(c);
  const k = knownDivisor(e);
  return k > 1 ? `(a runtime value, a multiple of ${k})` : "(a runtime value)";
}

/** Non-unit extents of a view, in order. */
const bigDims = (v: View): number[] => v.shape.filter((n) => n !== 1);

/** dst, src, then the options { mbar, cta_mask, dispatch }. */
const OPERANDS = [...DST_SRC, { name: "options", kind: "options" }] as const;

/**
 * The cp.async (TIRx ldgsts) path: a shared view `d` ← a global view `s` of one shape and dtype
 * (rank ≤ 2 once extent-1 dims are dropped) by cp.async chunks (PTX ISA, cp.async; sm_80):
 * `cp.async.cg.shared.global` 16-byte chunks where every chunk provably starts 16-byte aligned
 * on both sides, else the widest `cp.async.ca.shared.global` chunk (8, then 4 bytes) that does
 * (explain says why 16 bytes could not be proven). A chunk size fits when each row is contiguous
 * (stride 1) on both sides and a whole number of chunks, both views' start offsets are multiples
 * of it (a constant offset, or a runtime one whose known divisor shows it; the buffer's alignment
 * caps it) and so are both row strides. The scope's threads share the chunks: chunk e = index +
 * n · j (n threads of the scope: 1, 32, 128 or the CTA's; index the lane, tid_in_wg or linear
 * tid), chunk e being row e / (chunks per row), so a warp writes consecutive chunks. The copies
 * join the thread's open cp.async group: commit and wait are the author's
 * (`T.ptx.cp.async_.commit_group()` / `wait_group(n)`), then a barrier of the scope before other
 * threads read. The destination's swizzle applies to each chunk, which it must keep whole.
 * @example a float16 [5, 24] tile of G [16, 40] at column 4 (offset 8-byte aligned): 8-byte .ca
 * @throws TirxError TX2022 for a row that is not contiguous, no chunk of 4, 8 or 16 bytes that
 *   the row length, start offsets (named) and row strides allow, or a swizzle that splits a
 *   chunk.
 */
function lowerLdgsts(d: View, s: View, ctx: TileContext): TileLowering {
  const eb = dtypeBytes(d.dtype);
  if (bigDims(d).length > 2) {
    throw tileDispatchError(
      ctx,
      `cp.async chunks rows of a view of rank ≤ 2 (extent-1 dims aside), ${d.buffer.name} is [${d.shape.join(", ")}]`,
      `one T.tile.copy_async per 2-D slice, or the TMA path (thread scope with { mbar })`,
    );
  }
  const dr = viewRows(d);
  const sr = viewRows(s);
  if (d.dtype !== s.dtype || dr.rows !== sr.rows || dr.cols !== sr.cols) {
    throw tileDispatchError(
      ctx,
      `copy_async moves bits between views of one shape: ${d.buffer.name} [${d.shape.join(", ")}] ${d.dtype}, ${s.buffer.name} [${s.shape.join(", ")}] ${s.dtype}`,
      `a view of ${s.buffer.name} of shape [${d.shape.join(", ")}] and dtype ${d.dtype}`,
    );
  }
  const rowBytes = dr.cols * eb;
  if (dr.colStride !== 1 || sr.colStride !== 1) {
    throw tileDispatchError(
      ctx,
      `cp.async copies contiguous bytes per chunk; the innermost dim is strided (${d.buffer.name} ${dr.colStride}, ${s.buffer.name} ${sr.colStride}), so a 16-byte chunk is not contiguous, nor a 4- or 8-byte one`,
      `rows contiguous on both sides (T.tile.copy through registers otherwise)`,
    );
  }
  // The widest chunk every row start and every row length allows (PTX ISA, cp.async: .cg
  // copies 16 bytes, .ca 4, 8 or 16; src and dst aligned to the chunk).
  const starts = [
    { v: d, align: viewAlignment(d), stride: dr.rowStride * eb },
    { v: s, align: viewAlignment(s), stride: sr.rowStride * eb },
  ];
  const fits = (c: number): string | undefined => {
    if (c < eb) return `a ${c}-byte chunk would split a ${d.dtype} element`;
    if (rowBytes % c !== 0)
      return `a row is ${rowBytes} bytes, not a whole number of ${c}-byte chunks`;
    for (const x of starts) {
      if (x.align % c !== 0) {
        return `${x.v.buffer.name}'s view starts at element offset ${showOffset(x.v.offset)}, only provably ${x.align}-byte aligned`;
      }
      if (dr.rows > 1 && x.stride % c !== 0) {
        return `${x.v.buffer.name}'s rows are ${x.stride} bytes apart, so a row after the first starts off a ${c}-byte boundary`;
      }
    }
    return undefined;
  };
  const chunk = CHUNKS.find((c) => fits(c) === undefined);
  if (chunk === undefined) {
    throw tileDispatchError(
      ctx,
      `cp.async copies chunks of 4, 8 or 16 contiguous bytes aligned to their size; ${fits(CHUNKS[CHUNKS.length - 1]!)}`,
      `views whose start offsets, row strides and row lengths are multiples of ${Math.max(1, 4 / eb)} × ${d.dtype} (4 bytes; 16 bytes for 16-byte .cg chunks), or T.tile.copy through registers`,
    );
  }
  const narrow = chunk < CHUNK ? fits(CHUNK) : undefined;
  const sw = d.buffer.layout;
  if (sw && sw.swizzleLen > 0 && swizzleAtomBytes(sw) < chunk) {
    throw tileDispatchError(
      ctx,
      `${d.buffer.name}'s ${showSwizzle(sw)} keeps only ${swizzleAtomBytes(sw)} bytes together and would split each ${chunk}-byte cp.async chunk`,
      `a swizzle with 16-byte atoms (per_element 3 for 16-bit elements)`,
    );
  }
  const per = chunk / eb;
  const cpr = rowBytes / chunk;
  const total = dr.rows * cpr;
  const { n, index } = scopeThreads(ctx);
  const reps = Math.ceil(total / n);
  const chunkView = (v: View, rowStride: number, e: Expr): View => {
    const row = binary("floordiv", e, intImm(cpr));
    const col = binary("floormod", e, intImm(cpr));
    const off = binary(
      "add",
      binary("add", v.offset, binary("mul", row, intImm(rowStride))),
      binary("mul", col, intImm(per)),
    );
    return { ...v, offset: off, shape: [per], strides: [1], axes: [""] };
  };
  const stmts = loopNest(ctx, [reps], (vars) => {
    const e = reps === 1 ? index : binary("add", index, binary("mul", vars[0]!, intImm(n)));
    // Past the last chunk a thread issues nothing (the guard below); its address is clamped so
    // that the views stay inside the operands for the verifier's bounds checks.
    const ce = total % n === 0 ? e : binary("min", e, intImm(total - 1));
    const copy: Stmt = {
      kind: "TileApply",
      opcode: chunk === CHUNK ? "cp.async.cg.shared.global" : "cp.async.ca.shared.global",
      dst: chunkView(d, dr.rowStride, ce),
      src: chunkView(s, sr.rowStride, ce),
      params: { chunk_bytes: chunk },
      ...(ctx.span ? { span: ctx.span } : {}),
    };
    if (total % n === 0) return [copy];
    return [
      {
        kind: "If",
        cond: compare("lt", e, intImm(total)),
        then: copy,
        ...(ctx.span ? { span: ctx.span } : {}),
      },
    ];
  });
  return {
    stmts,
    explain: `cp.async.${chunk === CHUNK ? "cg" : "ca"} ${chunk} B ×${reps} per thread (${total} chunks of ${per} × ${d.dtype} over ${n} threads${total % n === 0 ? "" : ", guarded"}): rows of ${d.buffer.name} and ${s.buffer.name} are contiguous and ${chunk}-byte aligned${narrow ? `; not 16-byte chunks (.cg) because ${narrow}` : ""}`,
  };
}

/**
 * `T.tile.copy_async(dst, src, options?)` at thread, warp, wg or cta scope (TIRx
 * `Tx.tile.copy_async`): an asynchronous copy between a shared and a global view of one dtype
 * and equal extents (extent-1 dims aside). Variants, in dispatch order:
 * 1. `{ dispatch }` (TIRx's option: "ldgsts", "tma" or "bulk") forces one;
 * 2. without `mbar`/`cta_mask`, global → shared: cp.async (ldgsts) chunks shared by the scope's
 *    threads (`lowerLdgsts`): 16-byte .cg, or 8- / 4-byte .ca where 16-byte alignment of the
 *    views' starts or rows cannot be proven;
 * 3. at thread scope (one elected thread: inside the author's `T.if_(tid.eq(0), ...)`), a load
 *    with `{ mbar }` (plus `cta_mask` to multicast) or any shared → global store: `cp.async.bulk`
 *    when both sides are one contiguous, 16-byte aligned run of whole 16-byte units and the
 *    shared side is unswizzled (no tensor map needed; `lowerBulk`), else TMA
 *    `cp.async.bulk.tensor` with a tensor map planned from the two views (`lowerTma`,
 *    `tma-plan.ts`). TIRx ranks ldgsts (20) over tma (10) where both apply; here `mbar` picks the
 *    mbarrier-completed variants, which ldgsts cannot use.
 * Completion is always the author's: commit/wait for cp.async, `mbarrier.arrive.expect_tx` and
 * a wait for loads, `cp.async.bulk.commit_group`/`wait_group` for stores.
 * @example T.if_(tid.eq(0), () => T.tile.copy_async(sA, A.sub(...), { mbar: bar.sub(0) }))
 * A global tensor with a symbolic dim takes TMA (its tensor map is encoded with the launch's
 * sizes); cp.async chunks and bulk copies, whose bounds are proved when the kernel is built,
 * refuse it.
 * @throws TirxError TX2022 for operands that are not one shared and one global view, dtypes or
 *   extents that differ, an unknown dispatch, cp.async or bulk from a tensor with a symbolic
 *   dim, and each variant's requirements.
 */
export const copy_async: TilePrimitive<typeof OPERANDS> = {
  name: "copy_async",
  doc: "shared ↔ global async copy: cp.async chunks over the scope's threads, or from one thread TMA / cp.async.bulk completing on { mbar }",
  scopes: ["thread", "warp", "wg", "cta"],
  operands: OPERANDS,
  options: ["mbar", "cta_mask", "dispatch"],
  lower: (args, ctx) => {
    const dst = asArg(args[0]);
    const src = asArg(args[1]);
    const o = (args[2] ?? {}) as AsyncCopyOptions;
    const shared = (v: View): boolean => v.buffer.scope.startsWith("shared");
    const dir: AsyncDirection | undefined =
      dst?.kind === "memory" && src?.kind === "memory"
        ? shared(dst.view) && src.view.buffer.scope === "global"
          ? "g2s"
          : dst.view.buffer.scope === "global" && shared(src.view)
            ? "s2g"
            : undefined
        : undefined;
    if (dir === undefined || dst?.kind !== "memory" || src?.kind !== "memory") {
      throw tileDispatchError(
        ctx,
        "copy_async copies between a global and a shared view (global → shared, or shared → global by TMA / bulk)",
        "T.tile.copy for register tiles",
      );
    }
    const d = dst.view;
    const s = src.view;
    const [sv, gv] = dir === "g2s" ? [d, s] : [s, d];
    const de = bigDims(d);
    const se = bigDims(s);
    if (d.dtype !== s.dtype || de.length !== se.length || de.some((n, k) => n !== se[k])) {
      throw tileDispatchError(
        ctx,
        `copy_async moves bits between views of one shape: ${d.buffer.name} [${d.shape.join(", ")}] ${d.dtype}, ${s.buffer.name} [${s.shape.join(", ")}] ${s.dtype}`,
        `a view of ${s.buffer.name} of shape [${d.shape.join(", ")}] and dtype ${d.dtype}`,
      );
    }
    const how = o.dispatch;
    if (how !== undefined && how !== "ldgsts" && how !== "tma" && how !== "bulk") {
      throw tileDispatchError(
        ctx,
        `dispatch must be "ldgsts", "tma" or "bulk", got ${JSON.stringify(how)}`,
        `{ dispatch: "tma" }`,
      );
    }
    const async = o.mbar !== undefined || o.cta_mask !== undefined || dir === "s2g";
    // cp.async chunks and bulk copies have their global bounds proved when the kernel is built;
    // a tensor with a symbolic dim has them only at launch, where a tensor map takes the sizes.
    const symbolic = isStaticShape(gv.buffer.shape)
      ? undefined
      : `${gv.buffer.name} has the symbolic shape ${showShape(gv.buffer.shape)}, and the ${how === "bulk" ? "bulk copy's" : "cp.async chunks'"} global bounds are proved when the kernel is built`;
    if (how === "ldgsts" || (how === undefined && !async)) {
      if (symbolic !== undefined) {
        throw tileDispatchError(
          ctx,
          symbolic,
          `T.tile.copy_async(${d.buffer.name}, ..., { mbar, dispatch: "tma" }) from one thread (a tensor map takes the launch's sizes), or a tensor of static shape`,
        );
      }
      if (dir === "s2g") {
        throw tileDispatchError(
          ctx,
          "cp.async (ldgsts) copies global → shared only; a shared → global copy is a TMA or bulk store",
          "T.tile.copy_async(global, shared) at thread scope inside T.if_(tid.eq(0), ...)",
        );
      }
      return lowerLdgsts(d, s, ctx);
    }
    if (how === "bulk") {
      if (symbolic !== undefined) {
        throw tileDispatchError(
          ctx,
          symbolic,
          `{ mbar, dispatch: "tma" } (a tensor map takes the launch's sizes)`,
        );
      }
      return lowerBulk(dir, sv, gv, o, ctx);
    }
    if (
      how === undefined &&
      o.cta_mask === undefined &&
      symbolic === undefined &&
      bulkFits(sv, gv)
    ) {
      return lowerBulk(dir, sv, gv, o, ctx);
    }
    return lowerTma(dir, sv, gv, o, ctx);
  },
};
