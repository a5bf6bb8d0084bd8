import { divideByConstant } from "./divide.js";
import {
  constInt,
  invariant,
  dtypeBits,
  dtypeKind,
  exprChildren,
  exprHeight,
  exprRange,
  findOp,
  isFloat,
  isFloat8,
  isLaneAccess,
  isVector,
  SHALLOW_HEIGHT,
  vectorOperand,
  vectorRegs,
  type VectorDType,
  type Binary,
  type Compare,
  type DType,
  type Expr,
  type IfThenElse,
  binaryOp,
  compareOpDef,
} from "@tirx-ts/core";
import {
  bitType,
  cvtType,
  elemBytes,
  floatImmediate,
  intImmediate,
  isReg,
  memType,
} from "../types.js";
import { addressOperand, elementRef } from "./address.js";
import { emitCast } from "./cast.js";
import { exprKey } from "./key.js";
import { foldBinary, foldCompare } from "./immediate.js";
import { elementReg, vectorElementRegs } from "./register-array.js";
import { lowerCtx, prepareValueIntrinsic } from "./intrinsic.js";
import type { EmitContext } from "./context.js";
import type { ValueEmitter } from "./value-emitter.js";
import type { ArmCondition } from "./axis-guard.js";

/** Operators lowered to one instruction, which may write an operand's register in place. */
const IN_PLACE = new Set(["add", "sub", "mul", "min", "max", "bitand", "bitor", "bitxor"]);

/** Operators whose 8-bit results may leave their byte and need re-extending. */
const WRAPS = new Set(["add", "sub", "mul", "div", "mod", "floordiv", "floormod", "shl", "shr"]);

/**
 * Expression emission: each expression becomes instructions in the context's body and an
 * operand (a register, or an immediate where PTX takes one). Both arms of `if_then_else` are
 * evaluated, as TIR defines it.
 */
export class ExprEmitter implements ValueEmitter {
  constructor(readonly ctx: EmitContext) {}

  /**
   * Operands of sub-expressions emitted ahead of their parent (see {@link ahead}), per node, in
   * the order their uses ask for them.
   */
  private ready = new Map<Expr, string[]>();

  /**
   * The selects whose arm is being emitted, outermost first: an access there gives the value
   * used only where its arms are selected (its axis guards ask for that, `axis-guard.ts`).
   */
  private arms: ArmCondition[] = [];

  /**
   * > 0 while a load is emitted ahead of a select it is an arm of (see {@link ahead}), where
   * the select's condition is not known yet: its author indices get no guard.
   */
  private armless = 0;

  /**
   * True for a node whose emission emits each child, in order, through {@link emit} and nothing
   * before them: operators, casts, selects and op calls whose operands are all values. Loads
   * and pointers (whose offsets become addresses) are not.
   */
  private transparent(e: Expr): boolean {
    switch (e.kind) {
      case "Binary":
      case "Compare":
      case "Logical":
      case "Not":
      case "Cast":
      case "IfThenElse":
        return true;
      case "CallExpr": {
        const op = findOp(e.op);
        return (
          op !== undefined &&
          op.form === "value" &&
          op.operands.length === e.args.length &&
          op.operands.every((o) => o.kind === "value")
        );
      }
      default:
        return false;
    }
  }

  /**
   * The part of a load's offset that its address computes through {@link emit}, when it is a
   * node of the offset (`addressOperand`: `I[i]` in the gather `A[I[i] + 1]`), so that it can
   * be emitted ahead like an operand; undefined for a register array or another node.
   */
  private addressChild(e: Expr): Expr | undefined {
    if (e.kind !== "BufferLoad") return undefined;
    if (this.ctx.storage.buffers.get(e.buffer.id)?.kind === "registers") return undefined;
    const o = addressOperand(this.ctx, e.buffer, e.offset, elemBytes(e.dtype));
    return o !== undefined && exprChildren(o).length > 0 ? o : undefined;
  }

  /** What {@link ahead} emits before `x`: its operands, or its address operand. */
  private aheadKids(x: Expr): readonly Expr[] {
    if (this.transparent(x)) return exprChildren(x);
    const o = this.addressChild(x);
    return o ? [o] : [];
  }

  /**
   * Emit the sub-expressions of a deep expression `e` (higher than SHALLOW_HEIGHT) bottom-up, in
   * the order recursion would finish them (post-order through transparent nodes and loads'
   * address operands), each one level deep, and remember their operands for the parents that ask next.
   * Emission then costs no JS stack per level, up to MAX_EXPR_DEPTH and past it. Another load or
   * pointer inside is emitted whole, where its turn comes; one deep in its turn goes through
   * here again.
   */
  private ahead(e: Expr): void {
    // Post-order of occurrences through aheadKids, without recursion.
    const order: Expr[] = [];
    // Whether each node of `order` lies in an arm of a select (see `armless`).
    const inArm: boolean[] = [];
    const nodes: Expr[] = [e];
    const arm: boolean[] = [false];
    const kids: (readonly Expr[])[] = [this.aheadKids(e)];
    const next: number[] = [0];
    while (nodes.length > 0) {
      const top = nodes.length - 1;
      const i = next[top]!;
      if (i < kids[top]!.length) {
        next[top] = i + 1;
        const c = kids[top]![i]!;
        nodes.push(c);
        arm.push(arm[top]! || (nodes[top]!.kind === "IfThenElse" && i > 0));
        kids.push(this.aheadKids(c));
        next.push(0);
        continue;
      }
      order.push(nodes.pop()!);
      inArm.push(arm.pop()!);
      kids.pop();
      next.pop();
    }
    order.pop();
    for (const [k, x] of order.entries()) {
      let v: string;
      if (inArm[k]) this.armless++;
      try {
        if (this.transparent(x) || this.addressChild(x)) v = this.plain(x);
        else {
          // An opaque node's own sub-expressions must not take operands meant for others.
          const saved = this.ready;
          this.ready = new Map();
          try {
            v = this.emit(x);
          } finally {
            this.ready = saved;
          }
        }
      } finally {
        if (inArm[k]) this.armless--;
      }
      const q = this.ready.get(x);
      if (q) q.push(v);
      else this.ready.set(x, [v]);
    }
  }

  /**
   * Emit `e`; the operand holds its value. 16-bit float arithmetic must already go through
   * float32 (the `upcast-half` pass, which `emitPtx` runs).
   */
  value(e: Expr): string {
    return this.emit(e);
  }

  /** The value of `e` in a register (immediates are moved into one). */
  register(e: Expr): string {
    return this.toReg(this.value(e), e.dtype);
  }

  /**
   * Emit `e` into register `d` (a register-array element): an arithmetic result is computed into
   * `d` directly when it is not remembered for reuse (it reads memory or a register array), else
   * moved there.
   */
  into(e: Expr, d: string): void {
    const x = e;
    if (x.kind === "Binary" && exprKey(x) === undefined && this.binary(x, d) === d) return;
    const v = this.emit(x);
    if (v !== d) this.ctx.ins(`mov.${bitType(e.dtype)} ${d}, ${v}`);
  }

  /** Emit `e` once more for a second use of its value (see `ValueEmitter.again`). */
  again(e: Expr): string {
    const saved = this.ready;
    this.ready = new Map();
    try {
      return this.emit(e);
    } finally {
      this.ready = saved;
    }
  }

  /** `op` in a register of `dt`'s class. */
  toReg(op: string, dt: DType): string {
    if (isReg(op)) return op;
    const r = this.ctx.reg(dt);
    this.ctx.ins(`mov.${bitType(dt)} ${r}, ${op}`);
    return r;
  }

  /**
   * Emit an already lowered expression. A compound expression without loads or calls that was
   * already computed in an enclosing scope is not computed again (see `EmitContext.memo`).
   */
  emit(e: Expr): string {
    const q = this.ready.get(e);
    if (q) {
      const v = q.shift()!;
      if (q.length === 0) this.ready.delete(e);
      return v;
    }
    if (exprHeight(e) > SHALLOW_HEIGHT && (this.transparent(e) || this.addressChild(e))) {
      // Operands emitted ahead are for this expression's nodes only: leftovers (a parent that
      // reused an earlier value) are dropped with the map.
      const saved = this.ready;
      this.ready = new Map();
      try {
        this.ahead(e);
        return this.plain(e);
      } finally {
        this.ready = saved;
      }
    }
    return this.plain(e);
  }

  /** Emit `e` by recursion (its children through {@link emit}), reusing a remembered value. */
  private plain(e: Expr): string {
    if (e.kind === "IntImm" || e.kind === "FloatImm" || e.kind === "Var" || e.kind === "Special")
      return this.node(e);
    return this.ctx.memo(exprKey(e), () => this.node(e));
  }

  private node(e: Expr): string {
    const ctx = this.ctx;
    switch (e.kind) {
      case "IntImm":
        // Predicates have no immediate form in most positions, so bools live in registers.
        return e.dtype === "bool"
          ? this.toReg(intImmediate(e.value, "bool"), "bool")
          : intImmediate(e.value, e.dtype);
      case "FloatImm": {
        const imm = floatImmediate(e.value, e.dtype);
        // 16-bit and float8 immediates exist only as raw bits of a .b16 move.
        return e.dtype === "float16" || e.dtype === "bfloat16" || isFloat8(e.dtype)
          ? this.toReg(imm, e.dtype)
          : imm;
      }
      case "Var": {
        const op = ctx.env.get(e.id);
        // The verifier checked every variable is used inside the scope that defines it (TX2001).
        invariant(op !== undefined, () => `variable "${e.name}" has no value here`);
        return op;
      }
      case "Special":
        return ctx.special(e.name);
      case "Binary":
        return this.binary(e);
      case "Compare":
        return this.compare(e);
      case "Logical": {
        const a = this.emit(e.a);
        const b = this.emit(e.b);
        const d = ctx.reg("bool");
        ctx.ins(`${e.op}.pred ${d}, ${a}, ${b}`);
        return d;
      }
      case "Not": {
        const a = this.emit(e.a);
        const d = ctx.reg("bool");
        ctx.ins(`not.pred ${d}, ${a}`);
        return d;
      }
      case "Cast":
        return emitCast(ctx, this.emit(e.value), e.value.dtype, e.dtype);
      case "IfThenElse":
        return this.select(e);
      case "BufferLoad": {
        const lane = ctx.laneValue(e);
        if (lane !== undefined) return lane;
        const lanes = isLaneAccess(e.dtype, e.buffer.dtype);
        const regs = e.dtype === e.buffer.dtype || lanes ? ctx.elementRegs(e.buffer) : undefined;
        if (regs && lanes) {
          // A vector of a register array's elements: copied, as the elements may change.
          const d = ctx.reg(e.dtype);
          const at = vectorElementRegs(ctx, regs, e.buffer, e.offset, e.dtype as VectorDType);
          ctx.ins(`mov.${bitType(e.dtype)} ${d}, ${vectorOperand(at)}`);
          return d;
        }
        if (regs) return elementReg(ctx, regs, e.buffer, e.offset);
        const { space, ref, guard } = elementRef(
          ctx,
          this,
          e.buffer,
          e.offset,
          elemBytes(e.dtype),
          {
            verb: "reads",
            ...(e.span ? { span: e.span } : {}),
            ...(e.index && this.armless === 0 ? { index: e.index, arms: [...this.arms] } : {}),
          },
        );
        // A guarded load that is out of range is skipped and reads as 0.
        const at = guard ? `@${guard} ` : "";
        if (e.dtype === "bool") {
          const byte = ctx.regs.fresh("rs");
          if (guard) ctx.ins(`mov.b16 ${byte}, 0`);
          ctx.ins(`${at}ld.${space}.u8 ${byte}, ${ref}`);
          const d = ctx.reg("bool");
          ctx.ins(`setp.ne.u16 ${d}, ${byte}, 0`);
          return d;
        }
        const d = ctx.reg(e.dtype);
        if (guard && isVector(e.dtype)) {
          for (const r of vectorRegs(d, e.dtype)) ctx.ins(`mov.b32 ${r}, 0`);
        } else if (guard) ctx.ins(`mov.b${elemBytes(e.dtype) * 8} ${d}, 0`);
        ctx.ins(`${at}ld.${space}.${memType(e.dtype)} ${d}, ${ref}`);
        return d;
      }
      case "BufferPtr": {
        const at = elementRef(ctx, this, e.buffer, e.offset, elemBytes(e.buffer.dtype));
        const wide = at.space !== "shared";
        let d = at.reg;
        if (at.disp !== 0) {
          d = ctx.reg(wide ? "uint64" : "uint32");
          ctx.ins(`add.${wide ? "s64" : "s32"} ${d}, ${at.reg}, ${at.disp}`);
        }
        return emitCast(ctx, d, wide ? "uint64" : "uint32", e.dtype);
      }
      case "CallExpr":
        return prepareValueIntrinsic(this, e).issue();
    }
  }

  /** `e` into `dest` (a fresh register when absent), or the operand it folds to. */
  private binary(e: Binary, dest?: string): string {
    const ctx = this.ctx;
    // The verifier checked the operator is defined on its dtype (TX2005).
    invariant(
      binaryOp(e.op).signatures.some(([a]) => a === e.dtype),
      () => `operator ${e.op} on ${e.dtype}`,
    );
    let a = this.emit(e.a);
    let b = this.emit(e.b);
    const folded = foldBinary(e.op, a, b, e.dtype);
    if (folded !== undefined) return folded;
    // Never an instruction with two immediates (PTX wants a register for at least one).
    if (!isReg(a) && !isReg(b)) a = this.toReg(a, e.dtype);
    const divisor = isReg(a) && !isReg(b) ? constInt(e.b) : undefined;
    if (divisor !== undefined) {
      const r = exprRange(e.a, ctx.rangeEnv());
      const q = divideByConstant(ctx, e.op, a, divisor, e.dtype, r.min >= 0 && r.max < 2 ** 31);
      if (q !== undefined) {
        if (!dest) return q;
        ctx.ins(`mov.${bitType(e.dtype)} ${dest}, ${q}`);
        return dest;
      }
    }
    const op = this.truncates(e) ? (e.op === "floordiv" ? "div" : "mod") : e.op;
    if ((e.op === "shl" || e.op === "shr") && isReg(b) && dtypeBits(e.dtype) !== 32) {
      // PTX shift amounts are always .u32.
      const r = ctx.regs.fresh("r");
      ctx.ins(`cvt.u32.${cvtType(e.dtype)} ${r}, ${b}`);
      b = r;
    }
    // Writing straight into a register-array element is safe for one-instruction operators only:
    // a longer lowering may write its destination before it last reads an operand.
    const d = dest && IN_PLACE.has(op) ? dest : ctx.reg(e.dtype);
    binaryOp(op).lower(lowerCtx(this, []), d, [a, b], [e.dtype, e.dtype], e.dtype);
    if (dtypeBits(e.dtype) === 8 && WRAPS.has(e.op)) {
      // Keep the 16-bit register equal to the extended low byte (see types.ts).
      const t = cvtType(e.dtype);
      ctx.ins(`cvt.${t[0]}16.${t} ${d}, ${d}`);
    }
    if (dest && d !== dest) {
      ctx.ins(`mov.${bitType(e.dtype)} ${dest}, ${d}`);
      return dest;
    }
    return d;
  }

  /**
   * Signed floor division and modulo by a positive constant equal the truncating `div`/`rem` when
   * the dividend is provably non-negative (a loop counter, a thread index): one instruction
   * instead of a sign fix-up.
   */
  private truncates(e: Binary): boolean {
    if (e.op !== "floordiv" && e.op !== "floormod") return false;
    if (isFloat(e.dtype) || dtypeKind(e.dtype) !== "int") return false;
    const c = constInt(e.b);
    return c !== undefined && c > 0 && exprRange(e.a, this.ctx.rangeEnv()).min >= 0;
  }

  private compare(e: Compare): string {
    const ctx = this.ctx;
    let a = this.emit(e.a);
    let b = this.emit(e.b);
    let dt = e.a.dtype;
    if (dt === "bool") {
      // Predicates have no ordering compare: compare them as 0/1 integers.
      a = emitCast(ctx, a, "bool", "uint16");
      b = emitCast(ctx, b, "bool", "uint16");
      dt = "uint16";
    }
    const known = foldCompare(e.op, a, b, dt);
    if (known !== undefined) return this.toReg(known ? "1" : "0", "bool");
    if (!isReg(a) && !isReg(b)) a = this.toReg(a, dt);
    const d = ctx.reg("bool");
    compareOpDef(e.op).lower(lowerCtx(this, []), d, [a, b], [dt, dt], "bool");
    return d;
  }

  private select(e: IfThenElse): string {
    const ctx = this.ctx;
    const c = this.emit(e.cond);
    const arm = (negate: boolean, x: Expr): string => {
      this.arms.push({ cond: c, negate });
      try {
        return this.emit(x);
      } finally {
        this.arms.pop();
      }
    };
    const t = arm(false, e.t);
    const f = arm(true, e.f);
    const d = ctx.reg(e.dtype);
    if (e.dtype === "bool") {
      // selp has no .pred form: d = (c & t) | (!c & f).
      const [x, nc, y] = [ctx.reg("bool"), ctx.reg("bool"), ctx.reg("bool")];
      ctx.ins(`and.pred ${x}, ${c}, ${t}`);
      ctx.ins(`not.pred ${nc}, ${c}`);
      ctx.ins(`and.pred ${y}, ${nc}, ${f}`);
      ctx.ins(`or.pred ${d}, ${x}, ${y}`);
      return d;
    }
    ctx.ins(`selp.${bitType(e.dtype)} ${d}, ${t}, ${f}, ${c}`);
    return d;
  }
}
