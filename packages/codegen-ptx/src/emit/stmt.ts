import { TirxError, constInt, type For, type If, type Stmt, type While } from "@tirx-ts/core";
import { INTRINSIC_PTX, setp } from "../ops.js";
import { emitCpAsync } from "../patterns/cp-async.js";
import { bitType, elemBytes, intImmediate, memType, opType } from "../types.js";
import { elementRef } from "./address.js";
import type { EmitContext } from "./context.js";
import { ExprEmitter } from "./expr.js";

/**
 * Statement emission: structured control flow becomes labels and branches, stores become
 * `st.{space}`, intrinsic calls map one to one, and each `tile.apply` goes to its pattern's
 * emitter with the plan the verifier made for it.
 */
export class StmtEmitter {
  readonly ex: ExprEmitter;

  constructor(readonly ctx: EmitContext) {
    this.ex = new ExprEmitter(ctx);
  }

  emit(s: Stmt): void {
    const ctx = this.ctx;
    // The author's line as a comment maps PTX back to the kernel; the file's base name keeps the
    // text the same on every checkout.
    if (s.span && s.kind !== "Seq" && s.kind !== "Alloc" && s.kind !== "Let") {
      ctx.comment(`${s.kind} at ${s.span.file.split(/[\\/]/).pop()}:${s.span.line}:${s.span.col}`);
    }
    switch (s.kind) {
      case "Seq":
        for (const c of s.stmts) this.emit(c);
        return;
      case "For":
        return this.loop(s);
      case "While":
        return this.whileLoop(s);
      case "If":
        return this.branch(s);
      case "Let":
        ctx.env.set(s.var.id, this.ex.value(s.value));
        return;
      case "Store": {
        if (s.value.dtype !== s.dtype) {
          throw new TirxError(
            "TX2005",
            `storing a ${s.value.dtype} value into ${s.dtype} elements of "${s.buffer.name}"`,
            s.span,
          );
        }
        let v = this.ex.value(s.value);
        const { space, ref } = elementRef(ctx, this.ex, s.buffer, s.offset, elemBytes(s.dtype));
        if (s.dtype === "bool") {
          // bool is one byte in memory: 1 or 0.
          const byte = ctx.regs.fresh("rs");
          ctx.ins(`selp.u16 ${byte}, 1, 0, ${v}`);
          v = byte;
        }
        ctx.ins(`st.${space}.${memType(s.dtype)} ${ref}, ${v}`);
        return;
      }
      case "Alloc":
        // Storage is declared once at the top of the entry (lower/storage.ts).
        ctx.bufferBase(s.buffer);
        return;
      case "Call": {
        const render = INTRINSIC_PTX[s.op];
        if (!render)
          throw new TirxError("TX2010", `intrinsic "${s.op}" has no PTX lowering`, s.span);
        const args = s.args.map((a) => {
          const c = constInt(a);
          if (c === undefined)
            throw new TirxError("TX2010", `operands of ${s.op} must be static integers`, s.span);
          return String(c);
        });
        ctx.ins(render(args));
        return;
      }
      case "TileApply": {
        const plan = ctx.vf.plans.get(s);
        if (!plan)
          throw new TirxError(
            "TX3001",
            `no verified plan for "${s.opcode}"; run verify() first`,
            s.span,
          );
        if (plan.kind === "cp.async") return emitCpAsync(ctx, this.ex, plan);
        throw new TirxError(
          "TX2010",
          `"${s.opcode}" is not supported by the PTX code generator yet`,
          s.span,
        );
      }
      case "DeviceEntry":
        throw new TirxError("TX2004", "T.device_entry may not be nested", s.span);
    }
  }

  /**
   * `unroll` with a constant extent repeats the body with the variable bound to each constant;
   * otherwise (or for `serial`) a counted loop with the bound evaluated once before it.
   */
  private loop(s: For): void {
    const ctx = this.ctx;
    const lo = constInt(s.min);
    const n = constInt(s.extent);
    if (lo !== undefined && n !== undefined && n <= 0) return;
    if (s.annotation === "unroll" && lo !== undefined && n !== undefined) {
      for (let k = 0; k < n; k++) {
        ctx.env.set(s.var.id, intImmediate(lo + k, s.var.dtype));
        this.emit(s.body);
      }
      ctx.env.delete(s.var.id);
      return;
    }
    const dt = s.var.dtype;
    const i = ctx.reg(dt);
    const start = this.ex.value(s.min);
    ctx.ins(`mov.${bitType(dt)} ${i}, ${start}`);
    let end: string;
    if (lo !== undefined && n !== undefined) {
      end = intImmediate(lo + n, dt);
    } else {
      end = ctx.reg(dt);
      ctx.ins(`add.${opType(dt)} ${end}, ${start}, ${this.ex.value(s.extent)}`);
    }
    const [head, exit] = ctx.newLabels("loop", "loop_end");
    const done = ctx.reg("bool");
    ctx.label(head);
    ctx.ins(`${setp("ge", dt)} ${done}, ${i}, ${end}`);
    ctx.ins(`@${done} bra ${exit}`);
    ctx.env.set(s.var.id, i);
    this.emit(s.body);
    ctx.env.delete(s.var.id);
    ctx.ins(`add.${opType(dt)} ${i}, ${i}, 1`);
    ctx.ins(`bra ${head}`);
    ctx.label(exit);
  }

  private whileLoop(s: While): void {
    const ctx = this.ctx;
    const [head, exit] = ctx.newLabels("while", "while_end");
    ctx.label(head);
    const c = this.ex.value(s.cond);
    ctx.ins(`@!${c} bra ${exit}`);
    this.emit(s.body);
    ctx.ins(`bra ${head}`);
    ctx.label(exit);
  }

  private branch(s: If): void {
    const ctx = this.ctx;
    const known = constInt(s.cond);
    if (known !== undefined) {
      // A constant condition emits only the arm that runs.
      if (known !== 0) this.emit(s.then);
      else if (s.else) this.emit(s.else);
      return;
    }
    const c = this.ex.value(s.cond);
    const [elseLabel, exit] = ctx.newLabels("else", "endif");
    ctx.ins(`@!${c} bra ${s.else ? elseLabel : exit}`);
    this.emit(s.then);
    if (s.else) {
      ctx.ins(`bra ${exit}`);
      ctx.label(elseLabel);
      this.emit(s.else);
    }
    ctx.label(exit);
  }
}
