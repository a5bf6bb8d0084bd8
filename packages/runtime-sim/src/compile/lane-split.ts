import { findOp, someStmt, stmtExprs, walkExpr, type Expr, type Stmt } from "@tirx-ts/core";
import type { Machine } from "../exec/machine.js";
import type { Exec } from "./compiled.js";
import { actionTraits } from "./units.js";

/**
 * Lanes of one warp that part ways (independent thread scheduling, sm_70+; CUDA C++ Programming
 * Guide, "Independent Thread Scheduling"): with warps as coroutines (compile/blocking.ts), lanes
 * of a warp that finish a statement while other lanes of the warp still wait inside it (in an
 * mbarrier wait loop, or in the other arm of an `if`) go on to the next statements; the waiting
 * lanes follow when they are released. The groups run as separate cursors of the enclosing
 * statement list, and of a loop's iterations (loopGen: a group may be iterations ahead of
 * another, or past the loop), and meet again only at the end of the kernel (or of a wait loop's
 * body). So lane 0 may wait in one `T.if_` for an arrival lane 1 makes in a later one, or in a
 * later iteration, or after a loop lane 1 leaves first, as on the GPU.
 *
 * Only in kernels without warp-level ops (warp collectives, `__syncwarp`, fragment ops, wgmma,
 * setmaxnreg: hasWarpOp): those need the warp's lanes together, which split groups cannot give.
 */

/**
 * A blocking statement compiled into a generator over its lanes `lanes[0..n)`. It yields
 * `undefined` when its lanes cannot proceed (a scheduling point) and an array of lanes that
 * finished the statement early and may go on (a release); it returns the lanes that finish at
 * its end, `undefined` when it released none early (then all of them).
 */
export type GenExec = (
  lanes: Int32Array,
  n: number,
) => Generator<Int32Array | undefined, Int32Array | undefined, void>;

/** Run `g` to its end, its lanes together: releases wait for the end, blocks pass up. */
export function* absorb(
  g: Generator<Int32Array | undefined, Int32Array | undefined, void>,
): Generator<Int32Array | undefined, undefined, void> {
  for (;;) {
    const r = g.next();
    if (r.done) return undefined;
    if (r.value === undefined) yield undefined;
  }
}

/** `a` then `b` (lane lists) as one array. */
function join(a: Int32Array | undefined, b: Int32Array): Int32Array {
  if (!a || a.length === 0) return b;
  const out = new Int32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

interface Cursor {
  /** The next statement of the list. */
  i: number;
  lanes: Int32Array;
  n: number;
  /** The generator of statement i - 1, while it runs. */
  g: ReturnType<GenExec> | undefined;
}

/**
 * A statement list over lanes that may part ways (`fork`): a group released by a statement
 * goes on as its own cursor. A round runs every cursor until it blocks; the list yields after a
 * round in which nothing progressed. Without `fork`, the lanes run the list together.
 */
export function seqGen(
  m: Machine,
  parts: readonly { g?: GenExec; e?: Exec }[],
  fork: boolean,
): GenExec {
  const bars = m.bars;
  if (!fork) {
    return function* (lanes, n) {
      for (let i = 0; i < parts.length; i++) {
        if (m.opts.tracer) m.opts.tracer.clock++;
        const p = parts[i]!;
        if (p.g) yield* absorb(p.g(lanes, n));
        else p.e!(lanes, n);
      }
      return undefined;
    };
  }
  return function* (lanes, n) {
    const cursors: Cursor[] = [{ i: 0, lanes, n, g: undefined }];
    let released = false;
    for (;;) {
      const p0 = bars.progress;
      let moved = false;
      for (let c = 0; c < cursors.length; c++) {
        const cur = cursors[c]!;
        for (;;) {
          if (!cur.g) {
            if (cur.i === parts.length) break;
            const p = parts[cur.i++]!;
            if (m.opts.tracer) m.opts.tracer.clock++;
            if (p.e) {
              p.e(cur.lanes, cur.n);
              continue;
            }
            cur.g = p.g!(cur.lanes, cur.n);
          }
          const r = cur.g.next();
          if (r.done) {
            cur.g = undefined;
            if (r.value) {
              cur.lanes = r.value;
              cur.n = r.value.length;
              if (cur.n === 0) cur.i = parts.length; // every lane was released
            }
            continue;
          }
          if (r.value === undefined) break;
          // Released lanes go on past statement cur.i - 1 as their own cursor.
          cursors.push({ i: cur.i, lanes: r.value, n: r.value.length, g: undefined });
          moved = true;
        }
        if (!cur.g) {
          // At the end of the list: the last cursor returns, the others are released.
          cursors.splice(c--, 1);
          moved = true;
          if (cursors.length === 0) return released ? cur.lanes.slice(0, cur.n) : undefined;
          if (cur.n > 0) {
            released = true;
            yield cur.lanes.slice(0, cur.n);
          }
        }
      }
      // Every cursor blocked in this pass (and pushed its wait for a deadlock report): yield,
      // unless a cursor moved (released lanes, ended) or, with several, any progressed.
      if (!moved && (cursors.length === 1 || bars.progress === p0)) yield undefined;
    }
  };
}

/**
 * The arms of a divergent `if` (`then` on `yes`, `other` on `no` or, without an else, `no`
 * skipping): each runs until it blocks, then the other gets a turn; the If yields only after a
 * round in which neither made progress. With `fork`, an arm's lanes that finish while the other
 * arm's lanes wait are released (they go on past the If).
 */
export function* ifArms(
  m: Machine,
  then: GenExec,
  yes: Int32Array,
  a: number,
  other: GenExec | undefined,
  no: Int32Array,
  b: number,
  fork: boolean,
): Generator<Int32Array | undefined, Int32Array | undefined, void> {
  const bars = m.bars;
  const two = a > 0 && b > 0 && other !== undefined;
  const gs = [a > 0 ? then(yes, a) : undefined, b > 0 && other ? other(no, b) : undefined];
  const input = [yes.subarray(0, a), no.subarray(0, b)];
  // Lanes that finished and are neither released nor returned yet.
  let done: Int32Array | undefined = !other && b > 0 ? no.slice(0, b) : undefined;
  let released = false;
  for (;;) {
    const p0 = bars.progress;
    let blocked = false;
    let moved = false;
    for (let k = 0; k < 2; k++) {
      const g = gs[k];
      if (!g) continue;
      const r = g.next();
      if (r.done) {
        gs[k] = undefined;
        const rest = r.value ?? input[k]!;
        if (fork && rest.length > 0) done = join(done, rest.slice());
      } else if (r.value === undefined) blocked = true;
      else if (fork) {
        released = true;
        moved = true;
        yield r.value;
      }
    }
    if (!gs[0] && !gs[1]) return released ? (done ?? new Int32Array(0)) : undefined;
    if (fork && blocked && done && done.length > 0) {
      released = true;
      const out = done;
      done = undefined;
      yield out;
      continue;
    }
    // One arm: it blocked. Two: another round while either progressed. After a release, another
    // round first, so that every waiting lane is polled before the If yields.
    if (!moved && (two ? bars.progress === p0 : blocked)) yield undefined;
  }
}

/**
 * Which lanes of `lanes[0..n)` run iteration `k` of a loop (into `run`, in order; the others
 * leave the loop). Returns how many run; sets the loop variable of those that do.
 */
export type LoopStep = (lanes: Int32Array, n: number, k: number, run: Int32Array) => number;

interface LoopCursor {
  /** The iteration its lanes run. */
  k: number;
  lanes: Int32Array;
  n: number;
  /** The body's generator for iteration k, while it runs. */
  g: ReturnType<GenExec> | undefined;
}

/**
 * A loop (`For`, or a `While` that contains a wait) whose lanes may part ways: lanes that finish
 * an iteration while others of the warp still wait in it go on to their next iteration as their
 * own group, and lanes that leave the loop (their trip count ran out, their condition turned
 * false) while others still wait in it go on past the loop (released). So a lane may wait in
 * iteration k for an arrival another lane makes in a later iteration or after the loop, as on
 * the GPU (independent thread scheduling, sm_70+). A round runs every group until it blocks; the
 * loop yields after a round in which nothing progressed.
 */
export function* loopGen(
  m: Machine,
  lanes: Int32Array,
  n: number,
  step: LoopStep,
  body: GenExec,
): Generator<Int32Array | undefined, Int32Array | undefined, void> {
  const bars = m.bars;
  const cursors: LoopCursor[] = [{ k: 0, lanes: lanes.slice(0, n), n, g: undefined }];
  // Lanes that left the loop and are neither released nor returned yet.
  let done: Int32Array | undefined;
  let released = false;
  for (;;) {
    const p0 = bars.progress;
    let moved = false;
    for (let c = 0; c < cursors.length; c++) {
      const cur = cursors[c]!;
      for (;;) {
        if (!cur.g) {
          const run = new Int32Array(cur.n);
          const a = step(cur.lanes, cur.n, cur.k, run);
          if (a < cur.n) done = join(done, leaving(cur.lanes, cur.n, run, a));
          cur.lanes = run;
          cur.n = a;
          if (a === 0) break;
          cur.g = body(run, a);
        }
        const r = cur.g.next();
        if (r.done) {
          cur.g = undefined;
          if (r.value) {
            cur.lanes = r.value;
            cur.n = r.value.length;
          }
          cur.k++;
          continue;
        }
        if (r.value === undefined) break;
        // Released lanes finished iteration k early: they go on to k + 1 as their own group.
        cursors.push({ k: cur.k + 1, lanes: r.value, n: r.value.length, g: undefined });
        moved = true;
      }
      if (cur.n === 0) {
        cursors.splice(c--, 1);
        moved = true;
      }
    }
    if (cursors.length === 0) return released ? (done ?? new Int32Array(0)) : undefined;
    if (done && done.length > 0) {
      // Every group left blocks: the lanes that left the loop go on.
      released = true;
      const out = done;
      done = undefined;
      yield out;
      continue;
    }
    if (!moved && (cursors.length === 1 || bars.progress === p0)) yield undefined;
  }
}

/** The lanes of `lanes[0..n)` not in `run[0..a)` (a subsequence of it, in order). */
function leaving(lanes: Int32Array, n: number, run: Int32Array, a: number): Int32Array {
  const out = new Int32Array(n - a);
  let j = 0;
  let o = 0;
  for (let i = 0; i < n; i++) {
    if (j < a && run[j] === lanes[i]) j++;
    else out[o++] = lanes[i]!;
  }
  return out;
}

const warpOps = new WeakMap<Stmt, boolean>();

/**
 * A warp collective, a fragment op, or a machine action whose warp's lanes run it together
 * (ActionTraits `warpWide`).
 */
function isWarpOp(op: string): boolean {
  const fx = findOp(op)?.sim;
  if (!fx) return false;
  if (fx.kind === "warp" || fx.kind === "fragment") return true;
  return fx.kind === "machine" && actionTraits(op)?.warpWide === true;
}

function exprWarpOp(e: Expr): boolean {
  let hit = false;
  walkExpr(e, (x) => {
    if (x.kind === "CallExpr" && isWarpOp(x.op)) hit = true;
  });
  return hit;
}

/** True when `s` contains a warp-level op (its lanes must stay together: no lane split). */
export function hasWarpOp(s: Stmt): boolean {
  return someStmt(
    s,
    (x) => (x.kind === "Call" && isWarpOp(x.op)) || stmtExprs(x).some(exprWarpOp),
    warpOps,
  );
}
