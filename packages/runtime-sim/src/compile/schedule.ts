import {
  TirxError,
  callSite,
  envVar,
  someStmt,
  stmtExprs,
  walkExpr,
  type Stmt,
} from "@tirx-ts/core";
import type { Machine } from "../exec/machine.js";
import type { Exec } from "./compiled.js";
import { actionTraits } from "./units.js";

/**
 * Varied schedules (runSim option `simSeed`, env TIRX_SIM_SEED). With seed 0 every statement
 * runs for all active threads of a CTA before the next one starts (lockstep, the default). With
 * another seed, each maximal stretch of consecutive statements of a block that contains no
 * barrier (`cta_sync`, `bar_sync`) and no `while` loop (a spin loop may wait for another warp) runs
 * warp by warp: the first warp in a seeded random order runs the whole stretch, then the next,
 * and so on. So a warp may run ahead of the others up to the next barrier, and the order of
 * writes, atomics and mbarrier arrivals of different warps varies with the seed. What does not
 * vary: lanes of one warp stay in lockstep and in ascending order; loops whose body holds a
 * barrier run iteration by iteration for all threads; wait loops (mbarrier try_wait) keep the
 * scheduler of compile/blocking.ts.
 */

/** The largest seed: seeds are 32-bit (the xorshift32 state). */
const MAX_SEED = 2 ** 32 - 1;

/**
 * The seed of a launch: the option (any integer, taken mod 2^32), else TIRX_SIM_SEED (unset or
 * empty: 0), else 0.
 * @throws TirxError TX5012 (at the caller's line, with the fix in a note) when TIRX_SIM_SEED is
 *   set but is not a decimal integer from 0 to 2^32 − 1 (e.g. "abc", "-1", "1.5", " ").
 */
export function seedOf(option: number | undefined): number {
  if (option !== undefined) return option >>> 0;
  const env = envVar("TIRX_SIM_SEED");
  if (env === undefined || env === "") return 0; // set but empty is unset, as for TIRX_DEVICE
  const text = env.trim();
  if (/^\d+$/.test(text) && Number(text) <= MAX_SEED) return Number(text);
  throw new TirxError(
    "TX5012",
    `TIRX_SIM_SEED is ${JSON.stringify(env)}; it takes a whole number from 0 to ${MAX_SEED} (0 runs the threads of a CTA in lockstep)`,
    callSite(),
    [
      {
        message: `set TIRX_SIM_SEED to a seed from 0 to ${MAX_SEED} (a hazard report's last note names the seed to replay), or unset it for lockstep (seed 0)`,
      },
    ],
  );
}

/** Next value of the launch's xorshift32 generator. */
export function nextRandom(m: Machine): number {
  let x = m.rng | 0 || 0x9e3779b9;
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  m.rng = x;
  return x >>> 0;
}

/** Whether a statement or one nested in it syncs (see `syncs`), by statement. */
const syncingCache = new WeakMap<Stmt, boolean>();

/** True when `s` can run for one warp at a time: no barrier, no while loop, anywhere inside. */
export function syncFree(s: Stmt): boolean {
  return !someStmt(s, syncs, syncingCache);
}

/**
 * True when `s` itself (not counting nested statements) is a while loop or calls an action that
 * synchronises threads (ActionTraits `syncs`: a CTA barrier, an mbarrier wait's test).
 */
function syncs(s: Stmt): boolean {
  if (s.kind === "While") return true;
  if (s.kind === "Call" && actionTraits(s.op)?.syncs) return true;
  let v = false;
  for (const e of stmtExprs(s)) {
    walkExpr(e, (x) => {
      if (x.kind === "CallExpr" && actionTraits(x.op)?.syncs) v = true;
    });
  }
  return v;
}

/**
 * A stretch of sync-free statements: in lockstep with seed 0, else warp by warp in a seeded
 * order (each warp's lanes keep their order).
 */
export function warpByWarp(m: Machine, parts: readonly Exec[]): Exec {
  const T = m.threads;
  const starts = new Int32Array(Math.ceil(T / 32) + 1);
  const order = new Int32Array(Math.ceil(T / 32));
  const sorted = new Int32Array(T);
  return (lanes, n) => {
    if (m.opts.seed === 0) {
      for (let i = 0; i < parts.length; i++) {
        if (m.opts.tracer) m.opts.tracer.clock++;
        parts[i]!(lanes, n);
      }
      return;
    }
    // Group the lanes by warp (lane lists are ascending, but do not rely on it).
    sorted.set(lanes.subarray(0, n));
    const view = sorted.subarray(0, n).sort();
    let w = 0;
    for (let i = 0; i < n; i++) {
      if (i === 0 || view[i]! >> 5 !== view[i - 1]! >> 5) starts[w++] = i;
    }
    starts[w] = n;
    for (let i = 0; i < w; i++) order[i] = i;
    for (let i = w - 1; i > 0; i--) {
      const j = nextRandom(m) % (i + 1);
      const x = order[i]!;
      order[i] = order[j]!;
      order[j] = x;
    }
    for (let k = 0; k < w; k++) {
      const g = order[k]!;
      const sub = view.slice(starts[g]!, starts[g + 1]!);
      for (let i = 0; i < parts.length; i++) {
        if (m.opts.tracer) m.opts.tracer.clock++;
        parts[i]!(sub, sub.length);
      }
    }
  };
}
