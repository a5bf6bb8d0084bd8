import { intImm, TirxError, type Expr } from "@tirx-ts/core";
import { builder } from "./builder.js";
import { PrimExpr, type ExprLike } from "./expr.js";
import { callerSpan } from "./span.js";

/** An instruction named by its PTX opcode, e.g. `T.ptx["cp.async.cg.shared.global"]`. */
export class PtxOp {
  constructor(readonly opcode: string) {}
}

function call(op: string, args: Expr[]): void {
  const span = callerSpan();
  builder(`T.ptx.${op}`, span).emit({ kind: "Call", op, args, ...(span ? { span } : {}) });
}

function staticInt(n: ExprLike, what: string): Expr {
  const span = callerSpan();
  if (typeof n !== "number" || !Number.isInteger(n)) {
    throw new TirxError("TX3022", `${what} takes a static integer, got ${n instanceof PrimExpr ? "a runtime expression" : String(n)}`, span);
  }
  return intImm(n);
}

/** `T.ptx.cp.async_`: the cp.async group operations (PTX ISA, cp.async.commit_group / wait_group). */
const async_ = {
  /** `cp.async.commit_group`: batch this thread's uncommitted cp.async into a new group. */
  commit_group(): void {
    call("cp.async.commit_group", []);
  },
  /** `cp.async.wait_group n`: wait until at most `n` (static, 0..7) most recent groups are pending. */
  wait_group(n: number): void {
    call("cp.async.wait_group", [staticInt(n, "cp.async.wait_group")]);
  },
  /** `cp.async.wait_all`: commit and wait for every cp.async of this thread. */
  wait_all(): void {
    call("cp.async.wait_all", []);
  },
};

const namespace = { cp: { async_ } };

/**
 * `T.ptx`: index with an opcode string for tile patterns (`T.ptx["cp.async.ca.shared.global"]`),
 * or use its namespaces for plain instructions (`T.ptx.cp.async_.commit_group()`).
 */
export const ptx: typeof namespace & Record<string, PtxOp> = new Proxy(namespace as typeof namespace & Record<string, PtxOp>, {
  get(target, key) {
    if (typeof key === "string" && key in target) return (target as Record<string, unknown>)[key];
    if (typeof key === "string") return new PtxOp(key);
    return undefined;
  },
});

