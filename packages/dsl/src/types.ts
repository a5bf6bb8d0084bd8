import { isFloat, TirxError, type DType } from "@tirx-ts/core";
import { checkDType, PrimExpr, show, toExpr, type ExprLike } from "./expr.js";
import { checkShape } from "./check.js";
import { callerSpan } from "./span.js";

/** Parameter type of a global tensor: `T.Tensor([128, 32], "float16")`. */
export interface TensorType {
  readonly kind: "TensorType";
  readonly shape: readonly number[];
  readonly dtype: DType;
}

/** Parameter type of a scalar: `T.Scalar("int32")` (or just `T.int32`). */
export interface ScalarType {
  readonly kind: "ScalarType";
  readonly dtype: DType;
}

/**
 * A global tensor parameter of static shape (elements, row-major) and dtype.
 * @throws TirxError TX1003 (dtype), TX2003 (shape not static positive integers).
 */
export function Tensor(shape: readonly number[], dtype: DType): TensorType {
  const span = callerSpan();
  checkDType(dtype, "T.Tensor", span);
  return { kind: "TensorType", shape: checkShape(shape, "T.Tensor", span, false), dtype };
}

/** A scalar parameter of `dtype`. */
export function Scalar(dtype: DType): ScalarType {
  checkDType(dtype, "T.Scalar", callerSpan());
  return { kind: "ScalarType", dtype };
}

/**
 * A dtype constructor: `T.uint32(16)` is a uint32 constant, `T.float32(x)` casts an expression.
 * Used bare (`{ n: T.int32 }`) it is a scalar parameter type.
 */
export interface DTypeFn {
  (value: ExprLike): PrimExpr;
  readonly dtype: DType;
}

/** Build the constructor for `dtype`. */
export function dtypeFn(dtype: DType): DTypeFn {
  const f = (value: ExprLike): PrimExpr => {
    const span = callerSpan();
    if (value instanceof PrimExpr) return value.cast(dtype);
    if (
      typeof value === "number" &&
      !isFloat(dtype) &&
      dtype !== "bool" &&
      !Number.isInteger(value)
    ) {
      throw new TirxError("TX1002", `T.${dtype}(${show(value)}): not an integer`, span);
    }
    if (typeof value !== "number" && typeof value !== "bigint" && typeof value !== "boolean") {
      throw new TirxError(
        "TX1002",
        `T.${dtype}(...) takes a number or an expression, got ${show(value)}`,
        span,
      );
    }
    return new PrimExpr(toExpr(value, dtype, span));
  };
  return Object.assign(f, { dtype });
}
