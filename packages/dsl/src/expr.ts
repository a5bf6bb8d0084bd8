import {
  binary,
  boolImm,
  cast,
  checkOpCall,
  isPacked,
  opOf,
  compare,
  floatImm,
  ifThenElse,
  intImm,
  isFloat,
  isDType,
  logical,
  not,
  showValue,
  TirxError,
  type BinaryOp,
  type CompareOp,
  type DType,
  type Expr,
  type Span,
} from "@tirx-ts/core";
import { callerSpan } from "./span.js";
import { tracked } from "./depth.js";
import { withArticle } from "@tirx-ts/core";

/** Anything usable where an expression is expected: a PrimExpr, or a JS literal. */
export type ExprLike = PrimExpr | number | bigint | boolean;

/**
 * A traced expression. TypeScript has no operator overloading, so arithmetic is spelled with
 * methods: `tid.mul(32).add(j)`, `tid.lt(n)`. JS number literals take the other operand's dtype
 * (as TVMScript's literals do).
 */
export class PrimExpr {
  constructor(readonly expr: Expr) {}

  get dtype(): DType {
    return this.expr.dtype;
  }

  /**
   * JavaScript's own operators on a traced expression (`tid < 128`, `tid + 1`, `tid * 2`,
   * `tid == 0`) convert it to a primitive and would trace a different kernel with no word: a
   * comparison becomes the constant `false`, `tid + 1` the string "[object Object]1", `tid * 2`
   * NaN. Each throws TX1002 naming the method instead. Conversion to a string (`${tid}`,
   * `String(tid)`) still gives "[object Object]". Truthiness (`if (tid.lt(3))`, `c ? a : b`)
   * converts nothing and cannot be caught: a traced condition goes to `T.if_` /
   * `T.if_then_else`.
   * @throws TirxError TX1002 for a number or default conversion (an operator).
   */
  [Symbol.toPrimitive](hint: "number" | "string" | "default"): string {
    if (hint === "string") return "[object Object]";
    throw new TirxError(
      "TX1002",
      `a traced ${this.dtype} expression was used with a JavaScript operator (it converts the expression to a ${hint === "number" ? "number" : "primitive"}); TypeScript has no operator overloading: write the method, e.g. a.add(b), a.mul(b), a.lt(b), a.eq(b), and T.max(a, b) / T.min(a, b) for Math.max / Math.min`,
      callerSpan(),
    );
  }

  add(b: ExprLike): PrimExpr {
    return bin("add", this, b);
  }
  sub(b: ExprLike): PrimExpr {
    return bin("sub", this, b);
  }
  mul(b: ExprLike): PrimExpr {
    return bin("mul", this, b);
  }
  /** C division: truncates toward zero for integers. */
  div(b: ExprLike): PrimExpr {
    return bin("div", this, b);
  }
  /** C remainder: sign of the dividend. */
  mod(b: ExprLike): PrimExpr {
    return bin("mod", this, b);
  }
  /** Python `//`: rounds toward negative infinity. */
  floordiv(b: ExprLike): PrimExpr {
    return bin("floordiv", this, b);
  }
  /** Python `%`: sign of the divisor. */
  floormod(b: ExprLike): PrimExpr {
    return bin("floormod", this, b);
  }
  min(b: ExprLike): PrimExpr {
    return bin("min", this, b);
  }
  max(b: ExprLike): PrimExpr {
    return bin("max", this, b);
  }
  bitand(b: ExprLike): PrimExpr {
    return bin("bitand", this, b);
  }
  bitor(b: ExprLike): PrimExpr {
    return bin("bitor", this, b);
  }
  bitxor(b: ExprLike): PrimExpr {
    return bin("bitxor", this, b);
  }
  shl(b: ExprLike): PrimExpr {
    return bin("shl", this, b);
  }
  shr(b: ExprLike): PrimExpr {
    return bin("shr", this, b);
  }
  eq(b: ExprLike): PrimExpr {
    return cmp("eq", this, b);
  }
  ne(b: ExprLike): PrimExpr {
    return cmp("ne", this, b);
  }
  lt(b: ExprLike): PrimExpr {
    return cmp("lt", this, b);
  }
  le(b: ExprLike): PrimExpr {
    return cmp("le", this, b);
  }
  gt(b: ExprLike): PrimExpr {
    return cmp("gt", this, b);
  }
  ge(b: ExprLike): PrimExpr {
    return cmp("ge", this, b);
  }
  and(b: ExprLike): PrimExpr {
    const span = callerSpan();
    return new PrimExpr(tracked(logical("and", this.expr, toExpr(b, "bool", span), span), span));
  }
  or(b: ExprLike): PrimExpr {
    const span = callerSpan();
    return new PrimExpr(tracked(logical("or", this.expr, toExpr(b, "bool", span), span), span));
  }
  not(): PrimExpr {
    const span = callerSpan();
    return new PrimExpr(tracked(not(this.expr, span), span));
  }
  /**
   * Lane `i` (a static integer) of a pair or vector (`float16x2`, `float32x4`, …) as a scalar of
   * its lane dtype: `T.ptx.vec.lane(v, i)` (core ops/arith/vector.ts; a pair's lane is
   * `T.ptx.unpack(v, i)`).
   * @throws TirxError TX2010 for a lane past the value's lanes, TX2005 for a scalar.
   */
  lane(i: number): PrimExpr {
    const span = callerSpan();
    const pair = isPacked(this.dtype);
    if (pair && i !== 0 && i !== 1) {
      throw new TirxError(
        "TX2010",
        `lane: ${this.dtype} has lanes 0..1, got lane ${showValue(i)}`,
        span,
      );
    }
    const name = pair ? `x2.unpack.${i}` : "vec.lane";
    const args = pair ? [this.expr] : [this.expr, toExpr(i, "int32", span)];
    const dtype = checkOpCall(opOf(name, "value", span), args, span)!;
    return new PrimExpr({ kind: "CallExpr", op: name, args, dtype, ...(span ? { span } : {}) });
  }
  /** Value conversion to `dtype` (PTX cvt semantics). */
  cast(dtype: DType): PrimExpr {
    const span = callerSpan();
    checkDType(dtype, "cast", span);
    return new PrimExpr(tracked(cast(dtype, this.expr, span), span));
  }
}

/** Convert a literal or PrimExpr to IR; literals take `like` as their dtype when given. */
export function toExpr(x: ExprLike, like?: DType, span?: Span): Expr {
  if (x instanceof PrimExpr) return x.expr;
  if (typeof x === "boolean") return boolImm(x, span);
  if (typeof x === "bigint") {
    if (x < -(2n ** 63n) || x >= 2n ** 64n) {
      throw new TirxError("TX1002", `integer ${show(x)} does not fit in 64 bits`, span);
    }
    return intImm(x, like && !isFloat(like) && like !== "bool" ? like : "int64", span);
  }
  if (typeof x === "number") {
    if (like && isFloat(like)) return floatImm(x, like, span);
    if (Number.isInteger(x)) {
      if (like === "bool") return boolImm(x !== 0, span);
      if (!Number.isSafeInteger(x)) {
        throw new TirxError(
          "TX1002",
          `integer ${show(x)} is beyond 2^53 and not exact as a number; write it as a bigint (${show(x)}n)`,
          span,
        );
      }
      return intImm(x, like ?? "int32", span);
    }
    if (like !== undefined) {
      throw new TirxError(
        "TX1007",
        `${show(x)} is not an integer, but is used as ${like}; write an integer, or cast the other operand to a float dtype`,
        span,
      );
    }
    return floatImm(x, "float32", span);
  }
  throw new TirxError("TX1002", `expected an expression or a number, got ${show(x)}`, span);
}

/**
 * A short rendering of any value for error messages (`5n`, `Symbol(x)`, `[1, 2]`,
 * `an int32 expression`); never throws.
 */
export function show(x: unknown): string {
  return showValue(x, (o) => {
    if (o instanceof PrimExpr) return `an expression of dtype ${String(o.dtype)}`;
    const v = o as { view?: { kind?: unknown; shape?: unknown; dtype?: unknown } };
    if (o.constructor?.name === "TileView" && v.view?.kind === "View") {
      return `${withArticle(String(v.view.dtype))} view of shape ${showValue(v.view.shape)}`;
    }
    return undefined;
  });
}

/** Throw TX1003 unless `dtype` names a dtype. */
export function checkDType(dtype: unknown, what: string, span?: Span): asserts dtype is DType {
  if (!isDType(dtype)) {
    throw new TirxError("TX1003", `${what}: unknown dtype ${show(dtype)}`, span);
  }
}

/** Throw TX1002 unless `f` is a function. */
export function checkFunction(f: unknown, what: string, span?: Span): void {
  if (typeof f !== "function") {
    throw new TirxError("TX1002", `${what}, got ${show(f)}`, span);
  }
}

function dtypeOf(x: ExprLike): DType | undefined {
  return x instanceof PrimExpr ? x.dtype : undefined;
}

function bin(op: BinaryOp, a: ExprLike, b: ExprLike): PrimExpr {
  const span = callerSpan();
  const like = dtypeOf(a) ?? dtypeOf(b);
  return new PrimExpr(
    tracked(binary(op, toExpr(a, like, span), toExpr(b, like, span), span), span),
  );
}

function cmp(op: CompareOp, a: ExprLike, b: ExprLike): PrimExpr {
  const span = callerSpan();
  const like = dtypeOf(a) ?? dtypeOf(b);
  return new PrimExpr(
    tracked(compare(op, toExpr(a, like, span), toExpr(b, like, span), span), span),
  );
}

/** `a op b` as a free function (T.add and friends). */
export const freeBinary = bin;
/** `a cmp b` as a free function. */
export const freeCompare = cmp;

/**
 * TX1002 for a JavaScript boolean where `what` (T.if_, T.while_, T.if_then_else) needs a traced
 * condition: such a condition decides nothing on the device, and most often comes from `===` or
 * `!==` on a traced value, which JavaScript evaluates on the object (always false / true) with
 * no hook to catch it (the other operators throw TX1002 themselves).
 */
export function jsConditionError(what: string, cond: boolean, span: Span | undefined): TirxError {
  return new TirxError(
    "TX1002",
    `${what} got the JavaScript boolean ${cond} as its condition, not a traced one: === and !== on a traced value compare the object itself (always ${cond}; TypeScript's type check reports it, tsx does not). Write a method such as i.eq(0), i.ne(n), i.lt(n); for a condition known while tracing, use a JavaScript if or ?:`,
    span,
  );
}

/**
 * `cond ? t : f` with both arms evaluated (TIR `if_then_else`); `cond` a traced bool.
 * @throws TirxError TX1002 for a JavaScript boolean `cond` ({@link jsConditionError}).
 */
export function if_then_else(cond: ExprLike, t: ExprLike, f: ExprLike): PrimExpr {
  const span = callerSpan();
  if (typeof cond === "boolean") throw jsConditionError("T.if_then_else", cond, span);
  const like = dtypeOf(t) ?? dtypeOf(f);
  return new PrimExpr(
    tracked(
      ifThenElse(toExpr(cond, "bool", span), toExpr(t, like, span), toExpr(f, like, span), span),
      span,
    ),
  );
}

/**
 * `⌈a / b⌉` for a non-negative integer `a` and a positive `b` (TIR `ceildiv`), as
 * `floordiv(a + b - 1, b)`; constants fold. Typical use: a grid covering `n` elements,
 * `T.cuda.LaunchConfig({ grid: [T.ceildiv(n, 256)], block: 256 })`.
 * @throws TirxError TX1007 for float or mismatched operands, TX1002 for a constant b ≤ 0.
 */
export function ceildiv(a: ExprLike, b: ExprLike): PrimExpr {
  const span = callerSpan();
  const like = dtypeOf(a) ?? dtypeOf(b) ?? "int32";
  const x = toExpr(a, like, span);
  const y = toExpr(b, like, span);
  if (isFloat(x.dtype) || x.dtype === "bool") {
    throw new TirxError("TX1007", `T.ceildiv needs integer operands, got ${x.dtype}`, span);
  }
  if (y.kind === "IntImm" && Number(y.value) <= 0) {
    throw new TirxError(
      "TX1002",
      `T.ceildiv divides by a positive integer, got ${String(y.value)}`,
      span,
    );
  }
  const one = toExpr(1, y.dtype, span);
  return new PrimExpr(
    binary("floordiv", binary("sub", binary("add", x, y, span), one, span), y, span),
  );
}
