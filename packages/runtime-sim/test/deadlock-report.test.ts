import { describe, expect, it } from "vitest";
import type { NoteFacts, TirxError } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import {
  simTensor,
  simZeros,
  type DeadlockFacts,
  type MbarrierFacts,
  type MbarrierWaitFacts,
  type NamedBarrierFacts,
  type NamedBarrierWaitFacts,
} from "@tirx-ts/runtime-sim";
import { lineOf, simCollect, simThrows } from "./helpers.js";

/**
 * Deadlock reports name their cause (exec/mbarrier.ts reportDeadlock, exec/named-barriers.ts
 * reportIncomplete): arrivals received of the count, transaction bytes outstanding, the waiting
 * warps and the parity they pass against the barrier's current phase, a named barrier's count
 * against the threads that arrived. Each expected value is computed from the scenario's
 * constants; the facts (`Note.facts`) are checked, and the messages for the same numbers.
 */
const here = import.meta.url;

/** The facts of `e`'s notes of `kind`, with the note's line. */
function factsOf<K extends DeadlockFacts["kind"]>(
  e: TirxError,
  kind: K,
): { facts: Extract<DeadlockFacts, { kind: K }>; line: number | undefined; message: string }[] {
  return e.notes
    .filter((n): n is typeof n & { facts: NoteFacts } => n.facts?.kind === kind)
    .map((n) => ({
      facts: n.facts as Extract<DeadlockFacts, { kind: K }>,
      line: n.span?.line,
      message: n.message,
    }));
}

/** Warp ids 0 .. threads/32 - 1. */
const warpsOf = (threads: number): number[] =>
  Array.from({ length: Math.ceil(threads / 32) }, (_, w) => w);

describe("TX6006 names what the mbarrier is missing", () => {
  const BLOCK = 64;

  it("count 2, one arrival: 1 of 2 received, every warp waits for phase 0 (a future phase)", () => {
    const COUNT = 2;
    const ARRIVALS = 1;
    const k = T.function("short_arrivals", { B: T.Tensor([BLOCK], "int32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: BLOCK }) });
      const tid = T.cuda.thread_idx("x");
      const bar = T.alloc_shared([1], "uint64", { name: "bar" });
      T.if_(tid.eq(0), () => T.ptx.mbarrier.init(bar.sub(0), COUNT)); // @init2
      T.cuda.cta_sync();
      T.if_(tid.lt(ARRIVALS), () => T.ptx.mbarrier.arrive(bar.sub(0)));
      T.ptx.mbarrier.try_wait(bar.sub(0), 0); // @wait2
      B.set([tid], tid);
    });
    const e = simThrows(k, [simZeros([BLOCK], "int32")]);
    expect([e.code, e.span?.line]).toEqual(["TX6006", lineOf(here, "@wait2")]);
    expect(e.message).toContain(`received ${ARRIVALS} of its ${COUNT} arrivals`);

    const [bar] = factsOf(e, "mbarrier");
    expect(bar?.facts).toEqual({
      kind: "mbarrier",
      barrier: '"bar"[0]',
      cta: "(0, 0, 0)",
      count: COUNT,
      arrived: ARRIVALS,
      pending: COUNT - ARRIVALS,
      txBytes: 0,
      phase: 0,
      parity: 0,
    } satisfies MbarrierFacts);
    expect(bar?.line).toBe(lineOf(here, "@init2"));
    expect(bar?.message).toContain(`${COUNT - ARRIVALS} of ${COUNT} arrivals still pending`);

    const waits = factsOf(e, "mbarrier-wait");
    expect(waits.map((w) => [w.facts, w.line])).toEqual([
      [
        {
          kind: "mbarrier-wait",
          barrier: '"bar"[0]',
          cta: "(0, 0, 0)",
          warps: warpsOf(BLOCK),
          threads: BLOCK,
          parity: 0,
          waitsFor: 0,
          observed: 0,
          verdict: "future",
        } satisfies MbarrierWaitFacts,
        lineOf(here, "@wait2"),
      ],
    ]);
    expect(waits[0]?.message).toContain(`warps ${warpsOf(BLOCK).join(", ")} of CTA (0, 0, 0)`);
  });

  it("expect_tx announces more bytes than the copy brings: the bytes outstanding, at the expect_tx", () => {
    const N = 64; // float32 elements copied
    const EXTRA = 48; // bytes announced beyond the copy (a runtime value: the verifier checks constants, TX4008)
    const load = T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"]!;
    const k = T.function(
      "short_bytes",
      { A: T.Tensor([N], "float32"), B: T.Tensor([N], "float32"), extra: T.int32 },
      ({ A, B, extra }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([N], "float32");
        const bar = T.alloc_shared([1], "uint64", { name: "full" });
        T.if_(tid.eq(0), () => {
          T.ptx.mbarrier.init(bar.sub(0), 1);
          T.ptx.fence.mbarrier_init();
        });
        T.cuda.cta_sync();
        T.if_(tid.eq(0), () => {
          T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), extra.add(N * 4)); // @expect
          T.cuda.tile.apply(load, s, A, { chunk_bytes: N * 4, mbar: bar.sub(0) });
        });
        T.ptx.mbarrier.try_wait(bar.sub(0), 0); // @waittx
        B.set([tid], s.get([tid]));
      },
    );
    const a = simTensor(new Float32Array(N), { shape: [N], dtype: "float32" });
    const e = simThrows(k, [a, simZeros([N], "float32"), EXTRA]);
    expect([e.code, e.span?.line]).toEqual(["TX6006", lineOf(here, "@waittx")]);
    expect(e.message).toContain(
      `${EXTRA} transaction bytes announced with expect_tx are outstanding`,
    );
    const [bar] = factsOf(e, "mbarrier");
    expect(bar?.facts).toMatchObject({
      count: 1,
      arrived: 1,
      pending: 0,
      txBytes: EXTRA,
      phase: 0,
    });
    expect(bar?.message).toContain(`tx-count ${EXTRA} bytes still expected`);
    const at = e.notes.find((n) => n.span?.line === lineOf(here, "@expect"));
    expect(at?.message).toContain(`${EXTRA} of the bytes it announced for phase 0 never arrived`);
    expect(factsOf(e, "mbarrier-wait")[0]?.facts).toMatchObject({
      warps: [0],
      threads: 32,
      verdict: "future",
    });
  });

  it("a wait with the wrong parity: phase 0 completed unobserved, the wait is for phase 1 (parity bug)", () => {
    const k = (parity: number) =>
      T.function(`parity_${parity}`, { B: T.Tensor([BLOCK], "int32") }, ({ B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: BLOCK }) });
        const tid = T.cuda.thread_idx("x");
        const bar = T.alloc_shared([1], "uint64", { name: "bar" });
        T.if_(tid.eq(0), () => T.ptx.mbarrier.init(bar.sub(0), 1));
        T.cuda.cta_sync();
        T.if_(tid.eq(0), () => T.ptx.mbarrier.arrive(bar.sub(0)));
        // Every warp waits after phase 0 completed (else a warp that passed the cta_sync first
        // would test phase 0, in progress, with parity 1 and return at once).
        T.cuda.cta_sync();
        T.ptx.mbarrier.try_wait(bar.sub(0), parity); // @waitp
        B.set([tid], tid);
      });
    // Parity 0 waits for phase 0, which the one arrival completes: no report.
    expect(simCollect(k(0), [simZeros([BLOCK], "int32")])).toEqual([]);
    const COMPLETED = 1;
    const WRONG = COMPLETED & 1; // the parity of the phase after the completed one
    const e = simThrows(k(WRONG), [simZeros([BLOCK], "int32")]);
    expect([e.code, e.span?.line]).toEqual(["TX6006", lineOf(here, "@waitp")]);
    expect(e.message).toContain("a parity bug");
    expect(e.message).toContain(
      `phase ${COMPLETED - 1} (parity ${(COMPLETED - 1) & 1}) already completed`,
    );
    expect(factsOf(e, "mbarrier-wait")[0]?.facts).toEqual({
      kind: "mbarrier-wait",
      barrier: '"bar"[0]',
      cta: "(0, 0, 0)",
      warps: warpsOf(BLOCK),
      threads: BLOCK,
      parity: WRONG,
      waitsFor: COMPLETED,
      observed: 0,
      verdict: "parity",
    } satisfies MbarrierWaitFacts);
    expect(factsOf(e, "mbarrier")[0]?.facts).toMatchObject({
      count: 1,
      arrived: 0,
      pending: 1,
      phase: COMPLETED,
      parity: COMPLETED & 1,
    });
  });

  it("a second wait after observing phase 0 waits for phase 1: a future phase, not a parity bug", () => {
    const k = T.function("observed_then_wait", { B: T.Tensor([32], "int32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const bar = T.alloc_shared([1], "uint64", { name: "bar" });
      T.if_(tid.eq(0), () => T.ptx.mbarrier.init(bar.sub(0), 1));
      T.cuda.cta_sync();
      T.if_(tid.eq(0), () => T.ptx.mbarrier.arrive(bar.sub(0)));
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      T.ptx.mbarrier.try_wait(bar.sub(0), 1); // @again
      B.set([tid], tid);
    });
    const e = simThrows(k, [simZeros([32], "int32")]);
    expect([e.code, e.span?.line]).toEqual(["TX6006", lineOf(here, "@again")]);
    expect(factsOf(e, "mbarrier-wait")[0]?.facts).toMatchObject({
      parity: 1,
      waitsFor: 1,
      observed: 1,
      verdict: "future",
    });
    expect(e.message).toContain("for phase 1, which has received 0 of its 1 arrivals");
  });
});

describe("TX6012 names a named barrier's count against the threads that arrived", () => {
  it("bar_sync(1, 96) reached by two warps: 64 of 96 arrived, warps 0 and 1 wait at it", () => {
    const BLOCK = 128;
    const ARRIVE = 64;
    const COUNT = 96;
    const k = T.function("named_short", { O: T.Tensor([BLOCK], "int32") }, ({ O }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: BLOCK }) });
      const tid = T.cuda.thread_idx("x");
      T.if_(tid.lt(ARRIVE), () => T.cuda.bar_sync(1, COUNT)); // @named
      O.set([tid], tid);
    });
    const [e] = simCollect(k, [simZeros([BLOCK], "int32")]);
    expect([e?.code, e?.span?.line]).toEqual(["TX6012", lineOf(here, "@named")]);
    const [summary] = factsOf(e!, "named-barrier");
    expect(summary?.facts).toEqual({
      kind: "named-barrier",
      id: 1,
      cta: "(0, 0, 0)",
      expected: COUNT,
      arrived: ARRIVE,
      warps: warpsOf(ARRIVE),
    } satisfies NamedBarrierFacts);
    expect(summary?.message).toContain(
      `expects ${COUNT} threads in this instance; ${ARRIVE} arrived`,
    );
    expect(summary?.message).toContain(`${COUNT - ARRIVE} never arrive`);
    const waits = factsOf(e!, "named-barrier-wait");
    expect(waits.map((w) => [w.facts, w.line])).toEqual([
      [
        {
          kind: "named-barrier-wait",
          id: 1,
          cta: "(0, 0, 0)",
          warps: warpsOf(ARRIVE),
          threads: ARRIVE,
          sync: true,
        } satisfies NamedBarrierWaitFacts,
        lineOf(here, "@named"),
      ],
    ]);
  });
});
