import { intImm, MEMORY_SCOPES, MEMORY_SEMS, SIGNAL_CMPS, constInt } from "@tirx-ts/core";
import type { UnitAction, UnitCompiler } from "../compiled.js";
import { compileStrong } from "./order.js";

/** The unsigned comparison `cmp` of a signal word `v` against `x` (NVSHMEM_CMP_*). */
function compare(cmp: (typeof SIGNAL_CMPS)[number], v: bigint, x: bigint): boolean {
  switch (cmp) {
    case "eq":
      return v === x;
    case "ne":
      return v !== x;
    case "gt":
      return v > x;
    case "ge":
      return v >= x;
    case "lt":
      return v < x;
    case "le":
      return v <= x;
  }
}

const CMP_TEXT = { eq: "==", ne: "!=", gt: ">", ge: ">=", lt: "<", le: "<=" } as const;

/**
 * The NVSHMEM unit (core ops/nvshmem.ts; NVSHMEM device API): the PE registers of a multi-PE
 * launch (runSim's `pes`: the PE is the thread's rank in its group, exec/machine.ts) and the
 * signal test that signal_wait_until's wait loop polls: an `ld.acquire.sys` of the word (the
 * strong load of compile/units/order.ts, so a put_signal's `atom.release.sys` orders the put's
 * stores before the waiter's later reads), compared unsigned. A poll that reads a changed word is
 * progress for the scheduler; a failing one is noted for the deadlock report (exec/signals.ts).
 */
export const NVSHMEM_UNIT = {
  pe: {
    stateless: true,
    value({ ec, fx }) {
      const m = ec.m;
      if (fx.which === "n_pes") return () => m.pes;
      return (t) => (m.pes > 1 ? m.rank[t]! : 0);
    },
  },
  signal_test: {
    syncs: true,
    polls: true,
    value({ ec, op, args, at }) {
      const m = ec.m;
      const ptr = args[0]!;
      const load = compileStrong(
        ec,
        op,
        false,
        [ptr, intImm(MEMORY_SEMS.indexOf("acquire")), intImm(MEMORY_SCOPES.indexOf("sys"))],
        at,
      );
      const want = ec.any(args[1]!, at) as (t: number) => bigint;
      const cmp = SIGNAL_CMPS[constInt(args[2]!)!]!;
      const site = m.site(at);
      const buf = ptr.kind === "BufferPtr" ? ptr.buffer : undefined;
      const off = ptr.kind === "BufferPtr" ? ec.index(ptr.offset, at) : () => 0;
      const shape = (buf?.shape ?? []).map((d) => (typeof d === "number" ? d : undefined));
      const word = (t: number): string => {
        let o = off(t);
        if (!buf || shape.some((d) => d === undefined)) return `${buf?.name ?? "signal"}[+${o}]`;
        const idx: number[] = [];
        for (let k = shape.length - 1; k >= 0; k--) {
          idx.unshift(o % shape[k]!);
          o = Math.floor(o / shape[k]!);
        }
        return `${buf.name}[${idx.join(", ")}]`;
      };
      const sig = m.signals;
      return (t) => {
        const v = BigInt(load(t));
        const x = BigInt(want(t));
        if (sig.polled(t, v)) m.bars.progress++;
        if (compare(cmp, v, x)) return 1;
        sig.blocked.push({
          thread: t,
          site,
          word: word(t),
          cond: `${CMP_TEXT[cmp]} ${x}`,
          seen: v,
          decl: buf?.span,
        });
        return 0;
      };
    },
  },
} as const satisfies UnitCompiler<UnitAction<"nvshmem">>;
