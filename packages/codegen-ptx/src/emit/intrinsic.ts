import {
  constInt,
  dtypeBits,
  findOp,
  invariant,
  type Call,
  type CallExpr,
  type DType,
  type Expr,
  type LowerCtx,
  type OpDef,
  type Span,
} from "@tirx-ts/core";
import { elemBytes } from "../types.js";
import { elementRef, memRef } from "./address.js";
import type { ValueEmitter } from "./value-emitter.js";
import { fragmentOperand } from "./fragment.js";

/**
 * The memory operand of an mbarrier object: a `BufferPtr` into a shared uint64 buffer (offset in
 * elements of the buffer's dtype) becomes `[base]`, `[base+disp]` or `[%r+disp]` with a 32-bit
 * shared address; any other uint32 expression is used as the address itself.
 */
export function mbarOperand(ex: ValueEmitter, e: Expr): string {
  if (e.kind === "BufferPtr") {
    return elementRef(ex.ctx, ex, e.buffer, e.offset, elemBytes(e.buffer.dtype)).ref;
  }
  return memRef(ex.register(e), 0);
}

/** An op call's operands as PTX text, per its record's operand kinds, and their state spaces. */
function operands(
  ex: ValueEmitter,
  op: OpDef,
  args: readonly Expr[],
  span?: Span,
  packed?: PackedFragments,
): {
  ops: string[];
  spaces: ("global" | "shared")[];
  dts: DType[];
  after: string[];
  guard?: string;
} {
  const spaces: ("global" | "shared")[] = [];
  const after: string[] = [];
  const dts: DType[] = [];
  let guard: string | undefined;
  const ops = op.operands.map((spec, i) => {
    const a = args[i]!;
    dts.push(a.dtype);
    spaces.push("global");
    switch (spec.kind) {
      case "static":
        return String(constInt(a));
      case "mbarrier":
        spaces[i] = "shared";
        return mbarOperand(ex, a);
      case "address": {
        if (a.kind !== "BufferPtr") return memRef(ex.register(a), 0);
        dts[i] = a.buffer.dtype;
        // An atomic's address is guarded under checkBounds like a load or store.
        const check =
          op.family === "atomic"
            ? { verb: "atomically updates" as const, ...(span ? { span } : {}) }
            : undefined;
        const at = elementRef(ex.ctx, ex, a.buffer, a.offset, elemBytes(a.buffer.dtype), check);
        spaces[i] = at.space === "shared" ? "shared" : "global";
        guard ??= at.guard;
        return at.ref;
      }
      case "value":
        return ex.value(a);
      case "fragment": {
        if (a.kind === "BufferPtr") dts[i] = a.buffer.dtype;
        const early = packed?.get(i);
        if (early !== undefined) return early;
        const f = fragmentOperand(ex.ctx, spec, a, op.surface);
        after.push(...f.after);
        return f.text;
      }
    }
  });
  return guard ? { ops, spaces, dts, after, guard } : { ops, spaces, dts, after };
}

/** Fragment operands of one call packed ahead of it: operand index → the `{%r…}` text. */
export type PackedFragments = ReadonlyMap<number, string>;

/**
 * Pack the read-only fragment operands of statement op call `s` now (the `mov.b32 %r, {lo, hi}`
 * of 16-bit elements), for its emission later through {@link emitIntrinsic}. A `wgmma.fence`
 * orders register writes before it against the mma_asyncs after it (PTX ISA, wgmma.fence):
 * register A operands packed after the fence are writes ptxas must order again, so it injects a
 * `warpgroup.arrive` before each such wgmma (C7519). Packing them all before the fence avoids
 * that. Operands the op writes are not packed early (their unpacking follows the op).
 */
export function packFragments(ex: ValueEmitter, s: Call): PackedFragments {
  const op = verifiedOp(s.op, "stmt");
  const out = new Map<number, string>();
  op.operands.forEach((spec, i) => {
    if (spec.kind !== "fragment" || spec.access !== "read") return;
    const f = fragmentOperand(ex.ctx, spec, s.args[i]!, op.surface);
    invariant(f.after.length === 0, () => `read-only fragment of ${op.surface} unpacks after`);
    out.set(i, f.text);
  });
  return out;
}

/** The code generator as an op lowering sees it. */
export function lowerCtx(ex: ValueEmitter, spaces: readonly ("global" | "shared")[]): LowerCtx {
  const ctx = ex.ctx;
  return {
    ins: (line) => ctx.ins(line),
    tmp: (dt) => ctx.reg(dt),
    label: (name) => ctx.label(name),
    newLabel: (hint) => ctx.newLabels(hint)[0],
    space: (i) => spaces[i] ?? "global",
    toReg: (op, dt) => ex.toReg(op, dt),
  };
}

/** The record of op `name` of form `form`, which the verifier found in the table (TX2010). */
function verifiedOp(name: string, form: OpDef["form"]): OpDef {
  const op = findOp(name);
  invariant(op?.form === form, () => `${form} op "${name}" is not in the op table`);
  return op;
}

/** Emit a statement op through its record's lowering. The verifier checked its operands. */
export function emitIntrinsic(ex: ValueEmitter, s: Call, packed?: PackedFragments): void {
  const op = verifiedOp(s.op, "stmt");
  const { ops, spaces, dts, after, guard } = operands(ex, op, s.args, s.span, packed);
  // A guarded op whose address is out of range is branched around.
  const skip = guard ? skipUnless(ex, guard) : undefined;
  op.lower(lowerCtx(ex, spaces), "", ops, dts, undefined);
  for (const line of after) ex.ctx.ins(line);
  if (skip) ex.ctx.label(skip);
}

/**
 * A value op split in two: `prepare` computes the operands (so that a spin loop can do it once,
 * before its label), `issue` emits the instructions and returns the result register.
 */
export function prepareValueIntrinsic(ex: ValueEmitter, e: CallExpr): { issue(): string } {
  const op = verifiedOp(e.op, "value");
  const { ops, spaces, dts, guard } = operands(ex, op, e.args, e.span);
  return {
    issue(): string {
      const d = ex.ctx.reg(e.dtype);
      let skip: string | undefined;
      if (guard) {
        // Skipped when out of range: the result reads as 0.
        ex.ctx.ins(`mov.b${dtypeBits(e.dtype)} ${d}, 0`);
        skip = skipUnless(ex, guard);
      }
      op.lower(lowerCtx(ex, spaces), d, ops, dts, e.dtype);
      if (skip) ex.ctx.label(skip);
      return d;
    },
  };
}

/** `@!guard bra` to a fresh label, returned for the caller to place after the guarded code. */
function skipUnless(ex: ValueEmitter, guard: string): string {
  const [skip] = ex.ctx.newLabels("skip");
  ex.ctx.ins(`@!${guard} bra ${skip}`);
  return skip;
}
