import {
  InternalError,
  constInt,
  findOp,
  invariant,
  isVector,
  setp,
  vectorRegs,
  walkExpr,
  walkScoped,
  type Call,
  type Descend,
  type Expr,
  type For,
  type If,
  type Stmt,
  type While,
} from "@tirx-ts/core";
import { emitTilePlan } from "../patterns/tile-ops.js";
import { bitType, elemBytes, intImmediate, memType, opType } from "../types.js";
import { elementRef } from "./address.js";
import { elementReg, vectorElementRegs } from "./register-array.js";
import { emitVectorized, where } from "./vectorize.js";
import type { EmitContext } from "./context.js";
import { ExprEmitter } from "./expr.js";
import {
  emitIntrinsic,
  packFragments,
  prepareValueIntrinsic,
  type PackedFragments,
} from "./intrinsic.js";
import { withArticle } from "@tirx-ts/core";

/** True when `e` reads memory (a value that may change between two tests of a loop). */
function hasLoad(e: Expr): boolean {
  let found = false;
  walkExpr(e, (x) => {
    if (x.kind === "BufferLoad" || x.kind === "CallExpr") found = true;
  });
  return found;
}

/** The wgmma unit's action of statement `s` (a machine op's record fact), if it has one. */
function wgmmaAction(s: Stmt): "fence" | "mma" | undefined {
  if (s.kind !== "Call") return undefined;
  const sim = findOp(s.op)?.sim;
  if (sim?.kind !== "machine" || sim.effect.unit !== "wgmma") return undefined;
  return sim.effect.action === "fence" || sim.effect.action === "mma"
    ? sim.effect.action
    : undefined;
}

/** True for a statement that emits nothing (an empty sequence, possibly nested). */
function isEmpty(s: Stmt): boolean {
  const work: Stmt[] = [s];
  while (work.length > 0) {
    const x = work.pop()!;
    if (x.kind !== "Seq") return false;
    work.push(...x.stmts);
  }
  return true;
}

/**
 * Statement emission: structured control flow becomes labels and branches, stores become
 * `st.{space}`, intrinsic calls map one to one, and each `tile.apply` goes to its pattern's
 * emitter with the plan the verifier made for it.
 */
export class StmtEmitter {
  readonly ex: ExprEmitter;
  /**
   * A sequence's `wgmma.fence` → the mma_asyncs that follow it in the sequence (before any
   * other statement), whose register operands are packed before the fence; and each such call's
   * packed operands, until it is emitted.
   */
  private readonly fenced = new Map<Stmt, Call[]>();
  private readonly packed = new Map<Stmt, PackedFragments>();

  constructor(readonly ctx: EmitContext) {
    this.ex = new ExprEmitter(ctx);
  }

  /**
   * Emit `s` and everything nested in it, in program order through `walkScoped` (its own stack:
   * statement nesting costs no JS stack, any depth up to MAX_EXPR_DEPTH), which keeps
   * `ctx.scope` (the ranges lowering choices read) at each statement.
   */
  emit(s: Stmt): void {
    walkScoped(s, this.ctx.scope, { enter: (x) => this.one(x) });
  }

  /**
   * Emit one statement; what is emitted around its nested bodies (labels, branches, register
   * scopes) is returned as their hooks, and the walk visits the bodies.
   */
  private one(s: Stmt): Descend | void {
    const ctx = this.ctx;
    // The author's line as a comment maps PTX back to the kernel; the file's base name keeps the
    // text the same on every checkout.
    if (s.span && s.kind !== "Seq" && s.kind !== "Alloc" && s.kind !== "Let") {
      // A TileOp is the tile.apply the author wrote.
      const what = s.kind === "TileOp" ? "TileApply" : s.kind;
      ctx.comment(`${what} at ${s.span.file.split(/[\\/]/).pop()}:${s.span.line}:${s.span.col}`);
    }
    switch (s.kind) {
      case "Seq": {
        s.stmts.forEach((x, i) => {
          if (wgmmaAction(x) !== "fence") return;
          const run: Call[] = [];
          for (let k = i + 1; k < s.stmts.length && wgmmaAction(s.stmts[k]!) === "mma"; k++) {
            run.push(s.stmts[k] as Call);
          }
          if (run.length > 0) this.fenced.set(x, run);
        });
        return;
      }
      case "For":
        return this.loop(s);
      case "While":
        return this.whileLoop(s);
      case "If":
        return this.branch(s);
      case "Let": {
        ctx.letValues.set(s.var.id, s.value);
        // A let of a constant (after unrolling) stays an immediate, so indices built from it
        // are constants too; a register-array element is copied, as the element may change.
        const c = ctx.staticInt(s.value);
        let v = c !== undefined ? intImmediate(c, s.var.dtype) : this.ex.value(s.value);
        if (ctx.mutable.has(v)) {
          const r = ctx.reg(s.var.dtype);
          ctx.ins(`mov.${bitType(s.var.dtype)} ${r}, ${v}`);
          v = r;
        }
        ctx.bind(s.var.id, v);
        return;
      }
      case "Store": {
        // The verifier checked the value has the stored dtype (TX2005).
        invariant(
          s.value.dtype === s.dtype,
          () =>
            `${withArticle(s.value.dtype)} value stored into ${s.dtype} elements of "${s.buffer.name}"`,
        );
        const regs = ctx.elementRegs(s.buffer);
        if (regs && isVector(s.dtype)) {
          // A vector into a register array's elements (core isLaneAccess): one mov per lane.
          const at = vectorElementRegs(ctx, regs, s.buffer, s.offset, s.dtype);
          const t = bitType(s.buffer.dtype);
          const v = vectorRegs(this.ex.value(s.value), s.dtype);
          at.forEach((r, k) => ctx.ins(`mov.${t} ${r}, ${v[k]}`));
          return;
        }
        if (regs) return this.ex.into(s.value, elementReg(ctx, regs, s.buffer, s.offset));
        let v = this.ex.value(s.value);
        const { space, ref, guard } = elementRef(
          ctx,
          this.ex,
          s.buffer,
          s.offset,
          elemBytes(s.dtype),
          {
            verb: "writes",
            ...(s.span ? { span: s.span } : {}),
            ...(s.index ? { index: s.index } : {}),
          },
        );
        if (s.dtype === "bool") {
          // bool is one byte in memory: 1 or 0.
          const byte = ctx.regs.fresh("rs");
          ctx.ins(`selp.u16 ${byte}, 1, 0, ${v}`);
          v = byte;
        }
        // A guarded store that is out of range is skipped.
        ctx.ins(`${guard ? `@${guard} ` : ""}st.${space}.${memType(s.dtype)} ${ref}, ${v}`);
        return;
      }
      case "Alloc": {
        // Storage is declared once at the top of the entry (lower/storage.ts).
        const st = ctx.storage.buffers.get(s.buffer.id);
        const regs = ctx.elementRegs(s.buffer);
        if (regs) {
          const range = regs.length > 1 ? `${regs[0]}..${regs[regs.length - 1]}` : regs[0];
          ctx.comment(
            `"${s.buffer.name}": ${regs.length} x ${s.buffer.dtype} in registers ${range}`,
          );
          return;
        }
        if (st?.kind === "static" && st.why) ctx.comment(`${st.symbol} stays in .local: ${st.why}`);
        ctx.bufferBase(s.buffer);
        return;
      }
      case "Call": {
        const run = this.fenced.get(s);
        if (run) {
          this.fenced.delete(s);
          for (const c of run) this.packed.set(c, packFragments(this.ex, c));
        }
        const early = this.packed.get(s);
        if (early) this.packed.delete(s);
        return emitIntrinsic(this.ex, s, early);
      }
      case "TileOp":
        return emitTilePlan(ctx, this.ex, s.plan);
      case "TileApply":
        throw new InternalError(
          `tile.apply "${s.opcode}" reached code generation; emitPtx runs lower-tile after verify`,
        );
      case "DeviceEntry":
        // The verifier refuses a device entry inside another (TX2004).
        throw new InternalError("a nested T.device_entry reached code generation");
    }
  }

  /**
   * `vectorized` with a constant extent becomes vector accesses where `emitVectorized` can prove
   * them, else it is unrolled with a comment saying why. The `unroll` pass has already replaced
   * `unroll` loops with constant bounds by copies; the repetition below is a fallback for IR that
   * did not go through it. Otherwise (or for `serial`) a counted loop with the bound evaluated
   * once before it.
   */
  private loop(s: For): Descend {
    const ctx = this.ctx;
    const lo = constInt(s.min);
    const n = constInt(s.extent);
    if (lo !== undefined && n !== undefined && n <= 0) return { only: "none" };
    if (s.annotation === "vectorized" && lo !== undefined && n !== undefined) {
      const why = emitVectorized(ctx, this.ex, s, lo, n);
      if (why === undefined) return { only: "none" };
      ctx.comment(`T.vectorized at ${where(s)} is unrolled: ${why}`);
    }
    if (s.annotation !== "serial" && lo !== undefined && n !== undefined) {
      return {
        copies: n,
        enterBody: (_, k) => {
          ctx.openScope(true);
          ctx.bind(s.var.id, intImmediate(lo + k, s.var.dtype));
        },
        leaveBody: () => ctx.closeScope(),
        leave: () => ctx.env.delete(s.var.id),
      };
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
    // The walk gives the variable its range in the body (`RangeScope.bindLoop`).
    return {
      enterBody: () => {
        ctx.openScope();
        ctx.bind(s.var.id, i);
      },
      leaveBody: () => ctx.closeScope(),
      leave: () => {
        ctx.env.delete(s.var.id);
        ctx.ins(`add.${opType(dt)} ${i}, ${i}, 1`);
        ctx.ins(`bra ${head}`);
        ctx.label(exit);
      },
    };
  }

  /**
   * `while (cond) body`. The condition is tested at the head; a negated condition branches on the
   * operand itself. A condition that is a value intrinsic (or its negation, as in the spin loop
   * `while (!mbarrier.try_wait.parity(bar, phase)) {}`) has its operands computed once, before the
   * head: they hold no load, and nothing in the loop can change a variable. An empty body makes
   * the loop one test and one backward branch:
   *
   *     $L__while1:
   *     mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r3], 0;
   *     @!%p1 bra $L__while1;
   */
  private whileLoop(s: While): Descend {
    const ctx = this.ctx;
    const negated = s.cond.kind === "Not";
    const test = s.cond.kind === "Not" ? s.cond.a : s.cond;
    const call = test.kind === "CallExpr" && !test.args.some(hasLoad) ? test : undefined;
    const prepared = call && prepareValueIntrinsic(this.ex, call);
    const [head, exit] = ctx.newLabels("while", "while_end");
    ctx.openScope();
    ctx.label(head);
    const c = prepared ? prepared.issue() : this.ex.value(test);
    // The branch that leaves the loop is taken when the condition is false.
    const leave = negated ? `@${c}` : `@!${c}`;
    const stay = negated ? `@!${c}` : `@${c}`;
    if (isEmpty(s.body)) {
      ctx.ins(`${stay} bra ${head}`);
      ctx.closeScope();
      return { only: "none" };
    }
    ctx.ins(`${leave} bra ${exit}`);
    return {
      leave: () => {
        ctx.ins(`bra ${head}`);
        ctx.label(exit);
        ctx.closeScope();
      },
    };
  }

  /**
   * `if (cond) then else other`: a branch around each arm, each arm a register scope of its own.
   * A constant condition emits only the arm that runs.
   */
  private branch(s: If): Descend {
    const ctx = this.ctx;
    const known = constInt(s.cond);
    if (known !== undefined) return { only: known !== 0 ? "then" : "else" };
    const c = this.ex.value(s.cond);
    const [elseLabel, exit] = ctx.newLabels("else", "endif");
    ctx.ins(`@!${c} bra ${s.else ? elseLabel : exit}`);
    return {
      enterBody: (arm) => {
        if (arm === "else") {
          ctx.ins(`bra ${exit}`);
          ctx.label(elseLabel);
        }
        ctx.openScope();
      },
      leaveBody: () => ctx.closeScope(),
      leave: () => ctx.label(exit),
    };
  }
}
