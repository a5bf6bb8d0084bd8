import {
  binaryOp,
  compareOpDef,
  isWideInt,
  type Expr,
  type SimSemantics,
  type SimValue,
  type Stmt,
} from "@tirx-ts/core";
import { hostScalar, conversion } from "../numeric/cast.js";
import { compileLoad, compileStore, type NumFn } from "./access.js";
import type { ExprCompiler } from "./expr.js";
import type { Exec } from "./stmt.js";

/**
 * Store and Let statements of plain arithmetic compiled into one generated JavaScript function
 * each: the lane loop with the whole expression written out (`(a + b) | 0`, `Math.imul(a, b)`,
 * register reads `R[base + t]`), where the closure compiler (compile/expr.ts) calls one closure
 * per expression node. V8 keeps type feedback per function, and the closures of one node kind are
 * shared by every statement, so their calls are megamorphic and never inlined; a generated
 * function per statement is monomorphic throughout.
 *
 * Semantics are the closure compiler's, from the same sources: operators other than int32
 * add/sub/mul and every compare and cast call the op table's simulator function; loads and the
 * store call the element closures of compile/access.ts (bounds, hazard checks, codecs), their
 * element offset passed through a per-site scratch array. Evaluation order is the closures':
 * the store's offset, then its value, operands left to right. An expression with anything else
 * (a select, an op call, an address, a 64-bit integer) is not generated: `jitStatement` returns
 * undefined and the closures run it.
 */
export function jitStatement(ec: ExprCompiler, s: Stmt, batched: boolean): Exec | undefined {
  if (s.kind !== "Store" && s.kind !== "Let") return undefined;
  const g = new Gen(ec, batched);
  const span = s.span;
  let body: string | undefined;
  if (s.kind === "Let") {
    const slot = ec.layout.slots.get(s.var.id);
    const v = slot && !slot.wide ? g.expr(s.value, span) : undefined;
    if (v === undefined) return undefined;
    body = `${g.regs()}[${slot!.slot * ec.m.threads} + t] = ${v};`;
  } else {
    if (isWideInt(s.dtype) || isWideInt(s.offset.dtype)) return undefined;
    const off = g.expr(s.offset, span);
    const val = off === undefined ? undefined : g.expr(s.value, span);
    if (val === undefined) return undefined;
    const T = ec.m.threads;
    const offs = new Float64Array(T);
    const vals = new Float64Array(T);
    const st = compileStore(
      ec.m,
      ec.layout,
      s.buffer,
      s.dtype,
      (t) => offs[t]!,
      (t) => vals[t]!,
      ec.m.site(span),
      batched,
    );
    body = `${g.capture(offs)}[t] = ${off}; ${g.capture(vals)}[t] = ${val}; ${g.capture(st)}(t);`;
  }
  const names = g.env.map((_, i) => `c${i}`);
  const src = `return function run(lanes, n) {\n  for (let i = 0; i < n; i++) {\n    const t = lanes[i];\n    ${body}\n  }\n};`;
  const make = new Function(...names, src) as (...env: unknown[]) => Exec;
  return make(...g.env);
}

/** The generator of one statement: the values its source names (`c<k>`) and the expressions. */
class Gen {
  readonly env: unknown[] = [];
  #regs: string | undefined;

  constructor(
    readonly ec: ExprCompiler,
    readonly batched: boolean,
  ) {}

  /** The name of captured value `v`. */
  capture(v: unknown): string {
    let k = this.env.indexOf(v);
    if (k < 0) k = this.env.push(v) - 1;
    return `c${k}`;
  }

  /** The number registers. */
  regs(): string {
    return (this.#regs ??= this.capture(this.ec.m.num));
  }

  /** JavaScript source of `e` (a number of `e.dtype`, thread `t`), or undefined when not generated. */
  expr(e: Expr, span: Stmt["span"]): string | undefined {
    if (isWideInt(e.dtype)) return undefined;
    // A node's own span locates what it reports, else its nearest enclosing one (as in ExprCompiler).
    span = e.span ?? span;
    const m = this.ec.m;
    switch (e.kind) {
      case "IntImm":
      case "FloatImm": {
        const c = hostScalar(e.value, e.dtype) as number;
        return Number.isFinite(c) && !Object.is(c, -0) ? `(${c})` : this.capture(c);
      }
      case "Var": {
        const slot = this.ec.layout.slots.get(e.id);
        if (!slot || slot.wide) return undefined;
        return `${this.regs()}[${slot.slot * m.threads} + t]`;
      }
      case "Special": {
        if (e.name === "tid.x") return `${this.capture(m.tidx)}[t]`;
        if (e.name === "tid.y") return `${this.capture(m.tidy)}[t]`;
        if (e.name === "tid.z") return `${this.capture(m.tidz)}[t]`;
        if (m.ctas === 1 && e.name.startsWith("ctaid.")) {
          return `${this.capture(m)}.c${e.name[e.name.length - 1]}`;
        }
        return undefined;
      }
      case "Binary": {
        const a = this.expr(e.a, span);
        const b = a === undefined ? undefined : this.expr(e.b, span);
        if (b === undefined) return undefined;
        if (e.dtype === "int32") {
          if (e.op === "add") return `((${a} + ${b}) | 0)`;
          if (e.op === "sub") return `((${a} - ${b}) | 0)`;
          if (e.op === "mul") return `Math.imul(${a}, ${b})`;
        }
        const rec = binaryOp(e.op);
        rec.result([e.dtype, e.dtype], span);
        const sem = rec.sim;
        if (sem.kind !== "thread") return undefined;
        return `${this.capture(sem.make([e.dtype, e.dtype], e.dtype))}(${a}, ${b})`;
      }
      case "Compare": {
        if (isWideInt(e.a.dtype)) return undefined;
        const cmp = compareOpDef(e.op).sim as Extract<SimSemantics, { kind: "thread" }>;
        const f = cmp.make([e.a.dtype, e.a.dtype], "bool") as (x: SimValue, y: SimValue) => number;
        const a = this.expr(e.a, span);
        const b = a === undefined ? undefined : this.expr(e.b, span);
        if (b === undefined) return undefined;
        return `${this.capture(f)}(${a}, ${b})`;
      }
      case "Logical": {
        const a = this.expr(e.a, span);
        const b = a === undefined ? undefined : this.expr(e.b, span);
        if (b === undefined) return undefined;
        return `(${a} ${e.op === "and" ? "&" : "|"} ${b})`;
      }
      case "Not": {
        const a = this.expr(e.a, span);
        return a === undefined ? undefined : `(${a} ? 0 : 1)`;
      }
      case "Cast": {
        if (isWideInt(e.value.dtype)) return undefined;
        const a = this.expr(e.value, span);
        if (a === undefined) return undefined;
        return `${this.capture(conversion(e.value.dtype, e.dtype).f)}(${a})`;
      }
      case "BufferLoad": {
        if (isWideInt(e.offset.dtype)) return undefined;
        const off = this.expr(e.offset, span);
        if (off === undefined) return undefined;
        const offs = new Float64Array(m.threads);
        const load = compileLoad(
          m,
          this.ec.layout,
          e.buffer,
          e.dtype,
          (t) => offs[t]!,
          m.site(span),
          this.batched,
        ) as NumFn;
        return `(${this.capture(offs)}[t] = ${off}, ${this.capture(load)}(t))`;
      }
      default:
        return undefined;
    }
  }
}
