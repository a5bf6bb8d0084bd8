import { bufferName } from "../buffer-name.js";
import { TirxError } from "../diagnostics.js";
import { constInt, type Expr } from "../ir/expr.js";
import { checkMbarrierOperand } from "../patterns/mbarrier.js";
import type { Span } from "../span.js";
import type { DType } from "../dtype.js";
import type { OpDef, OperandSpec } from "./op.js";
import { numel } from "../ir/buffer.js";

/**
 * Check a call of `op` against its record: operand count, static operand ranges, operand dtypes,
 * mbarrier and address operands, the type rule, then the op's own checks.
 * @returns the result dtype (undefined for statements).
 * @throws TirxError TX2010 (operand count, static range; or the operand's own code such as
 *   TX3022), TX2005 (dtypes), TX4011 (mbarrier operand), or the op's own codes.
 */
export function checkOpCall(op: OpDef, args: readonly Expr[], span?: Span): DType | undefined {
  if (args.length !== op.operands.length) {
    throw new TirxError(
      "TX2010",
      `${op.surface} takes ${op.operands.length} operands, got ${args.length}`,
      span,
    );
  }
  op.operands.forEach((spec, i) => {
    const e = args[i]!;
    switch (spec.kind) {
      case "static": {
        const c = constInt(e);
        if (c === undefined || c < spec.min || c > spec.max) {
          throw new TirxError(
            spec.code ?? "TX2010",
            `${spec.name} of ${op.name} must be a static integer in ${spec.min}..${spec.max}, got ${c ?? "a runtime value"}`,
            span,
          );
        }
        return;
      }
      case "value":
        if (spec.dtypes && !spec.dtypes.includes(e.dtype)) {
          throw new TirxError(
            "TX2010",
            `${spec.name} of ${op.name} must be ${spec.dtypes.join(" or ")}, got ${e.dtype}`,
            span,
          );
        }
        return;
      case "mbarrier":
        checkMbarrierOperand(e, span);
        return;
      case "address":
        if (e.kind !== "BufferPtr" || e.buffer.scope === "local") {
          throw new TirxError(
            "TX2009",
            `${spec.name} of ${op.surface} must be the address of a global or shared element (buf.ptr([i]))`,
            e.span ?? span,
          );
        }
        return;
      case "fragment":
        checkFragmentOperand(op, spec, e, span);
        return;
    }
  });
  const rt = op.result(
    args.map((a, i) =>
      op.operands[i]!.kind === "address" && a.kind === "BufferPtr" ? a.buffer.dtype : a.dtype,
    ),
    span,
  );
  op.check?.(args, span);
  return rt;
}

/**
 * TX7001 unless `e` is `frag.ptr([i])` of a local array whose dtype the fragment accepts, with
 * `spec.count` elements from `i` on when `i` is a constant (a runtime index is checked by codegen,
 * which needs it constant after unrolling, and by the simulator's bounds checks).
 */
function checkFragmentOperand(
  op: OpDef,
  spec: Extract<OperandSpec, { kind: "fragment" }>,
  e: Expr,
  span?: Span,
): void {
  const at = e.span ?? span;
  if (e.kind !== "BufferPtr" || e.buffer.scope !== "local") {
    throw new TirxError(
      "TX7001",
      `${spec.name} of ${op.surface} must be an element of a register array (T.alloc_local), got ${e.kind === "BufferPtr" ? `a ${e.buffer.scope} buffer` : "a value"}`,
      at,
    );
  }
  const b = e.buffer;
  if (!spec.dtypes.includes(b.dtype)) {
    throw new TirxError(
      "TX7001",
      `${spec.name} of ${op.surface} holds ${spec.dtypes.join(" or ")} elements; ${bufferName(b)} is ${b.dtype}`,
      at,
    );
  }
  const i = constInt(e.offset);
  if (i === undefined || !b.shape.every((d) => typeof d === "number")) return;
  const n = numel(b.shape as number[]);
  if (i < 0 || i + spec.count > n) {
    throw new TirxError(
      "TX7001",
      `${spec.name} of ${op.surface} spans ${spec.count} elements from ${i}, but ${bufferName(b)} holds ${n}`,
      at,
    );
  }
}
