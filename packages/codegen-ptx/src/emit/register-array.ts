import { invariant, type Buffer, type Expr } from "@tirx-ts/core";
import type { EmitContext } from "./context.js";

/**
 * The register holding element `offset` of register array `buffer`, whose index is a constant
 * here: storage planning made sure every access's index is built from unrolled loop variables
 * and constants, and the verifier that it names an element of the array in every unrolled
 * iteration (TX2006, core `checkRegisterArrays`).
 */
export function elementReg(
  ctx: EmitContext,
  regs: readonly string[],
  buffer: Buffer,
  offset: Expr,
): string {
  const i = ctx.staticInt(offset);
  const r = i === undefined || i < 0n ? undefined : regs[Number(i)];
  invariant(r !== undefined, () => `element ${i} of register array "${buffer.name}"`);
  return r;
}
