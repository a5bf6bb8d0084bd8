import { TirxError } from "../diagnostics.js";
import { constInt } from "../ir/expr.js";
import { staticArg, stmtOp, template } from "./define.js";
import type { OpDef } from "./op.js";

/**
 * Named barriers: `bar.sync id, count` waits until `count` threads (a multiple of the warp size)
 * arrived at barrier `id` (PTX ISA, bar.sync: ids 0..15, count a multiple of 32). The simulator
 * reports TX6012 when the threads that reach it in lockstep are not exactly `count`.
 */
export const CTA_OPS: readonly OpDef[] = [
  stmtOp({
    name: "bar.sync.named",
    family: "cta",
    surface: "T.cuda.bar_sync",
    operands: [staticArg("barrier", 0, 15), staticArg("count", 32, 1024, "TX2014")],
    sm: 30,
    ptx: [6, 0],
    source: "PTX ISA, bar.sync (a, b: b a multiple of the warp size)",
    lower: template("bar.sync $0, $1"),
    effect: { unit: "barrier", action: "named" },
    check(args, span) {
      const n = constInt(args[1]!)!;
      if (n % 32 !== 0) {
        throw new TirxError(
          "TX2014",
          `count of T.cuda.bar_sync must be a multiple of 32 (whole warps arrive), got ${n}`,
          span,
        );
      }
    },
  }),
].map((op) => ({
  ...op,
  checkLaunch(args, launch, span) {
    const n = constInt(args[1]!)!;
    const threads = launch.block[0] * launch.block[1] * launch.block[2];
    if (n > threads) {
      throw new TirxError(
        "TX2014",
        `count ${n} of T.cuda.bar_sync exceeds the CTA's ${threads} threads; the barrier would never release`,
        span,
      );
    }
  },
}));
