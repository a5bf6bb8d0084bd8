import {
  constInt,
  invariant,
  someStmt,
  stmtChildren,
  TirxError,
  type Stmt,
  type VerifiedFunc,
} from "@tirx-ts/core";
import type { ExprCompiler } from "./expr.js";
import { LoopVar } from "./loop-var.js";
import {
  compileStmt,
  MAX_WHILE_ITERATIONS,
  reportLongLoop,
  reportSpin,
  type Exec,
} from "./stmt.js";
import { Tracer } from "../exec/trace.js";
import type { Machine } from "../exec/machine.js";
import { BARRIER_IDS, CLUSTER_BARRIER, type Arrival } from "../exec/named-barriers.js";
import { nextRandom } from "./schedule.js";
import { actionTraits } from "./units.js";
import type { ActionTraits } from "./compiled.js";
import { isEmpty, isWaitLoop, waitReadsState } from "./wait-loop.js";
import {
  absorb,
  hasWarpOp,
  ifArms,
  loopGen,
  seqGen,
  type GenExec,
  type LoopStep,
} from "./lane-split.js";

const blocking = new WeakMap<Stmt, boolean>();

/**
 * A statement that waits for the other CTAs of the cluster (ActionTraits `waitsForCluster`:
 * barrier.cluster.wait).
 */
function isClusterWait(s: Stmt): boolean {
  return s.kind === "Call" && actionTraits(s.op)?.waitsForCluster === true;
}

/**
 * A wgmma.wait_group (ActionTraits `waitsForWarpgroup`): with warps as coroutines a warp waits
 * there for the other warps of its warpgroup.
 */
function isWarpgroupWait(s: Stmt): boolean {
  return s.kind === "Call" && actionTraits(s.op)?.waitsForWarpgroup === true;
}

/** True when `s` contains an mbarrier wait loop or a cluster barrier wait. */
export function blocks(s: Stmt): boolean {
  return someStmt(s, (x) => isWaitLoop(x) || isClusterWait(x), blocking);
}

/**
 * The CTA barrier a statement op call is (ActionTraits `ctaBarrier`: `cta_sync`, `bar_sync`,
 * `bar_arrive`), if any.
 */
function ctaBarrier(s: Stmt): ActionTraits["ctaBarrier"] {
  return s.kind === "Call" ? actionTraits(s.op)?.ctaBarrier : undefined;
}

const named = new WeakMap<Stmt, boolean>();

/** True when `s` contains a named barrier (bar_sync, bar_arrive): its warps run as coroutines. */
export function hasNamedBarrier(s: Stmt): boolean {
  return someStmt(s, (x) => ctaBarrier(x)?.whole === false, named);
}

const blockingThreaded = new WeakMap<Stmt, boolean>();

/**
 * With warps as coroutines: blocks(s), or `s` contains a CTA barrier of any kind or a
 * wgmma.wait_group (which waits for the warp's warpgroup).
 */
function blocksThreaded(s: Stmt): boolean {
  return someStmt(
    s,
    (x) => isWaitLoop(x) || isClusterWait(x) || ctaBarrier(x) !== undefined || isWarpgroupWait(x),
    blockingThreaded,
  );
}

/**
 * Compile a blocking statement (blocks(s); with `th`, warps run as coroutines and barriers block
 * too: blocksThreaded) into a generator. Scratch lane arrays are made per run, not per statement:
 * with warps as coroutines several runs of one statement are suspended at once. With `busy` (some
 * wait condition reads memory: waitReadsState), a round in which a wait loop ran its body never
 * counts as a deadlock.
 */
function compileGen(
  ec: ExprCompiler,
  vf: VerifiedFunc,
  s: Stmt,
  th: boolean,
  busy: boolean,
  fork: boolean,
): GenExec {
  const m = ec.m;
  const bars = m.bars;
  const isBlocking = th ? blocksThreaded : blocks;
  const part = (c: Stmt): GenExec => {
    if (isBlocking(c)) return compileGen(ec, vf, c, th, busy, fork);
    const e = compileStmt(ec, c);
    return function* (lanes, n) {
      e(lanes, n);
      return undefined;
    };
  };
  switch (s.kind) {
    case "DeviceEntry":
      return compileGen(ec, vf, s.body, th, busy, fork);
    case "Call": {
      if (th) {
        const g = barrierGen(ec, s) ?? warpgroupWaitGen(ec, s);
        if (g) return g;
      }
      // barrier.cluster.wait: lanes whose phase has not completed yield until it does.
      if (!isClusterWait(s) || m.ctas === 1) return part(s);
      const cu = m.clusterUnit;
      const site = m.site(s.span);
      return function* (lanes, n0) {
        const live = lanes.slice(0, n0);
        let n = n0;
        for (;;) {
          let k = 0;
          for (let i = 0; i < n; i++) if (!cu.tryPass(live[i]!)) live[k++] = live[i]!;
          if (k < n) bars.progress++;
          n = k;
          if (n === 0) {
            m.opts.tracer?.barrier(Tracer.warpsOf(lanes, n0), "barrier.cluster");
            return undefined;
          }
          cu.blockedSite = site;
          cu.blockedThread = live[0]!;
          yield undefined;
        }
      };
    }
    case "Seq": {
      const parts = s.stmts.map((c) =>
        isBlocking(c) ? { g: compileGen(ec, vf, c, th, busy, fork) } : { e: compileStmt(ec, c) },
      );
      return seqGen(m, parts, fork);
    }
    case "If": {
      // Divergent arms run interleaved (lane-split.ts: ifArms).
      const { value: cond, runs } = ec.collect(() => ec.num(s.cond, s.span));
      const then = part(s.then);
      const other = s.else ? part(s.else) : undefined;
      return function* (lanes, n) {
        const yes = new Int32Array(n);
        const no = new Int32Array(n);
        for (let r = 0; r < runs.length; r++) runs[r]!(lanes, n);
        let a = 0;
        let b = 0;
        for (let i = 0; i < n; i++) {
          const t = lanes[i]!;
          if (cond(t)) yes[a++] = t;
          else no[b++] = t;
        }
        return yield* ifArms(m, then, yes, a, other, no, b, fork);
      };
    }
    case "For": {
      // The body always runs on `sub` (uniform or not).
      const v = new LoopVar(ec, s);
      const body = compileGen(ec, vf, s.body, th, busy, fork);
      const site = m.site(s.span);
      if (fork) {
        // Lanes part ways across iterations and at the loop's end (lane-split.ts: loopGen).
        const step: LoopStep = (cur, c, k, run) => {
          const a = v.running(cur, c, k, run);
          v.set(run, a, k);
          m.heldIteration();
          return a;
        };
        return function* (lanes, n) {
          const most = v.enter(lanes, n);
          if (most > MAX_WHILE_ITERATIONS) return void reportLongLoop(m, site, most);
          return yield* loopGen(m, lanes, n, step, body);
        };
      }
      return function* (lanes, n) {
        const sub = new Int32Array(n);
        const most = v.enter(lanes, n);
        if (most > MAX_WHILE_ITERATIONS) return void reportLongLoop(m, site, most);
        for (let k = 0; k < most; k++) {
          const a = v.running(lanes, n, k, sub);
          v.set(sub, a, k);
          m.heldIteration();
          yield* absorb(body(sub, a));
        }
        return undefined;
      };
    }
    case "While": {
      // A wait loop yields after every iteration whose lanes still wait (a scheduling point);
      // a loop that merely contains one runs its body's generator.
      const { value: cond, runs } = ec.collect(() => ec.num(s.cond, s.span));
      const wait = isWaitLoop(s);
      const pure = wait && isEmpty(s.body);
      const body = pure ? undefined : part(s.body);
      const site = m.site(s.span);
      // With `fork`, a wait loop's lanes that pass while others still wait are released; a loop
      // that contains a wait runs as loopGen (lanes part ways across iterations).
      const split = fork && wait;
      if (fork && !wait) {
        const step: LoopStep = (cur, c, k, run) => {
          if (k === MAX_WHILE_ITERATIONS) {
            reportSpin(m, site);
            return 0;
          }
          m.heldIteration();
          for (let r = 0; r < runs.length; r++) runs[r]!(cur, c);
          let a = 0;
          for (let i = 0; i < c; i++) if (cond(cur[i]!)) run[a++] = cur[i]!;
          return a;
        };
        return function* (lanes, n) {
          return yield* loopGen(m, lanes, n, step, body!);
        };
      }
      return function* (lanes, n) {
        const live = lanes.slice(0, n);
        const gone = split ? new Int32Array(n) : live;
        let released = false;
        for (let iter = 0; ; iter++) {
          let k = 0;
          let g = 0;
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
            } else if (split) gone[g++] = live[i]!;
          }
          if (wait && k < n) bars.progress++;
          n = k;
          if (n === 0) return released ? gone.slice(0, g) : undefined;
          if (split && g > 0) {
            released = true;
            yield gone.slice(0, g);
          }
          if (iter === MAX_WHILE_ITERATIONS) {
            reportSpin(m, site);
            return released ? live.slice(0, n) : undefined;
          }
          m.heldIteration();
          if (body) yield* absorb(body(live, n));
          if (wait) {
            // A body may change what a wait condition reads (waitReadsState): not a deadlock yet.
            if (!pure && busy) bars.busy = true;
            bars.blocked.push({ site, thread: live[0]!, slot, parity, lanes: live, n });
            yield undefined;
          }
        }
      };
    }
    default:
      return part(s);
  }
}

/**
 * A CTA barrier statement (cta_sync, bar_sync, bar_arrive; barrier.cluster.wait of a one-CTA
 * cluster) with warps as coroutines: its lanes arrive at the barrier's current instance
 * (exec/named-barriers.ts) and, unless they only arrive, yield until the instance completes.
 */
function barrierGen(ec: ExprCompiler, s: Extract<Stmt, { kind: "Call" }>): GenExec | undefined {
  const m = ec.m;
  const site = m.site(s.span);
  const act = ctaBarrier(s);
  let a: Arrival;
  if (act?.whole) {
    a = {
      id: 0,
      count: m.ctaThreads,
      sync: true,
      what: "cta_sync",
      whole: true,
      aligned: true,
      site,
    };
  } else if (act) {
    const id = constInt(s.args[0]!)!;
    const count = constInt(s.args[1]!)!;
    invariant(id !== undefined && count !== undefined, "barrier id and count are static");
    const sync = act.waits;
    const what = `${sync ? "bar_sync" : "bar_arrive"}(${id}, ${count})`;
    a = { id, count, sync, what, whole: false, aligned: false, site };
  } else if (isClusterWait(s) && m.ctas === 1) {
    const what = "barrier.cluster.wait";
    a = {
      id: CLUSTER_BARRIER,
      count: m.ctaThreads,
      sync: true,
      what,
      whole: true,
      aligned: false,
      site,
    };
  } else return undefined;
  const nb = m.named;
  const arrival = a;
  return function* (lanes, n) {
    const key = m.rank[lanes[0]!]! * BARRIER_IDS + arrival.id;
    const ticket = nb.arrive(m, lanes, n, arrival);
    if (!arrival.sync) return undefined;
    while (nb.generation(key) <= ticket) yield undefined;
    return undefined;
  };
}

/**
 * wgmma.wait_group with warps as coroutines: the warp (its lanes run it together: the op is warp
 * wide) yields until every warp of its warpgroup has committed the wgmma-groups it retires
 * (WgmmaUnit.siblingsCommitted), then runs it. A round in which it waited is no progress; when
 * every thread is blocked, WgmmaUnit.reportDeadlock names the warps that never commit.
 */
function warpgroupWaitGen(
  ec: ExprCompiler,
  s: Extract<Stmt, { kind: "Call" }>,
): GenExec | undefined {
  if (!isWarpgroupWait(s)) return undefined;
  const m = ec.m;
  const e = compileStmt(ec, s);
  const keep = constInt(s.args[0]!) ?? 0;
  const site = m.site(s.span);
  const unit = m.wgmma;
  const warps = Math.ceil(m.threads / 32);
  return function* (lanes, n) {
    const warp = lanes[0]! >> 5;
    while (n > 0 && !unit.siblingsCommitted(warp, keep, warps)) {
      unit.blocked(warp, keep, site);
      yield undefined;
    }
    e(lanes, n);
    return undefined;
  };
}

/**
 * Most statements that may block (an mbarrier wait, a barrier with warps as coroutines) one
 * inside another that the simulator runs. Each such statement is a generator that resumes the
 * one it nests by a call, so resuming the innermost takes JS stack for every level; a few
 * thousand levels would overflow it. The rest of a kernel nests up to MAX_EXPR_DEPTH.
 */
export const MAX_COROUTINE_DEPTH = 512;

/**
 * Refuse a kernel whose blocking statements nest deeper than MAX_COROUTINE_DEPTH (computed from
 * an explicit stack).
 * @throws TirxError TX2010 at the statement that passes it.
 */
function checkCoroutineDepth(root: Stmt, blocking: (s: Stmt) => boolean, vf: VerifiedFunc): void {
  const work: [Stmt, number][] = [[root, 0]];
  while (work.length > 0) {
    const [s, outer] = work.pop()!;
    if (!blocking(s)) continue;
    const level = s.kind === "Seq" ? outer : outer + 1;
    if (level > MAX_COROUTINE_DEPTH) {
      throw new TirxError(
        "TX2010",
        `the simulator runs waits and barriers nested at most ${MAX_COROUTINE_DEPTH} statements deep (warps run them as coroutines, resumed by recursion); this one is deeper`,
        s.span ?? vf.fn.span,
        [{ message: "move the wait or barrier out of the nested statements around it" }],
      );
    }
    for (const c of stmtChildren(s)) work.push([c, level]);
  }
}

/**
 * The warps of the CTA (of each CTA of a cluster), as lane lists: with named barriers each runs
 * as its own coroutine.
 */
function warpsOf(m: Machine): Int32Array[] {
  const out: Int32Array[] = [];
  const per = m.ctaThreads;
  for (let r = 0; r < m.ctas; r++) {
    for (let w = 0; w < per; w += 32) {
      out.push(Int32Array.from({ length: Math.min(32, per - w) }, (_, i) => r * per + w + i));
    }
  }
  return out;
}

/**
 * The body of a CTA. Without mbarrier waits, cluster waits or named barriers it is the plain
 * closure. With them, a scheduler drives one generator per warp, as warps are independent on the
 * GPU: a warp that waits (an mbarrier phase, a barrier instance) yields to the others, which may
 * run ahead of it past later statements; in a kernel without warp-level ops, so may lanes of one
 * warp whose other lanes wait (compile/lane-split.ts); the warps take turns in ascending order
 * with seed 0, in an order drawn per round otherwise (a shuffle of the last round's order, from
 * ascending at the start of each CTA: a launch's schedule depends on its seed alone). When every
 * thread is blocked (a round that changed nothing), the bulk copies in flight land
 * (BulkUnit.landAll) and the waits are retried; when nothing is in flight either, TX6012/TX6009
 * name the barrier instances that never complete and TX6006 the wait loop, and the CTA is
 * abandoned. A round in which wait loops ran non-empty bodies counts as changing nothing unless
 * some wait condition reads memory (waitReadsState), so such a deadlock is found in one round,
 * not after MAX_WHILE_ITERATIONS. At the end of the CTA a barrier instance that did not complete
 * is reported too.
 */
export function compileRoot(ec: ExprCompiler, vf: VerifiedFunc, s: Stmt): Exec {
  // Every blocking kernel runs its warps as coroutines (a producer warp may run past a
  // statement where a consumer warp still waits, as on the GPU).
  const th = hasNamedBarrier(s) || blocks(s);
  if (!th && !blocks(s)) return compileStmt(ec, s);
  checkCoroutineDepth(s, th ? blocksThreaded : blocks, vf);
  const g = compileGen(ec, vf, s, th, waitReadsState(s), th && !hasWarpOp(s));
  const m = ec.m;
  const bars = m.bars;
  const bu = m.bulk;
  const warps = th ? warpsOf(m) : [];
  return (lanes, n) => {
    // The turn order of the warps, made per run: each round shuffles the previous round's order,
    // so one kept in the closure would carry a launch's last order into the next launch, whose
    // schedule would then depend on the launches before it, not only on its seed.
    const order = Int32Array.from(warps, (_, i) => i);
    const its = th ? warps.map((w) => g(w, w.length)) : [g(lanes, n)];
    const live = its.map(() => true);
    let left = its.length;
    const cu = m.clusterUnit;
    for (;;) {
      const p0 = bars.progress;
      bars.blocked.length = 0;
      m.signals.blocked.length = 0;
      bars.busy = false;
      cu.blockedSite = -1;
      m.wgmma.blockedWarp = -1;
      if (th && m.opts.seed !== 0) {
        for (let i = order.length - 1; i > 0; i--) {
          const j = nextRandom(m) % (i + 1);
          const x = order[i]!;
          order[i] = order[j]!;
          order[j] = x;
        }
      }
      for (let k = 0; k < its.length; k++) {
        const w = th ? order[k]! : k;
        if (!live[w]) continue;
        const r = its[w]!.next();
        if (!r.done) {
          if (r.value) bars.progress++; // lanes of the warp finished, others go on
          continue;
        }
        live[w] = false;
        left--;
        bars.progress++;
      }
      if (left === 0) {
        if (th) m.named.reportIncomplete(m, false);
        return;
      }
      if (bars.progress !== p0) continue;
      if (bu.landAll(m)) continue;
      if (bars.busy) continue;
      if (th && m.named.reportIncomplete(m, true)) {
        bars.deadlocked = true;
        if (bars.blocked.length > 0) bars.reportDeadlock(m);
        return;
      }
      if (bars.blocked.length === 0 && cu.reportDeadlock(m)) return;
      if (bars.blocked.length === 0 && m.wgmma.reportDeadlock(m)) return;
      // Signal waits (T.nvshmem.signal_wait_until) name the signal and the waiting PE.
      if (m.signals.reportDeadlock(m)) {
        bars.deadlocked = true;
        return;
      }
      bars.reportDeadlock(m);
      return;
    }
  };
}
