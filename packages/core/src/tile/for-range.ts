// Loops over a linear index: an unrolled range, and the index's offset over the iters it runs
// through (a reduction's reduced slots and warps, reduce.ts and reduce-warps.ts; memset's rows).
import { binary } from "../ir/arith.js";
import { intImm, type Expr, type Var } from "../ir/expr.js";
import type { Stmt } from "../ir/stmt.js";
import type { TileContext } from "./operand.js";

/** A `For` from `min` to `min + extent` (unrolled) whose body `f` builds from the variable. */
export function forRange(
  ctx: TileContext,
  min: number,
  extent: number,
  f: (v: Var) => Stmt[],
): Stmt[] {
  if (extent <= 0) return [];
  const v = ctx.freshVar("r", "int32");
  const body = f(v);
  return [
    {
      kind: "For",
      var: v,
      min: intImm(min),
      extent: intImm(extent),
      annotation: "unroll",
      body: body.length === 1 ? body[0]! : { kind: "Seq", stmts: body },
      ...(ctx.span ? { span: ctx.span } : {}),
    },
  ];
}

/** `Σ digit_j(k) · stride_j`: the offset of linear index `k` over `iters` (row-major). */
export function decode(k: Expr, iters: readonly { extent: number; stride: number }[]): Expr {
  let e: Expr = intImm(0);
  let inner = 1;
  for (let j = iters.length - 1; j >= 0; j--) {
    const x = iters[j]!;
    let d: Expr = inner === 1 ? k : binary("floordiv", k, intImm(inner));
    if (j > 0) d = binary("floormod", d, intImm(x.extent));
    e = binary("add", e, x.stride === 1 ? d : binary("mul", d, intImm(x.stride)));
    inner *= x.extent;
  }
  return e;
}
