import type { Expr } from "../ir/expr.js";
import type { Stmt } from "../ir/stmt.js";
import type { RangeScope, ScopeMark } from "./range-scope.js";

/** Which nested body of a statement: a loop's, `while`'s or device entry's body, or an arm of an `if`. */
export type BodyKind = "body" | "then" | "else";

/**
 * How {@link walkScoped} goes on below one statement, as the visitor's `enter` decides. Every
 * field is optional: by default every nested statement is visited once, and the scope learns
 * from the statement's own expressions.
 */
export interface Descend {
  /**
   * `"none"`: visit no nested statement (code generation that handled the body itself, an empty
   * loop); `"then"` / `"else"`: only that arm of an `if` (one whose condition is known). A `let`
   * or an allocation still defines its name for what follows.
   */
  readonly only?: "none" | "then" | "else";
  /**
   * For a `for`: visit the body this many times (the copies of an unrolled loop, whose variable
   * the visitor gives each copy's value), instead of once over the loop's range. The variable is
   * defined in each copy, with no range learnt.
   */
  readonly copies?: number;
  /**
   * The expressions the scope learns from in place of the statement's own: a `for`'s `min` and
   * `extent`, an `if`'s `cond`, a `let`'s `value` (a transformation passes them as it rewrote them).
   */
  readonly learn?: {
    readonly min?: Expr;
    readonly extent?: Expr;
    readonly cond?: Expr;
    readonly value?: Expr;
  };
  /** Before each nested body (copy `copy` of it), once the scope has learnt its facts. */
  readonly enterBody?: (body: BodyKind, copy: number) => void;
  /** After each nested body, before the scope forgets its facts. */
  readonly leaveBody?: (body: BodyKind, copy: number) => void;
  /** Once the statement and everything nested in it are visited (before the visitor's `leave`). */
  readonly leave?: () => void;
}

/** The hooks of {@link walkScoped}. */
export interface ScopedVisitor {
  /**
   * Called on each statement in program order, before anything nested in it, with the scope as
   * it holds at the statement (a loop's or let's own variable not yet defined).
   */
  enter(s: Stmt, scope: RangeScope): Descend | void;
  /** Called once `s` and everything nested in it are visited, with the scope as `enter` saw it. */
  leave?(s: Stmt, scope: RangeScope): void;
}

const NOTHING: Descend = {};

/** A statement to visit, or a step to run once the statements scheduled before it are done. */
type Work = Stmt | (() => void);

/**
 * Walk `root` in program order, keeping `scope` up to date: a `for` defines its variable over its
 * range inside its body, a `let` its variable with its value's range for the statements after it,
 * an allocation its buffer; each arm of an `if` learns its condition (the then-arm) or the
 * condition's negation (the else-arm, where `negateCond` states one; computed at the `if`); each
 * block (`Seq`) and each nested body is a scope, so what was defined or learnt in it is forgotten
 * when it ends. The visitor's hooks see the scope at each point (see {@link ScopedVisitor},
 * {@link Descend}). The walk keeps its own stack, so nesting costs no JS stack (any depth up to
 * MAX_EXPR_DEPTH). This is the one scoped walk of the verifier, `simplify` and code generation.
 */
export function walkScoped(root: Stmt, scope: RangeScope, visitor: ScopedVisitor): void {
  const work: Work[] = [root];
  /** Run `items` in order, before anything scheduled earlier. */
  const then = (items: Work[]): void => {
    for (let i = items.length - 1; i >= 0; i--) work.push(items[i]!);
  };
  while (work.length > 0) {
    const w = work.pop()!;
    if (typeof w === "function") w();
    else visit(w);
  }

  function visit(s: Stmt): void {
    const d = visitor.enter(s, scope) || NOTHING;
    const done = (): void => {
      d.leave?.();
      visitor.leave?.(s, scope);
    };
    /** `body` as a scope of its own, with what `learn` puts in it first. */
    const nested = (kind: BodyKind, copy: number, body: Stmt, learn: () => void): Work[] => {
      let m: ScopeMark;
      return [
        () => {
          m = scope.mark();
          learn();
          d.enterBody?.(kind, copy);
        },
        body,
        () => {
          d.leaveBody?.(kind, copy);
          scope.restore(m);
        },
      ];
    };
    if (s.kind === "Let") {
      scope.bindLet(s.var, d.learn?.value ?? s.value);
      return done();
    }
    if (s.kind === "Alloc") {
      scope.defineBuffer(s.buffer.id);
      return done();
    }
    if (d.only === "none") return done();
    switch (s.kind) {
      case "Seq": {
        const m = scope.mark();
        then([
          ...s.stmts,
          () => {
            scope.restore(m);
            done();
          },
        ]);
        return;
      }
      case "For": {
        const min = d.learn?.min ?? s.min;
        const extent = d.learn?.extent ?? s.extent;
        const items: Work[] = [];
        if (d.copies === undefined) {
          items.push(...nested("body", 0, s.body, () => scope.bindLoop(s.var, min, extent)));
        } else {
          for (let k = 0; k < d.copies; k++) {
            items.push(...nested("body", k, s.body, () => scope.defineVar(s.var.id)));
          }
        }
        then([...items, done]);
        return;
      }
      case "While":
      case "DeviceEntry":
        then([...nested("body", 0, s.body, () => {}), done]);
        return;
      case "If": {
        const cond = d.learn?.cond ?? s.cond;
        const items: Work[] = [];
        // The negation is read at the `if`, before the then-arm narrows anything.
        const negated = s.else && d.only !== "then" ? scope.negation(cond) : undefined;
        if (d.only !== "else") items.push(...nested("then", 0, s.then, () => scope.assume(cond)));
        if (s.else && d.only !== "then") {
          items.push(...nested("else", 0, s.else, () => scope.assume(negated)));
        }
        then([...items, done]);
        return;
      }
      default:
        return done();
    }
  }
}
