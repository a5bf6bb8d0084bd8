import { constInt } from "@tirx-ts/core";
import { Tracer } from "../../exec/trace.js";
import type { UnitAction, UnitCall, UnitCompiler, Exec } from "../compiled.js";
import { compileDsmemCopy } from "../dsmem.js";

/**
 * cp.async.bulk.wait_group (`readOnly`: its `.read` form, which waits only until the groups'
 * sources have been read): thread by thread, the bulk groups beyond the newest `keep` complete.
 */
function bulkWait(c: UnitCall<UnitAction<"bulk">>, readOnly: boolean): Exec {
  const m = c.ec.m;
  const bu = m.bulk;
  // The number of groups left pending: a constant (the verifier checks it).
  const keep = constInt(c.args[0]!) ?? 0;
  const what = `cp.async.bulk.wait_group${readOnly ? ".read" : ""} ${keep}`;
  return (lanes, n) => {
    for (let i = 0; i < n; i++) bu.wait(m, lanes[i]!, keep, readOnly);
    m.opts.tracer?.bulkIssue(Tracer.warpsOf(lanes, n), what);
  };
}

/**
 * The bulk-copy unit's actions (PTX ISA, cp.async.bulk.commit_group,
 * cp.async.bulk.wait_group[.read]; the groups are exec/bulk.ts's; and the shared::cta →
 * shared::cluster copy, compile/dsmem.ts): statement ops only. The other copies are tile plans
 * (compile/bulk.ts, compile/tma.ts).
 */
export const BULK_UNIT = {
  commit: {
    stmt({ ec }) {
      const m = ec.m;
      const bu = m.bulk;
      return (lanes, n) => {
        for (let i = 0; i < n; i++) bu.commit(lanes[i]!);
        m.opts.tracer?.bulkIssue(Tracer.warpsOf(lanes, n), "cp.async.bulk.commit_group");
      };
    },
  },
  wait: { stmt: (c) => bulkWait(c, false) },
  wait_read: { stmt: (c) => bulkWait(c, true) },
  copy_dsmem: { stmt: compileDsmemCopy },
} as const satisfies UnitCompiler<UnitAction<"bulk">>;
