// The logical indices of dst's element at each slot-loop iteration: what an elementwise
// primitive's function-of-the-indices operand (`IndexFnOperand`) is evaluated at.
import { binary } from "../ir/arith.js";
import { intImm, type Expr } from "../ir/expr.js";
import type { Stmt } from "../ir/stmt.js";
import { shardPlaces, threadIndexPart, unflatten } from "./flat-index.js";
import { memoryIters, type RegisterTile, type TileContext } from "./operand.js";
import { iterValue } from "./threads.js";

/**
 * The logical indices of dst's element at a slot-loop iteration, for a function-of-the-indices
 * operand, over dst's own shape `shape` (`dst` may be read under a coarser one for a
 * broadcast): per dim, the sum over its shard iters (outermost first) of the iter's digit times
 * the extents inside it; a thread iter's digit is the calling thread's ({@link iterValue}), bound
 * to one int32 variable per dim before the loop (pushed on `lets`); an `m` iter's digit is its
 * loop variable. When `shape` does not group dst's layout, the element's row-major index (the
 * thread's part bound once, plus the `m` iters' values times their places) split over `shape`.
 */
export function logicalIndices(
  dst: RegisterTile,
  shape: readonly number[],
  ctx: TileContext,
  lets: Stmt[],
): (vars: readonly Expr[]) => Expr[] {
  const ms = memoryIters(dst.layout);
  const dims = dst.dims;
  if (dims === undefined || shape.join() !== dst.shape.join()) {
    const places = shardPlaces(dst.layout);
    let base = threadIndexPart(dst, ctx);
    if (base.kind !== "IntImm") {
      const v = ctx.freshVar("elem", "int32");
      lets.push({ kind: "Let", var: v, value: base, ...(ctx.span ? { span: ctx.span } : {}) });
      base = v;
    }
    const at = base;
    return (vars) => {
      let f: Expr = at;
      ms.forEach((z, k) => {
        const p = places[z.index]!;
        if (z.iter.extent > 1)
          f = binary("add", f, p === 1 ? vars[k]! : binary("mul", vars[k]!, intImm(p)));
      });
      return unflatten(f, shape.length > 0 ? shape : [1]);
    };
  }
  const shard = dst.layout.shard;
  const inner = shard.map((_, i) => {
    let p = 1;
    for (let k = i + 1; k < shard.length && dims[k] === dims[i]; k++) p *= shard[k]!.extent;
    return p;
  });
  const rank = Math.max(1, dst.shape.length);
  const threadPart: Expr[] = [];
  for (let d = 0; d < rank; d++) {
    let e: Expr | undefined;
    shard.forEach((x, i) => {
      if (dims[i] !== d || x.axis === "m" || x.extent === 1) return;
      const v = iterValue(dst.layout, x, ctx);
      const t = inner[i] === 1 ? v : binary("mul", v, intImm(inner[i]!));
      e = e ? binary("add", e, t) : t;
    });
    if (!e) {
      threadPart.push(intImm(0));
      continue;
    }
    const v = ctx.freshVar(`idx${d}`, "int32");
    lets.push({ kind: "Let", var: v, value: e, ...(ctx.span ? { span: ctx.span } : {}) });
    threadPart.push(v);
  }
  return (vars) =>
    threadPart.map((t, d) => {
      let e = t;
      ms.forEach((z, k) => {
        if (dims[z.index] !== d || z.iter.extent === 1) return;
        const v = vars[k]!;
        e = binary("add", e, inner[z.index] === 1 ? v : binary("mul", v, intImm(inner[z.index]!)));
      });
      return e;
    });
}
