import { describe, expect, it } from "vitest";
import { verify, type TirxError } from "@tirx-ts/core";
import { T, type PrimExpr } from "@tirx-ts/dsl";
import { runSim, simZeros, type SimTensor } from "@tirx-ts/runtime-sim";
import { lineOf } from "./helpers.js";

/**
 * Named barriers as barrier instances per CTA and id (exec/named-barriers.ts; PTX ISA,
 * bar/barrier): arrivals count per id whatever statement they come from.
 */
const here = import.meta.url;
const SEEDS = [0, 1, 2, 3, 5, 7, 9];

type Shared = ReturnType<typeof T.alloc_shared>;

/** A 128-thread kernel writing O (`n` int32) with a 128-element shared buffer S. */
const kernel = (name: string, n: number, body: (tid: PrimExpr, S: Shared, O: Shared) => void) =>
  T.function(name, { O: T.Tensor([n], "int32") }, ({ O }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
    const tid = T.cuda.thread_idx("x");
    const S = T.alloc_shared([128], "int32", { name: "S" });
    body(tid, S, O as unknown as Shared);
  });

function run(fn: ReturnType<typeof kernel>, n: number, seed: number) {
  const O = simZeros([n], "int32");
  const { reports } = runSim(verify(fn), [O], { hazards: "collect", simSeed: seed });
  return { reports, out: Array.from((O as SimTensor).toArray() as Int32Array) };
}

function expectAt(e: TirxError | undefined, code: string, at: string, other?: string): void {
  expect([e?.code, e?.span?.line]).toEqual([code, lineOf(here, at)]);
  if (other) expect(e?.notes[0]?.span?.line).toBe(lineOf(here, other));
}

describe("bar_sync matches by barrier id, not by statement", () => {
  // Producer warps 0-1 and consumer warps 2-3 meet at barrier 1 from two statements.
  const pc = kernel("named_pc", 64, (tid, S, O) => {
    T.if_(tid.lt(64), () => {
      S.set([tid], tid.mul(3));
      T.cuda.bar_sync(1, 128);
    });
    T.if_(tid.ge(64), () => {
      T.cuda.bar_sync(1, 128);
      O.set([tid.sub(64)], S.get([tid.sub(64)]));
    });
  });

  it("a producer/consumer pair over one id from two statements is clean on every seed", () => {
    for (const seed of SEEDS) {
      const { reports, out } = run(pc, 64, seed);
      expect(reports.map((r) => r.render())).toEqual([]);
      expect(out).toEqual(Array.from({ length: 64 }, (_, i) => i * 3));
    }
  });

  it("lanes of one warp at one instance from two statements: TX6009 (.aligned) on every seed", () => {
    // 128 threads, count 128: warp 0's lanes 0-15 take one arm, lanes 16-31 the other.
    const split = kernel("warp_split_bar", 128, (tid, S, O) => {
      S.set([tid], tid);
      T.if_(
        tid.lt(16),
        () => T.cuda.bar_sync(1, 128), // @split-a
        () => T.cuda.bar_sync(1, 128), // @split-b
      );
      O.set([tid], S.get([tid.add(1).floormod(128)]));
    });
    const lines = [lineOf(here, "@split-a"), lineOf(here, "@split-b")];
    for (const seed of SEEDS) {
      const { reports } = run(split, 128, seed);
      const r = reports.filter((x) => x.code === "TX6009");
      expect(r, `seed ${seed}`).toHaveLength(1);
      expect(r[0]!.message).toMatch(/from another statement than thread \(\d+, 0, 0\) of its warp/);
      expect(lines).toContain(r[0]!.span?.line);
      expect(lines).toContain(r[0]!.notes[0]?.span?.line);
      expect(r[0]!.span?.line).not.toBe(r[0]!.notes[0]?.span?.line);
    }
  });

  it("two groups sharing an id (count 64) from two statements: TX6012 on every seed", () => {
    const same = kernel("same_id", 128, (tid, S, O) => {
      S.set([tid], tid);
      T.if_(
        tid.lt(64),
        () => T.cuda.bar_sync(1, 64), // @same-a
        () => T.cuda.bar_sync(1, 64), // @same-b
      );
      O.set([tid], S.get([tid.floordiv(64).mul(64).add(tid.add(32).floormod(64))]));
    });
    for (const seed of SEEDS) {
      const { reports } = run(same, 128, seed);
      const r = reports.find((x) => x.code === "TX6012");
      expect(r?.message).toMatch(/with nothing ordering it after .* previous instance/);
      const lines = [lineOf(here, "@same-a"), lineOf(here, "@same-b")];
      expect(lines).toContain(r?.span?.line);
      expect(lines).toContain(r?.notes[0]?.span?.line);
    }
  });

  it("a partial bar_sync(0, 64) beside cta_sync: TX6012 on every seed", () => {
    const id0 = kernel("id0_partial", 128, (tid, S, O) => {
      S.set([tid], tid);
      T.if_(tid.lt(64), () => T.cuda.bar_sync(0, 64)); // @id0-partial
      T.cuda.cta_sync(); // @id0-cta
      O.set([tid], S.get([tid.add(1).floormod(128)]));
    });
    for (const seed of SEEDS) {
      const { reports } = run(id0, 128, seed);
      const r = reports.find((x) => x.code === "TX6012");
      const lines = [lineOf(here, "@id0-partial"), lineOf(here, "@id0-cta")];
      expect(r, `seed ${seed}`).toBeDefined();
      expect(lines).toContain(r?.span?.line);
      expect(lines).toContain(r?.notes[0]?.span?.line);
      expect(r?.message).toMatch(/count|previous instance/);
    }
  });

  it("each half with its own id, and a loop reusing one id, are clean", () => {
    const groups = kernel("ok_groups", 128, (tid, S, O) => {
      for (const k of T.range(3)) {
        S.set([tid], tid.add(k));
        T.if_(
          tid.lt(64),
          () => T.cuda.bar_sync(1, 64),
          () => T.cuda.bar_sync(2, 64),
        );
        O.set([tid], S.get([tid.floordiv(64).mul(64).add(tid.add(32).floormod(64))]));
        T.if_(
          tid.lt(64),
          () => T.cuda.bar_sync(1, 64),
          () => T.cuda.bar_sync(2, 64),
        );
      }
    });
    for (const seed of SEEDS) {
      const { reports, out } = run(groups, 128, seed);
      expect(reports.map((r) => r.render())).toEqual([]);
      expect(out).toEqual(
        Array.from({ length: 128 }, (_, t) => Math.floor(t / 64) * 64 + ((t + 32) % 64) + 2),
      );
    }
  });

  it("too few threads for the count: TX6012 at the barrier, it never releases", () => {
    const few = kernel("few", 128, (tid, S, O) => {
      S.set([tid], tid);
      T.if_(tid.lt(64), () => T.cuda.bar_sync(1, 96)); // @few
      O.set([tid], S.get([tid]));
    });
    const { reports } = run(few, 128, 0);
    expectAt(reports[0], "TX6012", "@few");
    expect(reports[0]?.message).toMatch(/reached by 64 threads, but its count is 96; it never/);
  });
});

describe("bar_arrive", () => {
  const pc = (arrive: boolean) =>
    kernel("arrive_pc", 64, (tid, S, O) => {
      T.if_(tid.lt(64), () => {
        S.set([tid], tid.add(5)); // @arr-write
        if (arrive) T.cuda.bar_arrive(1, 128);
      });
      T.if_(tid.ge(64), () => {
        T.cuda.bar_sync(1, arrive ? 128 : 64);
        O.set([tid.sub(64)], S.get([tid.sub(64)])); // @arr-read
      });
    });

  it("producers write then arrive, consumers sync then read: clean, right values", () => {
    for (const seed of SEEDS) {
      const { reports, out } = run(pc(true), 64, seed);
      expect(reports.map((r) => r.render())).toEqual([]);
      expect(out).toEqual(Array.from({ length: 64 }, (_, i) => i + 5));
    }
  });

  it("without the arrive the consumers' read races with the producers' write", () => {
    for (const seed of SEEDS) {
      const { reports } = run(pc(false), 64, seed);
      const r = reports.find((x) => x.code === "TX6003" || x.code === "TX6013");
      expect(r, `seed ${seed}`).toBeDefined();
      const lines = [r?.span?.line, r?.notes[0]?.span?.line].sort();
      expect(lines).toEqual([lineOf(here, "@arr-write"), lineOf(here, "@arr-read")].sort());
    }
  });

  it("a producer loop with full/empty barriers is clean on every seed", () => {
    const ring = kernel("ring", 64, (tid, S, O) => {
      T.if_(tid.lt(64), () => {
        for (const k of T.range(4)) {
          T.if_(k.gt(0), () => T.cuda.bar_sync(2, 128)); // wait until consumed
          S.set([tid], tid.add(k.mul(100)));
          T.cuda.bar_arrive(1, 128); // full
        }
      });
      T.if_(tid.ge(64), () => {
        for (const k of T.range(4)) {
          T.cuda.bar_sync(1, 128);
          const v = S.get([tid.sub(64)]);
          O.set([tid.sub(64)], O.get([tid.sub(64)]).add(v));
          T.if_(k.lt(3), () => T.cuda.bar_arrive(2, 128)); // empty
        }
      });
    });
    for (const seed of SEEDS) {
      const { reports, out } = run(ring, 64, seed);
      expect(reports.map((r) => r.render())).toEqual([]);
      expect(out).toEqual(Array.from({ length: 64 }, (_, i) => 4 * i + 600));
    }
  });

  it("an arrive that nobody waits for leaves the instance incomplete at the CTA's end", () => {
    const lone = kernel("lone", 128, (tid, S, O) => {
      S.set([tid], tid);
      T.if_(tid.lt(32), () => T.cuda.bar_arrive(3, 64)); // @lone
      O.set([tid], S.get([tid]));
    });
    const { reports } = run(lone, 128, 0);
    expectAt(reports[0], "TX6012", "@lone");
  });
});
