import { constInt, mkVar, TirxError, type Expr, type ForAnnotation } from "@tirx-ts/core";
import { builder } from "./builder.js";
import { checkFunction, PrimExpr, toExpr, type ExprLike } from "./expr.js";
import { checkIdent } from "./check.js";
import { callerSpan } from "./span.js";

function* loop(
  start: ExprLike,
  stop: ExprLike | undefined,
  annotation: ForAnnotation,
): Generator<PrimExpr> {
  const span = callerSpan();
  const what = annotation === "serial" ? "T.range" : `T.${annotation}`;
  const b = builder(what, span);
  const [lo, hi] = stop === undefined ? [0, start] : [start, stop];
  const min = toExpr(lo, "int32", span);
  const end = toExpr(hi, "int32", span);
  if (min.dtype !== "int32" || end.dtype !== "int32") {
    throw new TirxError(
      "TX2005",
      `loop bounds must be int32, got ${min.dtype} and ${end.dtype}`,
      span,
    );
  }
  for (const e of [min, end]) {
    const c = constInt(e);
    if (c !== undefined && (c < -(2 ** 31) || c >= 2 ** 31)) {
      throw new TirxError("TX1002", `loop bound ${c} does not fit in int32`, span);
    }
  }
  const extent: Expr =
    min.kind === "IntImm" && end.kind === "IntImm"
      ? { kind: "IntImm", value: Number(end.value) - Number(min.value), dtype: "int32" }
      : { kind: "Binary", op: "sub", a: end, b: min, dtype: "int32" };
  const v = mkVar("i", "int32", span);
  const depth = b.depth;
  b.open();
  try {
    yield new PrimExpr(v);
  } finally {
    if (b.depth !== depth + 1) {
      throw new TirxError(
        "TX1002",
        `a ${what} loop was interleaved with another open block; iterate loops with for-of`,
        span,
      );
    }
    const body = b.close();
    b.emit({ kind: "For", var: v, min, extent, annotation, body, ...(span ? { span } : {}) });
  }
}

/**
 * A serial loop, traced once: `for (const j of T.range(32)) { ... }` or `T.range(lo, hi)`.
 * The body's statements are recorded once with `j` as the loop variable.
 */
export function range(start: ExprLike, stop?: ExprLike): Iterable<PrimExpr> {
  return loop(start, stop, "serial");
}

/** Like `range`, asking code generation to unroll the loop fully (constant bounds). */
export function unroll(start: ExprLike, stop?: ExprLike): Iterable<PrimExpr> {
  return loop(start, stop, "unroll");
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
  return loop(start, stop, "vectorized");
}

/** `if (cond) { then } else { otherwise }`, with both bodies traced once. */
export function if_(cond: ExprLike, then: () => void, otherwise?: () => void): void {
  const span = callerSpan();
  const b = builder("T.if_", span);
  const c = toExpr(cond, "bool", span);
  if (c.dtype !== "bool")
    throw new TirxError("TX2005", `if condition must be bool, got ${c.dtype}`, span);
  checkFunction(then, "T.if_ needs a function for the then-branch", span);
  if (otherwise !== undefined) {
    checkFunction(otherwise, "T.if_ needs a function (or nothing) for the else-branch", span);
  }
  const t = b.block(then);
  const e = otherwise ? b.block(otherwise) : undefined;
  b.emit({ kind: "If", cond: c, then: t, ...(e ? { else: e } : {}), ...(span ? { span } : {}) });
}

/** `while (cond()) { body }`; `cond` is traced once. */
export function while_(cond: () => ExprLike, body: () => void): void {
  const span = callerSpan();
  const b = builder("T.while_", span);
  checkFunction(
    cond,
    "T.while_ needs a function returning the condition, such as () => i.lt(n)",
    span,
  );
  checkFunction(body, "T.while_ needs a function for the loop body", span);
  const c = toExpr(cond(), "bool", span);
  if (c.dtype !== "bool")
    throw new TirxError("TX2005", `while condition must be bool, got ${c.dtype}`, span);
  const s = b.block(body);
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
