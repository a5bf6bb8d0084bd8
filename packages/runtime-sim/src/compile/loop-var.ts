import { isBigValue, type Stmt } from "@tirx-ts/core";
import { bigWrapper, intWrapper } from "../numeric/int.js";
import type { BigFn, NumFn } from "./access.js";
import type { ExprCompiler } from "./compiled.js";

/**
 * The loop variable of a For: each thread's start and trip count (evaluated when the loop is
 * entered) and the variable's register, written at every iteration.
 */
export class LoopVar {
  /** After `enter`: whether every lane has the same trip count. */
  uniform = true;
  /**
   * The last `set`, when it gave every thread of t0 .. t0 + n - 1 one value (`recValue`) and
   * wrote no other thread: the register holds that value over those threads until the next
   * `set` (only this loop writes the variable's register); n is 0 otherwise.
   */
  recT0 = 0;
  recN = 0;
  recValue = 0;
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
    // The register's writer for affine forms (compile/affine.ts); a second LoopVar of the same
    // variable would write it without this one's records knowing, so neither is trusted then.
    ec.loops.set(s.var.id, ec.loops.has(s.var.id) ? null : this);
    const T = ec.m.threads;
    const wide = isBigValue(s.var.dtype);
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
    const t0 = lanes[0]!;
    for (let i = 0; i < n; i++) {
      const t = lanes[i]!;
      if (loBig) startBig[t] = loBig(t);
      else start[t] = lo!(t);
      const c = ext(t);
      count[t] = c;
      if (i > 0 && c !== count[t0]) uniform = false;
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
      const t0 = active[0]!;
      const s0 = start[t0]!;
      let block = true;
      for (let i = 0; i < a; i++) {
        const t = active[i]!;
        num[base + t] = wrapN(start[t]! + k);
        // (Each lane's start is its own, from the enter its warp made: warps running as
        // coroutines enter the loop separately.)
        if (t !== t0 + i || start[t] !== s0) block = false;
      }
      // Consecutive threads with one start: one value over them.
      this.recN = block && a > 0 ? a : 0;
      this.recT0 = t0;
      this.recValue = num[base + t0]!;
      return;
    }
    this.recN = 0;
  }
}
