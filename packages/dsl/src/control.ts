import {
  binary,
  constInt,
  intImm,
  mkVar,
  TirxError,
  type Expr,
  type Span,
  type Stmt,
  type Var,
  type ForAnnotation,
} from "@tirx-ts/core";
import { builder, refuseThenable, type Builder } from "./builder.js";
import { checkFunction, jsConditionError, PrimExpr, show, toExpr, type ExprLike } from "./expr.js";
import { checkIdent } from "./check.js";
import { callerSpan } from "./span.js";

interface LoopHead {
  readonly var: Var;
  readonly min: Expr;
  readonly extent: Expr;
  /** What the body sees: the loop variable, or `start + var * step` for a stepped range. */
  readonly index: PrimExpr;
}

function intBound(x: ExprLike, what: string, span?: Span): Expr {
  const e = toExpr(x, "int32", span);
  if (e.dtype !== "int32") {
    throw new TirxError("TX2005", `loop bounds must be int32, got ${e.dtype} for ${what}`, span);
  }
  const c = constInt(e);
  if (c !== undefined && (c < -(2 ** 31) || c >= 2 ** 31)) {
    throw new TirxError("TX1002", `loop bound ${c} does not fit in int32`, span);
  }
  return e;
}

/**
 * The loop `for (x = start; x < stop; x += step)` normalized to a unit-stride IR loop
 * `for (k = 0; k < ceildiv(stop - start, step); k++)` with `x = start + k * step`, so every
 * reader of `For` (verifier ranges, codegen, simulator) sees only unit steps.
 */
function loopHead(
  start: ExprLike,
  stop: ExprLike | undefined,
  step: unknown,
  span?: Span,
): LoopHead {
  const [lo, hi] = stop === undefined ? [0, start] : [start, stop];
  const min = intBound(lo, "start", span);
  const end = intBound(hi, "stop", span);
  if (
    step !== undefined &&
    (typeof step !== "number" || !Number.isSafeInteger(step) || step <= 0 || step >= 2 ** 31)
  ) {
    throw new TirxError(
      "TX1002",
      `a loop step must be a static positive integer, got ${show(step)}`,
      span,
    );
  }
  const v = mkVar("i", "int32", span);
  if (step === undefined || step === 1) {
    const extent: Expr =
      min.kind === "IntImm" && end.kind === "IntImm"
        ? { kind: "IntImm", value: Number(end.value) - Number(min.value), dtype: "int32" }
        : { kind: "Binary", op: "sub", a: end, b: min, dtype: "int32" };
    return { var: v, min, extent, index: new PrimExpr(v) };
  }
  const a = constInt(min);
  const b = constInt(end);
  const extent =
    a !== undefined && b !== undefined
      ? intImm(Math.max(0, Math.ceil((b - a) / step)))
      : binary(
          "floordiv",
          binary("add", binary("sub", end, min, span), intImm(step - 1), span),
          intImm(step),
          span,
        );
  const index = binary("add", min, binary("mul", v, intImm(step), span), span);
  return { var: v, min: intImm(0), extent, index: new PrimExpr(index) };
}

function* loop(
  start: ExprLike,
  stop: ExprLike | undefined,
  step: unknown,
  annotation: ForAnnotation,
  label: string,
): Generator<PrimExpr> {
  const span = callerSpan();
  const b = builder(label, span);
  const head = loopHead(start, stop, step, span);
  const depth = b.depth;
  b.open(span);
  try {
    yield head.index;
  } finally {
    if (b.depth !== depth + 1) {
      throw new TirxError(
        "TX1002",
        `a ${label} loop was interleaved with another open block; iterate loops with for-of`,
        span,
      );
    }
    const body = b.close();
    b.emit({
      kind: "For",
      var: head.var,
      min: head.min,
      extent: head.extent,
      annotation,
      body,
      ...(span ? { span } : {}),
    });
  }
}

/**
 * A serial loop, traced once: `for (const j of T.range(32)) { ... }`, `T.range(lo, hi)`, or
 * `T.range(lo, hi, step)` with a static positive step (Python `range`; the index the body sees
 * is `lo + k * step`). Bounds are int32 and may be runtime values. The body's statements are
 * recorded once.
 * @throws TirxError TX2005 (bounds not int32), TX1002 (step not a static positive integer).
 */
export function range(start: ExprLike, stop?: ExprLike, step?: number): Iterable<PrimExpr> {
  return loop(start, stop, step, "serial", "T.range");
}

/** `T.serial(...)`: the TIRx name of `T.range` (same arguments, same loop). */
export function serial(start: ExprLike, stop?: ExprLike, step?: number): Iterable<PrimExpr> {
  return loop(start, stop, step, "serial", "T.serial");
}

/** Like `range`, asking code generation to unroll the loop fully (constant bounds). */
export function unroll(start: ExprLike, stop?: ExprLike, step?: number): Iterable<PrimExpr> {
  return loop(start, stop, step, "unroll", "T.unroll");
}

function* nest(extents: readonly ExprLike[], span?: Span): Generator<PrimExpr[]> {
  const b = builder("T.grid", span);
  if (extents.length === 0) {
    throw new TirxError("TX1002", "T.grid needs at least one extent, such as T.grid(4, 8)", span);
  }
  const heads = extents.map((x) => loopHead(x, undefined, undefined, span));
  const depth = b.depth;
  b.open(span, heads.length);
  try {
    yield heads.map((h) => h.index);
  } finally {
    if (b.depth !== depth + heads.length) {
      throw new TirxError(
        "TX1002",
        "a T.grid loop nest was interleaved with another open block; iterate loops with for-of",
        span,
      );
    }
    for (let k = heads.length - 1; k >= 0; k--) {
      const h = heads[k]!;
      const body = b.close();
      b.emit({
        kind: "For",
        var: h.var,
        min: h.min,
        extent: h.extent,
        annotation: "serial",
        body,
        ...(span ? { span } : {}),
      });
    }
  }
}

/**
 * Nested serial loops, outermost first (TIRx `T.grid`): `for (const [i, j] of T.grid(4, 8))`
 * runs `j` fastest. Each extent is an int32, static or runtime.
 * @throws TirxError TX1002 (no extents), TX2005 (an extent not int32).
 */
export function grid<const E extends readonly ExprLike[]>(
  ...extents: E
): Iterable<{ -readonly [K in keyof E]: PrimExpr }> {
  // nest yields one index per extent, in order: the tuple type says so to the destructuring.
  return nest(extents, callerSpan()) as Iterable<{ -readonly [K in keyof E]: PrimExpr }>;
}

/**
 * A loop whose accesses at contiguous elements `base + v` become vector loads and stores (TIRx
 * `T.vectorized`): `for (const v of T.vectorized(4)) B.set([i, v], A.get([i, v]))` copies four
 * float32 with one `ld.global.v4.f32` and one `st.global.v4.f32` when the base is provably
 * aligned to the vector's bytes (16 here). Needs a constant trip count (TX2012). It means what
 * the serial loop means: where codegen cannot prove alignment or contiguity, or the body is more
 * than stores of element-wise values, it unrolls the loop instead and says why in a PTX comment.
 */
export function vectorized(start: ExprLike, stop?: ExprLike): Iterable<PrimExpr> {
  return loop(start, stop, 1, "vectorized", "T.vectorized");
}

/**
 * `if (cond) { then } else { otherwise }`, with both bodies traced once; `cond` a traced bool.
 * @throws TirxError TX1002 for a JavaScript boolean `cond` (`i === 0` on a traced `i` is the
 *   JavaScript `false`: jsConditionError) or branches that are not functions; TX2005 for a
 *   condition that is not bool.
 */
export function if_(cond: ExprLike, then: () => void, otherwise?: () => void): void {
  // The checks live in a helper: this frame stays small, since nested T.if_ bodies stack it.
  const head = ifHead(cond, then, otherwise);
  const b = head.b;
  // Builder.block inlined: one frame per nesting level instead of two.
  b.open(head.span);
  let t: Stmt;
  try {
    refuseThenable(then(), head.span);
  } finally {
    t = b.close();
  }
  let e: Stmt | undefined;
  if (otherwise) {
    b.open(head.span);
    try {
      refuseThenable(otherwise(), head.span);
    } finally {
      e = b.close();
    }
  }
  b.emit(ifStmt(head, t, e));
}

function ifHead(
  cond: ExprLike,
  then: unknown,
  otherwise: unknown,
): { b: Builder; c: Expr; span: Span | undefined } {
  const span = callerSpan();
  const b = builder("T.if_", span);
  checkFunction(then, "T.if_ needs a function for the then-branch", span);
  if (otherwise !== undefined) {
    checkFunction(otherwise, "T.if_ needs a function (or nothing) for the else-branch", span);
  }
  if (typeof cond === "boolean") throw jsConditionError("T.if_", cond, span);
  const c = toExpr(cond, "bool", span);
  if (c.dtype !== "bool")
    throw new TirxError("TX2005", `if condition must be bool, got ${c.dtype}`, span);
  return { b, c, span };
}

function ifStmt(head: { c: Expr; span: Span | undefined }, t: Stmt, e: Stmt | undefined): Stmt {
  const { c, span } = head;
  return { kind: "If", cond: c, then: t, ...(e ? { else: e } : {}), ...(span ? { span } : {}) };
}

/**
 * `while (cond()) { body }`; `cond` is traced once and returns a traced bool.
 * @throws TirxError TX1002 for a `cond` or `body` that is not a function, or a `cond` that
 *   returns a JavaScript boolean (jsConditionError); TX2005 for a condition that is not bool.
 */
export function while_(cond: () => ExprLike, body: () => void): void {
  const span = callerSpan();
  const b = builder("T.while_", span);
  checkFunction(
    cond,
    "T.while_ needs a function returning the condition, such as () => i.lt(n)",
    span,
  );
  checkFunction(body, "T.while_ needs a function for the loop body", span);
  const given = cond();
  if (typeof given === "boolean") throw jsConditionError("T.while_", given, span);
  const c = toExpr(given, "bool", span);
  if (c.dtype !== "bool")
    throw new TirxError("TX2005", `while condition must be bool, got ${c.dtype}`, span);
  // Builder.block inlined: one frame per nesting level instead of two.
  b.open(span);
  let s: Stmt;
  try {
    refuseThenable(body(), span);
  } finally {
    s = b.close();
  }
  b.emit({ kind: "While", cond: c, body: s, ...(span ? { span } : {}) });
}

/** Bind `value` to a named variable (TIR LetStmt): later uses read the variable. */
export function let_(name: string, value: ExprLike): PrimExpr {
  const span = callerSpan();
  const b = builder("T.let_", span);
  checkIdent(name, "the variable name of T.let_", span);
  const e = toExpr(value, undefined, span);
  const v = mkVar(name, e.dtype, span);
  b.emit({ kind: "Let", var: v, value: e, ...(span ? { span } : {}) });
  return new PrimExpr(v);
}
