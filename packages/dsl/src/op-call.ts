import {
  checkOpCall,
  intImm,
  invariant,
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
 * @throws TirxError from {@link staticOperand}, TX1002 (a missing operand) and the conversion
 *   errors of `toExpr`.
 */
export function opOperands(op: OpDef, args: readonly unknown[], span?: Span): Expr[] {
  const like = args.find((a): a is PrimExpr => a instanceof PrimExpr)?.dtype;
  return op.operands.map((spec, i) => {
    const a = args[i];
    if (spec.kind === "static") return staticOperand(op, spec.name, a, span);
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
 * Record a statement op call (`Call`) from JS operands (converted by {@link opOperands}),
 * checked against the op's record at the author's line.
 * @throws TirxError TX1001 outside a kernel body (before the operands are looked at), and as
 *   {@link callValueOp}.
 */
export function callStmtOp(name: string, args: readonly unknown[], span?: Span): void {
  const op = opOf(name, "stmt", span);
  builder(op.surface, span);
  recordStmtOp(op, opOperands(op, args, span), span);
}

/**
 * Record the statement op `op` (its name in the op table, or its record) applied to `args`
 * (IR operands in the record's order: static operands as IntImm) as a `Call` of the kernel being
 * traced, at `span`. The one recorder of statement ops: `T.call_op`, `T.ptx.*` and `T.cuda.*`
 * reach the IR through it.
 * @throws TirxError TX2010 when `op` names no statement op (`opOf`), TX1001 outside a kernel
 *   body, and the op's contract (`checkOpCall`: operand count, dtypes, static ranges).
 */
export function recordStmtOp(op: string | OpDef, args: readonly Expr[], span?: Span): void {
  const def = typeof op === "string" ? opOf(op, "stmt", span) : op;
  const b = builder(def.surface, span);
  checkOpCall(def, args, span);
  b.emit({ kind: "Call", op: def.name, args, ...(span ? { span } : {}) });
}

/**
 * The static operand `name` of `op` given as the JS value `v`: an integer literal (a boolean
 * as 0/1 when `bools`). The range is checked later against the op's record (`checkOpCall`).
 * @throws TirxError the operand's own code from the op record (e.g. TX3022 for cp.async's
 *   wait_group, TX7007 for a wgmma descriptor's offsets), else TX2017, when `v` is not a static
 *   integer (a runtime expression, a fraction, another type).
 */
export function staticOperand(
  op: OpDef,
  name: string,
  v: unknown,
  span?: Span,
  bools = false,
): Expr {
  const spec = op.operands.find((o) => o.name === name);
  invariant(spec?.kind === "static", `${op.name} has no static operand ${name}`);
  if (bools && typeof v === "boolean") return intImm(v ? 1 : 0);
  if (typeof v !== "number" || !Number.isSafeInteger(v)) {
    throw new TirxError(
      spec.code ?? "TX2017",
      `${name} of ${op.surface} takes a static integer${bools ? " (or a boolean)" : ""}, got ${v instanceof PrimExpr ? "a runtime expression" : show(v)}`,
      span,
    );
  }
  return intImm(v);
}
