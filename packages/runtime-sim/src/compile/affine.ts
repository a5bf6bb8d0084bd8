import { binaryOp, isBigValue, walkExpr, walkStmt, type Expr, type Stmt } from "@tirx-ts/core";
import type { ExprCompiler } from "./compiled.js";
import type { Machine } from "../exec/machine.js";

/**
 * Index expressions evaluated over a block of consecutive threads at once. Over threads
 * t0 .. t0 + n - 1 of one CTA, an expression is affine when its value for thread t is
 * `a + b·t` for numbers a and b the same for every thread of the block. An `AffineFn` decides
 * that for the block the caller names (Affine.at) and leaves a and b in `Affine.a` / `Affine.b`;
 * it returns false when it cannot show it (a node kind it does not follow, a register not affine
 * over the block, an int32 result that wraps somewhere in the block).
 *
 * What it follows: integer constants; %tid (x affine with step 1 over a block within one row of
 * the CTA, y and z constant there); %ctaid and every other expression the closures compute
 * (`ec.num`) when it holds no thread-dependent leaf, evaluated once at t0; registers (checked
 * over the block: the same value for all, or a value stepping by a fixed amount from thread to
 * thread); int32 add, sub, and mul by a constant-over-the-block factor. Each int32 node's exact
 * value at both ends of the block must lie in int32, so no thread of the block wraps there
 * (the value is monotonic across the block) and the exact a + b·t is the wrapped result.
 */
export type AffineFn = () => boolean;

/** The block an AffineFn evaluates over, and its result. */
export class Affine {
  /** The block: threads t0 .. t0 + n - 1 (set by the caller before calling AffineFns). */
  t0 = 0;
  n = 0;
  /** Per block: a fresh stamp, so register checks made once per block are reused. */
  stamp = 0;
  /** The result of the last AffineFn that returned true. */
  a = 0;
  b = 0;

  constructor(readonly m: Machine) {}

  /** Start evaluating over threads t0 .. t0 + n - 1. */
  at(t0: number, n: number): void {
    this.t0 = t0;
    this.n = n;
    this.stamp++;
  }

  /**
   * Start evaluating over the threads `lanes[0..n)` when they are a block: at least two
   * consecutive threads t0, t0 + 1, ... of one CTA (false, nothing started, otherwise).
   */
  atLanes(lanes: Int32Array, n: number): boolean {
    const m = this.m;
    if (n < 2) return false;
    const t0 = lanes[0]!;
    const t1 = t0 + n - 1;
    if (lanes[n - 1] !== t1 || m.rank[t0] !== m.rank[t1]) return false;
    // All of the Machine's lanes (lane i is thread i) or a part of them are consecutive.
    if (lanes.buffer !== m.allLanes.buffer) {
      for (let i = 1; i < n - 1; i++) if (lanes[i] !== t0 + i) return false;
    }
    this.at(t0, n);
    return true;
  }
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** a + b·t within int32 at both ends of the block. */
function inInt32(af: Affine, a: number, b: number): boolean {
  const lo = a + b * af.t0;
  const hi = a + b * (af.t0 + af.n - 1);
  return lo >= INT32_MIN && lo <= INT32_MAX && hi >= INT32_MIN && hi <= INT32_MAX;
}

/** True when `e` reads no thread-dependent value (no %tid, register, load, or lane op). */
function threadFree(e: Expr): boolean {
  let free = true;
  const walk = (x: Expr): void => {
    if (!free) return;
    switch (x.kind) {
      case "IntImm":
      case "FloatImm":
        return;
      case "Special":
        if (!x.name.startsWith("ctaid.") && !x.name.startsWith("nctaid")) free = false;
        return;
      case "Binary":
        walk(x.a);
        walk(x.b);
        return;
      case "Cast":
        walk(x.value);
        return;
      default:
        free = false;
    }
  };
  walk(e);
  return free;
}

/** The AffineFn of integer expression `e` (int32 or narrower), or undefined when it has none. */
export function affineOf(ec: ExprCompiler, af: Affine, e: Expr): AffineFn | undefined {
  const m = ec.m;
  if (isBigValue(e.dtype) || (!e.dtype.startsWith("int") && !e.dtype.startsWith("uint"))) {
    return undefined;
  }
  switch (e.kind) {
    case "IntImm": {
      const c = Number(e.value);
      return () => {
        af.a = c;
        af.b = 0;
        return true;
      };
    }
    case "Special": {
      const bx = m.block[0];
      const tidy = m.tidy;
      const tidz = m.tidz;
      /** The block lies in one row of the CTA (the same %tid.y and %tid.z at both ends). */
      const oneRow = (): boolean => {
        const t1 = af.t0 + af.n - 1;
        return tidy[af.t0] === tidy[t1] && tidz[af.t0] === tidz[t1];
      };
      if (e.name === "tid.x") {
        const tidx = m.tidx;
        return () => {
          if (!oneRow()) return false;
          // In one row %tid.x is t minus the row's first thread (0 throughout when bx is 1).
          af.a = bx === 1 ? 0 : tidx[af.t0]! - af.t0;
          af.b = bx === 1 ? 0 : 1;
          return true;
        };
      }
      if (e.name === "tid.y" || e.name === "tid.z") {
        const arr = e.name === "tid.y" ? tidy : tidz;
        return () => {
          if (!oneRow()) return false;
          af.a = arr[af.t0]!;
          af.b = 0;
          return true;
        };
      }
      return constantOf(ec, af, e);
    }
    case "Var": {
      const value = ec.letValues.get(e.id);
      if (value !== undefined) return affineOf(ec, af, value);
      const slot = ec.layout.slots.get(e.id);
      if (slot === undefined || slot.wide) return undefined;
      const num = m.num;
      const base = slot.slot * m.threads;
      // Read when the function runs: the loop may be compiled after this statement's affine form.
      const loops = ec.loops;
      const once = ec.loopVarsOnce.has(e.id);
      if (ec.uniformVars.has(e.id)) {
        return () => {
          af.a = num[base + af.t0]!;
          af.b = 0;
          return true;
        };
      }
      let stamp = -1;
      let ok = false;
      let ca = 0;
      let cb = 0;
      return () => {
        if (stamp !== af.stamp) {
          stamp = af.stamp;
          const t0 = af.t0;
          const n = af.n;
          const loop = once ? loops.get(e.id) : undefined;
          if (loop && t0 >= loop.recT0 && t0 + n <= loop.recT0 + loop.recN) {
            // The loop's last write gave the whole block one value: no scan.
            ok = true;
            ca = loop.recValue;
            cb = 0;
          } else {
            const v0 = num[base + t0]!;
            const step = n > 1 ? num[base + t0 + 1]! - v0 : 0;
            ok = Number.isInteger(v0) && Number.isInteger(step);
            for (let j = base + t0 + 2, f = base + t0 + n, v = v0 + 2 * step; j < f; j++) {
              if (num[j] !== v) {
                ok = false;
                break;
              }
              v += step;
            }
            ca = v0 - step * t0;
            cb = step;
          }
        }
        af.a = ca;
        af.b = cb;
        return ok;
      };
    }
    case "Cast": {
      // An int32 value cast to int32 is unchanged (other casts: only over block constants).
      if (e.dtype !== "int32" || e.value.dtype !== "int32") break;
      return affineOf(ec, af, e.value);
    }
    case "Binary": {
      if (e.dtype !== "int32") break;
      const fa = affineOf(ec, af, e.a);
      const fb = fa && affineOf(ec, af, e.b);
      if (!fa || !fb) break;
      if (e.op === "add" || e.op === "sub") {
        const sign = e.op === "add" ? 1 : -1;
        return () => {
          if (!fa()) return false;
          const a = af.a;
          const b = af.b;
          if (!fb()) return false;
          const ra = a + sign * af.a;
          const rb = b + sign * af.b;
          af.a = ra;
          af.b = rb;
          return inInt32(af, ra, rb);
        };
      }
      if (e.op === "mul") {
        return () => {
          if (!fa()) return false;
          const a = af.a;
          const b = af.b;
          if (!fb()) return false;
          let ra: number;
          let rb: number;
          if (b === 0) {
            ra = a * af.a;
            rb = a * af.b;
          } else if (af.b === 0) {
            ra = a * af.a;
            rb = b * af.a;
          } else return false;
          af.a = ra;
          af.b = rb;
          return Number.isSafeInteger(ra) && Number.isSafeInteger(rb) && inInt32(af, ra, rb);
        };
      }
      // Another operator over values constant across the block: its own semantics, once.
      const sem = binaryOp(e.op).sim;
      if (sem.kind !== "thread") break;
      const op = sem.make([e.dtype, e.dtype], e.dtype) as (x: number, y: number) => number;
      return () => {
        if (!fa() || af.b !== 0) return false;
        const a = af.a;
        if (!fb() || af.b !== 0) return false;
        af.a = op(a, af.a);
        af.b = 0;
        return true;
      };
    }
  }
  return constantOf(ec, af, e);
}

/**
 * The AffineFn of `e` when it reads nothing that differs between the threads of a CTA: its
 * value at the block's first thread, b = 0 (undefined for any other `e`).
 */
function constantOf(ec: ExprCompiler, af: Affine, e: Expr): AffineFn | undefined {
  if (!threadFree(e)) return undefined;
  const f = ec.num(e);
  return () => {
    af.a = f(af.t0);
    af.b = 0;
    return true;
  };
}

/**
 * The variables of kernel `body` that affine forms see through: `values`, the Let-bound ones
 * that stand for their value, bound by one Let in the whole kernel to a value that reads no
 * memory and calls no op (a thread's register then holds that value computed from registers
 * that have not changed since: its operands are constants, %tid, %ctaid, parameters, loop
 * variables of loops around the Let, or such variables, and a use lies in the rest of the Let's
 * sequence, so in the same iteration); `uniform`, the scalar parameters `params` no Let or For
 * binds (their registers hold one value for every thread); `loops`, the variables bound by one
 * For and nothing else (only that loop's LoopVar writes their registers, see LoopVar.recN).
 */
export function affineVars(
  body: Stmt,
  params: readonly number[],
): { values: Map<number, Expr>; uniform: Set<number>; loops: Set<number> } {
  const binders = new Map<number, number>();
  const values = new Map<number, Expr>();
  walkStmt(body, (s) => {
    if (s.kind !== "Let" && s.kind !== "For") return;
    binders.set(s.var.id, (binders.get(s.var.id) ?? 0) + 1);
    if (s.kind === "Let") values.set(s.var.id, s.value);
  });
  for (const [id, v] of values) {
    let pure = binders.get(id) === 1;
    walkExpr(v, (x) => {
      if (x.kind === "BufferLoad" || x.kind === "CallExpr" || x.kind === "BufferPtr") pure = false;
    });
    if (!pure) values.delete(id);
  }
  const loops = new Set<number>();
  walkStmt(body, (s) => {
    if (s.kind === "For" && binders.get(s.var.id) === 1) loops.add(s.var.id);
  });
  return { values, uniform: new Set(params.filter((id) => !binders.has(id))), loops };
}
