import {
  findOp,
  stmtChildren,
  walkExpr,
  type Expr,
  type Stmt,
  type VerifiedFunc,
} from "@tirx-ts/core";
import type { ExprCompiler } from "./expr.js";
import { LoopVar } from "./loop-var.js";
import { compileStmt, MAX_WHILE_ITERATIONS, reportSpin, type Exec } from "./stmt.js";
import { Tracer } from "../exec/trace.js";

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
    if (x.kind !== "CallExpr") return;
    const fx = findOp(x.op)?.sim;
    if (fx?.kind === "machine" && fx.effect.unit === "mbarrier" && fx.effect.action === "try_wait")
      hit = true;
  });
  return hit;
}

/** A `while` whose condition tests an mbarrier (T.ptx.mbarrier.try_wait). */
function isWaitLoop(s: Stmt): s is Extract<Stmt, { kind: "While" }> {
  return s.kind === "While" && hasTryWait(s.cond);
}

/** `barrier.cluster.wait`: it waits for the other CTAs of the cluster. */
function isClusterWait(s: Stmt): boolean {
  if (s.kind !== "Call") return false;
  const fx = findOp(s.op)?.sim;
  return fx?.kind === "machine" && fx.effect.unit === "cluster" && fx.effect.action === "wait";
}

/** True when `s` contains an mbarrier wait loop or a cluster barrier wait. */
export function blocks(s: Stmt): boolean {
  let b = blocking.get(s);
  if (b === undefined) {
    b = isWaitLoop(s) || isClusterWait(s) || stmtChildren(s).some(blocks);
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
    case "Call": {
      // barrier.cluster.wait: lanes whose phase has not completed yield until it does.
      if (!isClusterWait(s) || m.ctas === 1) return part(s);
      const cu = m.clusterUnit;
      const site = m.site(s.span);
      const live = new Int32Array(T);
      return function* (lanes, n0) {
        live.set(lanes.subarray(0, n0));
        let n = n0;
        for (;;) {
          let k = 0;
          for (let i = 0; i < n; i++) if (!cu.tryPass(live[i]!)) live[k++] = live[i]!;
          if (k < n) bars.progress++;
          n = k;
          if (n === 0) {
            m.tracer?.barrier(Tracer.warpsOf(lanes, n0), "barrier.cluster");
            return;
          }
          cu.blockedSite = site;
          cu.blockedThread = live[0]!;
          yield;
        }
      };
    }
    case "Seq": {
      const parts = s.stmts.map((c) =>
        blocks(c) ? { g: compileGen(ec, vf, c) } : { e: compileStmt(ec, vf, c) },
      );
      return function* (lanes, n) {
        for (let i = 0; i < parts.length; i++) {
          if (m.tracer) m.tracer.clock++;
          const p = parts[i]!;
          if (p.g) yield* p.g(lanes, n);
          else p.e!(lanes, n);
        }
      };
    }
    case "If": {
      // Divergent arms run interleaved: each runs until it blocks, then the other gets a turn.
      // The If blocks (yields) only after a round in which neither arm made progress.
      const { value: cond, runs } = ec.collect(() => ec.num(s.cond, s.span));
      const then = part(s.then);
      const other = s.else ? part(s.else) : undefined;
      const yes = new Int32Array(T);
      const no = new Int32Array(T);
      return function* (lanes, n) {
        for (let r = 0; r < runs.length; r++) runs[r]!(lanes, n);
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
      // The body always runs on `sub` (uniform or not).
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
      const { value: cond, runs } = ec.collect(() => ec.num(s.cond, s.span));
      const wait = isWaitLoop(s);
      const pure = wait && isEmpty(s.body);
      const body = pure ? undefined : part(s.body);
      const live = new Int32Array(T);
      const site = m.site(s.span);
      return function* (lanes, n) {
        live.set(lanes.subarray(0, n));
        for (let iter = 0; ; iter++) {
          let k = 0;
          // The mbarrier and parity the first still-waiting lane tests (for a deadlock report:
          // in a cluster, lanes of different CTAs test different mbarriers).
          let slot = -1;
          let parity = 0;
          for (let r = 0; r < runs.length; r++) runs[r]!(live, n);
          for (let i = 0; i < n; i++) {
            bars.lastSlot = -1;
            if (cond(live[i]!)) {
              if (k === 0) {
                slot = bars.lastSlot;
                parity = bars.lastParity;
              }
              live[k++] = live[i]!;
            }
          }
          if (wait && k < n) bars.progress++;
          n = k;
          if (n === 0) return;
          if (iter === MAX_WHILE_ITERATIONS) return reportSpin(m, site);
          if (body) yield* body(live, n);
          if (wait) {
            if (!pure) bars.busy = true;
            bars.blocked.push({ site, thread: live[0]!, slot, parity });
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
    const cu = m.clusterUnit;
    for (;;) {
      const p0 = bars.progress;
      bars.blocked.length = 0;
      bars.busy = false;
      cu.blockedSite = -1;
      if (it.next().done) return;
      if (bars.progress !== p0) continue;
      if (bu.landAll(m)) continue;
      if (bars.busy) continue;
      if (bars.blocked.length === 0 && cu.reportDeadlock(m)) return;
      bars.reportDeadlock(m);
      return;
    }
  };
}
