import { BULK_DSMEM_OPS } from "./bulk-dsmem.js";
import { staticArg, stmtOp, template } from "./define.js";
import type { OpDef } from "./op.js";

/**
 * The bulk-copy unit's actions (PTX ISA, cp.async.bulk.commit_group /
 * cp.async.bulk.wait_group[.read]): the bulk groups of a thread's cp.async.bulk copies; and
 * `copy_dsmem`, the shared::cta → shared::cluster bulk copy (ops/bulk-dsmem.ts), which completes
 * on the destination CTA's mbarrier.
 */
export type BulkAction = {
  readonly unit: "bulk";
  readonly action: "commit" | "wait" | "wait_read" | "copy_dsmem";
};

declare module "./op.js" {
  interface MachineUnits {
    bulk: BulkAction;
  }
}

/**
 * Bulk-group operations of `cp.async.bulk` shared → global copies (PTX ISA,
 * cp.async.bulk.commit_group / cp.async.bulk.wait_group; sm_90, PTX 8.0), and the
 * shared::cta → shared::cluster copy (ops/bulk-dsmem.ts).
 */
export const BULK_OPS: readonly OpDef[] = [
  stmtOp({
    name: "cp.async.bulk.commit_group",
    family: "bulk",
    surface: "T.ptx.cp.async_.bulk.commit_group",
    sm: 90,
    ptx: [8, 0],
    source: "PTX ISA, cp.async.bulk.commit_group",
    lower: template("cp.async.bulk.commit_group"),
    archCode: "TX4007",
    effect: { unit: "bulk", action: "commit" },
  }),
  stmtOp({
    name: "cp.async.bulk.wait_group",
    family: "bulk",
    surface: "T.ptx.cp.async_.bulk.wait_group",
    operands: [staticArg("n", 0, 7, "TX3022")],
    sm: 90,
    ptx: [8, 0],
    source: "PTX ISA, cp.async.bulk.wait_group",
    lower: template("cp.async.bulk.wait_group $0"),
    archCode: "TX4007",
    effect: { unit: "bulk", action: "wait" },
  }),
  stmtOp({
    name: "cp.async.bulk.wait_group.read",
    family: "bulk",
    surface: "T.ptx.cp.async_.bulk.wait_group_read",
    operands: [staticArg("n", 0, 7, "TX3022")],
    sm: 90,
    ptx: [8, 0],
    source: "PTX ISA, cp.async.bulk.wait_group",
    lower: template("cp.async.bulk.wait_group.read $0"),
    archCode: "TX4007",
    effect: { unit: "bulk", action: "wait_read" },
  }),
  ...BULK_DSMEM_OPS,
];
