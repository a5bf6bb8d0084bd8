import { describe, expect, it } from "vitest";
import { verify, type KernelArg, type PrimFunc, type TirxError } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { runSim, simCounters, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { HELD_LOOP_ITERATIONS } from "../src/exec/machine.js";
import { lineOf, simCollect, simThrows } from "./helpers.js";

/**
 * Happens-before race reports (exec/clocks.ts, exec/shared-shadow.ts): one test per kind, each asserting the code, the
 * offending line and the note at the other access's line; the four bugs of issue 9.
 */
const here = import.meta.url;
const cp = T.ptx["cp.async.cg.shared.global"]!;
const load = T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"]!;
const store = T.ptx["cp.async.bulk.global.shared::cta.bulk_group"]!;

function expectBoth(e: TirxError, code: string, at: string, other: string): void {
  expect([e.code, e.span?.line]).toEqual([code, lineOf(here, at)]);
  expect(e.notes[0]?.span?.line).toBe(lineOf(here, other));
}

const f32 = (n: number) =>
  simTensor(
    Float32Array.from({ length: n }, (_, i) => i + 0.5),
    { shape: [n], dtype: "float32" },
  );

describe("issue 9's four bugs, each reported with both lines", () => {
  const twoWriters = (second: "cp" | "store") =>
    T.function(
      "two_writers",
      { A: T.Tensor([2, 4], "float32"), B: T.Tensor([4], "float32") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([4], "float32");
        T.if_(tid.eq(0), () => {
          T.cuda.tile.apply(cp, s, A.sub(0, ":"), { chunk_bytes: 16 }); // @a-first
          T.ptx.cp.async_.wait_all();
        });
        T.if_(tid.eq(1), () => {
          if (second === "cp") {
            T.cuda.tile.apply(cp, s, A.sub(1, ":"), { chunk_bytes: 16 }); // @a-second-cp
            T.ptx.cp.async_.wait_all();
          } else {
            for (const j of T.range(4)) s.set([j], 0); // @a-second-store
          }
        });
        T.cuda.cta_sync();
        T.if_(tid.lt(4), () => B.set([tid], s.get([tid])));
      },
    );

  it("(a) two threads write the same 16 shared bytes in one barrier phase: TX6014", () => {
    const args = () => [
      simTensor(
        Float32Array.from({ length: 8 }, (_, i) => i),
        { shape: [2, 4], dtype: "float32" },
      ),
      simZeros([4], "float32"),
    ];
    expectBoth(simThrows(twoWriters("cp"), args()), "TX6014", "// @a-second-cp", "// @a-first");
    const e = simThrows(twoWriters("store"), args());
    expectBoth(e, "TX6014", "// @a-second-store", "// @a-first");
    expect(e.message).toMatch(/thread \(1, 0, 0\) .* which thread \(0, 0, 0\) wrote/);
  });

  const doubleBuffer = (trailingSync: boolean) =>
    T.function(
      "double_buffer",
      { A: T.Tensor([4, 32, 4], "float32"), B: T.Tensor([4, 32], "float32") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([2, 32, 4], "float32");
        T.cuda.tile.apply(cp, s.sub(0, tid, ":"), A.sub(0, tid, ":"), { chunk_bytes: 16 });
        T.ptx.cp.async_.commit_group();
        for (const k of T.range(4)) {
          T.if_(k.lt(3), () => {
            const next = k.add(1);
            // @b-prefetch
            T.cuda.tile.apply(cp, s.sub(next.floormod(2), tid, ":"), A.sub(next, tid, ":"), {
              chunk_bytes: 16,
            });
          });
          T.ptx.cp.async_.commit_group();
          T.ptx.cp.async_.wait_group(1);
          T.cuda.cta_sync();
          B.set([k, tid], s.get([k.floormod(2), T.sub(31, tid), 0])); // @b-consume
          if (trailingSync) T.cuda.cta_sync();
        }
        T.ptx.cp.async_.wait_all();
      },
    );

  it("(b) a double-buffered loop without the trailing cta_sync: write-after-read, TX6013", () => {
    const a = () =>
      simTensor(
        Float32Array.from({ length: 512 }, (_, i) => i),
        { shape: [4, 32, 4], dtype: "float32" },
      );
    const b = simZeros([4, 32], "float32");
    expect(simCollect(doubleBuffer(true), [a(), b])).toEqual([]);
    expect((b.toArray() as Float32Array)[33]).toBe(128 + 30 * 4);
    const e = simThrows(doubleBuffer(false), [a(), simZeros([4, 32], "float32")]);
    expectBoth(e, "TX6013", "// @b-prefetch", "// @b-consume");
    expect(e.message).toMatch(/issues a cp.async to shared "s" bytes .* which thread .* read/);
  });

  const unfencedStore = (fence: boolean) =>
    T.function("unfenced", { B: T.Tensor([32], "int32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([32], "int32");
      s.set([tid], tid); // @c-write
      if (fence) T.ptx.fence.proxy_async();
      T.cuda.cta_sync();
      T.if_(tid.eq(0), () => {
        T.cuda.tile.apply(store, B, s, { chunk_bytes: 128 }); // @c-bulk
        T.ptx.cp.async_.bulk.commit_group();
        T.ptx.cp.async_.bulk.wait_group(0);
      });
    });

  it("(c) generic shared stores then a bulk store with no fence.proxy.async: TX6015", () => {
    const b = simZeros([32], "int32");
    expect(simCollect(unfencedStore(true), [b])).toEqual([]);
    expect(Array.from(b.toArray() as Int32Array)).toEqual(Array.from({ length: 32 }, (_, i) => i));
    const e = simThrows(unfencedStore(false), [simZeros([32], "int32")]);
    expectBoth(e, "TX6015", "// @c-bulk", "// @c-write");
  });

  const unfencedInit = (fence: boolean) =>
    T.function(
      "unfenced_init",
      { A: T.Tensor([32], "float32"), B: T.Tensor([32], "float32") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([32], "float32");
        const bar = T.alloc_shared([1], "uint64");
        T.if_(tid.eq(0), () => {
          T.ptx.mbarrier.init(bar.sub(0), 1); // @d-init
          if (fence) T.ptx.fence.mbarrier_init();
        });
        T.cuda.cta_sync();
        T.if_(tid.eq(0), () => {
          T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 128);
          T.cuda.tile.apply(load, s, A, { chunk_bytes: 128, mbar: bar.sub(0) }); // @d-load
        });
        T.ptx.mbarrier.try_wait(bar.sub(0), 0);
        B.set([tid], s.get([tid]));
      },
    );

  it("(d) bulk loads on an mbarrier whose init had no fence.mbarrier_init: TX6016", () => {
    const b = simZeros([32], "float32");
    expect(simCollect(unfencedInit(true), [f32(32), b])).toEqual([]);
    expect((b.toArray() as Float32Array)[7]).toBe(7.5);
    const e = simThrows(unfencedInit(false), [f32(32), simZeros([32], "float32")]);
    expectBoth(e, "TX6016", "// @d-load", "// @d-init");
  });
});

describe("one test per kind of race, with both lines", () => {
  it("read-after-write in shared memory (TX6003)", () => {
    const k = T.function("raw", { B: T.Tensor([32], "int32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([32], "int32");
      s.set([tid], tid); // @raw-w
      B.set([tid], s.get([T.sub(31, tid)])); // @raw-r
    });
    expectBoth(simThrows(k, [simZeros([32], "int32")]), "TX6003", "// @raw-r", "// @raw-w");
  });

  it("write-after-read in shared memory (TX6013), whichever thread runs first", () => {
    for (const reader of [0, 5]) {
      const k = T.function("war", { B: T.Tensor([32], "int32") }, ({ B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([32], "int32");
        s.set([tid], tid);
        T.cuda.cta_sync();
        T.if_(tid.eq(reader), () => B.set([0], s.get([3]))); // @war-r
        T.if_(tid.eq(3), () => s.set([3], 7)); // @war-w
      });
      expectBoth(simThrows(k, [simZeros([32], "int32")]), "TX6013", "// @war-w", "// @war-r");
    }
  });

  it("a read of bytes another warp writes later in the phase: TX6013 with both lines on every schedule, not TX6004", () => {
    // Warp 1 reads what warp 0 writes in a later statement of the same phase: whichever runs
    // first, the report names the read and the write.
    const k = T.function("read_first", { B: T.Tensor([64], "int32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([32], "int32");
      T.if_(tid.ge(32), () => B.set([tid], s.get([tid.sub(32)]))); // @rf-r
      T.if_(tid.lt(32), () => s.set([tid], tid)); // @rf-w
    });
    for (const simSeed of [0, 1, 2, 3]) {
      const e = simThrows(k, [simZeros([64], "int32")], { simSeed });
      const lines = [e.span?.line, e.notes[0]?.span?.line];
      expect(["TX6003", "TX6013"], `seed ${simSeed}`).toContain(e.code);
      expect(lines.sort(), `seed ${simSeed}`).toEqual(
        [lineOf(here, "// @rf-r"), lineOf(here, "// @rf-w")].sort(),
      );
    }
    // Lockstep runs the read first: the write reports it.
    expectBoth(simThrows(k, [simZeros([64], "int32")]), "TX6013", "// @rf-w", "// @rf-r");
  });

  it("a read of bytes nothing writes is still TX6004 at the read, at the CTA's end", () => {
    const k = T.function("never_written", { B: T.Tensor([64], "int32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([64], "int32");
      T.if_(tid.ge(32), () => B.set([tid], s.get([tid]))); // @nw-r
      T.if_(tid.lt(32), () => s.set([tid], tid));
    });
    const e = simThrows(k, [simZeros([64], "int32")]);
    expect([e.code, e.span?.line]).toEqual(["TX6004", lineOf(here, "// @nw-r")]);
  });

  it("a while loop steered by never-written bytes does not run on while the TX6004 is held", () => {
    // The held read's value is 0xff bytes (-1): the countdown ran 2^24 iterations to the spin
    // limit (seconds; minutes with a heavier body) before anything threw, where an unheld
    // TX6004 stopped at the read. The held report now stops it after HELD_LOOP_ITERATIONS.
    const k = T.function("spin_unwritten", { B: T.Tensor([32], "int32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([32], "int32");
      const i = T.alloc_local([1], "int32");
      i.set([0], s.get([tid])); // @spin-r
      T.while_(
        () => i.get([0]).ne(0),
        () => i.set([0], i.get([0]).sub(1)),
      );
      B.set([tid], i.get([0]));
    });
    const before = simCounters.loopIterations;
    const e = simThrows(k, [simZeros([32], "int32")]);
    expect([e.code, e.span?.line]).toEqual(["TX6004", lineOf(here, "// @spin-r")]);
    expect(simCounters.loopIterations - before).toBeLessThanOrEqual(HELD_LOOP_ITERATIONS + 1);
  });

  it("write-after-write in shared memory (TX6014) and a cta_sync between them is clean", () => {
    const k = (sync: boolean) =>
      T.function("waw", { B: T.Tensor([32], "int32") }, ({ B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([32], "int32");
        s.set([tid], tid); // @waw-1
        if (sync) T.cuda.cta_sync();
        T.if_(tid.eq(9), () => s.set([4], 0)); // @waw-2
        T.cuda.cta_sync();
        B.set([tid], s.get([tid]));
      });
    expect(simCollect(k(true), [simZeros([32], "int32")])).toEqual([]);
    expectBoth(simThrows(k(false), [simZeros([32], "int32")]), "TX6014", "// @waw-2", "// @waw-1");
  });

  it("global write-after-write between threads of a CTA and between CTAs (TX6014)", () => {
    const k = (grid: number, other: number) =>
      T.function("gwaw", { B: T.Tensor([64], "int32") }, ({ B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        T.if_(tid.eq(0), () => B.set([0], 1)); // @gwaw-1
        T.if_(tid.eq(other), () => B.set([0], 2)); // @gwaw-2
      });
    const e = simThrows(k(1, 7), [simZeros([64], "int32")]);
    expectBoth(e, "TX6014", "// @gwaw-2", "// @gwaw-1");
    // Two CTAs: thread 0 of CTA 1 writes what thread 0 of CTA 0 wrote (no happens-before).
    const r = simCollect(k(2, 0), [simZeros([64], "int32")]);
    expect(r.map((x) => [x.code, x.span?.line, x.notes[0]?.span?.line])).toEqual([
      ["TX6014", lineOf(here, "// @gwaw-1"), lineOf(here, "// @gwaw-2")],
    ]);
    expect(r[0]!.message).toMatch(
      /CTA \(1, 0, 0\) writes .* thread \(0, 0, 0\) of CTA \(0, 0, 0\)/,
    );
  });

  it("a named barrier orders the threads that take part only", () => {
    const k = (reader: number) =>
      T.function("named", { B: T.Tensor([128], "int32") }, ({ B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([128], "int32");
        s.set([tid], tid); // @named-w
        T.if_(tid.lt(64), () => {
          T.cuda.bar_sync(1, 64);
          B.set([tid], s.get([T.sub(reader, tid)])); // @named-r
        });
      });
    // Threads 0..63 read what threads 0..63 wrote: ordered by bar.sync 1, 64.
    expect(simCollect(k(63), [simZeros([128], "int32")])).toEqual([]);
    // Threads 0..63 read what threads 64..127 wrote: they did not take part. Warps 2, 3 do not
    // wait at the barrier, so their write comes before or after the read depending on the
    // schedule: TX6003 at the read or TX6013 at the write, naming both lines.
    for (const seed of [0, 1, 2, 3]) {
      const r = runSim(verify(k(127)), [simZeros([128], "int32")], {
        hazards: "collect",
        simSeed: seed,
      }).reports.filter((x) => x.code === "TX6003" || x.code === "TX6013");
      expect(r.length, `seed ${seed}`).toBeGreaterThan(0);
      for (const x of r) {
        if (x.code === "TX6003") expectBoth(x, "TX6003", "// @named-r", "// @named-w");
        else expectBoth(x, "TX6013", "// @named-w", "// @named-r");
      }
    }
  });

  it("a warp collective orders the lanes that execute it, not other warps", () => {
    const k = (cross: boolean) =>
      T.function("warp_order", { B: T.Tensor([64], "int32") }, ({ B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([64], "int32");
        s.set([tid], tid); // @warp-w
        T.cuda.__syncwarp();
        const mirror = cross
          ? T.sub(63, tid)
          : tid
              .floordiv(32)
              .mul(32)
              .add(T.sub(31, tid.floormod(32)));
        B.set([tid], s.get([mirror])); // @warp-r
      });
    expect(simCollect(k(false), [simZeros([64], "int32")])).toEqual([]);
    const e = simThrows(k(true), [simZeros([64], "int32")]);
    expectBoth(e, "TX6003", "// @warp-r", "// @warp-w");
  });

  it("an mbarrier phase orders the arrivers' writes before the waiters' reads", () => {
    const k = (wait: boolean) =>
      T.function("mbar_order", { B: T.Tensor([64], "int32") }, ({ B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([32], "int32");
        const bar = T.alloc_shared([1], "uint64");
        T.if_(tid.eq(0), () => T.ptx.mbarrier.init(bar.sub(0), 32));
        T.cuda.cta_sync();
        T.if_(
          tid.lt(32),
          () => {
            s.set([tid], tid); // @mb-w
            T.ptx.mbarrier.arrive(bar.sub(0));
          },
          () => {
            if (wait) T.ptx.mbarrier.try_wait(bar.sub(0), 0);
            B.set([tid], s.get([tid.floormod(32)])); // @mb-r
          },
        );
      });
    expect(simCollect(k(true), [simZeros([64], "int32")])).toEqual([]);
    const e = simThrows(k(false), [simZeros([64], "int32")]);
    expectBoth(e, "TX6003", "// @mb-r", "// @mb-w");
  });
});

describe("leftovers at CTA exit (TX6017)", () => {
  it("cp.async never waited for", () => {
    const k = T.function("left_cp", { A: T.Tensor([4], "float32") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      const s = T.alloc_shared([4], "float32");
      T.cuda.tile.apply(cp, s, A, { chunk_bytes: 16 }); // @left-cp
      T.ptx.cp.async_.commit_group();
    });
    const e = simThrows(k, [f32(4)]);
    expect([e.code, e.span?.line]).toEqual(["TX6017", lineOf(here, "// @left-cp")]);
  });

  it("a shared → global bulk copy never waited for", () => {
    const k = T.function("left_bulk", { B: T.Tensor([32], "float32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      const s = T.alloc_shared([32], "float32");
      for (const i of T.range(32)) s.set([i], 1);
      T.ptx.fence.proxy_async();
      T.cuda.tile.apply(store, B, s, { chunk_bytes: 128 }); // @left-bulk
      T.ptx.cp.async_.bulk.commit_group();
    });
    const e = simThrows(k, [simZeros([32], "float32")]);
    expect([e.code, e.span?.line]).toEqual(["TX6017", lineOf(here, "// @left-bulk")]);
  });

  it("an mbarrier whose expected transaction bytes never arrive", () => {
    const k = T.function("left_tx", { B: T.Tensor([1], "float32") }, () => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      const bar = T.alloc_shared([1], "uint64");
      T.ptx.mbarrier.init(bar.sub(0), 1); // @left-init
      T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 64);
    });
    const e = simThrows(k, [simZeros([1], "float32")]);
    expect([e.code, e.span?.line]).toEqual(["TX6017", lineOf(here, "// @left-init")]);
    expect(e.message).toMatch(/64 transaction bytes/);
  });
});

describe("atomics race with unordered plain accesses, whatever atomics come between", () => {
  // PTX ISA, Memory Consistency Model: atom/red are morally strong, ld/st are not; so atomics
  // never race with each other but do with every unordered plain access of their bytes.
  const seeds = [0, 1, 2, 3];
  const runs = (k: PrimFunc, args: () => KernelArg[]) =>
    seeds.map((simSeed) => runSim(verify(k), args(), { hazards: "collect", simSeed }).reports);
  /**
   * Under every schedule the race between the lines of `x` and `y` is reported, from whichever
   * side ran second; with seed 0 (lockstep) it is `code` at `x` with the note at `y`.
   */
  function expectRace(k: PrimFunc, args: () => KernelArg[], code: string, x: string, y: string) {
    const lines = [lineOf(here, x), lineOf(here, y)].sort();
    runs(k, args).forEach((r, seed) => {
      const pair = r.filter(
        (e) =>
          ["TX6003", "TX6013", "TX6014"].includes(e.code) &&
          [e.span?.line, e.notes[0]?.span?.line].sort().join() === lines.join(),
      );
      expect(pair.length, `seed ${seed}`).toBeGreaterThan(0);
    });
    const e = simThrows(k, args(), { simSeed: 0 });
    expectBoth(e, code, x, y);
    return e;
  }
  const clean = (k: PrimFunc, args: () => KernelArg[]) =>
    runs(k, args).forEach((r, seed) => expect(r, `seed ${seed}`).toEqual([]));

  const initThenAdd = (space: "shared" | "global", sync: boolean) =>
    T.function("init_then_add", { B: T.Tensor([2], "int32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([1], "int32");
      const c = space === "shared" ? s : B;
      T.if_(tid.eq(0), () => c.set([0], 0)); // @at-init
      if (sync) T.cuda.cta_sync();
      T.cuda.red_add(c.ptr([0]), 1); // @at-add
      T.cuda.cta_sync();
      T.if_(tid.eq(0), () => B.set([1], c.get([0])));
    });

  it("a plain write, then the writer's own atomic, then other threads' atomics: TX6014", () => {
    const args = () => [simZeros([2], "int32")];
    for (const space of ["shared", "global"] as const) {
      clean(initThenAdd(space, true), args);
      const e = expectRace(initThenAdd(space, false), args, "TX6014", "// @at-add", "// @at-init");
      expect(e.message).toMatch(
        /thread \(1, 0, 0\) .* atomically updates .* thread \(0, 0, 0\) wrote/,
      );
    }
  });

  it("a plain read, then the reader's own atomic, then another thread's atomic: TX6013", () => {
    const k = (sync: boolean) =>
      T.function("read_then_add", { B: T.Tensor([1], "int32") }, ({ B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([1], "int32");
        T.if_(tid.eq(0), () => s.set([0], 0));
        T.cuda.cta_sync();
        T.if_(tid.eq(0), () => B.set([0], s.get([0]))); // @at-read
        if (sync) T.cuda.cta_sync();
        T.cuda.red_add(s.ptr([0]), 1); // @at-add2
      });
    const args = () => [simZeros([1], "int32")];
    clean(k(true), args);
    expectRace(k(false), args, "TX6013", "// @at-add2", "// @at-read");
  });

  it("a plain read ordered after one warp's atomics but not another's: TX6003", () => {
    // Warps 0 and 1 add; warps 1 and 2 meet at named barrier 1; warp 2 then reads the counter,
    // ordered after warp 1's atomics but not warp 0's.
    const k = (all: boolean) =>
      T.function("partial_order", { B: T.Tensor([1], "int32") }, ({ B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 96 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([1], "int32");
        T.if_(tid.eq(0), () => s.set([0], 0));
        T.cuda.cta_sync();
        T.if_(tid.lt(64), () => T.cuda.red_add(s.ptr([0]), 1)); // @at-warp0
        if (all) T.cuda.cta_sync();
        else T.if_(tid.ge(32), () => T.cuda.bar_sync(1, 64));
        T.if_(tid.eq(64), () => B.set([0], s.get([0]))); // @at-partial
      });
    const args = () => [simZeros([1], "int32")];
    clean(k(true), args);
    const e = expectRace(k(false), args, "TX6003", "// @at-partial", "// @at-warp0");
    expect(e.message).toMatch(/thread \(64, 0, 0\) .* reads .* which thread \(\d, 0, 0\) wrote/);
  });

  it("a global counter other CTAs add to, read plainly after this CTA's own atomics: TX6003", () => {
    const k = T.function(
      "grid_counter",
      { C: T.Tensor([1], "int32"), B: T.Tensor([2], "int32") },
      ({ C, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 2, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        T.cuda.red_add(C.ptr([0]), 1); // @at-grid-add
        T.cuda.cta_sync();
        T.if_(tid.eq(0), () => B.set([T.cuda.block_idx("x")], C.get([0]))); // @at-grid-read
      },
    );
    // CTA (1, 0, 0)'s atomics come after CTA (0, 0, 0)'s read (TX6013, found before too); its
    // own read comes after its own atomics, ordered by cta_sync, and CTA (0, 0, 0)'s, unordered.
    for (const r of runs(k, () => [simZeros([1], "int32"), simZeros([2], "int32")])) {
      const e = r.find((x) => x.code === "TX6003")!;
      expectBoth(e, "TX6003", "// @at-grid-read", "// @at-grid-add");
      expect(e.message).toMatch(/of CTA \(1, 0, 0\) reads global "C" .* of CTA \(0, 0, 0\) wrote/);
    }
  });
});

describe("only __syncwarp orders memory among the lanes of a warp", () => {
  // PTX ISA, bar.warp.sync: "also guarantee memory ordering among threads participating in
  // barrier"; shfl.sync, vote.sync and redux.sync only wait for the lanes of their mask, and
  // activemask does not wait at all: none of them orders a lane's store before another's load.
  const viaCollective = (sync: "syncwarp" | "shfl" | "ballot" | "activemask") =>
    T.function("via_collective", { B: T.Tensor([32], "uint32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([32], "uint32");
      s.set([tid], tid.cast("uint32")); // @coll-w
      let x = T.uint32(0);
      if (sync === "syncwarp") T.cuda.__syncwarp();
      else if (sync === "shfl") x = T.cuda.__shfl_sync(0xffffffff, tid, 0).cast("uint32");
      else if (sync === "ballot") x = T.cuda.__ballot_sync(0xffffffff, tid.lt(16));
      else x = T.cuda.__activemask();
      B.set([tid], s.get([T.sub(31, tid)]).add(x)); // @coll-r
    });

  it("a lane reads another lane's store after shfl.sync, vote.sync or activemask: TX6003", () => {
    expect(simCollect(viaCollective("syncwarp"), [simZeros([32], "uint32")])).toEqual([]);
    for (const sync of ["shfl", "ballot", "activemask"] as const) {
      const e = simThrows(viaCollective(sync), [simZeros([32], "uint32")]);
      expectBoth(e, "TX6003", "// @coll-r", "// @coll-w");
      expect(e.message, sync).toMatch(/reads shared .* which thread \(\d+, 0, 0\) wrote/);
    }
  });
});

describe("a fence.proxy.async anywhere on the path from a generic write to the async-proxy read", () => {
  // PTX ISA, Memory Consistency Model (proxy-preserved base causality order): the proxy fence
  // must lie along the causality path from the write to the async-proxy access, not in the
  // writer's thread: "write; cta_sync; the issuing thread fences; bulk store" is correct.
  const fenceAfterSync = (who: "issuer-after" | "issuer-before" | "third") =>
    T.function("fence_after_sync", { B: T.Tensor([32], "int32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([32], "int32");
      s.set([tid], tid); // @pf-write
      if (who === "issuer-before") T.if_(tid.eq(0), () => T.ptx.fence.proxy_async());
      T.cuda.cta_sync();
      if (who === "third") {
        T.if_(tid.eq(5), () => T.ptx.fence.proxy_async());
        T.cuda.cta_sync();
      }
      T.if_(tid.eq(0), () => {
        if (who === "issuer-after") T.ptx.fence.proxy_async();
        T.cuda.tile.apply(store, B, s, { chunk_bytes: 128 }); // @pf-bulk
        T.ptx.cp.async_.bulk.commit_group();
        T.ptx.cp.async_.bulk.wait_group(0);
      });
    });

  it("the issuing thread's fence after the cta_sync, or another thread's ordered before it, is enough", () => {
    for (const who of ["issuer-after", "third"] as const) {
      const b = simZeros([32], "int32");
      expect(simCollect(fenceAfterSync(who), [b]), who).toEqual([]);
      expect(Array.from(b.toArray() as Int32Array)).toEqual(
        Array.from({ length: 32 }, (_, i) => i),
      );
    }
  });

  it("a fence before the cta_sync orders only its own thread's writes: TX6015", () => {
    const e = simThrows(fenceAfterSync("issuer-before"), [simZeros([32], "int32")]);
    expectBoth(e, "TX6015", "// @pf-bulk", "// @pf-write");
    expect(e.message).toMatch(/which thread \(1, 0, 0\) wrote through the generic proxy/);
  });
});

describe("generic-proxy writes of global memory read by the async proxy in the same launch", () => {
  // PTX ISA, fence.proxy.async: crossing proxies needs a proxy fence of the state space
  // (fence.proxy.async.global for global memory); T.ptx.fence.proxy_async is the shared::cta one.
  /** `fence`: a proxy fence of that space by each writer before the cta_sync, or ("issuer") by the issuing thread after it. */
  const produceThenLoad = (
    by: "generic" | "bulk",
    fence?: "shared::cta" | "global" | "all" | "issuer",
  ) =>
    T.function(
      "produce_then_load",
      { A: T.Tensor([32], "float32"), G: T.Tensor([32], "float32"), B: T.Tensor([32], "float32") },
      ({ A, G, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([32], "float32");
        const t = T.alloc_shared([32], "float32");
        const bar = T.alloc_shared([1], "uint64");
        T.if_(tid.eq(0), () => {
          T.ptx.mbarrier.init(bar.sub(0), 1);
          T.ptx.fence.mbarrier_init();
        });
        if (by === "generic") {
          G.set([tid], A.get([tid]).mul(2)); // @gp-write
          if (fence && fence !== "issuer") T.ptx.fence.proxy_async(fence);
        } else {
          t.set([tid], A.get([tid]).mul(2));
          T.ptx.fence.proxy_async();
        }
        T.cuda.cta_sync();
        T.if_(tid.eq(0), () => {
          if (by === "bulk") {
            T.cuda.tile.apply(store, G, t, { chunk_bytes: 128 });
            T.ptx.cp.async_.bulk.commit_group();
            T.ptx.cp.async_.bulk.wait_group(0);
          }
          if (fence === "issuer") T.ptx.fence.proxy_async("global");
          T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 128);
          T.cuda.tile.apply(load, s, G, { chunk_bytes: 128, mbar: bar.sub(0) }); // @gp-load
        });
        T.ptx.mbarrier.try_wait(bar.sub(0), 0);
        B.set([tid], s.get([tid]));
      },
    );
  const args = () => [f32(32), simZeros([32], "float32"), simZeros([32], "float32")];

  it("a bulk load of global bytes this CTA stored with st.global: TX6015; after a bulk store: none", () => {
    const b = simZeros([32], "float32");
    expect(simCollect(produceThenLoad("bulk"), [f32(32), simZeros([32], "float32"), b])).toEqual(
      [],
    );
    expect((b.toArray() as Float32Array)[5]).toBe(11);
    const e = simThrows(produceThenLoad("generic"), args());
    expectBoth(e, "TX6015", "// @gp-load", "// @gp-write");
    expect(e.message).toMatch(/reading global "G" byte 0, which thread \(0, 0, 0\) wrote through/);
  });

  it("a fence.proxy.async.global (or fence.proxy.async) on the way orders the stores; the shared::cta fence does not", () => {
    for (const fence of ["global", "all", "issuer"] as const) {
      const b = simZeros([32], "float32");
      expect(
        simCollect(produceThenLoad("generic", fence), [f32(32), simZeros([32], "float32"), b]),
        fence,
      ).toEqual([]);
      expect((b.toArray() as Float32Array)[5], fence).toBe(11);
    }
    const e = simThrows(produceThenLoad("generic", "shared::cta"), args());
    expectBoth(e, "TX6015", "// @gp-load", "// @gp-write");
  });

  it("T.ptx.fence.proxy_async refuses a state space it does not know (TX2017)", () => {
    const bad = () =>
      T.function("bad_fence", { A: T.Tensor([32], "float32") }, () => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        T.ptx.fence.proxy_async("shared" as never);
      });
    expect(bad).toThrow(expect.objectContaining({ code: "TX2017" }));
  });
});
