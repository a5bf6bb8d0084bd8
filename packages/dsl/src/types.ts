import { checkStorageDType, isFloat, TirxError, type DType } from "@tirx-ts/core";
import { checkDType, PrimExpr, show, toExpr, type ExprLike } from "./expr.js";
import { checkShape } from "./check.js";
import { callerSpan } from "./span.js";

/**
 * Parameter type of a global tensor: `T.Tensor([128, 32], "float16")`. A string dim names an
 * int32 scalar parameter of the same kernel (a symbolic dim): `T.Tensor(["n", 64], "float32")`.
 */
export interface TensorType {
  readonly kind: "TensorType";
  readonly shape: readonly (number | string)[];
  readonly dtype: DType;
}

/** Parameter type of a scalar: `T.Scalar("int32")` (or just `T.int32`). */
export interface ScalarType {
  readonly kind: "ScalarType";
  readonly dtype: DType;
}

/**
 * A global tensor parameter (elements, row-major) of `dtype`. Each dim is a positive integer,
 * or the name of an int32 scalar parameter of the same `T.function` (TVMScript's
 * `n = T.int32(); A = T.match_buffer(a, (n,))`): the tensor passed at launch must have that
 * many elements along the axis (TX5008). Row-major strides after a symbolic dim are runtime values.
 * @example
 * T.function("vector_add", { n: T.int32, A: T.Tensor(["n"], "float32") }, ({ n, A }) => { ... });
 * @throws TirxError TX1003 (dtype), TX1027 (float16x2 / bfloat16x2: register values only), TX2003
 *   (a dim neither a positive integer nor a name).
 */
export function Tensor(shape: readonly (number | string)[], dtype: DType): TensorType {
  const span = callerSpan();
  checkDType(dtype, "T.Tensor", span);
  checkStorageDType(dtype, "T.Tensor", span);
  if (Array.isArray(shape) && shape.some((d) => typeof d === "string")) {
    const bad = shape.find((d) => typeof d === "string" && !/^[A-Za-z_$][\w$]*$/.test(d));
    if (bad !== undefined) {
      throw new TirxError(
        "TX2003",
        `T.Tensor: a symbolic dim names an int32 scalar parameter, got ${show(bad)}`,
        span,
      );
    }
    const numeric = shape.filter((d): d is number => typeof d !== "string");
    if (numeric.length > 0) checkShape(numeric, "T.Tensor", span, false);
    return { kind: "TensorType", shape: [...shape], dtype };
  }
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
