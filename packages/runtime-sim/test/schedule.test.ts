import { afterEach, describe, expect, it } from "vitest";
import { verify, type PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { runSim, simZeros } from "@tirx-ts/runtime-sim";

// Varied schedules (compile/schedule.ts): seed 0 is lockstep; other seeds run each stretch of
// statements between barriers warp by warp, in a seeded order.

/** Lane 0 of each of 8 warps takes a ticket with a global atomic add: O[warp] = ticket. */
const tickets: PrimFunc = T.function(
  "tickets",
  { C: T.Tensor([1], "int32"), O: T.Tensor([8], "int32") },
  ({ C, O }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 256 }) });
    const tid = T.cuda.thread_idx("x");
    T.if_(tid.floormod(32).eq(0), () => {
      O.set([tid.floordiv(32)], T.cuda.atomic_add(C.ptr([0]), 1));
    });
  },
);

/** Every thread writes its shared slot, cta_sync, reads the slot of the thread 32 ahead. */
const neighbours: PrimFunc = T.function("neighbours", { O: T.Tensor([256], "int32") }, ({ O }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 256 }) });
  const tid = T.cuda.thread_idx("x");
  const s = T.alloc_shared([256], "int32");
  s.set([tid], tid.mul(3));
  T.cuda.cta_sync();
  O.set([tid], s.get([tid.add(32).floormod(256)]));
});

/** Thread 0 reads shared that thread 32 writes, with no barrier: TX6003 or TX6004 by order. */
const racy: PrimFunc = T.function("racy", { O: T.Tensor([1], "int32") }, ({ O }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
  const tid = T.cuda.thread_idx("x");
  const s = T.alloc_shared([1], "int32");
  T.if_(tid.eq(32), () => s.set([0], 5));
  T.if_(tid.eq(0), () => O.set([0], s.get([0])));
});

const order = (seed?: number): number[] => {
  const o = simZeros([8], "int32");
  runSim(verify(tickets), [simZeros([1], "int32"), o], seed === undefined ? {} : { simSeed: seed });
  return Array.from(o.toArray() as Int32Array);
};

afterEach(() => {
  delete process.env["TIRX_SIM_SEED"];
});

describe("schedules", () => {
  it("seed 0 (the default) is lockstep: warps take tickets in ascending order", () => {
    expect(order()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(order(0)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it("other seeds run warps in varied orders, each a permutation, the same for the same seed", () => {
    const seen = new Set<string>();
    for (let seed = 1; seed <= 8; seed++) {
      const o = order(seed);
      expect([...o].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(order(seed)).toEqual(o);
      seen.add(o.join(","));
    }
    expect(seen.size).toBeGreaterThan(4);
    expect(seen.has("0,1,2,3,4,5,6,7")).toBe(false);
  });

  it("TIRX_SIM_SEED replays a seed; the simSeed option takes precedence", () => {
    process.env["TIRX_SIM_SEED"] = "5";
    expect(order()).toEqual(order(5));
    expect(order(0)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it("TIRX_SIM_SEED that is not a seed from 0 to 2^32 - 1 is TX5012 at the launch, with the fix", () => {
    for (const bad of ["abc", "-1", "1.5", " ", "0x10", "1e3", "4294967296"]) {
      process.env["TIRX_SIM_SEED"] = bad;
      let e: unknown;
      try {
        order();
      } catch (x) {
        e = x;
      }
      expect((e as { text?: string }).text, bad).toBe(
        `TIRX_SIM_SEED is ${JSON.stringify(bad)}; it takes a whole number from 0 to 4294967295 (0 runs the threads of a CTA in lockstep)`,
      );
      expect(e, bad).toMatchObject({
        code: "TX5012",
        span: { file: expect.stringMatching(/schedule\.test\.ts$/) },
        notes: [
          { message: expect.stringContaining("set TIRX_SIM_SEED to a seed from 0 to 4294967295") },
        ],
      });
    }
    // The largest seed runs, as does a seed with blanks around it; empty is unset (vitest.config
    // sets it so); the option still wins.
    process.env["TIRX_SIM_SEED"] = "4294967295";
    expect(order()).toEqual(order(4294967295));
    process.env["TIRX_SIM_SEED"] = " 5 ";
    expect(order()).toEqual(order(5));
    process.env["TIRX_SIM_SEED"] = "";
    expect(order()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    process.env["TIRX_SIM_SEED"] = "abc";
    expect(order(0)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it("warps do not run past a cta_sync: a correct kernel gives the same result on every seed", () => {
    const want = Array.from({ length: 256 }, (_, t) => ((t + 32) % 256) * 3);
    for (const seed of [0, 1, 2, 3, 99]) {
      const o = simZeros([256], "int32");
      const { reports } = runSim(verify(neighbours), [o], { simSeed: seed, hazards: "collect" });
      expect(reports).toEqual([]);
      expect(Array.from(o.toArray() as Int32Array)).toEqual(want);
    }
  });

  it("a hazard report names the seed of its schedule in its last note", () => {
    const seeds = [0, 1, 2, 3, 4, 5, 6, 7];
    const codes = new Set<string>();
    for (const seed of seeds) {
      const { reports } = runSim(verify(racy), [simZeros([1], "int32")], {
        simSeed: seed,
        hazards: "collect",
      });
      expect(reports.length).toBeGreaterThan(0);
      for (const r of reports) {
        expect(r.notes.at(-1)!.message).toContain(`TIRX_SIM_SEED=${seed}`);
        codes.add(r.code);
      }
      // A never-written read (TX6004) is still recorded, so the later write reports it.
      if (reports.some((r) => r.code === "TX6004")) {
        expect(reports.map((r) => r.code).sort()).toEqual(["TX6004", "TX6013"]);
      } else expect(reports.map((r) => r.code)).toEqual(["TX6003"]);
    }
    // Lockstep runs warp 0 first (never-written read, TX6004, then thread 32's write after it,
    // TX6013); some seeds run warp 1 first, so the read sees thread 32's unsynchronised write
    // (TX6003).
    expect(codes).toEqual(new Set(["TX6003", "TX6004", "TX6013"]));
  });
});
