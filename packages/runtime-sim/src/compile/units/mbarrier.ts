import type { Exec, UnitAction, UnitCall, UnitCompiler } from "../compiled.js";

/** The largest mbarrier arrival count (PTX ISA, mbarrier: counts lie in [1, 2^20 - 1]). */
const MAX_MBARRIER_COUNT = 2 ** 20 - 1;

/**
 * The statement `(bar, tx_bytes)` that applies each executing lane's byte count (read as
 * unsigned) to the mbarrier it addresses, through `apply` of exec/mbarrier.ts: `expectTx` (PTX
 * ISA, mbarrier.expect_tx: the phase's tx-count grows) or `completeTxBy` (PTX ISA,
 * mbarrier.complete_tx: the bytes complete on the phase, TX6022 beyond those announced).
 * @throws TirxError TX4011 (via `ec.bar`) when `bar` is not a pointer into a shared buffer.
 */
function txBytesStmt(
  apply: "expectTx" | "completeTxBy",
): (c: UnitCall<UnitAction<"mbarrier">>) => Exec {
  return ({ ec, args: exprs, span }) => {
    const m = ec.m;
    const site = m.site(span);
    const { addr, bb } = ec.bar(exprs[0]!, span);
    const val = ec.num(exprs[1]!, span);
    const bars = m.bars;
    return (lanes, n) => {
      for (let i = 0; i < n; i++) {
        const t = lanes[i]!;
        bars[apply](m, t, addr(t), val(t) >>> 0, bb, site);
      }
    };
  };
}

/**
 * The mbarrier unit (PTX ISA, mbarrier.init, mbarrier.arrive[.expect_tx], mbarrier.expect_tx,
 * mbarrier.complete_tx,
 * mbarrier.try_wait.parity, mbarrier.arrive.shared::cluster; the barriers are
 * exec/mbarrier.ts's, remote arrivals go through exec/cluster.ts). `try_wait` is a value op (a
 * non-blocking test of the phase, 0/1); a loop around it is compiled as a wait loop
 * (compile/wait-loop.ts, compile/blocking.ts). The others are statement ops.
 */
export const MBARRIER_UNIT = {
  init: {
    stmt({ ec, args: exprs, span }) {
      const m = ec.m;
      const site = m.site(span);
      const { addr, bb } = ec.bar(exprs[0]!, span);
      const val = ec.num(exprs[1]!, span);
      const bars = m.bars;
      // The verifier checks a static count (TX4012); a runtime one is checked here (TX6020).
      const signed = exprs[1]!.dtype === "int32";
      return (lanes, n) => {
        for (let i = 0; i < n; i++) {
          const t = lanes[i]!;
          const raw = val(t);
          const count = signed ? raw : raw >>> 0;
          if (!(count >= 1 && count <= MAX_MBARRIER_COUNT)) {
            m.hazard(
              "TX6020",
              `thread ${m.thread(t)} of CTA ${m.cta()} initialises an mbarrier with count ${count}, outside [1, 2^20 - 1] (PTX ISA, mbarrier.init)`,
              site,
            );
            continue;
          }
          bars.init(m, t, addr(t), count, bb, site);
        }
      };
    },
  },
  arrive: {
    stmt({ ec, args: exprs, span }) {
      const m = ec.m;
      const site = m.site(span);
      const { addr, bb } = ec.bar(exprs[0]!, span);
      // The expect_tx byte count, when the op has one.
      const val = exprs[1] ? ec.num(exprs[1], span) : undefined;
      const bars = m.bars;
      return (lanes, n) => {
        for (let i = 0; i < n; i++) {
          const t = lanes[i]!;
          bars.arrive(m, t, addr(t), val ? val(t) >>> 0 : 0, bb, site);
        }
      };
    },
  },
  expect_tx: { stmt: txBytesStmt("expectTx") },
  complete_tx: { stmt: txBytesStmt("completeTxBy") },
  arrive_remote: {
    stmt({ ec, args: exprs, span }) {
      const m = ec.m;
      const site = m.site(span);
      const { addr, bb } = ec.bar(exprs[0]!, span);
      const val = ec.num(exprs[1]!, span);
      // The same mbarrier in the CTA of rank `val` of the cluster (mapa + remote arrive).
      const cu = m.clusterUnit;
      const layout = ec.layout;
      return (lanes, n) => {
        for (let i = 0; i < n; i++) {
          const t = lanes[i]!;
          const local = addr(t) - m.win[t]!;
          cu.remoteArrive(layout, t, val(t) >>> 0, local, bb, site);
        }
      };
    },
  },
  try_wait: {
    syncs: true,
    polls: true,
    value({ ec, args, at, span }) {
      const m = ec.m;
      const site = m.site(at);
      const { addr, bb } = ec.bar(args[0]!, span);
      const parity = ec.num(args[1]!, span);
      const bars = m.bars;
      return (t) => {
        const p = parity(t);
        // PTX ISA, mbarrier.test_wait/try_wait: "the valid values of phaseParity operand are 0
        // and 1" (a phase index passed whole is undefined behaviour on the GPU).
        if (p !== 0 && p !== 1) {
          m.hazard(
            "TX6032",
            `thread ${m.thread(t)} of CTA ${m.cta()} waits on an mbarrier with phase parity ${p}, not 0 or 1 (PTX ISA, mbarrier.try_wait: the valid values of phaseParity are 0 and 1); pass the phase's parity, e.g. phase & 1`,
            site,
          );
        }
        return bars.tryWait(m, t, addr(t), p, bb, site);
      };
    },
  },
} as const satisfies UnitCompiler<UnitAction<"mbarrier">>;
