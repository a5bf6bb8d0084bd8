import { TirxError } from "../diagnostics.js";
import { constInt } from "../ir/expr.js";
import { mbarrierArg, stmtOp, template, valueArg } from "./define.js";
import type { OpDef } from "./op.js";

/**
 * The mbarrier unit's actions (PTX ISA, mbarrier.init, mbarrier.arrive, mbarrier.try_wait;
 * `arrive_remote` is mbarrier.arrive.shared::cluster on another CTA's barrier,
 * ops/mbarrier-cluster.ts).
 */
export type MbarrierAction = {
  readonly unit: "mbarrier";
  /**
   * `expect_tx` / `complete_tx`: the standalone mbarrier.expect_tx / mbarrier.complete_tx (add
   * to / take from the current phase's tx-count without arriving).
   */
  readonly action: "init" | "arrive" | "try_wait" | "arrive_remote" | "expect_tx" | "complete_tx";
  /**
   * An op that announces transaction bytes (its second operand; PTX ISA,
   * mbarrier.arrive.expect_tx, mbarrier.expect_tx): the verifier matches them against the bulk
   * copies and complete_tx ops of the block (verify/expect-tx.ts).
   */
  readonly expectTx?: true;
};

declare module "./op.js" {
  interface MachineUnits {
    mbarrier: MbarrierAction;
  }
}

const count = valueArg("count", ["uint32", "int32"]);

/**
 * mbarrier objects in shared memory (PTX ISA, mbarrier). The `.shared::cta` spellings need PTX
 * 7.8; transaction counts (`expect_tx`) and `try_wait` need sm_90 (checked with ptxas 13.0).
 * The arrival state is never read back (waits use the phase parity), so it goes to the sink `_`.
 * The standalone `mbarrier.expect_tx` / `mbarrier.complete_tx` (sm_90, PTX 8.0) add to and take
 * from the current phase's tx-count without an arrival, `.relaxed` at `.cta` scope (the only
 * sem they have): complete_tx releases nothing, so a thread that signals bytes it stored with it
 * orders nothing for the waiters (use an arrive, which releases, for that).
 */
export const MBARRIER_OPS: readonly OpDef[] = [
  stmtOp({
    name: "mbarrier.init",
    family: "mbarrier",
    surface: "T.ptx.mbarrier.init",
    operands: [mbarrierArg(), count],
    sm: 80,
    ptx: [7, 8],
    source: "PTX ISA, mbarrier.init",
    lower: template("mbarrier.init.shared::cta.b64 $0, $1"),
    effect: { unit: "mbarrier", action: "init" },
    check(args, span) {
      const c = constInt(args[1]!);
      if (c !== undefined && (c < 1 || c > 2 ** 20 - 1)) {
        throw new TirxError("TX4012", `mbarrier.init count ${c} is outside [1, 2^20 - 1]`, span);
      }
    },
  }),
  stmtOp({
    name: "mbarrier.arrive",
    family: "mbarrier",
    surface: "T.ptx.mbarrier.arrive",
    operands: [mbarrierArg()],
    sm: 80,
    ptx: [7, 8],
    source: "PTX ISA, mbarrier.arrive",
    lower: template("mbarrier.arrive.shared::cta.b64 _, $0"),
    effect: { unit: "mbarrier", action: "arrive" },
  }),
  stmtOp({
    name: "mbarrier.arrive.expect_tx",
    family: "mbarrier",
    surface: "T.ptx.mbarrier.arrive.expect_tx",
    operands: [mbarrierArg(), valueArg("tx_bytes", ["uint32", "int32"])],
    sm: 90,
    ptx: [8, 0],
    source: "PTX ISA, mbarrier.arrive (expect_tx)",
    archCode: "TX4007",
    lower: template("mbarrier.arrive.expect_tx.shared::cta.b64 _, $0, $1"),
    effect: { unit: "mbarrier", action: "arrive", expectTx: true },
  }),
  stmtOp({
    name: "mbarrier.expect_tx",
    family: "mbarrier",
    surface: "T.ptx.mbarrier.expect_tx",
    operands: [mbarrierArg(), valueArg("tx_bytes", ["uint32", "int32"])],
    sm: 90,
    ptx: [8, 0],
    source: "PTX ISA, mbarrier.expect_tx (.relaxed .cta: sm_90, PTX 8.0)",
    archCode: "TX4007",
    lower: template("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 $0, $1"),
    effect: { unit: "mbarrier", action: "expect_tx", expectTx: true },
  }),
  stmtOp({
    name: "mbarrier.complete_tx",
    family: "mbarrier",
    surface: "T.ptx.mbarrier.complete_tx",
    operands: [mbarrierArg(), valueArg("tx_bytes", ["uint32", "int32"])],
    sm: 90,
    ptx: [8, 0],
    source: "PTX ISA, mbarrier.complete_tx (.relaxed .cta: sm_90, PTX 8.0)",
    archCode: "TX4007",
    lower: template("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 $0, $1"),
    effect: { unit: "mbarrier", action: "complete_tx" },
  }),
  {
    ...stmtOp({
      name: "mbarrier.try_wait.parity",
      family: "mbarrier",
      surface: "T.ptx.mbarrier.try_wait",
      operands: [mbarrierArg(), valueArg("phase", ["uint32", "int32"])],
      sm: 90,
      ptx: [7, 8],
      source: "PTX ISA, mbarrier.test_wait/try_wait",
      archCode: "TX4007",
      lower: template("mbarrier.try_wait.parity.shared::cta.b64 $d, $0, $1"),
      effect: { unit: "mbarrier", action: "try_wait" },
    }),
    // True once the phase with parity `phase` completed; may be false spuriously, so callers loop.
    form: "value",
    result: () => "bool",
  },
];
