import {
  constInt,
  dtypeBits,
  type AccessIndex,
  type Buffer,
  type Expr,
  type Span,
} from "@tirx-ts/core";
import { andPred, emitAxisGuards, type ArmCondition } from "./axis-guard.js";
import { cvtType } from "../types.js";
import type { EmitContext } from "./context.js";
import type { ValueEmitter } from "./value-emitter.js";
import { emitGuard, needsGuard, type BoundsSite } from "./bounds-check.js";
import { indexBits, widenIndex } from "./index-width.js";
import { exprKey } from "./key.js";

/** `[reg]`, `[reg+16]` or `[reg+-16]` (nvcc's spelling of a negative displacement). */
export function memRef(reg: string, offset: number): string {
  return offset === 0 ? `[${reg}]` : `[${reg}+${offset}]`;
}

/**
 * Split `e` into a runtime part and a constant addend, so constants become displacements: terms
 * of additions (subtractions of a constant, products with a constant distributed over them) that
 * are constants here (after unrolling) are summed; the others are added up in their order, each
 * times its constant factor. `(tid * 2 + 1) * 2 + 1` is `tid * 4` plus 3.
 */
function splitConst(ctx: EmitContext, e: Expr): { dyn?: Expr; c: number } {
  const terms: { x: Expr; f: bigint }[] = [];
  let c = 0n;
  // Terms in their order from an explicit stack (left operand on top): any depth is safe.
  const work: [Expr, bigint][] = [[e, 1n]];
  while (work.length > 0) {
    const [x, f] = work.pop()!;
    const k = ctx.staticInt(x);
    if (k !== undefined) {
      c += f * k;
      continue;
    }
    if (x.kind === "Binary" && x.op === "add") {
      work.push([x.b, f], [x.a, f]);
      continue;
    }
    const kb = x.kind === "Binary" ? ctx.staticInt(x.b) : undefined;
    const ka = x.kind === "Binary" ? ctx.staticInt(x.a) : undefined;
    if (x.kind === "Binary" && x.op === "sub" && kb !== undefined) {
      work.push([x.a, f]);
      c -= f * kb;
    } else if (x.kind === "Binary" && x.op === "mul" && (kb ?? ka) !== undefined) {
      work.push([kb !== undefined ? x.a : x.b, f * (kb ?? ka)!]);
    } else terms.push({ x, f });
  }
  const dyn = terms
    .map(({ x, f }): Expr =>
      f === 1n
        ? x
        : {
            kind: "Binary",
            op: "mul",
            a: x,
            b: { kind: "IntImm", value: Number(f), dtype: e.dtype },
            dtype: e.dtype,
          },
    )
    .reduce<Expr | undefined>(
      (acc, t) => (acc ? { kind: "Binary", op: "add", a: acc, b: t, dtype: e.dtype } : t),
      undefined,
    );
  return dyn ? { dyn, c: Number(c) } : { c: Number(c) };
}

/** A 32-bit register (or immediate) holding the integer `op` of `e`'s dtype. */
export function to32(ctx: EmitContext, op: string, e: Expr, signed = true): string {
  const bits = dtypeBits(e.dtype);
  if (bits === 32) return op;
  const r = ctx.regs.fresh("r");
  ctx.ins(`cvt.${signed ? "s" : "u"}32.${cvtType(e.dtype)} ${r}, ${op}`);
  return r;
}

/** An element's address: register plus constant displacement, and the `[reg+disp]` operand. */
export interface ElementRef {
  readonly space: "global" | "shared" | "local";
  readonly reg: string;
  readonly disp: number;
  readonly ref: string;
  /**
   * Under `checkBounds`, for an access the verifier could not bound (its flat offset, or an
   * author index it left to the run): a predicate true when the access is inside the buffer and
   * each such index inside its axis. Predicate the access on it (see `bounds-check.ts`,
   * `axis-guard.ts`).
   */
  readonly guard?: string;
}

/** What a plain load or store tells {@link elementRef} for its guards under `checkBounds`. */
export interface AccessCheck {
  readonly verb: BoundsSite["verb"];
  readonly span?: Span;
  /** The access's author indices left to the run (core's `axis-checks` pass), if any. */
  readonly index?: AccessIndex;
  /** The arms of the selects the access is in (see `ArmCondition`). */
  readonly arms?: readonly ArmCondition[];
}

/** Peel constant factors off `e`: `(x * 2048) * 4` is `x` scaled by 8192. */
function peelScale(e: Expr, scale: number): { e: Expr; scale: number } {
  while (e.kind === "Binary" && e.op === "mul") {
    const cb = constInt(e.b);
    const ca = constInt(e.a);
    const c = cb ?? ca;
    const next = c === undefined || c <= 0 ? undefined : scale * c;
    if (next === undefined || Math.abs(next) >= 2 ** 31) break;
    e = cb !== undefined ? e.a : e.b;
    scale = next;
  }
  return { e, scale };
}

/**
 * The sub-expression of `offset` that {@link elementRef} computes through `emit` once constant
 * terms and factors come off, when it is a node of `offset` itself: `i` for `i + 3` or `i * 4`,
 * `offset` for `i % 4`. Undefined when it computes none, or one it builds (several terms, a
 * widened 64-bit index). Nothing is emitted.
 */
export function addressOperand(
  ctx: EmitContext,
  buffer: Buffer,
  offset: Expr,
  elemBytes: number,
): Expr | undefined {
  if (buffer.scope === "global" && indexBits(buffer, ctx.wideSymbolic) === 64) return undefined;
  const { dyn } = splitConst(ctx, offset);
  if (!dyn) return undefined;
  const { e } = peelScale(dyn, elemBytes);
  // Terms and factors are found down the sums and products from `offset`: look there.
  const work: Expr[] = [offset];
  while (work.length > 0) {
    const x = work.pop()!;
    if (x === e) return e;
    if (x.kind === "Binary" && (x.op === "add" || x.op === "sub" || x.op === "mul")) {
      work.push(x.a, x.b);
    }
  }
  return undefined;
}

/**
 * Address of element `offset` (counted in `elemBytes`-byte elements) of `buffer`, as a memory
 * operand, with its state space. Constant addends become the displacement and constant factors
 * fold into the element size. Shared addresses are 32-bit (`mad.lo.s32`); global and local ones
 * 64-bit (`mad.wide` of the 32-bit index onto the base). A global tensor addressed with 64-bit
 * offsets ({@link indexBits}) has its whole index widened to int64 first (`mad.lo.s64`), and a
 * displacement outside the signed 32-bit range of a PTX address operand is added to the register.
 * An address already computed in an enclosing scope is reused. With `check` (a plain load or
 * store) under `checkBounds`, an offset the verifier could not bound gets a guard, and so does
 * each author index it left to the run (`check.index`), after the address and before the
 * offset's guard (`ElementRef.guard`, the conjunction).
 */
export function elementRef(
  ctx: EmitContext,
  ex: ValueEmitter,
  buffer: Buffer,
  offset: Expr,
  elemBytes: number,
  check?: AccessCheck,
): ElementRef {
  const base = ctx.bufferBase(buffer);
  const wide = base.space === "global" && indexBits(buffer, ctx.wideSymbolic) === 64;
  const { dyn: whole, c } = splitConst(ctx, wide ? widenIndex(offset) : offset);
  const at = (reg: string): ElementRef => {
    let disp = c * elemBytes;
    if (disp < -(2 ** 31) || disp >= 2 ** 31) {
      const r = ctx.regs.fresh("rd");
      ctx.ins(`add.s64 ${r}, ${reg}, ${disp}`);
      reg = r;
      disp = 0;
    }
    return { space: base.space, reg, disp, ref: memRef(reg, disp) };
  };
  const axes = (): string | undefined =>
    check?.index === undefined
      ? undefined
      : emitAxisGuards(ctx, ex, buffer, check.index, {
          verb: check.verb,
          accessBytes: elemBytes,
          space: base.space,
          ...(check.span ? { span: check.span } : {}),
          ...(check.arms ? { arms: check.arms } : {}),
        });
  const guarded = (r: ElementRef, axisOk: string | undefined): ElementRef =>
    axisOk === undefined ? r : { ...r, guard: axisOk };
  if (!whole) return guarded(at(base.reg), axes());
  const { e: dyn, scale } = peelScale(whole, elemBytes);
  if (check && needsGuard(ctx, buffer, offset)) {
    // The byte offset from the buffer's start, in 64 bits, for both the guard and the address.
    const idx = ex.toReg(ex.emit(dyn), dyn.dtype);
    const rel = ctx.regs.fresh("rd");
    const disp = c * elemBytes;
    if (dtypeBits(dyn.dtype) === 64) {
      ctx.ins(`mad.lo.s64 ${rel}, ${idx}, ${scale}, ${disp}`);
    } else {
      const unsigned = dyn.dtype.startsWith("u");
      const i32 = to32(ctx, idx, dyn, !unsigned);
      ctx.ins(`mad.wide.${unsigned ? "u" : "s"}32 ${rel}, ${i32}, ${scale}, ${disp}`);
    }
    let reg: string;
    if (base.space === "shared") {
      const r = narrow(ctx, rel);
      reg = ctx.regs.fresh("r");
      ctx.ins(`add.s32 ${reg}, ${base.reg}, ${r}`);
    } else {
      reg = ctx.regs.fresh("rd");
      ctx.ins(`add.s64 ${reg}, ${base.reg}, ${rel}`);
    }
    const axisOk = axes();
    const guard = andPred(
      ctx,
      axisOk,
      emitGuard(ctx, buffer, rel, {
        space: base.space,
        verb: check.verb,
        accessBytes: elemBytes,
        ...(check.span ? { span: check.span } : {}),
      }),
    );
    return { space: base.space, reg, disp: 0, ref: memRef(reg, 0), guard };
  }
  const k = exprKey(dyn);
  const key = k === undefined ? undefined : `addr ${buffer.id} ${scale} ${k}`;
  const ref = at(
    ctx.memo(key, () => {
      const idx = ex.toReg(ex.emit(dyn), dyn.dtype); // an identity fold may leave an immediate
      if (base.space === "shared") {
        const i32 = dtypeBits(dyn.dtype) === 64 ? narrow(ctx, idx) : to32(ctx, idx, dyn);
        const r = ctx.regs.fresh("r");
        ctx.ins(`mad.lo.s32 ${r}, ${i32}, ${scale}, ${base.reg}`);
        return r;
      }
      const addr = ctx.regs.fresh("rd");
      if (dtypeBits(dyn.dtype) === 64) {
        ctx.ins(`mad.lo.s64 ${addr}, ${idx}, ${scale}, ${base.reg}`);
      } else {
        const unsigned = dyn.dtype.startsWith("u");
        const i32 = to32(ctx, idx, dyn, !unsigned);
        ctx.ins(`mad.wide.${unsigned ? "u" : "s"}32 ${addr}, ${i32}, ${scale}, ${base.reg}`);
      }
      return addr;
    }),
  );
  return guarded(ref, axes());
}

function narrow(ctx: EmitContext, op: string): string {
  const r = ctx.regs.fresh("r");
  ctx.ins(`cvt.u32.u64 ${r}, ${op}`);
  return r;
}
