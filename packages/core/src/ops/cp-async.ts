import { staticArg, stmtOp, template } from "./define.js";
import type { OpDef } from "./op.js";

/**
 * The cp.async unit's actions (PTX ISA, cp.async.commit_group / cp.async.wait_group /
 * cp.async.wait_all): the groups of a thread's cp.async copies.
 */
export type CpAsyncAction = {
  readonly unit: "cp.async";
  readonly action: "commit" | "wait" | "wait_all";
};

declare module "./op.js" {
  interface MachineUnits {
    "cp.async": CpAsyncAction;
  }
}

/**
 * cp.async group operations (PTX ISA, cp.async.commit_group / cp.async.wait_group /
 * cp.async.wait_all; sm_80, PTX 7.0). The copies themselves are the cp.async tile pattern.
 */
export const CP_ASYNC_OPS: readonly OpDef[] = [
  stmtOp({
    name: "cp.async.commit_group",
    family: "cp-async",
    surface: "T.ptx.cp.async_.commit_group",
    sm: 80,
    ptx: [7, 0],
    source: "PTX ISA, cp.async.commit_group",
    lower: template("cp.async.commit_group"),
    archCode: "TX3023",
    effect: { unit: "cp.async", action: "commit" },
  }),
  stmtOp({
    name: "cp.async.wait_group",
    family: "cp-async",
    surface: "T.ptx.cp.async_.wait_group",
    operands: [staticArg("n", 0, 7, "TX3022")],
    sm: 80,
    ptx: [7, 0],
    source: "PTX ISA, cp.async.wait_group",
    lower: template("cp.async.wait_group $0"),
    archCode: "TX3023",
    effect: { unit: "cp.async", action: "wait" },
  }),
  stmtOp({
    name: "cp.async.wait_all",
    family: "cp-async",
    surface: "T.ptx.cp.async_.wait_all",
    sm: 80,
    ptx: [7, 0],
    source: "PTX ISA, cp.async.wait_all",
    lower: template("cp.async.wait_all"),
    archCode: "TX3023",
    effect: { unit: "cp.async", action: "wait_all" },
  }),
];
