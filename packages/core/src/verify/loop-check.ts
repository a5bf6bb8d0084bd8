import { TirxError } from "../diagnostics.js";
import { constInt } from "../ir/expr.js";
import type { For } from "../ir/stmt.js";
import { MAX_UNROLL } from "../limits.js";
import { findOp } from "../ops/index.js";
import { walkExpr } from "../visit.js";

/**
 * A loop's form: `T.unroll` and `T.vectorized` have a constant trip count of at most MAX_UNROLL
 * (each iteration is a copy of the body); no bound calls a warp collective (the simulator runs a
 * statement's collectives once per statement, and a loop bound is evaluated outside any
 * statement, on the GPU per lane: PTX ISA, shfl.sync).
 * The trip count and each collective in a bound are independent errors: each is `report`ed.
 * @throws TirxError only what `report` throws (a `DiagnosticLog` at its limit); the errors are
 *   TX2012 at the loop, TX2016 at each collective.
 */
export function checkLoop(s: For, report: (e: TirxError) => void): void {
  if (s.annotation === "unroll" || s.annotation === "vectorized") {
    const n = constInt(s.extent);
    const what = s.annotation === "unroll" ? "T.unroll" : "T.vectorized";
    if (n === undefined || n > MAX_UNROLL) {
      report(
        new TirxError(
          "TX2012",
          n === undefined
            ? `${what} needs a constant trip count; use T.range for a runtime bound`
            : `${what} of ${n} iterations would emit ${n} copies of the body; at most ${MAX_UNROLL} (use T.range)`,
          s.span,
        ),
      );
    }
  }
  for (const b of [s.min, s.extent]) {
    walkExpr(b, (x) => {
      if (x.kind === "CallExpr" && findOp(x.op)?.sim.kind === "warp") {
        report(
          new TirxError(
            "TX2016",
            `${findOp(x.op)!.surface} is a warp collective and cannot be a loop bound; compute it into a variable with T.let_ before the loop`,
            x.span ?? s.span,
          ),
        );
      }
    });
  }
}
