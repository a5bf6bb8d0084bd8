import { binary } from "../ir/arith.js";
import { intImm, type Expr, type Var } from "../ir/expr.js";
import type { LaunchConfig } from "../ir/stmt.js";
import { exprRange, negateCond, refineRanges, type Interval } from "./bounds.js";
import { refineFacts, symMaxes, type Fact, type SymEnv } from "./symbolic.js";

/** A point of a {@link RangeScope} to return to with {@link RangeScope.restore}. */
export interface ScopeMark {
  readonly log: number;
  readonly facts: number;
}

/** One change to undo: a variable's range before it was set, or a name that came into scope. */
type Undo =
  | { readonly kind: "range"; readonly id: number; readonly prev: Interval | undefined }
  | { readonly kind: "var" | "buffer"; readonly id: number };

const isEmpty = (r: Interval | undefined): boolean => r !== undefined && r.min > r.max;

/** What a {@link RangeScope} starts from. */
export interface RangeScopeInit {
  /** The launch, which bounds the special registers (`%tid.x` < block x, ...). */
  readonly launch?: LaunchConfig;
  /**
   * The kernel's symbolic dims (`Var.id`s, each ≥ 0). When given, the scope also keeps symbolic
   * facts (`analysis/symbolic.ts`: `i ≤ n - 1` under `T.range(n)` or `if (i < n)`), which the
   * verifier's bounds proofs need; without it only numeric ranges are kept.
   */
  readonly dims?: ReadonlySet<number>;
  /** Names of variables by `Var.id` (the kernel's scalar parameters), for diagnostics. */
  readonly names?: ReadonlyMap<number, string>;
}

/**
 * What is known at one point of a function's statements, as a walk in program order learns it:
 * the closed integer range of every loop and let variable in scope (`vars`, by `Var.id`; a loop
 * variable spans `min .. min + extent - 1`, a let variable its value's `exprRange`), narrowed
 * inside each arm of an `if` by its condition (the then-arm) or the condition's negation where
 * `negateCond` can state it (the else-arm), the symbolic facts of the same (see
 * {@link RangeScopeInit.dims}), and which variables and buffers are defined. Every change is
 * logged, so {@link mark} and {@link restore} leave a body in time linear in what it added, at
 * any nesting. It is the `RangeEnv` / `SymEnv` of range analysis (`exprRange`, `refineRanges`,
 * `provablyBelowNumel`), live: it changes as the walk moves. `walkScoped` drives it.
 */
export class RangeScope implements SymEnv {
  /** The range of each variable in scope that has one, by `Var.id`. */
  readonly vars = new Map<number, Interval>();
  /** Symbolic facts in scope (only with {@link RangeScopeInit.dims}). */
  readonly facts: Fact[] = [];
  readonly dims: ReadonlySet<number>;
  readonly launch?: LaunchConfig;
  /**
   * The name of each variable the scope has met (the init's, then every loop and let variable
   * bound), by `Var.id`: what diagnostics print for a symbolic bound (`n - 1`, not `v1 - 1`).
   * Only grows: names are the function's, not the scope's.
   */
  readonly names: Map<number, string>;
  private readonly symbolic: boolean;
  private readonly definedVars = new Set<number>();
  private readonly definedBuffers = new Set<number>();
  private readonly log: Undo[] = [];
  /** How many variables in scope have an empty range. */
  private empty = 0;

  constructor(init: RangeScopeInit = {}) {
    if (init.launch) this.launch = init.launch;
    this.dims = init.dims ?? new Set();
    this.symbolic = init.dims !== undefined;
    this.names = new Map(init.names);
  }

  /** The current point, to {@link restore} later. */
  mark(): ScopeMark {
    return { log: this.log.length, facts: this.facts.length };
  }

  /** Forget everything learnt and defined since `m` was taken. */
  restore(m: ScopeMark): void {
    while (this.log.length > m.log) {
      const u = this.log.pop()!;
      if (u.kind === "range") this.put(u.id, u.prev);
      else if (u.kind === "var") this.definedVars.delete(u.id);
      else this.definedBuffers.delete(u.id);
    }
    this.facts.length = m.facts;
  }

  /** Set the range of variable `id` (until the enclosing scope is restored). */
  setRange(id: number, r: Interval): void {
    this.log.push({ kind: "range", id, prev: this.vars.get(id) });
    this.put(id, r);
  }

  /** Put variable `id` in scope (until the enclosing scope is restored). */
  defineVar(id: number): void {
    if (this.definedVars.has(id)) return;
    this.definedVars.add(id);
    this.log.push({ kind: "var", id });
  }

  /** Put buffer `id` in scope (until the enclosing scope is restored). */
  defineBuffer(id: number): void {
    if (this.definedBuffers.has(id)) return;
    this.definedBuffers.add(id);
    this.log.push({ kind: "buffer", id });
  }

  /** Whether variable `id` is defined here. */
  hasVar(id: number): boolean {
    return this.definedVars.has(id);
  }

  /** Whether buffer `id` is defined (a parameter or allocated) here. */
  hasBuffer(id: number): boolean {
    return this.definedBuffers.has(id);
  }

  /**
   * True where no value satisfies what is known (a variable's range is empty, as under
   * `if (i < 0)` for a loop counter): code here never runs.
   */
  get unreachable(): boolean {
    return this.empty > 0;
  }

  /**
   * Loop variable `v` over `min .. min + extent - 1`: defined, with that range (ends from
   * `exprRange`), and with the symbolic facts `v ≤ max` of `min + extent - 1` for int32 bounds.
   */
  bindLoop(v: Var, min: Expr, extent: Expr): void {
    const lo = exprRange(min, this);
    const n = exprRange(extent, this);
    this.names.set(v.id, v.name);
    this.defineVar(v.id);
    this.setRange(v.id, { min: lo.min, max: lo.max + n.max - 1 });
    if (!this.symbolic || min.dtype !== "int32" || extent.dtype !== "int32") return;
    // A runtime trip count such as T.range(n) bounds the loop variable symbolically.
    for (const max of symMaxes(binary("sub", binary("add", min, extent), intImm(1)), this)) {
      this.facts.push({ expr: v, max });
    }
  }

  /** Let variable `v` bound to `value`: defined, with `value`'s range and symbolic bounds. */
  bindLet(v: Var, value: Expr): void {
    this.names.set(v.id, v.name);
    this.defineVar(v.id);
    this.setRange(v.id, exprRange(value, this));
    if (!this.symbolic) return;
    for (const max of symMaxes(value, this)) this.facts.push({ expr: v, max });
  }

  /**
   * Learn that `cond` holds (an `if`'s arm): the ranges `refineRanges` narrows and the facts
   * `refineFacts` finds, both read from the scope before either is added. Nothing for undefined.
   */
  assume(cond: Expr | undefined): void {
    if (!cond) return;
    const learnt = this.symbolic ? refineFacts(cond, this) : [];
    for (const [id, r] of refineRanges(cond, this)) {
      if (this.vars.get(id) !== r) this.setRange(id, r);
    }
    this.facts.push(...learnt);
  }

  /** A condition that holds where `cond` is false (`negateCond` here), or undefined. */
  negation(cond: Expr): Expr | undefined {
    return negateCond(cond, this);
  }

  private put(id: number, r: Interval | undefined): void {
    if (isEmpty(this.vars.get(id))) this.empty--;
    if (r === undefined) this.vars.delete(id);
    else this.vars.set(id, r);
    if (isEmpty(r)) this.empty++;
  }
}
