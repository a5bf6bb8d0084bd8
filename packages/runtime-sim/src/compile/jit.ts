import {
  binaryOp,
  compareOpDef,
  exprHeight,
  invariant,
  isBigValue,
  walkExpr,
  type Expr,
  type SimSemantics,
  type SimValue,
  type Stmt,
  SHALLOW_HEIGHT,
} from "@tirx-ts/core";
import { hostScalar, conversion } from "../numeric/cast.js";
import type { NumFn, ThreadFn } from "./access.js";
import type { Exec, ExprCompiler } from "./compiled.js";
import type { Machine } from "../exec/machine.js";
import { AffineCopy, vectorSource, type VecAccess } from "./vector.js";
import { Affine, affineOf } from "./affine.js";

/**
 * Store and Let statements of plain arithmetic compiled into one generated JavaScript function
 * each: the lane loop with the whole expression written out (`(a + b) | 0`, `Math.imul(a, b)`,
 * register reads `R[base + t]`), where the closure compiler (compile/expr.ts) calls one closure
 * per expression node. V8 keeps type feedback per function, and the closures of one node kind are
 * shared by every statement, so their calls are megamorphic and never inlined; a generated
 * function per statement is monomorphic throughout. Generating and warming a function costs more
 * than a short run saves, so a statement starts on its closures and moves to its generated
 * function once it has run for JIT_AFTER_LANES lanes (`tiered`).
 *
 * Semantics are the closure compiler's, from the same sources: operators other than int32
 * add/sub/mul and every compare and cast call the op table's simulator function; loads and the
 * store call the very element closures the closures call (compile/access.ts: bounds, hazard
 * checks, codecs, one site each), their element offset and value passed through per-site scratch
 * arrays (`Shared`). Evaluation order is the closures': the store's offset, then its value,
 * operands left to right. Only what `jitable` accepts is generated: no select, op call, address
 * or 64-bit integer.
 */

/** Lanes a statement runs on its closures before it moves to its generated function. */
export const JIT_AFTER_LANES = 4096;

/** The element closures of one statement, shared by its closures and its generated function. */
export interface Shared {
  /**
   * Each BufferLoad occurrence, in the order the closure compiler meets them (a load after the
   * loads of its offset; operands left to right; a Store's offset before its value): its offset
   * scratch (per thread) and its element load reading it. One IR node used twice is two loads
   * with a site each, as in the closures.
   */
  readonly loads: {
    readonly offs: Float64Array;
    readonly load: NumFn;
    /** Its vector access (a batched statement's load, compile/vector.ts). */
    readonly vec: VecAccess | undefined;
  }[];
  /** A Store's offset and value scratch and its element store reading them. */
  store?: {
    readonly offs: Float64Array;
    readonly vals: Float64Array;
    readonly st: ThreadFn;
    readonly vec: VecAccess | undefined;
  };
}

/**
 * Highest expression a statement may have and still be generated. The generator writes an
 * expression out by recursion and V8 parses the nested text by recursion too; a deeper one (up
 * to MAX_EXPR_DEPTH) keeps running on its closures, which compute the same values.
 */
export const JIT_MAX_HEIGHT = SHALLOW_HEIGHT;

/** True when `s` is a Store or Let the generator writes out (see the file comment). */
export function jitable(ec: ExprCompiler, s: Stmt): boolean {
  if (s.kind === "Let") {
    const slot = ec.layout.slots.get(s.var.id);
    return slot !== undefined && !slot.wide && plain(ec, s.value);
  }
  if (s.kind !== "Store") return false;
  if (isBigValue(s.dtype)) return false;
  return plain(ec, s.offset) && plain(ec, s.value);
}

/** Every node of `e` is one the generator writes out, and `e` is not too high for it. */
function plain(ec: ExprCompiler, e: Expr): boolean {
  if (exprHeight(e) > JIT_MAX_HEIGHT) return false;
  let ok = true;
  walkExpr(e, (x) => {
    if (!ok) return;
    if (isBigValue(x.dtype)) ok = false;
    else if (x.kind === "Var") ok = ec.layout.slots.get(x.id)?.wide === false;
    else if (x.kind === "Special")
      ok = x.name.startsWith("tid.") || (ec.m.ctas === 1 && x.name.startsWith("ctaid."));
    else if (x.kind === "Compare" || x.kind === "Cast")
      ok = !isBigValue(x.kind === "Cast" ? x.value.dtype : x.a.dtype);
    else if (x.kind === "BufferLoad") ok = !isBigValue(x.offset.dtype);
    else ok = ["IntImm", "FloatImm", "Binary", "Logical", "Not"].includes(x.kind);
  });
  return ok;
}

/**
 * `closures` until the statement has run for `m.opts.jitAfter` lanes (SimOptions.jitAfter, default
 * JIT_AFTER_LANES), then the generated function `make` builds (once; its closures when it
 * builds none).
 */
export function tiered(m: Machine, closures: Exec, make: () => Exec | undefined): Exec {
  let lanes = 0;
  let run = closures;
  return (ls, n) => {
    if (lanes >= 0) {
      lanes += n;
      if (lanes > m.opts.jitAfter) {
        lanes = -1;
        run = make() ?? closures;
      }
    }
    run(ls, n);
  };
}

/**
 * The generated function of statement `s` (jitable), calling the element closures of `shared`;
 * undefined when some node cannot be written out after all (its closures keep running it).
 */
export function jitStatement(ec: ExprCompiler, s: Stmt, shared: Shared): Exec | undefined {
  const g = new Gen(ec, shared);
  const span = s.span;
  let body: string;
  if (s.kind === "Let") {
    const slot = ec.layout.slots.get(s.var.id)!;
    const v = g.expr(s.value, span);
    if (v === undefined) return undefined;
    body = `${g.regs()}[${slot.slot * ec.m.threads} + t] = ${v};`;
  } else {
    invariant(s.kind === "Store" && shared.store !== undefined, "a jitable Store has its store");
    const { offs, vals, st } = shared.store;
    const off = g.expr(s.offset, span);
    const val = g.expr(s.value, span);
    if (off === undefined || val === undefined) return undefined;
    body = `${g.capture(offs)}[t] = ${off}; ${g.capture(vals)}[t] = ${val}; ${g.capture(st)}(t);`;
  }
  if (!g.allLoads) return undefined;
  const loop = `for (; i < n; i++) {\n    const t = lanes[i];\n    ${body}\n  }`;
  const vector = vectorPart(ec, s, shared, g) ?? "";
  const names = g.env.map((_, i) => `c${i}`);
  const src = `return function run(lanes, n) {\n  let i = 0;\n  ${vector}\n  ${loop}\n};`;
  const make = new Function(...names, src) as (...env: unknown[]) => Exec;
  return make(...g.env);
}

/**
 * The vector loop of statement `s` (compile/vector.ts), run before the element loop, which goes
 * on from the lane it stopped at; undefined when `s` is not batched or an offset reads memory.
 */
function vectorPart(ec: ExprCompiler, s: Stmt, shared: Shared, g: Gen): string | undefined {
  const list: VecAccess[] = [];
  for (const l of shared.loads) {
    if (l.vec === undefined) return undefined;
    list.push(l.vec);
  }
  const sv = shared.store?.vec;
  if (s.kind === "Store" && sv === undefined) return undefined;
  if (sv !== undefined) list.push(sv);
  if (list.length === 0) return undefined;
  g.vector = true;
  g.restart();
  try {
    const span = s.span;
    const offsets = g.vecOffsets;
    let effect: string;
    if (s.kind === "Let") {
      const slot = ec.layout.slots.get(s.var.id)!;
      const v = g.expr(s.value, span);
      if (v === undefined) return undefined;
      effect = `${g.regs()}[${slot.slot * ec.m.threads} + t] = ${v};`;
    } else {
      invariant(s.kind === "Store" && sv !== undefined, "a vector Store has its store");
      const off = g.offset(s.offset, span);
      const val = off === undefined ? undefined : g.expr(s.value, span);
      if (val === undefined) return undefined;
      const k = list.length - 1;
      offsets[k] = off!;
      effect = `${g.capture(sv.store)}(d${k}, a${k}, ${val});`;
    }
    if (g.vecFailed || !g.allLoads) return undefined;
    return vectorSource(
      (v) => g.capture(v),
      ec.m,
      list,
      g.offsetLets,
      offsets,
      effect,
      copyOf(ec, s, list),
    );
  } finally {
    g.vector = false;
  }
}

/** Dtypes whose element load and store keep every bit (the codec is the identity on them). */
const BIT_EXACT: ReadonlySet<string> = new Set([
  "int8",
  "uint8",
  "int16",
  "uint16",
  "int32",
  "uint32",
]);

/**
 * The block copy of statement `s` (compile/vector.ts, AffineCopy): a Store of a bare load of its
 * own integer dtype (BIT_EXACT) whose two offsets have affine forms; undefined otherwise.
 */
function copyOf(ec: ExprCompiler, s: Stmt, list: readonly VecAccess[]): AffineCopy | undefined {
  if (s.kind !== "Store" || s.value.kind !== "BufferLoad" || s.value.dtype !== s.dtype) {
    return undefined;
  }
  // Only where loading and storing the element keeps its bits (a bool store writes 0 or 1; a
  // float copy is a uint copy by then, compile/stmt.ts bitCopy).
  if (!BIT_EXACT.has(s.dtype)) return undefined;
  if (list.length !== 2) return undefined;
  const af = new Affine(ec.m);
  const lo = affineOf(ec, af, s.value.offset);
  const so = affineOf(ec, af, s.offset);
  if (!lo || !so) return undefined;
  return new AffineCopy(ec.m, list[0]!, lo, list[1]!, so, af);
}

/** The generator of one statement: the values its source names (`c<k>`) and the expressions. */
class Gen {
  readonly env: unknown[] = [];
  #regs: string | undefined;
  /** The next of `shared.loads` (the generator meets the loads in the closures' order). */
  #next = 0;

  /**
   * Vector mode (compile/vector.ts): load k is written as a raw element load `load(dk, ak)` of
   * the vector loop's DataView and address, and its offset's source goes to `vecOffsets[k]`.
   */
  vector = false;
  /** Vector mode: a load's offset reads memory (no vector passes). */
  vecFailed = false;
  /** Vector mode: each load's offset source, by its index in `shared.loads`. */
  readonly vecOffsets: string[] = [];
  /** Nesting depth inside a load's offset. */
  #inOffset = 0;

  /** JavaScript source of element offset `e` (see `expr`); in vector mode it may not load. */
  offset(e: Expr, span: Stmt["span"]): string | undefined {
    this.#inOffset++;
    try {
      return this.expr(e, span);
    } finally {
      this.#inOffset--;
    }
  }

  /** Vector mode: `const vk = <source>;` of each arithmetic node of the offsets, in order. */
  readonly offsetLets: string[] = [];
  readonly #lets = new Map<string, string>();

  /**
   * In a vector loop's offsets, the name of a local holding `src` (one per distinct source, so
   * an index shared by several accesses is computed once per lane); elsewhere `src` itself.
   */
  #named(src: string | undefined): string | undefined {
    if (src === undefined || !this.vector || this.#inOffset === 0) return src;
    let name = this.#lets.get(src);
    if (name === undefined) {
      name = `v${this.#lets.size}`;
      this.#lets.set(src, name);
      this.offsetLets.push(`const ${name} = ${src};`);
    }
    return name;
  }

  /** JavaScript source of binary node `e` of operands `a`, `b`. */
  #binary(
    e: Extract<Expr, { kind: "Binary" }>,
    a: string,
    b: string,
    span: Stmt["span"],
  ): string | undefined {
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

  /** Start a second traversal (the loads met again from the first). */
  restart(): void {
    this.#next = 0;
  }

  /** True when every load of `shared` was written out (the two traversals agree). */
  get allLoads(): boolean {
    return this.#next === this.shared.loads.length;
  }

  constructor(
    readonly ec: ExprCompiler,
    readonly shared: Shared,
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
    if (isBigValue(e.dtype)) return undefined;
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
        return this.#named(this.#binary(e, a!, b, span));
      }
      case "Compare": {
        if (isBigValue(e.a.dtype)) return undefined;
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
        if (isBigValue(e.value.dtype)) return undefined;
        const a = this.expr(e.value, span);
        if (a === undefined) return undefined;
        return `${this.capture(conversion(e.value.dtype, e.dtype).f)}(${a})`;
      }
      case "BufferLoad": {
        if (this.vector && this.#inOffset > 0) this.vecFailed = true;
        const off = this.offset(e.offset, span);
        const acc = this.shared.loads[this.#next++];
        if (off === undefined || acc === undefined) return undefined;
        if (this.vector) {
          const k = this.#next - 1;
          if (acc.vec === undefined) return undefined;
          this.vecOffsets[k] = off;
          return `${this.capture(acc.vec.load)}(d${k}, a${k})`;
        }
        return `(${this.capture(acc.offs)}[t] = ${off}, ${this.capture(acc.load)}(t))`;
      }
      default:
        return undefined;
    }
  }
}
