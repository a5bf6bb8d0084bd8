import { TirxError, type DType, type Expr } from "@tirx-ts/core";
import { builder } from "./builder.js";
import { PrimExpr, toExpr, type ExprLike } from "./expr.js";
import { alloc_local } from "./function.js";
import { callerSpan } from "./span.js";
import type { TileView } from "./view.js";

const zero: Expr = { kind: "IntImm", value: 0, dtype: "int32" };

/**
 * A mutable per-thread scalar (TIRx `T.local_scalar`): a one-element local buffer. As an
 * expression it reads the current value wherever it is used; `set` assigns (TIRx `T.assign`), in
 * loops and branches alike. Code generation keeps it in one register (no `.local` memory).
 */
export class LocalScalar extends PrimExpr {
  constructor(readonly storage: TileView) {
    super({ kind: "BufferLoad", buffer: storage.buffer, offset: zero, dtype: storage.dtype });
  }

  /** The current value (a load at the caller's line). */
  get(): PrimExpr {
    return this.storage.get([0]);
  }

  /**
   * Assign `value` (converted to the scalar's dtype like any store).
   * @throws TirxError TX1001 outside a kernel body.
   */
  set(value: ExprLike): void {
    const span = callerSpan();
    builder("LocalScalar.set", span);
    this.storage.set([0], new PrimExpr(toExpr(value, this.storage.dtype, span)));
  }
}

/**
 * Allocate a mutable local scalar of `dtype`, optionally initialized (TIRx
 * `T.local_scalar(dtype, init, name=...)`):
 * `const sum = T.local_scalar("float32", 0); for (...) sum.set(sum.add(x));`.
 * @throws TirxError TX1003 (unknown dtype), TX1002 (bad options).
 */
export function local_scalar(
  dtype: DType = "float32",
  init?: ExprLike,
  opts: { name?: string } = {},
): LocalScalar {
  const span = callerSpan();
  if (opts === null || typeof opts !== "object") {
    throw new TirxError("TX1002", "T.local_scalar options must be an object like { name }", span);
  }
  const s = new LocalScalar(alloc_local([1], dtype, opts));
  if (init !== undefined) s.set(init);
  return s;
}
