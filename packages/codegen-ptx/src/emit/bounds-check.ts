import {
  exprRange,
  isStaticShape,
  numel,
  dtypeBytes,
  type Buffer,
  type Expr,
  type Span,
} from "@tirx-ts/core";
import type { EmitContext } from "./context.js";
import type { BoundsSite } from "./bounds-site.js";

/**
 * The module-scope record of the first out-of-range access of a `checkBounds` kernel
 * (`.global .u32 tirx_oob[10]`, 8-byte aligned), in 32-bit words: 0 a flag (0 until an access
 * is out of range, set with `atom.cas`), 1 the site (an index into `PtxModule.boundsSites`),
 * 2–4 `%tid.x/y/z`, 5–7 `%ctaid.x/y/z`, and at byte 32 the access's byte offset from the
 * buffer's start as a signed 64-bit integer (for an axis guard, `BoundsSite.axis`, the index
 * instead). The runtime reads it after the launch.
 */
export const OOB_RECORD = "tirx_oob";

/** Size of {@link OOB_RECORD}, bytes. */
export const OOB_RECORD_BYTES = 40;

export type { BoundsSite };

/**
 * Whether an access to `buffer` at element `offset` gets a bounds guard under `checkBounds`:
 * the buffer has a static shape (a symbolic one's accesses are proven by the verifier, TX2006)
 * and range analysis cannot bound the index on some side (a data-dependent index such as a
 * gather's `A[idx[i]]`, or one built from a scalar parameter). Indices bounded on both sides were
 * checked against the extent by the verifier, so they get no guard.
 */
export function needsGuard(ctx: EmitContext, buffer: Buffer, offset: Expr): boolean {
  if (!ctx.checkBounds || !isStaticShape(buffer.shape)) return false;
  const r = exprRange(offset, ctx.rangeEnv());
  return r.min === -Infinity || r.max === Infinity;
}

/**
 * Emit the guard of one access whose byte offset from the buffer's start is the 64-bit register
 * `rel`: a predicate that is true when the access lies inside the buffer. When it is false, the
 * first such thread in the launch (`atom.global.cas` on the record's flag) writes the site, its
 * thread and CTA, and `rel` into {@link OOB_RECORD}. The caller predicates the access on the
 * result, so an out-of-range access is skipped.
 */
export function emitGuard(
  ctx: EmitContext,
  buffer: Buffer,
  rel: string,
  site: Omit<BoundsSite, "buffer" | "bufferBytes" | "declared">,
): string {
  const bufferBytes = numel(buffer.shape as readonly number[]) * dtypeBytes(buffer.dtype);
  const id = ctx.boundsSites.length;
  ctx.boundsSites.push({
    ...site,
    buffer: buffer.name,
    bufferBytes,
    ...(buffer.span ? { declared: buffer.span } : {}),
  });
  const ok = ctx.reg("bool");
  // Unsigned: a negative offset is a huge one.
  ctx.ins(`setp.lt.u64 ${ok}, ${rel}, ${Math.max(bufferBytes - site.accessBytes + 1, 0)}`);
  recordFirst(ctx, ok, id, () => rel);
  return ok;
}

/**
 * Where predicate `ok` is false: the first such thread in the launch (`atom.global.cas` on the
 * record's flag) writes site `id`, its thread and CTA, and the 64-bit register `value()` emits
 * (a byte offset, or an axis guard's index) into {@link OOB_RECORD}. Branched around where `ok`.
 */
export function recordFirst(ctx: EmitContext, ok: string, id: number, value: () => string): void {
  const [inside] = ctx.newLabels("in_bounds");
  ctx.ins(`@${ok} bra ${inside}`);
  const old = ctx.regs.fresh("r");
  ctx.ins(`atom.global.cas.b32 ${old}, [${OOB_RECORD}], 0, 1`);
  const first = ctx.reg("bool");
  ctx.ins(`setp.eq.u32 ${first}, ${old}, 0`);
  ctx.ins(`@${first} st.global.u32 [${OOB_RECORD}+4], ${id}`);
  const who = ["tid.x", "tid.y", "tid.z", "ctaid.x", "ctaid.y", "ctaid.z"] as const;
  who.forEach((s, i) =>
    ctx.ins(`@${first} st.global.u32 [${OOB_RECORD}+${8 + 4 * i}], ${ctx.special(s)}`),
  );
  ctx.ins(`@${first} st.global.u64 [${OOB_RECORD}+32], ${value()}`);
  ctx.label(inside);
}
