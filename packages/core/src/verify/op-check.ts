import { TirxError } from "../diagnostics.js";
import { isLaneValue } from "../dtype.js";
import { packedCastError } from "../ir/arith.js";
import type { Binary, CallExpr, Cast } from "../ir/expr.js";
import type { Call, TileApply } from "../ir/stmt.js";
import { binaryOp, checkOpCall, fp8CastOp, opOf } from "../ops/index.js";
import { TILE_OPS, tileOpOf } from "../patterns/tile-ops.js";
import type { Span } from "../span.js";
import { didYouMean } from "../suggest.js";
import type { VerifyContext } from "./context.js";
import { checkBufferInScope } from "./scope-check.js";

/**
 * A value intrinsic called in an expression: a known value op whose operand contract holds
 * (`checkOpCall`, from its record) and whose result dtype is the call's; its target
 * requirements are recorded.
 * @throws TirxError TX2010 for an unknown op or wrong operands (and the op's own codes);
 *   TX2005 (wf/dtype) when the call's dtype is not the op's result.
 */
export function checkValueCall(e: CallExpr, ctx: VerifyContext, where: Span | undefined): void {
  const op = opOf(e.op, "value", where);
  const rt = checkOpCall(op, e.args, where);
  if (rt !== e.dtype) {
    throw new TirxError("TX2005", `${op.surface} gives ${rt}, but the call says ${e.dtype}`, where);
  }
  ctx.reqs.exprOp(op, e.args);
}

/**
 * A cast into or out of float8: not from float64 (PTX converts into float8 from float32 and float16
 * only, and through float32 it would round twice); the packed cvt it is emitted as records its
 * target requirement (sm_89 with PTX 8.1, `cvt-fp8.ts`), so a lower target is refused with TX5006.
 * Casts of other dtypes need nothing here but those of packed pairs, which do not exist.
 * @throws TirxError TX1007 for float64 → float8, and for a cast into or out of float16x2 /
 *   bfloat16x2 or a vector (`packedCastError`).
 */
export function checkCast(e: Cast, ctx: VerifyContext, where: Span | undefined): void {
  if (isLaneValue(e.dtype) || isLaneValue(e.value.dtype)) {
    throw packedCastError(e.value.dtype, e.dtype, where);
  }
  const name = fp8CastOp(e.value.dtype, e.dtype);
  if (name === undefined) return;
  if (e.value.dtype === "float64") {
    throw new TirxError(
      "TX1007",
      `no conversion float64 → ${e.dtype}: cast to float32 first (PTX converts into float8 from float32 and float16 only)`,
      where,
    );
  }
  ctx.reqs.exprOp(opOf(name, "value", where));
}

/**
 * A statement intrinsic: a known statement op whose operand contract holds and whose launch
 * contract (`checkLaunch` of its record, e.g. warpgroup-sized CTAs) holds for the entry's
 * launch; its target requirements are recorded.
 * @throws TirxError TX2010 for an unknown op or wrong operands; the op's own codes.
 */
export function checkStmtCall(s: Call, ctx: VerifyContext): void {
  const op = opOf(s.op, "stmt", s.span);
  checkOpCall(op, s.args, s.span);
  op.checkLaunch?.(s.args, ctx.entry.launch, s.span);
  ctx.reqs.stmtOp(op, s.args);
}

/**
 * A `tile.apply`: both views' buffers in scope, an opcode some tile op takes, and that op's
 * contract (its `plan`, with the scope's ranges and facts); the plan is kept for later stages
 * and its target requirements recorded.
 * @throws TirxError TX2001 (wf/scope) for a view of a buffer out of scope; TX3001 for an opcode
 *   no tile op takes (with the nearest known one); the tile op's own codes (TX3xxx, TX4xxx).
 */
export function checkTileApply(s: TileApply, ctx: VerifyContext): void {
  for (const v of [s.dst, s.src]) checkBufferInScope(v.buffer, ctx.scope, s.span);
  const op = tileOpOf(s.opcode);
  if (op) {
    const plan = op.plan(s, { launch: ctx.entry.launch, env: ctx.scope });
    ctx.plans.set(s, plan);
    ctx.reqs.tile(op, s.opcode, plan);
    return;
  }
  const known = TILE_OPS.flatMap((o) => o.examples);
  const guess = didYouMean(s.opcode, known);
  throw new TirxError(
    "TX3001",
    `no tile pattern for opcode "${s.opcode}"${guess ? `; did you mean "${guess}"?` : ""} (tile patterns: cp.async.{ca|cg}.shared.global…, cp.async.bulk…)`,
    s.span,
  );
}

/**
 * A binary operator on a dtype its record takes (`binaryOp(op).result`: bit operators on
 * integers only, for example); IR the DSL builds is checked when the operator is written.
 * @throws TirxError TX2005 (wf/dtype) at `where`.
 */
export function checkOperator(e: Binary, where: Span | undefined): void {
  binaryOp(e.op).result([e.dtype, e.dtype], where);
}
