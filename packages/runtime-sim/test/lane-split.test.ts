import { describe, expect, it } from "vitest";
import { verify } from "@tirx-ts/core";
import { T, type PrimExpr } from "@tirx-ts/dsl";
import { runSim, simZeros, type SimTensor } from "@tirx-ts/runtime-sim";
import { lineOf } from "./helpers.js";

/**
 * Lanes of one warp are scheduled independently (sm_70+): lane 0 may wait in one T.if_ for an
 * arrival lane 1 makes in a later T.if_ (compile/lane-split.ts). The simulator used to run a
 * warp's lanes together statement by statement and reported a false deadlock (TX6006).
 */
const here = import.meta.url;
const SEEDS = [0, 1, 2];

type Shared = ReturnType<typeof T.alloc_shared>;

/** A one-warp kernel with mbarrier `bar` (count 1, initialised) and shared S, writing O. */
const kernel = (name: string, body: (lane: PrimExpr, bar: Shared, S: Shared, O: Shared) => void) =>
  T.function(name, { O: T.Tensor([32], "int32") }, ({ O }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
    const lane = T.cuda.thread_idx("x");
    const bar = T.alloc_shared([1], "uint64", { name: "bar" });
    const S = T.alloc_shared([32], "int32", { name: "S" });
    T.if_(lane.eq(0), () => {
      T.ptx.mbarrier.init(bar.sub(0), 1); // @init
      T.ptx.fence.mbarrier_init();
    });
    T.cuda.cta_sync();
    body(lane, bar, S, O as unknown as Shared);
  });

function run(fn: ReturnType<typeof kernel>, seed: number) {
  const O = simZeros([32], "int32");
  const { reports } = runSim(verify(fn), [O], { hazards: "collect", simSeed: seed });
  return { reports, out: Array.from((O as SimTensor).toArray() as Int32Array) };
}

describe("lanes of one warp wait on each other across T.if_ statements", () => {
  it("lane 0 waits for lane 1's arrival in a later T.if_: it completes, no report", () => {
    const fn = kernel("lane_wait", (lane, bar, S, O) => {
      T.if_(lane.eq(0), () => {
        T.ptx.mbarrier.try_wait(bar.sub(0), 0);
        O.set([0], S.get([1]));
      });
      T.if_(lane.eq(1), () => {
        S.set([1], 42);
        T.ptx.mbarrier.arrive(bar.sub(0));
      });
      T.if_(lane.gt(0), () => O.set([lane], lane));
    });
    for (const seed of SEEDS) {
      const { reports, out } = run(fn, seed);
      expect(
        reports.map((r) => r.render()),
        `seed ${seed}`,
      ).toEqual([]);
      expect(out).toEqual([42, ...Array.from({ length: 31 }, (_, i) => i + 1)]);
    }
  });

  it("lane 1 writes after its arrive: lane 0's read races with it (TX6003, both lines)", () => {
    const fn = kernel("lane_race", (lane, bar, S, O) => {
      T.if_(lane.eq(0), () => {
        T.ptx.mbarrier.try_wait(bar.sub(0), 0);
        O.set([0], S.get([1])); // @race-read
      });
      T.if_(lane.eq(1), () => {
        T.ptx.mbarrier.arrive(bar.sub(0));
        S.set([1], 42); // @race-write
      });
    });
    const { reports } = run(fn, 0);
    expect(reports.map((r) => [r.code, r.span?.line, r.notes[0]?.span?.line])).toEqual([
      ["TX6003", lineOf(here, "@race-read"), lineOf(here, "@race-write")],
    ]);
  });

  it("lane 0 waits for an arrival no lane makes: TX6006 at its wait, the others finish", () => {
    const fn = kernel("lane_deadlock", (lane, bar, S, O) => {
      T.if_(lane.eq(0), () => T.ptx.mbarrier.try_wait(bar.sub(0), 0)); // @lone-wait
      T.if_(lane.gt(0), () => O.set([lane], lane));
    });
    for (const seed of SEEDS) {
      const { reports, out } = run(fn, seed);
      expect(reports.map((r) => [r.code, r.span?.line])).toEqual([
        ["TX6006", lineOf(here, "@lone-wait")],
      ]);
      expect(reports[0]?.notes.some((n) => n.span?.line === lineOf(here, "@init"))).toBe(true);
      expect(out.slice(1)).toEqual(Array.from({ length: 31 }, (_, i) => i + 1));
    }
  });
});

describe("lanes of one warp part ways across loop iterations and at a loop's end", () => {
  it("lane 0 waits in iteration 0 for lane 1's arrival in iteration 1: it completes, no report", () => {
    const fn = kernel("loop_ahead", (lane, bar, S, O) => {
      for (const k of T.range(2)) {
        T.if_(lane.eq(0).and(k.eq(0)), () => {
          T.ptx.mbarrier.try_wait(bar.sub(0), 0);
          O.set([0], S.get([1]));
        });
        T.if_(lane.eq(1).and(k.eq(1)), () => {
          S.set([1], 42);
          T.ptx.mbarrier.arrive(bar.sub(0));
        });
      }
      T.if_(lane.gt(0), () => O.set([lane], lane));
    });
    for (const seed of SEEDS) {
      const { reports, out } = run(fn, seed);
      expect(
        reports.map((r) => r.render()),
        `seed ${seed}`,
      ).toEqual([]);
      expect(out).toEqual([42, ...Array.from({ length: 31 }, (_, i) => i + 1)]);
    }
  });

  it("lanes with more iterations wait for a lane that left the loop: it completes, no report", () => {
    const fn = kernel("loop_leave", (lane, bar, S, O) => {
      // Lane i runs i + 1 iterations; lanes 3..31 wait in iteration 3 for lane 1's arrival after
      // the loop.
      for (const k of T.range(lane.add(1))) {
        T.if_(k.eq(3), () => O.set([lane], S.get([1])));
        T.if_(k.eq(2), () => T.ptx.mbarrier.try_wait(bar.sub(0), 0));
      }
      T.if_(lane.eq(1), () => {
        S.set([1], 7);
        T.ptx.mbarrier.arrive(bar.sub(0));
      });
    });
    for (const seed of SEEDS) {
      const { reports, out } = run(fn, seed);
      expect(
        reports.map((r) => r.render()),
        `seed ${seed}`,
      ).toEqual([]);
      expect(out).toEqual([0, 0, 0, ...new Array(29).fill(7)]);
    }
  });

  it("a T.while_ whose trip count differs per lane: lanes that leave it go on", () => {
    const fn = kernel("while_leave", (lane, bar, S, O) => {
      const i = T.alloc_local([1], "int32");
      i.set([0], 0);
      T.while_(
        () => i.get([0]).lt(lane.floormod(2).mul(2)),
        () => {
          T.ptx.mbarrier.try_wait(bar.sub(0), 0);
          i.set([0], i.get([0]).add(1));
        },
      );
      T.if_(lane.eq(0), () => {
        S.set([0], 5);
        T.ptx.mbarrier.arrive(bar.sub(0));
      });
      O.set([lane], i.get([0]));
    });
    for (const seed of SEEDS) {
      const { reports, out } = run(fn, seed);
      expect(
        reports.map((r) => r.render()),
        `seed ${seed}`,
      ).toEqual([]);
      expect(out).toEqual(Array.from({ length: 32 }, (_, l) => (l % 2) * 2));
    }
  });

  it("lane 1 writes after its arrive in a later iteration: lane 0's read races (TX6003, both lines)", () => {
    const fn = kernel("loop_race", (lane, bar, S, O) => {
      for (const k of T.range(2)) {
        T.if_(lane.eq(0).and(k.eq(0)), () => {
          T.ptx.mbarrier.try_wait(bar.sub(0), 0);
          O.set([0], S.get([1])); // @loop-read
        });
        T.if_(lane.eq(1).and(k.eq(1)), () => {
          T.ptx.mbarrier.arrive(bar.sub(0));
          S.set([1], 42); // @loop-write
        });
      }
    });
    const { reports } = run(fn, 0);
    expect(reports.map((r) => [r.code, r.span?.line, r.notes[0]?.span?.line])).toEqual([
      ["TX6003", lineOf(here, "@loop-read"), lineOf(here, "@loop-write")],
    ]);
  });
});
