import {
  BINARY_OPERATORS,
  mkVar,
  TirxError,
  type BinaryOp,
  type DType,
  type ForAnnotation,
  type SpecialName,
} from "@tirx-ts/core";
import { builder } from "./builder.js";
import { checkDType, PrimExpr, show, toExpr, type ExprLike } from "./expr.js";
import { callStmtOp, callValueOp } from "./op-call.js";
import { callerSpan } from "./span.js";
import { tracked } from "./depth.js";

const SPECIALS: readonly SpecialName[] = (["tid", "ctaid", "ntid", "nctaid"] as const).flatMap(
  (k) => (["x", "y", "z"] as const).map((a) => `${k}.${a}` as SpecialName),
);

/**
 * `T.raw`: exact IR constructors, without the constant folding and identity simplifications of
 * the method spellings (`a.add(0)` is `a`, `T.int32(2).add(3)` is `5`). The IR printer writes
 * them where the folding spelling would not rebuild the same tree (IR after the simplify pass,
 * loop extents other passes wrote); kernel authors have no need of them.
 */
export const raw = {
  /**
   * The binary node `a op b` as is. Operands share a dtype (JS literals take the other's).
   * @throws TirxError TX1002 (unknown op), TX1007 (dtypes differ).
   */
  binary(op: BinaryOp, a: ExprLike, b: ExprLike): PrimExpr {
    const span = callerSpan();
    if (!BINARY_OPERATORS.includes(op)) {
      throw new TirxError("TX1002", `T.raw.binary: unknown operator ${show(op)}`, span);
    }
    const like = a instanceof PrimExpr ? a.dtype : b instanceof PrimExpr ? b.dtype : undefined;
    const x = toExpr(a, like, span);
    const y = toExpr(b, like, span);
    if (x.dtype !== y.dtype) {
      throw new TirxError(
        "TX1007",
        `operands of ${op} have dtypes ${x.dtype} and ${y.dtype}; cast one of them explicitly`,
        span,
      );
    }
    return new PrimExpr(
      tracked({ kind: "Binary", op, a: x, b: y, dtype: x.dtype, ...(span ? { span } : {}) }, span),
    );
  },

  /** The conversion node `value → dtype` as is (even to its own dtype, or of a constant). */
  cast(dtype: DType, value: ExprLike): PrimExpr {
    const span = callerSpan();
    checkDType(dtype, "T.raw.cast", span);
    const v = toExpr(value, undefined, span);
    return new PrimExpr(
      tracked({ kind: "Cast", value: v, dtype, ...(span ? { span } : {}) }, span),
    );
  },

  /**
   * A read of the PTX special register `name` (`"tid.x"`, `"ctaid.y"`, ...) as an int32
   * expression, not bound to a variable (`T.cuda.thread_idx` binds one). Inside
   * `T.device_entry` only. @throws TirxError TX1002 (unknown name), TX2002 (before device_entry).
   */
  special(name: SpecialName): PrimExpr {
    const span = callerSpan();
    const b = builder("T.raw.special", span);
    if (!SPECIALS.includes(name)) {
      throw new TirxError(
        "TX1002",
        `T.raw.special takes one of ${SPECIALS.join(", ")}, got ${show(name)}`,
        span,
      );
    }
    if (!b.deviceEntered) {
      throw new TirxError("TX2002", "T.raw.special is only defined inside T.device_entry", span);
    }
    return new PrimExpr({ kind: "Special", name, dtype: "int32", ...(span ? { span } : {}) });
  },

  /**
   * The loop `for (i = min; i < min + extent; i++)` with `min` and `extent` kept as given
   * (`T.range(lo, hi)` records `extent = hi - lo`): `for (const i of T.raw.loop(0, n, "serial"))`.
   * @throws TirxError TX2005 (bounds not int32), TX1002 (unknown annotation, loop left open).
   */
  *loop(min: ExprLike, extent: ExprLike, annotation: ForAnnotation): Generator<PrimExpr> {
    const span = callerSpan();
    const b = builder("T.raw.loop", span);
    const lo = toExpr(min, "int32", span);
    const ext = toExpr(extent, "int32", span);
    if (lo.dtype !== "int32" || ext.dtype !== "int32") {
      throw new TirxError(
        "TX2005",
        `loop bounds must be int32, got ${lo.dtype} and ${ext.dtype}`,
        span,
      );
    }
    if (annotation !== "serial" && annotation !== "unroll" && annotation !== "vectorized") {
      throw new TirxError(
        "TX1002",
        `T.raw.loop: annotation is "serial", "unroll" or "vectorized", got ${show(annotation)}`,
        span,
      );
    }
    const v = mkVar("i", "int32", span);
    const depth = b.depth;
    b.open(span);
    try {
      yield new PrimExpr(v);
    } finally {
      if (b.depth !== depth + 1) {
        throw new TirxError(
          "TX1002",
          "a T.raw.loop loop was interleaved with another open block; iterate loops with for-of",
          span,
        );
      }
      const body = b.close();
      b.emit({
        kind: "For",
        var: v,
        min: lo,
        extent: ext,
        annotation,
        body,
        ...(span ? { span } : {}),
      });
    }
  },
};

/**
 * Record a statement op of the op table by its IR name, with its operands in table order
 * (static operands as JS integers): `T.call_op("cp.async.wait_group", 0)`. Every statement op
 * can be written this way; the printed IR uses it for every `Call`.
 * @throws TirxError TX2010 (unknown op or a value op), and the op's own operand checks.
 */
export function call_op(name: string, ...args: unknown[]): void {
  callStmtOp(name, args, callerSpan());
}

/**
 * A value op of the op table by its IR name (`CallExpr`), operands in table order:
 * `T.call_value("mbarrier.try_wait.parity", bar.ptr(), 0)`.
 * @throws TirxError TX2010 (unknown op or a statement op), and the op's own operand checks.
 */
export function call_value(name: string, ...args: unknown[]): PrimExpr {
  return callValueOp(name, args, callerSpan());
}
