import { bufferName } from "../buffer-name.js";
import { TirxError } from "../diagnostics.js";
import type { Expr } from "../ir/expr.js";
import type { Span } from "../span.js";

/**
 * An mbarrier operand must be the address of a uint64 element of a shared buffer, 8-byte
 * aligned (PTX ISA, "mbarrier": the object is an opaque .b64 in shared memory).
 * @throws TirxError TX4011.
 */
export function checkMbarrierOperand(e: Expr, span?: Span): void {
  if (e.kind !== "BufferPtr") {
    throw new TirxError(
      "TX4011",
      "an mbarrier operand must be the address of an mbarrier object: bars.ptr([i]) of a shared uint64 buffer",
      e.span ?? span,
    );
  }
  const b = e.buffer;
  if ((b.scope !== "shared" && b.scope !== "shared.dyn") || b.dtype !== "uint64") {
    throw new TirxError(
      "TX4011",
      `mbarrier objects live in a shared uint64 buffer; ${bufferName(b)} is ${b.scope} ${b.dtype}${b.dtype !== "uint64" && (b.scope === "shared" || b.scope === "shared.dyn") ? ` (a uint64 view of a buffer of another dtype is not an mbarrier operand: allocate the mbarriers as T.alloc_shared([n], "uint64"))` : ""}`,
      e.span ?? span,
    );
  }
  if (b.align % 8 !== 0) {
    throw new TirxError(
      "TX4011",
      `mbarrier buffer ${bufferName(b)} must be 8-byte aligned`,
      e.span ?? span,
    );
  }
}
