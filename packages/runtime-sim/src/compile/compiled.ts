import type { Expr, Span } from "@tirx-ts/core";
import type { Machine } from "../exec/machine.js";
import type { BigFn, NumFn } from "./access.js";
import type { Layout } from "./layout.js";

/**
 * The shapes compiled code comes in, for the modules the statement and expression compilers
 * (compile/stmt.ts, compile/expr.ts) use: they import these from here, not from the compilers,
 * so no module imports one it is imported by.
 */

/**
 * A compiled statement: runs for the active threads `lanes[0..n)` of the CTA in lockstep. Control
 * flow splits the lane list (each If/For/While node owns its scratch lane arrays, which is safe
 * because the IR has no recursion); a barrier is an ordinary statement that must see every thread.
 */
export type Exec = (lanes: Int32Array, n: number) => void;

/** What a For loop's variable last gave a block of lanes (compile/loop-var.ts, LoopVar). */
export interface LoopRecord {
  /** The block of threads [recT0, recT0 + recN) the loop's last write gave one value, recValue. */
  readonly recT0: number;
  readonly recN: number;
  readonly recValue: number;
}

/**
 * The expression compiler (compile/expr.ts, ExprCompiler) as the modules it uses see it:
 * expressions compiled into closures of the thread index, and what it knows of variables.
 */
export interface ExprCompiler {
  readonly m: Machine;
  readonly layout: Layout;
  /** Let-bound variables that stand for their value (compile/affine.ts, affineVars). */
  readonly letValues: ReadonlyMap<number, Expr>;
  /** The loop variables of the For loops compiled so far, by variable id (null: two loops). */
  readonly loops: Map<number, LoopRecord | null>;
  /** Variables whose register holds one value for every thread (unbound scalar parameters). */
  readonly uniformVars: ReadonlySet<number>;
  /** Variables bound by one For and nothing else (compile/affine.ts, affineVars). */
  readonly loopVarsOnce: ReadonlySet<number>;
  /** Compile `e` (not int64/uint64). `span` locates loads that carry no span of their own. */
  num(e: Expr, span?: Span): NumFn;
  /** Compile an int64/uint64 expression. */
  big(e: Expr, span?: Span): BigFn;
  /** Compile an index or byte count: 64-bit values are narrowed to numbers. */
  index(e: Expr, span?: Span): NumFn;
  /** Compile either kind. */
  any(e: Expr, span?: Span): NumFn | BigFn;
}
