import { constInt } from "@tirx-ts/core";
import { Tracer } from "../../exec/trace.js";
import type { UnitAction, UnitCompiler } from "../compiled.js";

/**
 * The cp.async unit's group actions (PTX ISA, cp.async.commit_group, cp.async.wait_group,
 * cp.async.wait_all; the groups are exec/async-copy.ts's): statement ops only. The copies
 * themselves are tile plans (compile/cp-async.ts).
 */
export const CP_ASYNC_UNIT = {
  commit: {
    stmt({ ec }) {
      const m = ec.m;
      const au = m.async;
      return (lanes, n) => {
        for (let i = 0; i < n; i++) au.commit(lanes[i]!);
        m.opts.tracer?.cpAsyncCommit(Tracer.warpsOf(lanes, n));
      };
    },
  },
  wait: {
    stmt({ ec, args }) {
      const m = ec.m;
      const au = m.async;
      // The number of groups left pending: a constant (the verifier checks it).
      const keep = constInt(args[0]!) ?? 0;
      return (lanes, n) => {
        au.waitLanes(m, lanes, n, keep, false);
        m.opts.tracer?.cpAsyncWait(Tracer.warpsOf(lanes, n), keep);
      };
    },
  },
  wait_all: {
    stmt({ ec }) {
      const m = ec.m;
      const au = m.async;
      return (lanes, n) => {
        au.waitLanes(m, lanes, n, 0, true);
        if (m.opts.tracer) {
          m.opts.tracer.cpAsyncCommit(Tracer.warpsOf(lanes, n));
          m.opts.tracer.cpAsyncWait(Tracer.warpsOf(lanes, n), 0);
        }
      };
    },
  },
} as const satisfies UnitCompiler<UnitAction<"cp.async">>;
