import {
  constInt,
  isWideInt,
  stmtChildren,
  TirxError,
  walkExpr,
  type Expr,
  type Stmt,
  type Span,
  type VerifiedFunc,
} from "@tirx-ts/core";
import { bigWrapper, intWrapper } from "../numeric/int.js";
import { compileStore, type BigFn, type NumFn } from "./access.js";
import { compileCpAsync } from "./cp-async.js";
import { compileBulkCopy } from "./bulk.js";
import type { ExprCompiler } from "./expr.js";

/**
 * A compiled statement: runs for the active threads `lanes[0..n)` of the CTA in lockstep. Control
 * flow splits the lane list (each If/For/While node owns its scratch lane arrays, which is safe
 * because the IR has no recursion); a barrier is an ordinary statement that must see every thread.
 */
export type Exec = (lanes: Int32Array, n: number) => void;

const nothing: Exec = () => {};

/** Spin loops longer than this are reported as TX6006 and cut off. */
export const MAX_WHILE_ITERATIONS = 1 << 24;

/** Compile statement `s` of `vf`. */
export function compileStmt(ec: ExprCompiler, vf: VerifiedFunc, s: Stmt): Exec {
  const m = ec.m;
  const T = m.threads;
  switch (s.kind) {
    case "Seq": {
      const parts = s.stmts.map((c) => compileStmt(ec, vf, c)).filter((e) => e !== nothing);
      if (parts.length === 1) return parts[0]!;
      return (lanes, n) => {
        for (let i = 0; i < parts.length; i++) parts[i]!(lanes, n);
      };
    }
    case "DeviceEntry":
      return compileStmt(ec, vf, s.body);
    case "Alloc":
      return nothing;
    case "Let": {
      const set = setter(ec, s.var.id);
      const v = ec.any(s.value, s.span);
      return (lanes, n) => {
        for (let i = 0; i < n; i++) {
          const t = lanes[i]!;
          set(t, v(t));
        }
      };
    }
    case "Store": {
      const st = compileStore(
        m,
        ec.layout,
        s.buffer,
        s.dtype,
        ec.index(s.offset, s.span),
        ec.any(s.value, s.span),
        m.site(s.span),
      );
      return (lanes, n) => {
        for (let i = 0; i < n; i++) st(lanes[i]!);
      };
    }
    case "If": {
      const cond = ec.num(s.cond, s.span);
      const then = compileStmt(ec, vf, s.then);
      const other = s.else ? compileStmt(ec, vf, s.else) : nothing;
      const yes = new Int32Array(T);
      const no = new Int32Array(T);
      return (lanes, n) => {
        let a = 0;
        let b = 0;
        for (let i = 0; i < n; i++) {
          const t = lanes[i]!;
          if (cond(t)) yes[a++] = t;
          else no[b++] = t;
        }
        if (a > 0) then(yes, a);
        if (b > 0) other(no, b);
      };
    }
    case "For":
      return compileFor(ec, vf, s);
    case "While": {
      const cond = ec.num(s.cond, s.span);
      const body = compileStmt(ec, vf, s.body);
      const live = new Int32Array(T);
      const site = m.site(s.span);
      return (lanes, n) => {
        live.set(lanes.subarray(0, n));
        for (let iter = 0; ; iter++) {
          let k = 0;
          for (let i = 0; i < n; i++) if (cond(live[i]!)) live[k++] = live[i]!;
          n = k;
          if (n === 0) return;
          if (iter === MAX_WHILE_ITERATIONS) {
            m.hazard(
              "TX6006",
              `a while loop of CTA ${m.cta()} ran ${MAX_WHILE_ITERATIONS} iterations; its condition never becomes false`,
              site,
            );
            return;
          }
          body(live, n);
        }
      };
    }
    case "Call":
      return compileCall(ec, s.op, s.args, s.span);
    case "TileApply": {
      const plan = vf.plans.get(s);
      if (!plan)
        throw new TirxError(
          "TX2010",
          `tile.apply "${s.opcode}" has no verified plan; run it through verify() first`,
          s.span,
        );
      if (plan.kind === "cp.async.bulk") return compileBulkCopy(ec, s, plan);
      if (plan.kind !== "cp.async") return unsupported(`tile pattern "${s.opcode}"`, s.span);
      return compileCpAsync(ec, s, plan);
    }
  }
}

/** A register write of variable `id` for thread t. */
function setter(ec: ExprCompiler, id: number): (t: number, v: number | bigint) => void {
  const slot = ec.layout.slots.get(id)!;
  const T = ec.m.threads;
  const base = slot.slot * T;
  if (slot.wide) {
    const regs = ec.m.big;
    return (t, v) => void (regs[base + t] = v as bigint);
  }
  const regs = ec.m.num;
  return (t, v) => void (regs[base + t] = v as number);
}

/**
 * The loop variable of a For: each thread's start and trip count (evaluated when the loop is
 * entered) and the variable's register, written at every iteration.
 */
class LoopVar {
  /** After `enter`: whether every lane has the same trip count. */
  uniform = true;
  readonly #lo: NumFn | undefined;
  readonly #loBig: BigFn | undefined;
  readonly #ext: NumFn;
  readonly #base: number;
  readonly #start: Float64Array;
  readonly #startBig: bigint[];
  readonly #count: Float64Array;
  readonly #num: Float64Array;
  readonly #big: bigint[];
  readonly #wrapN: ((x: number) => number) | undefined;
  readonly #wrapB: ((x: bigint) => bigint) | undefined;

  constructor(ec: ExprCompiler, s: Extract<Stmt, { kind: "For" }>) {
    const T = ec.m.threads;
    const wide = isWideInt(s.var.dtype);
    this.#lo = wide ? undefined : ec.num(s.min, s.span);
    this.#loBig = wide ? ec.big(s.min, s.span) : undefined;
    this.#ext = ec.index(s.extent, s.span);
    this.#base = ec.layout.slots.get(s.var.id)!.slot * T;
    this.#start = new Float64Array(T);
    this.#startBig = new Array<bigint>(T).fill(0n);
    this.#count = new Float64Array(T);
    this.#num = ec.m.num;
    this.#big = ec.m.big;
    this.#wrapN = wide
      ? undefined
      : s.var.dtype === "int32"
        ? (x: number) => x | 0
        : intWrapper(s.var.dtype);
    this.#wrapB = wide ? bigWrapper(s.var.dtype) : undefined;
  }

  /** Evaluate start and trip count for `lanes[0..n)`; returns the largest trip count. */
  enter(lanes: Int32Array, n: number): number {
    const lo = this.#lo;
    const loBig = this.#loBig;
    const ext = this.#ext;
    const start = this.#start;
    const startBig = this.#startBig;
    const count = this.#count;
    let most = 0;
    let uniform = true;
    for (let i = 0; i < n; i++) {
      const t = lanes[i]!;
      if (loBig) startBig[t] = loBig(t);
      else start[t] = lo!(t);
      const c = ext(t);
      count[t] = c;
      if (i > 0 && c !== count[lanes[0]!]) uniform = false;
      if (c > most) most = c;
    }
    this.uniform = uniform;
    return most;
  }

  /** The lanes of `lanes[0..n)` that run iteration `k`, into `sub`; returns how many. */
  running(lanes: Int32Array, n: number, k: number, sub: Int32Array): number {
    const count = this.#count;
    let a = 0;
    for (let i = 0; i < n; i++) if (k < count[lanes[i]!]!) sub[a++] = lanes[i]!;
    return a;
  }

  /** Set the variable to start + k for `active[0..a)`. */
  set(active: Int32Array, a: number, k: number): void {
    const base = this.#base;
    const wrapB = this.#wrapB;
    if (wrapB) {
      const big = this.#big;
      const startBig = this.#startBig;
      for (let i = 0; i < a; i++) {
        const t = active[i]!;
        big[base + t] = wrapB(startBig[t]! + BigInt(k));
      }
    } else {
      const num = this.#num;
      const start = this.#start;
      const wrapN = this.#wrapN!;
      for (let i = 0; i < a; i++) {
        const t = active[i]!;
        num[base + t] = wrapN(start[t]! + k);
      }
    }
  }
}

function compileFor(ec: ExprCompiler, vf: VerifiedFunc, s: Extract<Stmt, { kind: "For" }>): Exec {
  const v = new LoopVar(ec, s);
  const body = compileStmt(ec, vf, s.body);
  const sub = new Int32Array(ec.m.threads);
  return (lanes, n) => {
    const most = v.enter(lanes, n);
    for (let k = 0; k < most; k++) {
      let active = lanes;
      let a = n;
      if (!v.uniform) {
        a = v.running(lanes, n, k, sub);
        active = sub;
      }
      v.set(active, a, k);
      body(active, a);
    }
  };
}

function compileCall(ec: ExprCompiler, op: string, exprs: readonly Expr[], span?: Span): Exec {
  const m = ec.m;
  const au = m.async;
  const bu = m.bulk;
  const bars = m.bars;
  const T = m.threads;
  const args = exprs.map((a) => constInt(a) ?? 0);
  switch (op) {
    case "cp.async.commit_group":
      return (lanes, n) => {
        for (let i = 0; i < n; i++) au.commit(lanes[i]!);
      };
    case "cp.async.wait_group": {
      const keep = args[0]!;
      return (lanes, n) => {
        for (let i = 0; i < n; i++) au.wait(m, lanes[i]!, keep);
      };
    }
    case "cp.async.wait_all":
      return (lanes, n) => {
        for (let i = 0; i < n; i++) {
          au.commit(lanes[i]!);
          au.wait(m, lanes[i]!, 0);
        }
      };
    case "bar.sync": {
      const site = m.site(span);
      const seen = new Uint8Array(T);
      return (lanes, n) => {
        if (n !== T) {
          seen.fill(0);
          for (let i = 0; i < n; i++) seen[lanes[i]!] = 1;
          const missing = seen.indexOf(0);
          m.hazard(
            "TX6009",
            `cta_sync reached by ${n} of the ${T} threads of CTA ${m.cta()}; thread ${m.thread(missing)} does not reach it, so the barrier never releases`,
            site,
          );
        }
        m.epoch++;
        bars.barSync();
      };
    }
    case "mbarrier.init":
    case "mbarrier.arrive":
    case "mbarrier.arrive.expect_tx": {
      const site = m.site(span);
      const { addr, bb } = ec.bar(exprs[0]!, span);
      const val = exprs[1] ? ec.num(exprs[1], span) : undefined;
      if (op === "mbarrier.init") {
        return (lanes, n) => {
          for (let i = 0; i < n; i++) {
            const t = lanes[i]!;
            bars.init(m, t, addr(t), val!(t) >>> 0, bb, site);
          }
        };
      }
      return (lanes, n) => {
        for (let i = 0; i < n; i++) {
          const t = lanes[i]!;
          bars.arrive(m, t, addr(t), val ? val(t) >>> 0 : 0, bb, site);
        }
      };
    }
    case "cp.async.bulk.commit_group":
      return (lanes, n) => {
        for (let i = 0; i < n; i++) bu.commit(lanes[i]!);
      };
    case "cp.async.bulk.wait_group":
    case "cp.async.bulk.wait_group.read": {
      const keep = args[0]!;
      const readOnly = op.endsWith(".read");
      return (lanes, n) => {
        for (let i = 0; i < n; i++) bu.wait(m, lanes[i]!, keep, readOnly);
      };
    }
    // Fences order proxies; the simulator's accesses are sequentially consistent.
    case "fence.proxy.async.shared::cta":
    case "fence.mbarrier_init.release.cluster":
      return nothing;
    default:
      return unsupported(`intrinsic "${op}"`, span);
  }
}

/** A statement the simulator cannot run: TX2010 when (and only if) a thread reaches it. */
function unsupported(what: string, span?: Span): Exec {
  return () => {
    throw new TirxError("TX2010", `${what} is not supported by the simulator`, span);
  };
}

// ------------------------------------------------------------------ blocking statements

/**
 * A statement that can block (it contains an mbarrier wait loop), compiled into a generator over
 * its lanes: it yields when its lanes cannot proceed. Such statements are rare and short, so the
 * generator cost stays out of the ordinary (closure) path.
 */
export type GenExec = (lanes: Int32Array, n: number) => Generator<void, void, void>;

const blocking = new WeakMap<Stmt, boolean>();

function hasTryWait(e: Expr): boolean {
  let hit = false;
  walkExpr(e, (x) => {
    if (x.kind === "CallExpr" && x.op === "mbarrier.try_wait.parity") hit = true;
  });
  return hit;
}

/** A `while` whose condition tests an mbarrier (T.ptx.mbarrier.try_wait). */
function isWaitLoop(s: Stmt): s is Extract<Stmt, { kind: "While" }> {
  return s.kind === "While" && hasTryWait(s.cond);
}

/** True when `s` contains an mbarrier wait loop. */
export function blocks(s: Stmt): boolean {
  let b = blocking.get(s);
  if (b === undefined) {
    b = isWaitLoop(s) || stmtChildren(s).some(blocks);
    blocking.set(s, b);
  }
  return b;
}

function isEmpty(s: Stmt): boolean {
  return s.kind === "Seq" && s.stmts.every(isEmpty);
}

/** Compile a blocking statement (blocks(s)) into a generator. */
function compileGen(ec: ExprCompiler, vf: VerifiedFunc, s: Stmt): GenExec {
  const m = ec.m;
  const bars = m.bars;
  const T = m.threads;
  const part = (c: Stmt): GenExec => {
    if (blocks(c)) return compileGen(ec, vf, c);
    const e = compileStmt(ec, vf, c);
    return function* (lanes, n) {
      e(lanes, n);
    };
  };
  switch (s.kind) {
    case "DeviceEntry":
      return compileGen(ec, vf, s.body);
    case "Seq": {
      const parts = s.stmts.map((c) =>
        blocks(c) ? { g: compileGen(ec, vf, c) } : { e: compileStmt(ec, vf, c) },
      );
      return function* (lanes, n) {
        for (let i = 0; i < parts.length; i++) {
          const p = parts[i]!;
          if (p.g) yield* p.g(lanes, n);
          else p.e!(lanes, n);
        }
      };
    }
    case "If": {
      // Divergent arms run interleaved: each runs until it blocks, then the other gets a turn.
      // The If blocks (yields) only after a round in which neither arm made progress.
      const cond = ec.num(s.cond, s.span);
      const then = part(s.then);
      const other = s.else ? part(s.else) : undefined;
      const yes = new Int32Array(T);
      const no = new Int32Array(T);
      return function* (lanes, n) {
        let a = 0;
        let b = 0;
        for (let i = 0; i < n; i++) {
          const t = lanes[i]!;
          if (cond(t)) yes[a++] = t;
          else no[b++] = t;
        }
        if (b === 0 || !other) {
          if (a > 0) yield* then(yes, a);
          return;
        }
        if (a === 0) {
          yield* other(no, b);
          return;
        }
        const ga = then(yes, a);
        const gb = other(no, b);
        let da = false;
        let db = false;
        for (;;) {
          const p0 = bars.progress;
          if (!da) da = ga.next().done === true;
          if (!db) db = gb.next().done === true;
          if (da && db) return;
          if (bars.progress === p0) yield;
        }
      };
    }
    case "For": {
      // Always through `sub`: the body may be suspended while the caller reuses `lanes`.
      const v = new LoopVar(ec, s);
      const body = compileGen(ec, vf, s.body);
      const sub = new Int32Array(T);
      return function* (lanes, n) {
        const most = v.enter(lanes, n);
        for (let k = 0; k < most; k++) {
          const a = v.running(lanes, n, k, sub);
          v.set(sub, a, k);
          yield* body(sub, a);
        }
      };
    }
    case "While": {
      // A wait loop yields after every iteration whose lanes still wait (a scheduling point);
      // a loop that merely contains one runs its body's generator.
      const cond = ec.num(s.cond, s.span);
      const wait = isWaitLoop(s);
      const pure = wait && isEmpty(s.body);
      const body = pure ? undefined : part(s.body);
      const live = new Int32Array(T);
      const site = m.site(s.span);
      return function* (lanes, n) {
        live.set(lanes.subarray(0, n));
        for (let iter = 0; ; iter++) {
          let k = 0;
          bars.lastSlot = -1;
          for (let i = 0; i < n; i++) if (cond(live[i]!)) live[k++] = live[i]!;
          if (wait && k < n) bars.progress++;
          n = k;
          if (n === 0) return;
          if (iter === MAX_WHILE_ITERATIONS) {
            m.hazard(
              "TX6006",
              `a while loop of CTA ${m.cta()} ran ${MAX_WHILE_ITERATIONS} iterations; its condition never becomes false`,
              site,
            );
            return;
          }
          if (body) yield* body(live, n);
          if (wait) {
            if (!pure) bars.busy = true;
            bars.blocked.push({
              site,
              thread: live[0]!,
              slot: bars.lastSlot,
              parity: bars.lastParity,
            });
            yield;
          }
        }
      };
    }
    default:
      return part(s);
  }
}

/**
 * The body of a CTA. Without mbarrier waits it is the plain closure. With them, a scheduler
 * drives the generator: when every thread is blocked (a round that changed nothing), the bulk
 * copies in flight land (BulkUnit.landAll) and the waits are retried; when nothing is in flight
 * either, TX6006 names the wait loop, and the CTA is abandoned.
 */
export function compileRoot(ec: ExprCompiler, vf: VerifiedFunc, s: Stmt): Exec {
  if (!blocks(s)) return compileStmt(ec, vf, s);
  const g = compileGen(ec, vf, s);
  const m = ec.m;
  const bars = m.bars;
  const bu = m.bulk;
  return (lanes, n) => {
    const it = g(lanes, n);
    for (;;) {
      const p0 = bars.progress;
      bars.blocked.length = 0;
      bars.busy = false;
      if (it.next().done) return;
      if (bars.progress !== p0) continue;
      if (bu.landAll(m)) continue;
      if (bars.busy) continue;
      bars.reportDeadlock(m);
      return;
    }
  };
}
