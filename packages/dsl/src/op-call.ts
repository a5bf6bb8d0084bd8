import {
  checkOpCall,
  intImm,
  opOf,
  TirxError,
  type DType,
  type Expr,
  type OpDef,
  type Span,
} from "@tirx-ts/core";
import { builder } from "./builder.js";
import { PrimExpr, show, toExpr, type ExprLike } from "./expr.js";

/**
 * Operands of a call of `op` as IR: static operands must be JS integers; JS literals in value
 * operands take the dtype of the first expression operand (as TVMScript's literals do), or the
 * operand's first allowed dtype.
 * @throws TirxError TX1002 (a runtime value where a static integer is needed) and the conversion
 *   errors of `toExpr`.
 */
export function opOperands(op: OpDef, args: readonly unknown[], span?: Span): Expr[] {
  const like = args.find((a): a is PrimExpr => a instanceof PrimExpr)?.dtype;
  return op.operands.map((spec, i) => {
    const a = args[i];
    if (spec.kind === "static") {
      if (typeof a !== "number" || !Number.isSafeInteger(a)) {
        throw new TirxError(
          spec.code ?? "TX1002",
          `${spec.name} of ${op.surface} takes a static integer, got ${a instanceof PrimExpr ? "a runtime expression" : show(a)}`,
          span,
        );
      }
      return intImm(a);
    }
    if (a === undefined) {
      throw new TirxError("TX1002", `${op.surface} is missing its operand ${spec.name}`, span);
    }
    const want: DType | undefined = spec.kind === "value" ? (spec.dtypes?.[0] ?? like) : like;
    return toExpr(a as ExprLike, a instanceof PrimExpr ? undefined : want, span);
  });
}

/**
 * A value op call (`CallExpr`), checked against the op's record at the author's line.
 * @throws TirxError from {@link opOperands} and the op's contract (`checkOpCall`).
 */
export function callValueOp(name: string, args: readonly unknown[], span?: Span): PrimExpr {
  const op = opOf(name, "value", span);
  const ir = opOperands(op, args, span);
  const dtype = checkOpCall(op, ir, span)!;
  return new PrimExpr({ kind: "CallExpr", op: name, args: ir, dtype, ...(span ? { span } : {}) });
}

/**
 * Record a statement op call (`Call`), checked against the op's record at the author's line.
 * @throws TirxError TX1001 outside a kernel body, and as {@link callValueOp}.
 */
export function callStmtOp(name: string, args: readonly unknown[], span?: Span): void {
  const op = opOf(name, "stmt", span);
  const b = builder(op.surface, span);
  const ir = opOperands(op, args, span);
  checkOpCall(op, ir, span);
  b.emit({ kind: "Call", op: name, args: ir, ...(span ? { span } : {}) });
}
