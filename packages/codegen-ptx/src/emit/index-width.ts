import { bottomUp, dtypeBits, dtypeBytes, type Buffer, type Expr } from "@tirx-ts/core";

/** Largest byte extent a global tensor may have and still be addressed with 32-bit offsets. */
export const INDEX32_MAX_BYTES = 2 ** 31 - 1;

/**
 * The width of the element-offset arithmetic for accesses to `buffer` — the one place codegen
 * chooses it. Shared and local arrays are always 32-bit (a CTA's shared memory is < 2^31 bytes).
 * A global tensor of static shape is 64-bit exactly when its byte extent exceeds 2^31 − 1. A
 * tensor with symbolic dims is 32-bit unless `wideSymbolic` is set: its extent is known only at
 * launch, so the runtime checks the actual sizes and launches a separate module compiled with
 * `wideSymbolic: true` (its own cache entry) when any symbolic tensor exceeds 2^31 − 1 bytes.
 * With 32-bit offsets the element index is computed in int32 and scaled to a 64-bit byte address
 * by one `mad.wide`; with 64-bit offsets the whole index expression is widened first
 * ({@link widenIndex}), so no intermediate sum or product wraps.
 */
export function indexBits(buffer: Buffer, wideSymbolic: boolean): 32 | 64 {
  if (buffer.scope !== "global") return 32;
  let n = 1;
  for (const d of buffer.shape) {
    if (typeof d !== "number") return wideSymbolic ? 64 : 32;
    n *= d;
  }
  return n * dtypeBytes(buffer.dtype) > INDEX32_MAX_BYTES ? 64 : 32;
}

/** Operators whose int64 result equals the int32 one whenever the latter does not wrap. */
const WIDENS = new Set(["add", "sub", "mul", "div", "mod", "floordiv", "floormod", "min", "max"]);

/**
 * `e` (an integer element offset) computed in int64: sums, differences, products, quotients,
 * remainders, min and max are rebuilt at int64 over widened operands; constants become int64
 * constants; anything else (a variable, a load, a bit operation, a special register) is
 * sign-extended (zero-extended when unsigned) where it is used. 64-bit expressions are unchanged.
 */
export function widenIndex(e: Expr): Expr {
  return bottomUp(e, widenNode);
}

function widenNode(e: Expr, widenIndex: (x: Expr) => Expr): Expr {
  if (dtypeBits(e.dtype) === 64) return e;
  switch (e.kind) {
    case "IntImm":
      return { ...e, dtype: "int64" };
    case "Binary":
      if (WIDENS.has(e.op)) return { ...e, a: widenIndex(e.a), b: widenIndex(e.b), dtype: "int64" };
      break;
    case "IfThenElse":
      return { ...e, t: widenIndex(e.t), f: widenIndex(e.f), dtype: "int64" };
    default:
      break;
  }
  return { kind: "Cast", value: e, dtype: "int64" };
}
