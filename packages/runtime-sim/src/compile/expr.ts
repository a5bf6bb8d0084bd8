import {
  bufferName,
  binaryOp,
  compareOpDef,
  dtypeBytes,
  exprChildren,
  exprHeight,
  findOp,
  InternalError,
  invariant,
  isBigValue,
  opOf,
  SHALLOW_HEIGHT,
  TirxError,
  type Expr,
  type BinaryOp,
  type DType,
  type SimSemantics,
  type SimValue,
  type Span,
  type ThreadFn,
} from "@tirx-ts/core";
import { Collective, type CollectiveRun } from "./collective.js";
import { machineAction } from "./units.js";
import { conversion, hostScalar } from "../numeric/cast.js";
import type { Machine } from "../exec/machine.js";
import type { BarBuffer } from "../exec/memory.js";
import { compileLoad, compileRawLoad, placementOf, type BigFn, type NumFn } from "./access.js";
import { axisCheck, checkedOffset } from "./axis-check.js";
import type { Layout } from "./layout.js";
import type { Shared } from "./jit.js";
import type { LoopVar } from "./loop-var.js";
import { vecAccess } from "./vector.js";

/**
 * Expressions compiled once into closures of the thread index: `(t) => value`. Values of
 * int64/uint64 are bigints (BigFn), all others numbers (NumFn; bool is 0/1). Every node is
 * specialised at compile time on its dtype and operator, so running a kernel never dispatches on
 * node kinds. `IfThenElse` evaluates both arms, as the GPU does (codegen emits selp, so the
 * loads of both arms execute): an out-of-bounds load in the arm not selected is reported
 * (TX6005); other hazards of that arm's discarded value are not (Machine.speculative).
 * `mbarrier.try_wait.parity` is a non-blocking test of the barrier's phase (see Mbarriers).
 */
export class ExprCompiler {
  /** Let-bound variables that stand for their value (compile/affine.ts, affineVars). */
  letValues: ReadonlyMap<number, Expr> = new Map();
  /**
   * The loop variables of the For loops compiled so far, by variable id (LoopVar registers
   * itself; null when a variable got two, compile/affine.ts then scans its register).
   */
  readonly loops = new Map<number, LoopVar | null>();
  /** Variables whose register holds one value for every thread (unbound scalar parameters). */
  uniformVars: ReadonlySet<number> = new Set();
  /** Variables bound by one For and nothing else (compile/affine.ts, affineVars). */
  loopVarsOnce: ReadonlySet<number> = new Set();

  constructor(
    readonly m: Machine,
    readonly layout: Layout,
  ) {}

  /** Compile `e` (not int64/uint64). `span` locates loads that carry no span of their own. */
  num(e: Expr, span?: Span): NumFn {
    if (isBigValue(e.dtype)) {
      throw new InternalError(`${e.dtype} expression where a 32-bit value is needed`);
    }
    const r = this.#take(e) ?? this.#deep(e, span);
    return (r as NumFn | undefined) ?? this.#num(e, e.span ?? span);
  }

  /** Compile an int64/uint64 expression. */
  big(e: Expr, span?: Span): BigFn {
    if (!isBigValue(e.dtype)) return this.#toBig(this.num(e, span));
    const r = this.#take(e) ?? this.#deep(e, span);
    return (r as BigFn | undefined) ?? this.#big(e, e.span ?? span);
  }

  /**
   * Closures compiled ahead of their parent (see #deep), per node, in the order their uses
   * ask for them.
   */
  #ready = new Map<Expr, (NumFn | BigFn)[]>();

  #take(e: Expr): NumFn | BigFn | undefined {
    const q = this.#ready.get(e);
    if (!q) return undefined;
    const f = q.shift()!;
    if (q.length === 0) this.#ready.delete(e);
    return f;
  }

  /**
   * True for a node that compiles each child, in order, through num/big/any/index with its own
   * span (or the inherited one) and does nothing observable before: operators, casts, selects,
   * loads (offset first), op calls that are functions of their operands.
   */
  #transparent(e: Expr): boolean {
    switch (e.kind) {
      case "Binary":
      case "Compare":
      case "Logical":
      case "Not":
      case "Cast":
      case "IfThenElse":
      case "BufferLoad":
        return true;
      case "CallExpr": {
        const op = findOp(e.op);
        return op !== undefined && op.form === "value" && op.sim.kind !== "machine";
      }
      default:
        return false;
    }
  }

  /**
   * For an expression higher than SHALLOW_HEIGHT: compile its sub-expressions bottom-up, each
   * occurrence in the order recursion would meet it (so sites, loads and collectives register
   * in the same order) and one level deep, keep them for the parents that ask next, then compile
   * `e` itself; undefined for a shallow `e`. Compiling then costs no JS stack per level.
   */
  #deep(e: Expr, span?: Span): NumFn | BigFn | undefined {
    if (exprHeight(e) <= SHALLOW_HEIGHT || !this.#transparent(e)) return undefined;
    const saved = this.#ready;
    this.#ready = new Map();
    try {
      // Post-order of occurrences, each with the span its parent passes it.
      const order: [Expr, Span | undefined][] = [];
      const stack: { x: Expr; span: Span | undefined; kids: readonly Expr[]; i: number }[] = [
        { x: e, span, kids: exprChildren(e), i: 0 },
      ];
      while (stack.length > 0) {
        const f = stack[stack.length - 1]!;
        if (f.i < f.kids.length) {
          const c = f.kids[f.i++]!;
          const inner = f.x.span ?? f.span;
          stack.push({
            x: c,
            span: inner,
            kids: this.#transparent(c) ? exprChildren(c) : [],
            i: 0,
          });
          continue;
        }
        stack.pop();
        order.push([f.x, f.span]);
      }
      order.pop();
      for (const [x, s] of order) {
        let f: NumFn | BigFn;
        if (this.#transparent(x)) {
          f = isBigValue(x.dtype) ? this.#big(x, x.span ?? s) : this.#num(x, x.span ?? s);
        } else {
          // An opaque node's own sub-expressions must not take closures meant for others.
          const outer = this.#ready;
          this.#ready = new Map();
          try {
            f = this.any(x, s);
          } finally {
            this.#ready = outer;
          }
        }
        const q = this.#ready.get(x);
        if (q) q.push(f);
        else this.#ready.set(x, [f]);
      }
      return isBigValue(e.dtype) ? this.#big(e, e.span ?? span) : this.#num(e, e.span ?? span);
    } finally {
      this.#ready = saved;
    }
  }

  /** Compile an index or byte count: 64-bit values are narrowed to numbers. */
  index(e: Expr, span?: Span): NumFn {
    if (!isBigValue(e.dtype)) return this.num(e, span);
    const f = this.big(e, span);
    return (t) => Number(f(t));
  }

  /** Compile either kind. */
  any(e: Expr, span?: Span): NumFn | BigFn {
    return isBigValue(e.dtype) ? this.big(e, span) : this.num(e, span);
  }

  #toBig(f: NumFn): BigFn {
    return (t) => BigInt(f(t));
  }

  #num(e: Expr, span?: Span): NumFn {
    const m = this.m;
    const T = m.threads;
    switch (e.kind) {
      case "IntImm":
      case "FloatImm": {
        const c = hostScalar(e.value, e.dtype) as number;
        return () => c;
      }
      case "Var": {
        const regs = m.num;
        const base = this.#slot(e, span) * T;
        return (t) => regs[base + t]!;
      }
      case "Special":
        return this.#special(e.name);
      case "Binary": {
        const a = this.num(e.a, span);
        const b = this.num(e.b, span);
        if (e.dtype === "int32") {
          if (e.op === "add")
            return e.b.kind === "IntImm"
              ? (
                  (c) => (t: number) =>
                    (a(t) + c) | 0
                )(hostScalar(e.b.value, "int32") as number)
              : (t) => (a(t) + b(t)) | 0;
          if (e.op === "sub") return (t) => (a(t) - b(t)) | 0;
          if (e.op === "mul")
            return e.b.kind === "IntImm"
              ? (
                  (c) => (t: number) =>
                    Math.imul(a(t), c)
                )(hostScalar(e.b.value, "int32") as number)
              : (t) => Math.imul(a(t), b(t));
        }
        const op = binaryFn(e.op, e.dtype, span) as (x: number, y: number) => number;
        return (t) => op(a(t), b(t));
      }
      case "Compare": {
        const cmp = compareOpDef(e.op).sim as Extract<SimSemantics, { kind: "thread" }>;
        const dts = [e.a.dtype, e.a.dtype];
        const f = cmp.make(dts, "bool") as (x: SimValue, y: SimValue) => number;
        if (isBigValue(e.a.dtype)) {
          const a = this.big(e.a, span);
          const b = this.big(e.b, span);
          return (t) => f(a(t), b(t));
        }
        const a = this.num(e.a, span);
        const b = this.num(e.b, span);
        return (t) => f(a(t), b(t));
      }
      case "Logical": {
        const a = this.num(e.a, span);
        const b = this.num(e.b, span);
        return e.op === "and" ? (t) => a(t) & b(t) : (t) => a(t) | b(t);
      }
      case "Not": {
        const a = this.num(e.a, span);
        return (t) => (a(t) ? 0 : 1);
      }
      case "Cast":
        return this.#cast(e, span) as NumFn;
      case "IfThenElse":
        return this.#select(this.num(e.cond, span), this.num(e.t, span), this.num(e.f, span));
      case "BufferLoad":
        return this.#load(e, span) as NumFn;
      case "BufferPtr": {
        const w = placementOf(this.layout, e.buffer, span);
        const off = this.index(e.offset, span);
        const eb = dtypeBytes(e.buffer.dtype);
        const base = w.space === "shared" ? w.placed.base : w.space === "local" ? w.placed.base : 0;
        return (t) => base + off(t) * eb;
      }
      case "CallExpr":
        return this.#call(e, span) as NumFn;
    }
  }

  /**
   * Compile `f`'s expressions, collecting the warp collectives they contain; a statement runs the
   * returned `runs` over its lanes before its own closure (see Collective).
   */
  collect<R>(f: () => R): { value: R; runs: CollectiveRun[] } {
    const saved = this.#runs;
    const runs: CollectiveRun[] = [];
    this.#runs = runs;
    try {
      return { value: f(), runs };
    } finally {
      this.#runs = saved;
    }
  }
  #runs: CollectiveRun[] | undefined;

  /**
   * An op call, by its record's simulator semantics: a per-thread function of the operands, a
   * warp collective, or an action of the machine (`mbarrier.try_wait.parity`, 0/1).
   */
  #call(e: Extract<Expr, { kind: "CallExpr" }>, span?: Span): (t: number) => SimValue {
    const m = this.m;
    const op = opOf(e.op, "value", e.span ?? span);
    const sem = op.sim;
    if (sem.kind === "machine") {
      const value = machineAction(sem.effect).value;
      if (!value) return unsupported(e.op, span);
      return value({ ec: this, op, fx: sem.effect, args: e.args, at: e.span ?? span, span });
    }
    const args = e.args.map((a) => this.any(a, span) as (t: number) => SimValue);
    const dts = e.args.map((a) => a.dtype);
    if (sem.kind === "warp") {
      invariant(this.#runs, `warp collective ${e.op} compiled outside a statement`);
      const c = new Collective(m, op, dts, e.dtype, args, m.site(e.span ?? span));
      this.#runs.push(c.run);
      const r = c.results;
      return (t) => r[t]!;
    }
    if (sem.kind === "fragment") return unsupported(e.op, span); // statement ops only
    const fn = sem.make(dts, e.dtype);
    switch (args.length) {
      case 0:
        return () => fn();
      case 1: {
        const [a] = args as [(t: number) => SimValue];
        return (t) => fn(a(t));
      }
      case 2: {
        const [a, b] = args as [(t: number) => SimValue, (t: number) => SimValue];
        return (t) => fn(a(t), b(t));
      }
      case 3: {
        const [a, b, c] = args as [
          (t: number) => SimValue,
          (t: number) => SimValue,
          (t: number) => SimValue,
        ];
        return (t) => fn(a(t), b(t), c(t));
      }
      default:
        return (t) => fn(...args.map((a) => a(t)));
    }
  }

  /** An mbarrier operand (the BufferPtr of a shared uint64 element): its shared byte address. */
  bar(e: Expr, span?: Span): { addr: NumFn; bb: BarBuffer } {
    if (e.kind !== "BufferPtr") {
      throw new TirxError(
        "TX4011",
        "an mbarrier operand must be the address of an mbarrier object: bars.ptr([i]) of a shared uint64 buffer",
        e.span ?? span,
      );
    }
    const w = placementOf(this.layout, e.buffer, span);
    if (w.space !== "shared") {
      throw new TirxError(
        "TX4011",
        `mbarrier objects live in shared memory; ${bufferName(e.buffer)} is not shared`,
        e.span ?? span,
      );
    }
    // The address in the thread's CTA's shared window (mbarrier state is kept by absolute byte).
    const local = this.num(e, span);
    const win = this.m.win;
    return { addr: (t) => local(t) + win[t]!, bb: { name: e.buffer.name, placed: w.placed } };
  }

  #big(e: Expr, span?: Span): BigFn {
    const m = this.m;
    switch (e.kind) {
      case "IntImm":
      case "FloatImm": {
        const c = hostScalar(e.value, e.dtype) as bigint;
        return () => c;
      }
      case "Var": {
        const regs = m.big;
        const base = this.#slot(e, span) * m.threads;
        return (t) => regs[base + t]!;
      }
      case "Binary": {
        const a = this.big(e.a, span);
        const b = this.big(e.b, span);
        const op = binaryFn(e.op, e.dtype, span) as (x: bigint, y: bigint) => bigint;
        return (t) => op(a(t), b(t));
      }
      case "Cast":
        return this.#cast(e, span) as BigFn;
      case "IfThenElse":
        return this.#select(this.num(e.cond, span), this.big(e.t, span), this.big(e.f, span));
      case "BufferLoad":
        return this.#load(e, span) as BigFn;
      case "BufferPtr": {
        // A generic address for global tensors: parameter k's memory starts at (k + 1) << 40.
        const w = placementOf(this.layout, e.buffer, span);
        const off = this.index(e.offset, span);
        const eb = dtypeBytes(e.buffer.dtype);
        const base = w.space === "global" ? (w.param + 1) * 2 ** 40 : w.placed.base;
        return (t) => BigInt(base + off(t) * eb);
      }
      case "CallExpr":
        return this.#call(e, span) as BigFn;
      default: {
        const f = this.#num(e, span);
        return (t) => BigInt(f(t));
      }
    }
  }

  /** The register slot of variable `e`. */
  #slot(e: Extract<Expr, { kind: "Var" }>, span?: Span): number {
    const s = this.layout.slots.get(e.id);
    if (!s)
      throw new TirxError(
        "TX2001",
        `variable "${e.name}" is used outside the scope that defines it`,
        span,
      );
    return s.slot;
  }

  /** A Cast: its operand compiled as its own kind (number or bigint), then converted. */
  #cast(e: Extract<Expr, { kind: "Cast" }>, span?: Span): (t: number) => number | bigint {
    const g = conversion(e.value.dtype, e.dtype).f as (x: number | bigint) => number | bigint;
    const f = this.any(e.value, span);
    return (t) => g(f(t));
  }

  /**
   * IfThenElse: both arms are evaluated, as with PTX selp; the arm not selected runs
   * speculatively (only its out-of-bounds reports stand).
   */
  #select<V>(c: NumFn, a: (t: number) => V, b: (t: number) => V): (t: number) => V {
    const m = this.m;
    return (t) => {
      if (c(t)) {
        const x = a(t);
        m.speculative++;
        try {
          b(t);
        } finally {
          m.speculative--;
        }
        return x;
      }
      m.speculative++;
      try {
        a(t);
      } finally {
        m.speculative--;
      }
      return b(t);
    };
  }

  /** Set while a batched statement's expressions compile: their loads defer checks (compile/batched.ts). */
  batching = false;

  /** Set while {@link reread} compiles: loads read memory without checks. */
  #reread = false;

  /**
   * Compile `e` (int32, an author index of an access) for a second evaluation by the access's
   * axis check (compile/axis-check.ts): the same values, but its loads read memory with no check,
   * report, record or site (`compileRawLoad`), since the access's own evaluation of its offset
   * made them. Nothing it compiles joins the statement's generated function or batch. `e` must
   * call no op with effects and no warp collective (core's `reevaluable`, which the
   * `axis-checks` pass ensures).
   */
  reread(e: Expr, span?: Span): NumFn {
    const saved = { ready: this.#ready, shared: this.shared, batching: this.batching };
    this.#ready = new Map();
    this.shared = undefined;
    this.batching = false;
    this.#reread = true;
    try {
      return this.index(e, span);
    } finally {
      this.#reread = false;
      this.#ready = saved.ready;
      this.shared = saved.shared;
      this.batching = saved.batching;
    }
  }

  /**
   * Set while a statement that moves to a generated function compiles (compile/jit.ts): each
   * load's element closure is registered there and reads its offset from a scratch array.
   */
  shared: Shared | undefined;

  #load(e: Extract<Expr, { kind: "BufferLoad" }>, span?: Span): NumFn | BigFn {
    const m = this.m;
    const off = this.index(e.offset, span);
    if (this.#reread) return compileRawLoad(m, this.layout, e.buffer, e.dtype, off);
    const shared = this.shared;
    const site = m.site(span);
    // The author indices the verifier left to the run (after the offset: its sites come first).
    const axes = axisCheck(this, e.buffer, e.index, site, "reads", span);
    if (shared === undefined) {
      const at = axes ? checkedOffset(off, axes) : off;
      return compileLoad(m, this.layout, e.buffer, e.dtype, at, site, this.batching);
    }
    const offs = new Float64Array(m.threads);
    const scratch: NumFn = (t) => offs[t]!;
    const load = compileLoad(
      m,
      this.layout,
      e.buffer,
      e.dtype,
      axes ? checkedOffset(scratch, axes) : scratch,
      site,
      this.batching,
    ) as NumFn;
    // A vector access reads no element closure: not for a load with indices to check.
    const vec =
      this.batching && !axes
        ? vecAccess(m, this.layout, e.buffer, e.dtype, offs, site, false)
        : undefined;
    shared.loads.push({ offs, load, vec });
    return (t) => {
      offs[t] = off(t);
      return load(t);
    };
  }

  #special(name: string): NumFn {
    const m = this.m;
    switch (name) {
      case "tid.x":
        return (
          (a) => (t: number) =>
            a[t]!
        )(m.tidx);
      case "tid.y":
        return (
          (a) => (t: number) =>
            a[t]!
        )(m.tidy);
      case "tid.z":
        return (
          (a) => (t: number) =>
            a[t]!
        )(m.tidz);
      // In a cluster of several CTAs: the first CTA's %ctaid plus the thread's CTA's place in it.
      case "ctaid.x":
        return m.ctas > 1 ? (t) => m.cx + m.rx[t]! : () => m.cx;
      case "ctaid.y":
        return m.ctas > 1 ? (t) => m.cy + m.ry[t]! : () => m.cy;
      case "ctaid.z":
        return m.ctas > 1 ? (t) => m.cz + m.rz[t]! : () => m.cz;
      default: {
        const axis = "xyz".indexOf(name[name.length - 1]!);
        if (name.startsWith("nctaid")) return () => m.opts.grid[axis]!;
        const c = m.block[axis]!;
        return () => c;
      }
    }
  }
}

/**
 * The simulator function of binary operator `op` on `dt`, from its op-table record.
 * @throws TirxError TX2005 for a dtype the operator is not defined on.
 */
function binaryFn(op: BinaryOp, dt: DType, span?: Span): ThreadFn {
  const rec = binaryOp(op);
  rec.result([dt, dt], span);
  const sem = rec.sim;
  invariant(sem.kind === "thread", `binary operator ${op} has no per-thread semantics`);
  return sem.make([dt, dt], dt);
}

/** An intrinsic the simulator cannot evaluate: TX2010 when (and only if) a thread reaches it. */
function unsupported(op: string, span?: Span): () => never {
  return () => {
    throw new TirxError("TX2010", `intrinsic "${op}" is not supported by the simulator`, span);
  };
}
