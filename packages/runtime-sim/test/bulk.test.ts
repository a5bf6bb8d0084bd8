import { describe, expect, it } from "vitest";
import { verify, type PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { runSim, simCounters, simTensor, simZeros, type SimTensor } from "@tirx-ts/runtime-sim";
import { bulk_copy } from "../../../examples/bulk_copy.js";
import { EXAMPLE, makeBulkPipeline, type PipelineConfig } from "../../../examples/bulk_pipeline.js";
import { lineOf, simCollect, simThrows } from "./helpers.js";

// Buggy kernels mark the offending line with `// @<tag>` and the other line with `// @<tag>-other`.
const here = import.meta.url;
const load = T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"]!;
const store = T.ptx["cp.async.bulk.global.shared::cta.bulk_group"]!;
const f32 = (n: number, f: (i: number) => number = (i) => i + 1): SimTensor =>
  simTensor(
    Float32Array.from({ length: n }, (_, i) => f(i)),
    { shape: [n], dtype: "float32" },
  );
const same = (a: SimTensor, b: SimTensor): boolean =>
  Buffer.from(a.toBytes()).equals(Buffer.from(b.toBytes()));

/**
 * Run the pipeline of `cfg` on a pattern; `extraIterations` is the launch's loop iterations
 * (simCounters) beyond the 3 per tile (its main-loop iteration and the polls of its wait) and
 * the 2·stages per CTA (mbarrier inits and the prologue's loads) that a pipeline whose copies
 * land when its thread waits for them needs: above 0, a wait polls again and again.
 */
function runPipeline(cfg: PipelineConfig): {
  reports: number;
  ok: boolean;
  extraIterations: number;
} {
  const rows = cfg.elements / (cfg.tileBytes / 4);
  const shape = [rows, cfg.tileBytes / 4];
  const x = Float32Array.from({ length: cfg.elements }, (_, i) => (i % 65521) * 0.25 - 1000);
  const a = simTensor(x, { shape, dtype: "float32" });
  const b = simZeros(shape, "float32");
  const vf = verify(makeBulkPipeline(cfg));
  const before = simCounters.loopIterations;
  const { reports } = runSim(vf, [a, b], { hazards: "collect" });
  const iterations = simCounters.loopIterations - before;
  const budget = 3 * rows + 2 * cfg.stages * cfg.grid;
  return {
    reports: reports.length,
    ok: same(a, b),
    extraIterations: Math.max(0, iterations - budget),
  };
}

describe("cp.async.bulk and mbarriers: the examples", () => {
  it("bulk_copy moves the tile global → shared → global with no report", () => {
    const x = Float32Array.from({ length: 64 * 64 }, (_, i) => ((i * 7) % 1000) - 500);
    const a = simTensor(x, { shape: [64, 64], dtype: "float32" });
    const b = simZeros([64, 64], "float32");
    expect(runSim(verify(bulk_copy), [a, b], { hazards: "collect" }).reports).toEqual([]);
    expect(same(a, b)).toBe(true);
  });

  it("bulk_pipeline (4 MiB, 32 CTAs x 3 stages x 8 KiB) is exact, clean, and its waits do not spin", () => {
    // (Its time is measured by bench/sim-speed.ts.)
    expect(runPipeline(EXAMPLE)).toEqual({ reports: 0, ok: true, extraIterations: 0 });
  });

  it.each([
    { elements: 1 << 14, tileBytes: 1024, stages: 3, grid: 4 },
    { elements: 3 * 7 * 64, tileBytes: 256, stages: 3, grid: 3 },
    { elements: 4096, tileBytes: 512, stages: 2, grid: 2 },
  ])("a pipeline of %o over several CTAs reports nothing", (cfg) => {
    expect(runPipeline(cfg)).toEqual({ reports: 0, ok: true, extraIterations: 0 });
  });
});

/** One-tile load by thread 0 of a 32-thread CTA: `extra` bytes announced beyond the copy. */
function oneTile(variant: "deadlock" | "early" | "unobserved" | "synced" | "clobber"): PrimFunc {
  return T.function(
    `one_tile_${variant}`,
    { A: T.Tensor([256], "float32"), B: T.Tensor([256], "float32"), extra: T.int32 },
    ({ A, B, extra }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([256], "float32");
      const bar = T.alloc_shared([1], "uint64");
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.init(bar.sub(0), 1); // @init
        T.ptx.fence.mbarrier_init();
      });
      T.cuda.cta_sync();
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), extra.add(1024));
        T.cuda.tile.apply(load, s, A, { chunk_bytes: 1024, mbar: bar.sub(0) }); // @copy
        if (variant === "clobber") A.set([3], T.float32(0)); // @TX6002
      });
      if (variant === "early") B.set([tid], s.get([tid])); // @early
      if (variant === "unobserved" || variant === "synced") {
        T.if_(tid.eq(0), () => T.ptx.mbarrier.try_wait(bar.sub(0), 0));
        if (variant === "synced") T.cuda.cta_sync();
        B.set([tid], s.get([tid])); // @unobserved
      } else {
        T.ptx.mbarrier.try_wait(bar.sub(0), 0); // @wait
        B.set([tid], s.get([tid]));
      }
    },
  );
}

describe("mbarrier waits and deadlocks", () => {
  it("expect_tx matching the copy completes the phase: B = A[0:32], no report", () => {
    const a = f32(256);
    const b = simZeros([256], "float32");
    expect(runSim(verify(oneTile("deadlock")), [a, b, 0], { hazards: "collect" }).reports).toEqual(
      [],
    );
    expect(Array.from(b.toArray() as Float32Array).slice(0, 33)).toEqual([
      ...Array.from({ length: 32 }, (_, i) => i + 1),
      0,
    ]);
  });

  it("TX6006: expect_tx larger than the bytes copied never completes; names the try_wait and the init", () => {
    const e = simThrows(oneTile("deadlock"), [f32(256), simZeros([256], "float32"), 16]);
    expect([e.code, e.span?.line]).toEqual(["TX6006", lineOf(here, "// @wait")]);
    const init = e.notes.find((n) => n.span?.line === lineOf(here, "// @init"));
    expect(init?.message).toMatch(/tx-count 16 bytes still expected/);
    expect(init?.message).toMatch(/0 of 1 arrivals still pending/);
  });

  it("TX6006 in collect mode: reported once, the CTA is abandoned, the launch ends", () => {
    const reports = simCollect(oneTile("deadlock"), [f32(256), simZeros([256], "float32"), 32]);
    expect(reports.map((r) => [r.code, r.span?.line])).toEqual([
      ["TX6006", lineOf(here, "// @wait")],
    ]);
  });

  it("TX6006: a wait on a barrier nobody arrives on (count 2, one arrival)", () => {
    const k = T.function("one_short", { B: T.Tensor([32], "int32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 2, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const bar = T.alloc_shared([2], "uint64");
      T.if_(tid.eq(0), () => T.ptx.mbarrier.init(bar.sub(1), 2));
      T.cuda.cta_sync();
      T.if_(tid.eq(5), () => T.ptx.mbarrier.arrive(bar.sub(1)));
      T.ptx.mbarrier.try_wait(bar.sub(1), 0); // @short
      B.set([tid], tid);
    });
    const e = simThrows(k, [simZeros([32], "int32")]);
    expect([e.code, e.span?.line]).toEqual(["TX6006", lineOf(here, "// @short")]);
    expect(e.message).toMatch(/mbarrier "\w+"\[1\]/);
    expect(e.notes.map((n) => n.message).join("\n")).toMatch(/1 of 2 arrivals still pending/);
  });

  it("TX6004: a wait on an mbarrier no init of this CTA initialised", () => {
    const k = T.function("no_init", { B: T.Tensor([32], "int32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const bar = T.alloc_shared([1], "uint64");
      T.ptx.mbarrier.try_wait(bar.sub(0), 0); // @noinit
      B.set([tid], tid);
    });
    const e = simThrows(k, [simZeros([32], "int32")]);
    expect([e.code, e.span?.line]).toEqual(["TX6004", lineOf(here, "// @noinit")]);
  });

  it("a warp that waits before another warp's init: both lines on every schedule (TX6003 or TX6013)", () => {
    // No cta_sync after the init: whichever warp runs first, the report names the init and the wait.
    const k = T.function("init_ahead", { B: T.Tensor([64], "int32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
      const tid = T.cuda.thread_idx("x");
      const bar = T.alloc_shared([1], "uint64");
      T.if_(tid.eq(0), () => T.ptx.mbarrier.init(bar.sub(0), 1)); // @ahead-init
      T.if_(tid.eq(0), () => T.ptx.mbarrier.arrive(bar.sub(0)));
      T.if_(tid.ge(32), () => T.ptx.mbarrier.try_wait(bar.sub(0), 0)); // @ahead-wait
      B.set([tid], tid);
    });
    const lines = [lineOf(here, "// @ahead-init"), lineOf(here, "// @ahead-wait")].sort();
    const codes = new Set<string>();
    for (const simSeed of [0, 1, 2, 3, 5, 7]) {
      const e = simThrows(k, [simZeros([64], "int32")], { simSeed });
      codes.add(e.code);
      expect(["TX6003", "TX6013"], `seed ${simSeed}: ${e.message}`).toContain(e.code);
      expect([e.span?.line, e.notes[0]?.span?.line].sort(), `seed ${simSeed}`).toEqual(lines);
    }
    // Both orders occur among these schedules: the wait ran first on some (TX6013 at the init).
    expect([...codes].sort()).toEqual(["TX6003", "TX6013"]);
  });

  it("a remote arrive (mapa) before the peer CTA's init, after its own CTA's: both lines on every schedule", () => {
    // CTA rank 1 initialises its own "bar"[1] and arrives on rank 0's; rank 0's init comes in a
    // later statement with no cluster barrier between: on schedules where the arrive runs first,
    // the report used to be TX6004 naming rank 1's own init, never rank 0's.
    const k = T.function("remote_ahead", { B: T.Tensor([2], "int32") }, ({ B }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: [2, 1], block: 64, cluster: [2, 1, 1] }),
      });
      const tid = T.cuda.thread_idx("x");
      const rank = T.cuda.cluster_ctarank();
      const bar = T.alloc_shared([2], "uint64", { name: "bar" });
      T.if_(tid.eq(0).and(rank.eq(1)), () => T.ptx.mbarrier.init(bar.sub(1), 1));
      T.if_(
        tid.eq(0).and(rank.eq(1)),
        () => T.ptx.mbarrier.arrive_remote(T.ptx.mapa(bar.ptr([1]), T.int32(0))), // @remote-arrive
      );
      T.if_(tid.eq(32).and(rank.eq(0)), () => T.ptx.mbarrier.init(bar.sub(1), 1)); // @peer-init
      T.ptx.barrier.cluster.arrive();
      T.ptx.barrier.cluster.wait();
      T.if_(tid.eq(0).and(rank.eq(0)), () => B.set([0], 1));
    });
    const lines = [lineOf(here, "// @remote-arrive"), lineOf(here, "// @peer-init")].sort();
    const codes = new Set<string>();
    for (const simSeed of [0, 1, 2, 5, 7]) {
      const e = simThrows(k, [simZeros([2], "int32")], { simSeed });
      codes.add(e.code);
      expect(["TX6003", "TX6013"], `seed ${simSeed}: ${e.message}`).toContain(e.code);
      expect([e.span?.line, e.notes[0]?.span?.line].sort(), `seed ${simSeed}`).toEqual(lines);
    }
    // The arrive ran first on some of these schedules: TX6013 at the peer's init.
    expect([...codes].sort()).toEqual(["TX6003", "TX6013"]);
    // Collect mode: the arrive on the not yet initialised barrier and the init after it.
    const r = runSim(verify(k), [simZeros([2], "int32")], { hazards: "collect", simSeed: 1 });
    expect(r.reports.map((x) => [x.code, x.span?.line])).toEqual([
      ["TX6004", lines[0]],
      ["TX6013", lines[1]],
    ]);
  });

  it("TX6003: another thread uses the mbarrier with no cta_sync after its init", () => {
    const k = T.function("init_race", { B: T.Tensor([32], "int32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const bar = T.alloc_shared([1], "uint64");
      T.if_(tid.eq(0), () => T.ptx.mbarrier.init(bar.sub(0), 32)); // @race-init
      T.ptx.mbarrier.arrive(bar.sub(0)); // @race-use
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      B.set([tid], tid);
    });
    const e = simThrows(k, [simZeros([32], "int32")]);
    expect([e.code, e.span?.line]).toEqual(["TX6003", lineOf(here, "// @race-use")]);
    expect(e.notes[0]?.span?.line).toBe(lineOf(here, "// @race-init"));
  });

  it("producer / consumer in divergent branches (full and empty barriers, 2 stages) runs clean", () => {
    const tiles = 6;
    const k = T.function(
      "warp_specialized",
      { A: T.Tensor([tiles, 32], "float32"), B: T.Tensor([tiles, 32], "float32") },
      ({ A, B }) => {
        // One CTA: a second one would write the same B elements (TX6014, CTAs are unordered).
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const tid = T.cuda.thread_idx("x");
        const buf = T.alloc_shared([2, 32], "float32");
        const full = T.alloc_shared([2], "uint64");
        const empty = T.alloc_shared([2], "uint64");
        T.if_(tid.eq(0), () => {
          for (const s of T.range(2)) {
            T.ptx.mbarrier.init(full.sub(s), 1);
            T.ptx.mbarrier.init(empty.sub(s), 32);
          }
          T.ptx.fence.mbarrier_init();
        });
        T.cuda.cta_sync();
        T.if_(
          tid.lt(32),
          () => {
            for (const i of T.range(tiles)) {
              const s = T.let_("s", i.floormod(2));
              T.ptx.mbarrier.try_wait(full.sub(s), i.floordiv(2).floormod(2));
              B.set([i, tid], buf.get([s, tid]));
              T.ptx.mbarrier.arrive(empty.sub(s));
            }
          },
          () => {
            T.if_(tid.eq(32), () => {
              for (const i of T.range(tiles)) {
                const s = T.let_("s", i.floormod(2));
                T.ptx.mbarrier.try_wait(empty.sub(s), i.floordiv(2).add(1).floormod(2));
                T.ptx.mbarrier.arrive.expect_tx(full.sub(s), 128);
                T.cuda.tile.apply(load, buf.sub(s, ":"), A.sub(i, ":"), {
                  chunk_bytes: 128,
                  mbar: full.sub(s),
                });
              }
            });
          },
        );
      },
    );
    const a = simTensor(
      Float32Array.from({ length: tiles * 32 }, (_, i) => i * 3),
      { shape: [tiles, 32], dtype: "float32" },
    );
    const b = simZeros([tiles, 32], "float32");
    expect(runSim(verify(k), [a, b], { hazards: "collect" }).reports).toEqual([]);
    expect(same(a, b)).toBe(true);
  });
});

describe("bulk-copy hazards", () => {
  it("TX6007: reading the destination of a global → shared bulk copy before waiting", () => {
    const e = simThrows(oneTile("early"), [f32(256), simZeros([256], "float32"), 0]);
    expect([e.code, e.span?.line]).toEqual(["TX6007", lineOf(here, "// @early")]);
    expect(e.notes[0]?.span?.line).toBe(lineOf(here, "// @copy"));
    expect(e.message).toMatch(/in flight/);
  });

  it("TX6007: a thread that did not observe the phase reads the landed bytes (no cta_sync)", () => {
    const e = simThrows(oneTile("unobserved"), [f32(256), simZeros([256], "float32"), 0]);
    expect([e.code, e.span?.line]).toEqual(["TX6007", lineOf(here, "// @unobserved")]);
    expect(e.message).toMatch(/thread \(1, 0, 0\)/);
    // Lanes 1-31 go on while lane 0 waits (independent thread scheduling): the copy is still
    // in flight when they read.
    expect(e.message).toMatch(/in flight/);
  });

  it("a cta_sync after the thread that waited makes the bytes visible to every thread", () => {
    const a = f32(256);
    const b = simZeros([256], "float32");
    expect(runSim(verify(oneTile("synced")), [a, b, 0], { hazards: "collect" }).reports).toEqual(
      [],
    );
    expect(b.toArray()[31]).toBe(32);
  });

  it("TX6002: writing global bytes a pending global → shared bulk copy reads", () => {
    const e = simThrows(oneTile("clobber"), [f32(256), simZeros([256], "float32"), 0]);
    expect([e.code, e.span?.line]).toEqual(["TX6002", lineOf(here, "// @TX6002")]);
    expect(e.notes[0]?.span?.line).toBe(lineOf(here, "// @copy"));
  });

  /** Thread 0 stores two rows of shared with two bulk groups, then writes row `row` of shared. */
  const twoGroups = (wait: "read1" | "read0" | "none", row: 0 | 1): PrimFunc =>
    T.function(
      `two_groups_${wait}_${row}`,
      { A: T.Tensor([2, 64], "float32"), B: T.Tensor([2, 64], "float32") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
        const s = T.alloc_shared([2, 64], "float32");
        for (const r of T.range(2)) for (const j of T.range(64)) s.set([r, j], A.get([r, j]));
        T.ptx.fence.proxy_async();
        T.cuda.tile.apply(store, B.sub(0, ":"), s.sub(0, ":"), { chunk_bytes: 256 });
        T.ptx.cp.async_.bulk.commit_group();
        T.cuda.tile.apply(store, B.sub(1, ":"), s.sub(1, ":"), { chunk_bytes: 256 }); // @g1
        T.ptx.cp.async_.bulk.commit_group();
        if (wait === "read1") T.ptx.cp.async_.bulk.wait_group_read(1);
        if (wait === "read0") T.ptx.cp.async_.bulk.wait_group_read(0);
        s.set([row, 5], T.float32(-1)); // @overwrite
        T.ptx.cp.async_.bulk.wait_group(0);
      },
    );
  const rows = () =>
    simTensor(
      Float32Array.from({ length: 128 }, (_, i) => i + 1),
      { shape: [2, 64], dtype: "float32" },
    );

  it("wait_group.read 1: the older group's source may be overwritten, B gets the old bytes", () => {
    const a = rows();
    const b = simZeros([2, 64], "float32");
    expect(runSim(verify(twoGroups("read1", 0)), [a, b], { hazards: "collect" }).reports).toEqual(
      [],
    );
    expect(same(a, b)).toBe(true);
  });

  it("TX6007: wait_group.read 1 leaves the newest group's source unread", () => {
    const e = simThrows(twoGroups("read1", 1), [rows(), simZeros([2, 64], "float32")]);
    expect([e.code, e.span?.line]).toEqual(["TX6007", lineOf(here, "// @overwrite")]);
    expect(e.notes[0]?.span?.line).toBe(lineOf(here, "// @g1"));
  });

  it("TX6007: without wait_group.read even the oldest group's source is unread", () => {
    const e = simThrows(twoGroups("none", 0), [rows(), simZeros([2, 64], "float32")]);
    expect([e.code, e.span?.line]).toEqual(["TX6007", lineOf(here, "// @overwrite")]);
  });

  it("wait_group.read 0 releases every source", () => {
    const a = rows();
    const b = simZeros([2, 64], "float32");
    expect(runSim(verify(twoGroups("read0", 1)), [a, b], { hazards: "collect" }).reports).toEqual(
      [],
    );
    expect(same(a, b)).toBe(true);
  });

  /** Thread 0 stores a row with a bulk copy and reads the destination back into C. */
  const readBack = (waitFirst: boolean): PrimFunc =>
    T.function(
      `read_back_${waitFirst}`,
      { A: T.Tensor([64], "float32"), B: T.Tensor([64], "float32"), C: T.Tensor([1], "float32") },
      ({ A, B, C }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
        const s = T.alloc_shared([64], "float32");
        for (const j of T.range(64)) s.set([j], A.get([j]));
        T.ptx.fence.proxy_async();
        T.cuda.tile.apply(store, B, s, { chunk_bytes: 256 }); // @s2g
        T.ptx.cp.async_.bulk.commit_group();
        if (waitFirst) T.ptx.cp.async_.bulk.wait_group(0);
        C.set([0], B.get([7])); // @readback
        T.ptx.cp.async_.bulk.wait_group(0);
      },
    );

  it("wait_group 0: the destination is written; the issuing thread reads it back", () => {
    const c = simZeros([1], "float32");
    const b = simZeros([64], "float32");
    expect(runSim(verify(readBack(true)), [f32(64), b, c]).reports).toEqual([]);
    expect(c.toArray()[0]).toBe(8);
    expect(b.toArray()[63]).toBe(64);
  });

  it("TX6007: reading global bytes a pending shared → global bulk copy writes", () => {
    const e = simThrows(readBack(false), [
      f32(64),
      simZeros([64], "float32"),
      simZeros([1], "float32"),
    ]);
    expect([e.code, e.span?.line]).toEqual(["TX6007", lineOf(here, "// @readback")]);
    expect(e.notes[0]?.span?.line).toBe(lineOf(here, "// @s2g"));
  });

  it("pred false issues nothing (shared → global and global → shared)", () => {
    const k = T.function(
      "predicated",
      { A: T.Tensor([64], "float32"), B: T.Tensor([64], "float32"), on: T.int32 },
      ({ A, B, on }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
        const s = T.alloc_shared([64], "float32");
        const bar = T.alloc_shared([1], "uint64");
        T.ptx.mbarrier.init(bar.sub(0), 1);
        T.ptx.fence.mbarrier_init();
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), T.min(on, 1).mul(256));
        T.cuda.tile.apply(load, s, A, { chunk_bytes: 256, mbar: bar.sub(0), pred: on.ne(0) });
        T.ptx.mbarrier.try_wait(bar.sub(0), 0);
        T.if_(on.ne(0), () => {
          T.cuda.tile.apply(store, B, s, { chunk_bytes: 256, pred: on.gt(1) });
          T.ptx.cp.async_.bulk.commit_group();
          T.ptx.cp.async_.bulk.wait_group(0);
        });
        B.set([0], s.get([0])); // @unwritten
      },
    );
    // on = 2: both copies; on = 1: only the load (B[1..] stay 0); on = 0: nothing lands in s.
    const b2 = simZeros([64], "float32");
    expect(runSim(verify(k), [f32(64), b2, 2]).reports).toEqual([]);
    expect(Array.from(b2.toArray() as Float32Array).slice(0, 3)).toEqual([1, 2, 3]);
    const b1 = simZeros([64], "float32");
    expect(runSim(verify(k), [f32(64), b1, 1]).reports).toEqual([]);
    expect(Array.from(b1.toArray() as Float32Array).slice(0, 3)).toEqual([1, 0, 0]);
    const e = simThrows(k, [f32(64), simZeros([64], "float32"), 0]);
    expect([e.code, e.span?.line]).toEqual(["TX6004", lineOf(here, "// @unwritten")]);
  });
});

describe("if_then_else evaluates both arms (codegen emits selp)", () => {
  const select = T.function(
    "select",
    { A: T.Tensor([16], "int32"), B: T.Tensor([32], "int32"), n: T.int32 },
    ({ A, B, n }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([32], "int32");
      // The arm not taken loads A[n] (out of bounds for n >= 16) and never-written shared.
      B.set([tid], T.if_then_else(tid.lt(0), A.get([n]).add(s.get([tid])), tid)); // @select
    },
  );

  it("TX6005: an out-of-bounds load in the arm that is not selected", () => {
    const e = simThrows(select, [simZeros([16], "int32"), simZeros([32], "int32"), 16]);
    expect([e.code, e.span?.line]).toEqual(["TX6005", lineOf(here, "// @select")]);
  });

  it("in bounds, the discarded arm's other hazards (never-written shared) are not reported", () => {
    const b = simZeros([32], "int32");
    expect(runSim(verify(select), [simZeros([16], "int32"), b, 3]).reports).toEqual([]);
    expect(b.toArray()[31]).toBe(31);
  });
});
