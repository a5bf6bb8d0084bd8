import { describe, expect, it } from "vitest";
import { verify } from "@tirx-ts/core";
import { T, type PrimExpr } from "@tirx-ts/dsl";
import { runSim, simCounters, simZeros, type SimTensor } from "@tirx-ts/runtime-sim";
import { lineOf } from "./helpers.js";

/**
 * A wait loop with a body, `while (!try_wait(bar, p)) { ... }`: its condition changes only with
 * the mbarrier's phase, so when every thread is blocked and nothing arrives or lands, the body's
 * stores cannot release it: TX6006 in one scheduling round (it took 2^24 iterations). A wait
 * whose condition also reads memory another body writes still completes.
 */
const here = import.meta.url;

type Shared = ReturnType<typeof T.alloc_shared>;

const notYet = (bar: Shared, parity: PrimExpr | number): PrimExpr =>
  T.call_value("mbarrier.try_wait.parity", bar.sub(0).ptr(), parity).not();

/** A 64-thread kernel with mbarrier `bar` (count 1, initialised) and shared counters S. */
const kernel = (name: string, body: (tid: PrimExpr, bar: Shared, S: Shared, O: Shared) => void) =>
  T.function(name, { O: T.Tensor([64], "int32") }, ({ O }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
    const tid = T.cuda.thread_idx("x");
    const bar = T.alloc_shared([1], "uint64", { name: "bar" });
    const S = T.alloc_shared([64], "int32", { name: "S" });
    S.set([tid], 0);
    T.if_(tid.eq(0), () => {
      T.ptx.mbarrier.init(bar.sub(0), 1); // @init
      T.ptx.fence.mbarrier_init();
    });
    T.cuda.cta_sync();
    body(tid, bar, S, O as unknown as Shared);
  });

function run(fn: ReturnType<typeof kernel>, seed = 0) {
  const O = simZeros([64], "int32");
  const before = simCounters.loopIterations;
  const { reports } = runSim(verify(fn), [O], { hazards: "collect", simSeed: seed });
  return {
    reports,
    /** Loop iterations the launch ran (simCounters). */
    iterations: simCounters.loopIterations - before,
    out: Array.from((O as SimTensor).toArray() as Int32Array),
  };
}

describe("a deadlocked wait loop with a body", () => {
  it("a counter in the body: TX6006 at the loop, with the init, after a few polls", () => {
    const fn = kernel("spin_count", (tid, bar, S, O) => {
      // Nobody arrives: phase 0 never completes.
      // @spin
      T.while_(
        () => notYet(bar, 0),
        () => S.set([tid], S.get([tid]).add(1)),
      );
      O.set([tid], S.get([tid]));
    });
    const { reports, iterations } = run(fn);
    expect(reports.map((r) => [r.code, r.span?.line])).toEqual([["TX6006", lineOf(here, "@spin")]]);
    const init = reports[0]?.notes.find((n) => n.span?.line === lineOf(here, "@init"));
    expect(init?.message).toMatch(/1 of 1 arrivals still pending/);
    // Found in the first scheduling round in which nothing arrives (3 polls of the loop), where
    // the body's stores counted as progress and the loop ran MAX_WHILE_ITERATIONS (2^24).
    expect(iterations).toBeLessThanOrEqual(8);
  });
});

describe("wait loops with bodies that complete", () => {
  it("warp 1 counts while it waits until warp 0, released by warp 1, arrives: no report", () => {
    const fn = kernel("count_then_go", (tid, bar, S, O) => {
      const go = T.alloc_shared([1], "uint64", { name: "go" });
      T.if_(tid.eq(0), () => T.ptx.mbarrier.init(go.sub(0), 1));
      T.cuda.cta_sync();
      T.if_(tid.ge(32), () => {
        T.if_(tid.eq(32), () => T.ptx.mbarrier.arrive(go.sub(0)));
        T.while_(
          () => notYet(bar, 0),
          () => S.set([tid], S.get([tid]).add(1)),
        );
      });
      T.if_(tid.lt(32), () => {
        T.ptx.mbarrier.try_wait(go.sub(0), 0);
        T.if_(tid.eq(0), () => T.ptx.mbarrier.arrive(bar.sub(0)));
      });
      O.set([tid], S.get([tid]));
    });
    for (const seed of [0, 1, 2]) {
      const { reports, out } = run(fn, seed);
      expect(reports.map((r) => r.render())).toEqual([]);
      expect(out.slice(0, 32)).toEqual(new Array(32).fill(0));
      for (const v of out.slice(32)) expect(v).toBeGreaterThan(0);
    }
  });

  it("a wait with a timeout counter in shared memory ends when the counter runs out", () => {
    const fn = kernel("timeout", (tid, bar, S, O) => {
      T.if_(tid.eq(0), () =>
        T.while_(
          () => T.and(notYet(bar, 0), S.get([0]).lt(100)),
          () => S.set([0], S.get([0]).add(1)),
        ),
      );
      T.cuda.cta_sync();
      O.set([tid], S.get([0]));
    });
    const { reports, out } = run(fn);
    expect(reports.map((r) => r.render())).toEqual([]);
    expect(out).toEqual(new Array(64).fill(100));
  });

  it("one wait loop's body releases another wait whose condition reads memory", () => {
    const fn = kernel("flag", (tid, bar, S, O) => {
      // Warp 1 waits for the phase or a flag; warp 0, which nobody releases either, raises the
      // flag in its body; then warp 1 arrives and releases warp 0.
      T.if_(tid.ge(32), () => {
        T.while_(
          () => T.and(notYet(bar, 0), S.get([63]).eq(0)),
          () => {},
        );
        T.if_(tid.eq(32), () => T.ptx.mbarrier.arrive(bar.sub(0)));
      });
      T.if_(tid.eq(0), () =>
        T.while_(
          () => notYet(bar, 0),
          () => S.set([63], 7),
        ),
      );
      T.cuda.cta_sync();
      O.set([tid], S.get([63]));
    });
    for (const seed of [0, 1, 2]) {
      const { reports, out } = run(fn, seed);
      // A plain flag is a data race (reported); the waits complete.
      expect(reports.map((r) => r.code)).not.toContain("TX6006");
      expect(out).toEqual(new Array(64).fill(7));
    }
  });
});
