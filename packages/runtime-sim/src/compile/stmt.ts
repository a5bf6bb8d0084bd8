import {
  InternalError,
  invariant,
  opOf,
  TirxError,
  type SimValue,
  type Expr,
  type Stmt,
  type Span,
  type VerifiedFunc,
} from "@tirx-ts/core";
import { compileStore } from "./access.js";
import { axisCheck, checkedOffset } from "./axis-check.js";
import { LoopVar } from "./loop-var.js";
import { compileTilePlan } from "./tile-ops.js";
import type { ExprCompiler } from "./expr.js";
import { Collective, withCollectives, type CollectiveRun } from "./collective.js";
import { compileFragmentCall } from "./fragment.js";
import { machineAction } from "./units.js";
import type { Machine } from "../exec/machine.js";
import { syncFree, warpByWarp } from "./schedule.js";
import { batchable, deferred } from "./batched.js";
import { jitable, jitStatement, tiered, type Shared } from "./jit.js";
import { vecAccess } from "./vector.js";
import type { NumFn } from "./access.js";
import { nothing, type Exec } from "./compiled.js";

export type { Exec } from "./compiled.js";

/** Spin loops (and for loops) longer than this are reported as TX6006 and cut off. */
export const MAX_WHILE_ITERATIONS = 1 << 24;

/**
 * TX6006 for a for loop at `site` whose trip count (`most`, known when it starts) passes
 * MAX_WHILE_ITERATIONS, the budget of a while loop: the simulator does not run it (a
 * `for (let i = 0; i < 1e9; i++)` would otherwise run for hours without a word).
 */
export function reportLongLoop(m: Machine, site: number, most: number): void {
  m.hazard(
    "TX6006",
    `a for loop of CTA ${m.cta()} would run ${most} iterations; the simulator stops loops after ${MAX_WHILE_ITERATIONS}`,
    site,
  );
}

/** TX6006 for a while loop at `site` that ran MAX_WHILE_ITERATIONS iterations. */
export function reportSpin(m: Machine, site: number): void {
  m.hazard(
    "TX6006",
    `a while loop of CTA ${m.cta()} ran ${MAX_WHILE_ITERATIONS} iterations; its condition never becomes false`,
    site,
  );
}

/**
 * A statement being compiled: its nested statements, the closures compiled for those so far,
 * and how its own closure is made from them.
 */
interface Frame {
  readonly kids: readonly Stmt[];
  readonly done: Exec[];
  readonly finish: (done: readonly Exec[]) => Exec;
}

/**
 * Compile statement `s` of `vf`. Nested statements are compiled from an explicit stack of frames
 * (each statement's own work before its nested ones, as recursion would do it), so nesting costs
 * no JS stack while compiling.
 */
export function compileStmt(ec: ExprCompiler, s: Stmt): Exec {
  const stack: Frame[] = [];
  let result: Exec | undefined;
  const open = (x: Stmt): void => {
    const f = compileOne(ec, x);
    if (typeof f === "function") deliver(f);
    else stack.push({ ...f, done: [] });
  };
  const deliver = (e: Exec): void => {
    if (stack.length > 0) stack[stack.length - 1]!.done.push(e);
    else result = e;
  };
  open(s);
  while (stack.length > 0) {
    const f = stack[stack.length - 1]!;
    if (f.done.length < f.kids.length) {
      open(f.kids[f.done.length]!);
      continue;
    }
    stack.pop();
    deliver(f.finish(f.done));
  }
  invariant(result !== undefined, "compileStmt delivers one closure");
  return result;
}

/**
 * One statement: its closure, or, for a statement with nested ones, the frame that makes it
 * once they are compiled (its own expressions compiled now, before them).
 */
function compileOne(ec: ExprCompiler, s: Stmt): Exec | Omit<Frame, "done"> {
  const m = ec.m;
  const T = m.threads;
  switch (s.kind) {
    case "Seq":
      return { kids: s.stmts, finish: (done) => sequence(m, s.stmts, done) };
    case "DeviceEntry":
      return { kids: [s.body], finish: (done) => done[0]! };
    case "Alloc":
      return nothing;
    case "Let": {
      const batch = batchable(ec.layout, s);
      const shared: Shared | undefined = jitable(ec, s) ? { loads: [] } : undefined;
      const set = setter(ec, s.var.id);
      const { value: v, runs } = ec.collect(() =>
        batching(ec, batch, shared, () => ec.any(s.value, s.span)),
      );
      const closures: Exec = (lanes, n) => {
        for (let i = 0; i < n; i++) {
          const t = lanes[i]!;
          set(t, v(t));
        }
      };
      return plainStatement(ec, s, closures, runs, batch, shared);
    }
    case "Store": {
      const c = bitCopy(s);
      const batch = batchable(ec.layout, c);
      const shared: Shared | undefined = jitable(ec, c) ? { loads: [] } : undefined;
      const { value: st, runs } = ec.collect(() =>
        batching(ec, batch, shared, () => {
          const off = ec.index(c.offset, c.span);
          const val = ec.any(c.value, c.span);
          const site = m.site(c.span);
          // The author indices the verifier left to the run, checked after the offset and value.
          const axes = axisCheck(ec, c.buffer, c.index, site, "writes", c.span);
          if (shared === undefined && axes === undefined) {
            return compileStore(m, ec.layout, c.buffer, c.dtype, off, val, site, batch);
          }
          // Offset and value through scratch arrays, so the generated function shares the store;
          // an axis check runs after both (as in the generated function, and in codegen's order).
          const offs = new Float64Array(T);
          const scratch: NumFn = (t) => offs[t]!;
          const at = axes ? checkedOffset(scratch, axes) : scratch;
          if (shared === undefined) {
            const vs: (number | bigint)[] = new Array<number | bigint>(T).fill(0);
            const st = compileStore(
              m,
              ec.layout,
              c.buffer,
              c.dtype,
              at,
              ((t: number) => vs[t]!) as NumFn,
              site,
              batch,
            );
            return (t: number): void => {
              offs[t] = off(t);
              vs[t] = val(t);
              st(t);
            };
          }
          const vals = new Float64Array(T);
          const store = compileStore(
            m,
            ec.layout,
            c.buffer,
            c.dtype,
            at,
            (t) => vals[t]!,
            site,
            batch,
          );
          // A vector access writes no element closure: not for a store with indices to check.
          const vec =
            batch && !axes
              ? vecAccess(m, ec.layout, c.buffer, c.dtype, offs, site, true)
              : undefined;
          shared.store = { offs, vals, st: store, vec };
          const value = val as NumFn;
          return (t: number): void => {
            offs[t] = off(t);
            vals[t] = value(t);
            store(t);
          };
        }),
      );
      const closures: Exec = (lanes, n) => {
        for (let i = 0; i < n; i++) st(lanes[i]!);
      };
      const exec = plainStatement(ec, c, closures, runs, batch, shared);
      // A register store races with nothing: no instance to keep.
      return ec.layout.local.has(c.buffer.id) ? exec : storeInstance(m, exec);
    }
    case "If": {
      const { value: cond, runs } = ec.collect(() => ec.num(s.cond, s.span));
      return {
        kids: s.else ? [s.then, s.else] : [s.then],
        finish: (done) => branch(m, cond, runs, done[0]!, done[1] ?? nothing),
      };
    }
    case "For":
      return compileFor(ec, s);
    case "While": {
      const { value: cond, runs } = ec.collect(() => ec.num(s.cond, s.span));
      return { kids: [s.body], finish: (done) => whileLoop(m, s, cond, runs, done[0]!) };
    }
    case "Call": {
      const { value, runs } = ec.collect(() => compileCall(ec, s.op, s.args, s.span));
      return withCollectives(runs, value);
    }
    case "TileOp":
      return compileTilePlan(ec, s.source, s.plan);
    case "TileApply":
      throw new InternalError(
        `tile.apply "${s.opcode}" reached the simulator; it runs lower-tile after verify`,
      );
  }
}

/**
 * A Store of a bare load of its own float dtype as a copy of the element's bits (the unsigned
 * integer of its width): `ld` and `st` move bits (PTX ISA, ld / st), so a NaN's payload and a
 * signaling NaN survive, where decoding to a number and encoding again would give the canonical
 * NaN. Other statements are returned as they are.
 */
function bitCopy(s: Extract<Stmt, { kind: "Store" }>): Extract<Stmt, { kind: "Store" }> {
  const v = s.value;
  if (v.kind !== "BufferLoad" || v.dtype !== s.dtype) return s;
  const bits = (
    {
      float8_e4m3: "uint8",
      float8_e5m2: "uint8",
      float16: "uint16",
      bfloat16: "uint16",
      float32: "uint32",
      float64: "uint64",
    } as const
  )[s.dtype as "float16"];
  if (bits === undefined) return s;
  return { ...s, dtype: bits, value: { ...v, dtype: bits } };
}

/**
 * A Store or Let run by `closures`: tiered to its generated function when `shared` (compile/jit.ts),
 * its hazard checks deferred when `batch` (compile/batched.ts), after its warp collectives.
 */
function plainStatement(
  ec: ExprCompiler,
  s: Stmt,
  closures: Exec,
  runs: readonly CollectiveRun[],
  batch: boolean,
  shared: Shared | undefined,
): Exec {
  const m = ec.m;
  const exec = shared ? tiered(m, closures, () => jitStatement(ec, s, shared)) : closures;
  return withCollectives(runs, batch ? deferred(m, exec) : exec);
}

/**
 * `exec`, each of whose calls is one instance of a store instruction (exec/store-instances.ts):
 * its lanes of one warp storing to the same bytes do not race with each other, whichever way the
 * statement runs (closures, generated function, deferred checks), since its checks (a deferred
 * statement's too) are made before the call returns.
 */
function storeInstance(m: Machine, exec: Exec): Exec {
  const stores = m.stores;
  return (lanes, n) => {
    stores.begin();
    try {
      exec(lanes, n);
    } finally {
      stores.end();
    }
  };
}

/**
 * `f` compiled with the expression compiler's loads batched when `on`, and registered in
 * `shared` when given (a statement that moves to a generated function, compile/jit.ts).
 */
function batching<R>(ec: ExprCompiler, on: boolean, shared: Shared | undefined, f: () => R): R {
  const saved = ec.batching;
  const savedShared = ec.shared;
  ec.batching = on;
  ec.shared = shared;
  try {
    return f();
  } finally {
    ec.batching = saved;
    ec.shared = savedShared;
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
 * A block: consecutive statements with no barrier form a stretch that a varied schedule runs
 * warp by warp (compile/schedule.ts); a stretch counts its own statements on the trace clock.
 */
function sequence(m: Machine, stmts: readonly Stmt[], done: readonly Exec[]): Exec {
  const units: Exec[] = [];
  const stretch: boolean[] = [];
  let run: Exec[] = [];
  const flush = (): void => {
    if (run.length > 0) {
      units.push(warpByWarp(m, run));
      stretch.push(true);
    }
    run = [];
  };
  stmts.forEach((c, k) => {
    const e = done[k]!;
    if (e === nothing) return;
    if (syncFree(c)) run.push(e);
    else {
      flush();
      units.push(e);
      stretch.push(false);
    }
  });
  flush();
  if (units.length === 1) return units[0]!;
  return (lanes, n) => {
    for (let i = 0; i < units.length; i++) {
      if (m.opts.tracer && !stretch[i]) m.opts.tracer.clock++;
      units[i]!(lanes, n);
    }
  };
}

/** An If: the lanes split by `cond`, each arm on its own. */
function branch(
  m: Machine,
  cond: NumFn,
  runs: readonly CollectiveRun[],
  then: Exec,
  other: Exec,
): Exec {
  const yes = new Int32Array(m.threads);
  const no = new Int32Array(m.threads);
  return withCollectives(runs, (lanes, n) => {
    let a = 0;
    let b = 0;
    for (let i = 0; i < n; i++) {
      const t = lanes[i]!;
      if (cond(t)) yes[a++] = t;
      else no[b++] = t;
    }
    if (a > 0) then(yes, a);
    if (b > 0) other(no, b);
  });
}

/** A While: the lanes whose condition holds run the body, until none does (or TX6006). */
function whileLoop(
  m: Machine,
  s: Extract<Stmt, { kind: "While" }>,
  cond: NumFn,
  runs: readonly CollectiveRun[],
  body: Exec,
): Exec {
  const live = new Int32Array(m.threads);
  const site = m.site(s.span);
  return (lanes, n) => {
    live.set(lanes.subarray(0, n));
    for (let iter = 0; ; iter++) {
      for (let r = 0; r < runs.length; r++) runs[r]!(live, n);
      let k = 0;
      for (let i = 0; i < n; i++) if (cond(live[i]!)) live[k++] = live[i]!;
      n = k;
      if (n === 0) return;
      if (iter === MAX_WHILE_ITERATIONS) return reportSpin(m, site);
      m.heldIteration();
      body(live, n);
    }
  };
}

function compileFor(ec: ExprCompiler, s: Extract<Stmt, { kind: "For" }>): Omit<Frame, "done"> {
  const { value: v, runs } = ec.collect(() => new LoopVar(ec, s));
  invariant(runs.length === 0, "loop bounds hold no warp collective (the verifier refuses them)");
  return { kids: [s.body], finish: (done) => forLoop(ec, s, v, done[0]!) };
}

function forLoop(
  ec: ExprCompiler,
  s: Extract<Stmt, { kind: "For" }>,
  v: LoopVar,
  body: Exec,
): Exec {
  const sub = new Int32Array(ec.m.threads);
  const m = ec.m;
  const site = m.site(s.span);
  return (lanes, n) => {
    const most = v.enter(lanes, n);
    if (most > MAX_WHILE_ITERATIONS) return reportLongLoop(m, site, most);
    for (let k = 0; k < most; k++) {
      let active = lanes;
      let a = n;
      if (!v.uniform) {
        a = v.running(lanes, n, k, sub);
        active = sub;
      }
      v.set(active, a, k);
      if (m.opts.tracer) m.opts.tracer.clock++;
      m.heldIteration();
      body(active, a);
    }
  };
}

/**
 * A statement op, by its record's simulator semantics: an action of one of the machine's units
 * (cp.async and bulk groups, mbarriers, barriers, fences, wgmma: compiled by the unit's table,
 * compile/units.ts), a fragment op, or a warp collective without a result.
 */
function compileCall(ec: ExprCompiler, name: string, exprs: readonly Expr[], span?: Span): Exec {
  const m = ec.m;
  const op = opOf(name, "stmt", span);
  const sem = op.sim;
  if (sem.kind === "warp") {
    const c = new Collective(
      m,
      op,
      exprs.map((a) => a.dtype),
      undefined,
      exprs.map((a) => ec.any(a, span) as (t: number) => SimValue),
      m.site(span),
    );
    return c.run;
  }
  // stmatrix: lanes giving one row address store to the same bytes in one instruction.
  if (sem.kind === "fragment") return storeInstance(m, compileFragmentCall(ec, op, exprs, span));
  if (sem.kind !== "machine") return unsupported(`op "${name}"`, span);
  const stmt = machineAction(sem.effect).stmt;
  if (!stmt) return unsupported(`op "${name}"`, span);
  return stmt({ ec, op, fx: sem.effect, args: exprs, at: span, span });
}

/** A statement the simulator cannot run: TX2010 when (and only if) a thread reaches it. */
function unsupported(what: string, span?: Span): Exec {
  return () => {
    throw new TirxError("TX2010", `${what} is not supported by the simulator`, span);
  };
}
