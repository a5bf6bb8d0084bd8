import { numel, TirxError, type Buffer, type Expr, type Span } from "@tirx-ts/core";
import { staticShape } from "@tirx-ts/core";
import type { EmitContext } from "./context.js";

/**
 * The register holding element `offset` of register array `buffer`, whose index must be a
 * constant here (storage planning made sure every access's index is built from unrolled loop
 * variables and constants).
 * @throws TirxError TX2006 when the index is outside the array or cannot be evaluated (a
 *   division by zero in the index).
 */
export function elementReg(
  ctx: EmitContext,
  regs: readonly string[],
  buffer: Buffer,
  offset: Expr,
  span?: Span,
): string {
  const i = ctx.staticInt(offset);
  const r = i === undefined ? undefined : regs[Number(i)];
  if (i === undefined || i < 0n || r === undefined) {
    throw new TirxError(
      "TX2006",
      i === undefined
        ? `the index of "${buffer.name}" divides by zero here`
        : `access to "${buffer.name}" at element ${i}, but it holds ${numel(staticShape(buffer, "a register array"))} elements (shape [${buffer.shape.join(", ")}])`,
      span ?? offset.span,
    );
  }
  return r;
}
