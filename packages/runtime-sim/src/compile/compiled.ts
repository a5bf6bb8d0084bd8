import type { Expr, MachineAction, OpDef, SimValue, Span } from "@tirx-ts/core";
import type { Machine } from "../exec/machine.js";
import type { BarBuffer } from "../exec/memory.js";
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

/**
 * The statement that does nothing (an Alloc, a one-CTA cluster's barrier.cluster.arrive): the
 * statement compiler drops it from a sequence by identity (compile/stmt.ts, sequence).
 */
export const nothing: Exec = () => {};

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
  /**
   * Compile an author index of an access for its axis check's second evaluation: its loads read
   * memory with no check or record (see compile/axis-check.ts).
   */
  reread(e: Expr, span?: Span): NumFn;
  /**
   * An mbarrier operand (the BufferPtr of a shared uint64 element): its shared byte address in
   * the thread's CTA's window, and the buffer.
   * @throws TirxError TX4011 when `e` is not a pointer into a shared buffer.
   */
  bar(e: Expr, span?: Span): { addr: NumFn; bb: BarBuffer };
}

/**
 * The actions of machine unit `U` (core `MachineAction`, e.g. `UnitAction<"mbarrier">` is
 * init, arrive, try_wait and arrive_remote).
 */
export type UnitAction<U extends MachineAction["unit"]> = Extract<MachineAction, { unit: U }>;

/**
 * Action `K` of the actions `A` of one unit: the variant of `A` that holds `K`, narrowed to it
 * (a variant may list several actions, as wgmma's fence | commit | wait does).
 */
export type ActionOf<A extends MachineAction, K extends A["action"]> = A extends unknown
  ? K extends A["action"]
    ? A & { readonly action: K }
    : never
  : never;

/**
 * One call of an op whose record's simulator semantics is the machine action `A`
 * (`sim: { kind: "machine", effect }`), as the action's compiler gets it.
 */
export interface UnitCall<A extends MachineAction> {
  readonly ec: ExprCompiler;
  /** The op's record. */
  readonly op: OpDef;
  /** The record's action (`op.sim.effect`), with its parameters (wgmma's N, an atomic's op). */
  readonly fx: A;
  /** The operands, as the call passes them. */
  readonly args: readonly Expr[];
  /** The call's own span (a value op's span, else its statement's): its site and its errors. */
  readonly at: Span | undefined;
  /** The span that locates operands without one of their own (the enclosing statement's). */
  readonly span: Span | undefined;
}

/**
 * What the simulator's schedulers ask of a machine action while a kernel compiles
 * (compile/schedule.ts, compile/wait-loop.ts, compile/blocking.ts, compile/lane-split.ts),
 * declared on the action's entry in its unit's table (`compile/units/<unit>.ts`) and read through
 * `actionTraits` (compile/units.ts): facts of the action, never of an op's spelling. They are
 * read once per statement while a kernel compiles (cached by statement), never per launch. An
 * absent flag is false.
 */
export interface ActionTraits {
  /**
   * A call synchronises threads (a CTA barrier; an mbarrier wait's test): a stretch of
   * statements that holds one does not run warp by warp (compile/schedule.ts).
   */
  readonly syncs?: true;
  /**
   * A value op that tests an mbarrier phase without blocking (PTX ISA, mbarrier.try_wait): a
   * `while` whose condition calls it is a wait loop (compile/wait-loop.ts).
   */
  readonly polls?: true;
  /**
   * Its value reads no state a loop body can change, only the launch and its operands (the
   * cluster special registers, mapa): a wait loop's condition that calls it still changes only
   * with an mbarrier phase (compile/wait-loop.ts, waitReadsState).
   */
  readonly stateless?: true;
  /**
   * A statement that waits for the other CTAs of the cluster (PTX ISA, barrier.cluster.wait):
   * compiled as a blocking statement (compile/blocking.ts).
   */
  readonly waitsForCluster?: true;
  /**
   * wgmma.wait_group: its wgmma-groups belong to the warpgroup (PTX ISA, wgmma.commit_group), so
   * a warp's wait completes only once every warp of its warpgroup has committed the groups it
   * retires. With warps as coroutines the warp yields until then (compile/blocking.ts); in
   * varied schedules it also ends a warp-by-warp stretch (it `syncs`).
   */
  readonly waitsForWarpgroup?: true;
  /**
   * A CTA barrier statement (PTX ISA, bar/barrier): `whole` when every thread of the CTA takes
   * part (cta_sync), else a named barrier by id and count, under which warps run as coroutines;
   * `waits` unless it only arrives (bar.arrive). compile/blocking.ts.
   */
  readonly ctaBarrier?: { readonly whole: boolean; readonly waits: boolean };
  /**
   * The lanes of a warp run it together (warpgroup ops, setmaxnreg, warp barriers): a statement
   * that holds one is never split by lane (compile/lane-split.ts).
   */
  readonly warpWide?: true;
}

/**
 * How the simulator compiles one action of a machine unit, by the form of the op: a statement
 * op's closure over the lanes that execute it, a value op's closure of the thread. A form left
 * out is TX2010 when (and only if) a thread reaches such a call. Its traits tell the schedulers
 * what the action does (ActionTraits).
 */
export interface ActionCompiler<A extends MachineAction> extends ActionTraits {
  /** A statement op of this action. */
  readonly stmt?: (c: UnitCall<A>) => Exec;
  /** A value op of this action: per thread, the op's result. */
  readonly value?: (c: UnitCall<A>) => (t: number) => SimValue;
}

/**
 * A machine unit's compiler: one entry per action of the unit (core `MachineAction`). Each unit
 * file declares its table with `satisfies UnitCompiler<UnitAction<"unit">>`, so a new action of
 * the unit is a compile error in that file alone.
 */
export type UnitCompiler<A extends MachineAction> = {
  readonly [K in A["action"]]: ActionCompiler<ActionOf<A, K>>;
};
