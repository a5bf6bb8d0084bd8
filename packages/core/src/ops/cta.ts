import { TirxError } from "../diagnostics.js";
import { constInt } from "../ir/expr.js";
import { staticArg, stmtOp, template } from "./define.js";
import type { OpDef } from "./op.js";

/**
 * Named barriers (PTX ISA, bar/barrier): each CTA has barrier resources 0..15. `bar.sync a, b`
 * signals the arrival of the executing threads at barrier `a` and waits until `b` threads (a
 * multiple of the warp size) arrived; `bar.arrive a, b` signals arrival without waiting (a
 * producer's side of a producer/consumer pair; a non-zero count is required). Arrivals count per
 * barrier id, whatever instruction they come from; when `b` threads arrived the barrier instance
 * completes and the barrier is reinitialised. Memory ordering: the arrivers' earlier accesses
 * happen before what the threads that complete the bar.sync do after it; an arrive acquires
 * nothing. The simulator models the instances per CTA and id (exec/named-barriers.ts) and reports
 * TX6012 for an instance that never completes, arrivers that disagree on the count, and arrivals
 * that could join another instance than the one the simulator formed.
 */
const namedBarrierOp = (name: string, surface: string, verb: string, action: "named" | "arrive") =>
  stmtOp({
    name,
    family: "cta",
    surface,
    operands: [staticArg("barrier", 0, 15), staticArg("count", 32, 1024, "TX2014")],
    sm: 30,
    ptx: [6, 0],
    source: `PTX ISA, bar/barrier (${verb} a, b: b a multiple of the warp size)`,
    lower: template(`${verb} $0, $1`),
    effect: { unit: "barrier", action },
    check(args, span) {
      const n = constInt(args[1]!)!;
      if (n % 32 !== 0) {
        throw new TirxError(
          "TX2014",
          `count of ${surface} must be a multiple of 32 (whole warps arrive), got ${n}`,
          span,
        );
      }
    },
  });

export const CTA_OPS: readonly OpDef[] = [
  namedBarrierOp("bar.sync.named", "T.cuda.bar_sync", "bar.sync", "named"),
  namedBarrierOp("bar.arrive", "T.cuda.bar_arrive", "bar.arrive", "arrive"),
].map((op) => ({
  ...op,
  checkLaunch(args, launch, span) {
    const n = constInt(args[1]!)!;
    const threads = launch.block[0] * launch.block[1] * launch.block[2];
    if (n > threads) {
      throw new TirxError(
        "TX2014",
        `count ${n} of ${op.surface} exceeds the CTA's ${threads} threads; the barrier would never release`,
        span,
      );
    }
  },
}));
