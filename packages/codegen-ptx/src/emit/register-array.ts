import { invariant, laneCount, type Buffer, type Expr, type VectorDType } from "@tirx-ts/core";
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

/**
 * The registers of the elements a vector access of `dt` at `offset` (counted in vectors, a
 * constant here) names in register array `buffer` of its lane dtype (core `isLaneAccess`): lane k
 * is element `offset · lanes + k`. The verifier checked the vector lies inside the array (TX2006).
 */
export function vectorElementRegs(
  ctx: EmitContext,
  regs: readonly string[],
  buffer: Buffer,
  offset: Expr,
  dt: VectorDType,
): string[] {
  const i = ctx.staticInt(offset);
  const n = laneCount(dt);
  const first = i === undefined || i < 0n ? -1 : Number(i) * n;
  const out = first < 0 ? [] : regs.slice(first, first + n);
  invariant(out.length === n, () => `${dt} ${i} of register array "${buffer.name}"`);
  return out;
}
