// Clusters of several CTAs on the simulator: the CTAs of a cluster run together, each with its
// own shared memory. A 2-CTA multicast against its JS model on several schedules; the cluster
// barrier's ordering (a race without it, none with it, none across clusters either way); remote
// mbarrier arrives (mapa); the hazards: a CTA exiting under a peer's remote access (TX6025), a
// multicast racing with the destination CTA's own writes, a remote arrive on a barrier that is
// not (visibly) initialised.
import { describe, expect, it } from "vitest";
import { isTirxError, verify, type PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { TMA_CASES } from "./cases.js";
import { simCase } from "./sim-run.js";

const MULTICAST =
  "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster";
const SEEDS = [0, 1, 2, 7, 12345];

const codes = (r: { reports: readonly unknown[] }): string[] =>
  r.reports.map((e) => (isTirxError(e) ? e.code : String(e)));
const lineOf = (e: unknown): number | undefined => (isTirxError(e) ? e.span?.line : undefined);

/**
 * A [2, 1] grid, one cluster of 2 CTAs of 64 threads. CTA rank 0 writes B[c·64 + tid], the
 * cluster barrier (or nothing), then CTA rank 1 reads it into C[c·64 + tid] (c the cluster).
 * `peer`: rank 1 reads the other cluster's B instead (grid [4, 1], two clusters).
 */
function barrierKernel(sync: "wait" | "relaxed" | "none", peer = false): PrimFunc {
  const ctas = peer ? 4 : 2;
  return T.function(
    `cluster_sync_${sync}${peer ? "_peer" : ""}`,
    { B: T.Tensor([ctas * 32], "int32"), C: T.Tensor([ctas * 32], "int32") },
    ({ B, C }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: [ctas, 1], block: 64, cluster: [2, 1, 1] }),
      });
      const tid = T.cuda.thread_idx("x");
      const rank = T.cuda.cluster_ctarank();
      const c = T.cuda.cluster_idx("x");
      T.if_(rank.eq(0), () => B.set([c.mul(64).add(tid)], tid.add(c.mul(100)).add(1)));
      if (sync === "wait") T.ptx.barrier.cluster.arrive();
      if (sync === "relaxed") T.ptx.barrier.cluster.arrive_relaxed();
      if (sync !== "none") T.ptx.barrier.cluster.wait();
      const src = peer ? T.sub(1, c) : c;
      T.if_(rank.eq(1), () => C.set([c.mul(64).add(tid)], B.get([src.mul(64).add(tid)]).mul(2)));
    },
  );
}

/**
 * The 2-CTA multicast of cases.ts with knobs: `initSync` the cluster barrier between the
 * mbarrier inits and the multicasts; `exitSync` the one before exit; `touch` every thread writes
 * its CTA's tile after the first cluster barrier (so the peer's multicast into it races).
 */
function multicastKernel(o: { initSync: boolean; exitSync: boolean; touch?: boolean }): PrimFunc {
  return T.function(
    `mc_${o.initSync}_${o.exitSync}_${o.touch === true}`,
    { A: T.Tensor([32, 64], "float16"), B: T.Tensor([64, 64], "float16") },
    ({ A, B }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: [2, 1], block: 128, cluster: [2, 1, 1] }),
      });
      const tid = T.cuda.thread_idx("x");
      const cta = T.cuda.block_idx("x");
      const rank = T.cuda.cluster_ctarank();
      const tile = T.alloc_shared([2, 16, 64], "float16", { name: "tile", align: 1024 });
      const bar = T.alloc_shared([1], "uint64", { name: "bar" });
      const map = T.tensormap_encode_tiled(A, { box: [16, 64] });
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.init(bar.sub(0), 1);
        T.ptx.fence.mbarrier_init();
      });
      if (o.initSync) {
        T.ptx.barrier.cluster.arrive();
        T.ptx.barrier.cluster.wait();
      } else T.cuda.cta_sync();
      if (o.touch) {
        for (const k of T.range(16)) tile.flat().set([k.mul(128).add(tid)], T.float16(0));
        T.ptx.fence.proxy_async();
        T.cuda.cta_sync();
      }
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 32 * 64 * 2);
        T.cuda.tile.apply(T.ptx[MULTICAST], tile.sub(rank), A, {
          tensor_map: map,
          coords: [rank.mul(16), 0],
          mbar: bar.sub(0),
          cta_mask: T.uint16(3),
        });
      });
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      for (const k of T.range(16)) {
        const e = k.mul(128).add(tid);
        const i = e.floordiv(64);
        const j = e.floormod(64);
        B.set([cta.mul(32).add(i), j], tile.get([i.floordiv(16), i.floormod(16), j]));
      }
      if (o.exitSync) {
        T.ptx.barrier.cluster.arrive();
        T.ptx.barrier.cluster.wait();
      }
    },
  );
}

/**
 * One cluster of 2 CTAs of 32 threads. CTA rank 1's thread 0 writes B[0] = 42 and arrives on CTA
 * rank 0's mbarrier through mapa; CTA rank 0 waits on it (unless `noWait`) and copies B[0] to
 * B[1]. `initIn`: the CTAs that initialise their mbarrier; `initSync`/`exitSync`: cluster
 * barriers after the inits / before exit.
 */
function remoteArriveKernel(o: {
  initIn: "both" | "rank1";
  /**
   * true: barrier.cluster arrive + wait after the inits; "relaxed": the inits, then
   * fence.mbarrier_init, barrier.cluster.arrive.relaxed and wait (CUTLASS's start-up);
   * "relaxed_nofence": the same without the fence; false: a cta_sync only.
   */
  initSync: boolean | "relaxed" | "relaxed_nofence";
  exitSync: boolean;
  noWait?: boolean;
}): PrimFunc {
  return T.function(
    `remote_${o.initIn}_${o.initSync}_${o.exitSync}_${o.noWait === true}`,
    { B: T.Tensor([2], "int32") },
    ({ B }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: [2, 1], block: 32, cluster: [2, 1, 1] }),
      });
      const tid = T.cuda.thread_idx("x");
      const rank = T.cuda.cluster_ctarank();
      const bar = T.alloc_shared([2], "uint64", { name: "bar" });
      const initCond = o.initIn === "both" ? tid.eq(0) : tid.eq(0).and(rank.eq(1));
      T.if_(initCond, () => {
        T.ptx.mbarrier.init(bar.sub(1), 1);
        if (o.initSync === "relaxed") T.ptx.fence.mbarrier_init();
      });
      if (o.initSync === "relaxed" || o.initSync === "relaxed_nofence") {
        T.ptx.barrier.cluster.arrive_relaxed();
        T.ptx.barrier.cluster.wait();
      } else if (o.initSync) {
        T.ptx.barrier.cluster.arrive();
        T.ptx.barrier.cluster.wait();
      } else T.cuda.cta_sync();
      T.if_(
        rank.eq(0),
        () => {
          if (!o.noWait) {
            T.ptx.mbarrier.try_wait(bar.sub(1), 0);
            T.if_(tid.eq(0), () => B.set([1], B.get([0])));
          }
        },
        () => {
          T.if_(tid.eq(0), () => {
            B.set([0], T.int32(42));
            T.ptx.mbarrier.arrive_remote(T.ptx.mapa(bar.ptr([1]), T.int32(0)));
          });
        },
      );
      if (o.exitSync) {
        T.ptx.barrier.cluster.arrive();
        T.ptx.barrier.cluster.wait();
      }
    },
  );
}

describe("clusters of several CTAs on the simulator", () => {
  const mc = TMA_CASES.find((c) => c.name.startsWith("2-CTA cluster multicast"))!;

  it("a 2-CTA multicast lands in both CTAs and equals the JS model on every schedule", () => {
    for (const seed of SEEDS) {
      process.env["TIRX_SIM_SEED"] = String(seed);
      try {
        const r = simCase(mc);
        expect(r.reports).toEqual([]);
        expect(r.out).toEqual(mc.expected());
      } finally {
        delete process.env["TIRX_SIM_SEED"];
      }
    }
  });

  it("barrier.cluster orders CTA rank 0's writes before rank 1's reads; without it they race", () => {
    const data = Array.from({ length: 64 }, (_, t) => t + 1);
    for (const seed of SEEDS) {
      const run = (sync: "wait" | "relaxed" | "none") => {
        const b = simZeros([64], "int32");
        const c = simZeros([64], "int32");
        const r = runSim(verify(barrierKernel(sync)), [b, c], {
          hazards: "collect",
          simSeed: seed,
        });
        return { r, c: Array.from(c.toArray() as ArrayLike<number>) };
      };
      const ok = run("wait");
      expect(ok.r.reports).toEqual([]);
      expect(ok.c).toEqual(data.map((x) => 2 * x));
      for (const bad of ["none", "relaxed"] as const) {
        const r = run(bad).r;
        expect(codes(r).filter((c) => c === "TX6003" || c === "TX6013").length).toBeGreaterThan(0);
        const e = r.reports[0]!;
        // Both threads with their CTAs, both lines.
        expect(String(e)).toMatch(/thread \(\d+, 0, 0\) of CTA \([01], 0, 0\)/);
        expect((isTirxError(e) && e.notes.some((n) => n.span !== undefined)) || false).toBe(true);
        expect(String(e)).toMatch(
          /CTA \(1, 0, 0\)[\s\S]*CTA \(0, 0, 0\)|CTA \(0, 0, 0\)[\s\S]*CTA \(1, 0, 0\)/,
        );
      }
    }
  });

  it("barrier.cluster does not order two clusters: reading another cluster's writes races", () => {
    const b = simZeros([128], "int32");
    const c = simZeros([128], "int32");
    const r = runSim(verify(barrierKernel("wait", true)), [b, c], { hazards: "collect" });
    expect(codes(r)).toContain("TX6003");
    expect(String(r.reports[0])).toMatch(/clusters of one launch are not ordered/);
  });

  it("a remote arrive (mapa) completes the peer's mbarrier phase and orders the arriver's writes", () => {
    for (const seed of SEEDS) {
      const b = simZeros([2], "int32");
      const fn = remoteArriveKernel({ initIn: "both", initSync: true, exitSync: true });
      const r = runSim(verify(fn), [b], { hazards: "collect", simSeed: seed });
      expect(r.reports).toEqual([]);
      expect(Array.from(b.toArray() as ArrayLike<number>)).toEqual([42, 42]);
    }
  });

  it("reports a remote arrive on a barrier its CTA never initialised (TX6004)", () => {
    const fn = remoteArriveKernel({
      initIn: "rank1",
      initSync: true,
      exitSync: true,
      noWait: true,
    });
    const r = runSim(verify(fn), [simZeros([2], "int32")], { hazards: "collect" });
    expect(codes(r)).toContain("TX6004");
    const e = r.reports.find((x) => isTirxError(x) && x.code === "TX6004")!;
    expect(String(e)).toMatch(
      /thread \(0, 0, 0\) of CTA \(1, 0, 0\) arrives on mbarrier "bar"\[1\] of CTA \(0, 0, 0\), which no mbarrier.init of that CTA has initialised/,
    );
    // The other thread and line: the init the arriving thread's own CTA ran.
    const note = isTirxError(e) ? e.notes[0] : undefined;
    expect(note?.message).toMatch(
      /thread \(0, 0, 0\) of CTA \(1, 0, 0\) initialises its own CTA's "bar"\[1\] here/,
    );
    expect(note?.span?.line).toBeDefined();
    expect(note?.span?.line).not.toBe(lineOf(e));
  });

  it("reports a remote arrive not ordered after the peer's mbarrier.init (TX6003, both threads)", () => {
    const fn = remoteArriveKernel({ initIn: "both", initSync: false, exitSync: true });
    const r = runSim(verify(fn), [simZeros([2], "int32")], { hazards: "collect" });
    const e = r.reports.find((x) => isTirxError(x) && x.code === "TX6003");
    expect(e).toBeDefined();
    expect(String(e)).toMatch(
      /thread \(0, 0, 0\) of CTA \(1, 0, 0\) arrives on mbarrier "bar"\[1\] of CTA \(0, 0, 0\), which thread \(0, 0, 0\) of CTA \(0, 0, 0\) initialised/,
    );
    expect(isTirxError(e) && e.notes[0]?.span?.line).not.toBe(lineOf(e));
  });

  it("fence.mbarrier_init + barrier.cluster.arrive.relaxed + wait orders the inits before a remote arrive", () => {
    // PTX ISA: fence.mbarrier_init.release.cluster releases the thread's earlier mbarrier.init,
    // barrier.cluster.wait acquires; without the fence the relaxed arrive orders nothing.
    const run = (initSync: "relaxed" | "relaxed_nofence", seed: number) => {
      const b = simZeros([2], "int32");
      const fn = remoteArriveKernel({ initIn: "both", initSync, exitSync: true });
      const r = runSim(verify(fn), [b], { hazards: "collect", simSeed: seed });
      return { r, b: Array.from(b.toArray() as ArrayLike<number>) };
    };
    for (const seed of SEEDS) {
      const ok = run("relaxed", seed);
      expect(ok.r.reports).toEqual([]);
      expect(ok.b).toEqual([42, 42]);
      const bad = run("relaxed_nofence", seed).r;
      const e = bad.reports.find((x) => isTirxError(x) && x.code === "TX6003");
      expect(String(e)).toMatch(
        /(arrives on|waits on) mbarrier "bar"\[1\] of CTA \(0, 0, 0\), which thread \(0, 0, 0\) of CTA \(0, 0, 0\) initialised/,
      );
    }
  });

  it("reports a CTA that exits while a peer's remote arrive may still reach it (TX6025)", () => {
    const run = (exitSync: boolean) =>
      runSim(
        verify(remoteArriveKernel({ initIn: "both", initSync: true, exitSync, noWait: true })),
        [simZeros([2], "int32")],
        { hazards: "collect" },
      );
    expect(run(true).reports).toEqual([]);
    const bad = run(false);
    expect(codes(bad)).toEqual(["TX6025"]);
    const e = bad.reports[0]!;
    expect(String(e)).toMatch(
      /CTA \(0, 0, 0\) exits while thread \(0, 0, 0\) of CTA \(1, 0, 0\) may still access its shared memory/,
    );
    expect(isTirxError(e) && e.notes[0]?.message).toMatch(
      /thread \(0, 0, 0\) of CTA \(0, 0, 0\) exits \(with every thread of its CTA\) at the end of the kernel/,
    );
    // A consumer that waited on the arrive is ordered after it: no report without the barrier.
    const waited = runSim(
      verify(remoteArriveKernel({ initIn: "both", initSync: true, exitSync: false })),
      [simZeros([2], "int32")],
      { hazards: "collect" },
    );
    expect(waited.reports).toEqual([]);
  });

  it("a multicast needs the peer's mbarrier.init ordered before it (cluster barrier)", () => {
    const a = simTensor(mc.inputs[0]!.data, { shape: [32, 64], dtype: "float16" });
    const run = (initSync: boolean) =>
      runSim(
        verify(multicastKernel({ initSync, exitSync: true })),
        [a, simZeros([64, 64], "float16")],
        { hazards: "collect" },
      );
    expect(run(true).reports).toEqual([]);
    const bad = run(false);
    expect(codes(bad)).toContain("TX6003");
    expect(String(bad.reports[0])).toMatch(/completes a bulk copy on mbarrier "bar"\[0\] of CTA/);
  });

  it("reports a multicast into a peer's tile that the peer's threads wrote unordered (TX6014)", () => {
    const a = simTensor(mc.inputs[0]!.data, { shape: [32, 64], dtype: "float16" });
    for (const seed of SEEDS) {
      const r = runSim(
        verify(multicastKernel({ initSync: true, exitSync: true, touch: true })),
        [a, simZeros([64, 64], "float16")],
        { hazards: "collect", simSeed: seed },
      );
      const e = r.reports.find((x) => isTirxError(x) && x.code === "TX6014");
      expect(e, codes(r).join()).toBeDefined();
      expect(String(e)).toMatch(
        /thread \(0, 0, 0\) of CTA \((\d), 0, 0\) issues a bulk copy to shared "tile" bytes \d+\.\.\d+ of CTA \((?!\1)\d, 0, 0\), which thread \(\d+, 0, 0\) of CTA/,
      );
    }
  });

  it("a CTA whose threads observed the multicast's landing may exit without a cluster barrier", () => {
    const a = simTensor(mc.inputs[0]!.data, { shape: [32, 64], dtype: "float16" });
    const o = simZeros([64, 64], "float16");
    const r = runSim(verify(multicastKernel({ initSync: true, exitSync: false })), [a, o], {
      hazards: "collect",
    });
    expect(r.reports).toEqual([]);
    expect(Array.from(o.toArray() as ArrayLike<number>)).toEqual(mc.expected());
  });

  it("reports a cluster barrier that not every thread reaches (TX6006)", () => {
    const fn = T.function("cluster_half", { B: T.Tensor([1], "int32") }, ({ B }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: [2, 1], block: 32, cluster: [2, 1, 1] }),
      });
      T.if_(T.cuda.cluster_ctarank().eq(0), () => {
        T.ptx.barrier.cluster.arrive();
        T.ptx.barrier.cluster.wait();
      });
      // One writer: the other CTA's warp runs ahead to here while the first CTA waits.
      T.if_(T.cuda.thread_idx("x").eq(0), () => B.set([0], T.int32(1)));
    });
    const r = runSim(verify(fn), [simZeros([1], "int32")], { hazards: "collect" });
    expect(codes(r)).toEqual(["TX6006"]);
    expect(String(r.reports[0])).toMatch(/32 of the 64 threads of the cluster's 2 CTAs arrived/);
  });

  it("a deadlock report in a cluster names the waiting thread's own CTA and mbarrier", () => {
    // Both CTAs wait on their own never-arrived mbarrier; the report pairs the first waiting
    // thread with the mbarrier it tests (not the last one evaluated, of the other CTA).
    const fn = T.function("cluster_stuck", { B: T.Tensor([1], "int32") }, ({ B }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: [2, 1], block: 32, cluster: [2, 1, 1] }),
      });
      const tid = T.cuda.thread_idx("x");
      const bar = T.alloc_shared([1], "uint64", { name: "bar" });
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.init(bar.sub(0), 1);
        T.ptx.fence.mbarrier_init();
      });
      T.ptx.barrier.cluster.arrive();
      T.ptx.barrier.cluster.wait();
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      B.set([0], T.int32(1));
    });
    const r = runSim(verify(fn), [simZeros([1], "int32")], { hazards: "collect" });
    expect(codes(r)).toEqual(["TX6006"]);
    expect(r.reports[0]!.message).toMatch(
      /thread \(0, 0, 0\) of CTA \(0, 0, 0\) waits forever on mbarrier "bar"\[0\] of CTA \(0, 0, 0\)/,
    );
  });

  it("%ctaid and the cluster registers follow the PTX ISA in a 2 × 2 cluster", () => {
    const fn = T.function("cluster_regs_2d", { B: T.Tensor([16, 7], "int32") }, ({ B }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: [4, 4], block: 64, cluster: [2, 2, 1] }),
      });
      const cta = T.cuda.block_idx("y").mul(4).add(T.cuda.block_idx("x"));
      T.if_(T.cuda.thread_idx("x").eq(33), () => {
        B.set([cta, 0], T.cuda.cluster_ctarank());
        B.set([cta, 1], T.cuda.cluster_cta_idx("x"));
        B.set([cta, 2], T.cuda.cluster_cta_idx("y"));
        B.set([cta, 3], T.cuda.cluster_idx("x"));
        B.set([cta, 4], T.cuda.cluster_idx("y"));
        B.set([cta, 5], T.cuda.cluster_grid_dim("y"));
        B.set([cta, 6], T.cuda.cluster_nctarank());
      });
    });
    const o = simZeros([16, 7], "int32");
    expect(runSim(verify(fn), [o], { hazards: "collect", simSeed: 3 }).reports).toEqual([]);
    const want: number[] = [];
    for (let y = 0; y < 4; y++)
      for (let x = 0; x < 4; x++)
        want.push((x % 2) + 2 * (y % 2), x % 2, y % 2, x >> 1, y >> 1, 2, 4);
    expect(Array.from(o.toArray() as ArrayLike<number>)).toEqual(want);
  });

  it("each CTA of a cluster has its own shared memory; cta_sync and bar_sync are per CTA", () => {
    // Every CTA fills the same shared buffer with its own values (stores and a cp.async), syncs
    // (cta_sync, then a named barrier of its 64 threads), and reads its neighbour's element.
    const fn = T.function(
      "cluster_smem",
      {
        A: T.Tensor([4, 64], "int32"),
        B: T.Tensor([4, 64], "int32"),
        C: T.Tensor([4, 64], "int32"),
      },
      ({ A, B, C }) => {
        T.device_entry({
          launch: T.cuda.LaunchConfig({ grid: [4, 1], block: 64, cluster: [2, 1, 1] }),
        });
        const tid = T.cuda.thread_idx("x");
        const cta = T.cuda.block_idx("x");
        const s = T.alloc_shared([64], "int32", { name: "s" });
        const c = T.alloc_shared([64], "int32", { name: "c" });
        s.set([tid], cta.mul(1000).add(tid));
        T.cuda.tile.apply(
          T.ptx["cp.async.ca.shared.global"],
          c.rearrange("(w t e) -> w t e", { w: 2, t: 32, e: 1 }),
          A.sub(cta).rearrange("(w t e) -> w t e", { w: 2, t: 32, e: 1 }),
          { chunk_bytes: 4, scope: "cta" },
        );
        T.ptx.cp.async_.commit_group();
        T.ptx.cp.async_.wait_group(0);
        T.cuda.cta_sync();
        B.set([cta, tid], s.get([tid.add(1).floormod(64)]));
        T.cuda.bar_sync(1, 64);
        C.set([cta, tid], c.get([tid.add(1).floormod(64)]));
      },
    );
    const a = Array.from({ length: 256 }, (_, i) => 7 * i + 1);
    const b = simZeros([4, 64], "int32");
    const cOut = simZeros([4, 64], "int32");
    for (const simSeed of SEEDS) {
      const r = runSim(verify(fn), [simTensor(a, { shape: [4, 64], dtype: "int32" }), b, cOut], {
        hazards: "collect",
        simSeed,
      });
      expect(r.reports.map(String)).toEqual([]);
      const nb = (k: number, t: number) => k * 64 + ((t + 1) % 64);
      const idx = Array.from({ length: 256 }, (_, i) => [Math.floor(i / 64), i % 64] as const);
      expect(Array.from(b.toArray() as ArrayLike<number>)).toEqual(
        idx.map(([k, t]) => k * 1000 + ((t + 1) % 64)),
      );
      expect(Array.from(cOut.toArray() as ArrayLike<number>)).toEqual(
        idx.map(([k, t]) => a[nb(k, t)]),
      );
    }
  });

  it("refuses clusters it cannot number (TX2010): over 1024 threads, or CTAs of partial warps", () => {
    const k = (block: number, cl: number): PrimFunc =>
      T.function(`cl_${block}_${cl}`, { B: T.Tensor([cl], "int32") }, ({ B }) => {
        T.device_entry({
          launch: T.cuda.LaunchConfig({ grid: [cl, 1], block, cluster: [cl, 1, 1] }),
        });
        T.if_(T.cuda.thread_idx("x").eq(0), () => B.set([T.cuda.block_idx("x")], T.int32(1)));
      });
    for (const [block, cl] of [
      [48, 2],
      [512, 4],
    ] as const) {
      try {
        runSim(verify(k(block, cl)), [simZeros([cl], "int32")]);
        expect.unreachable();
      } catch (e) {
        expect(isTirxError(e) && e.code).toBe("TX2010");
      }
    }
    expect(runSim(verify(k(512, 2)), [simZeros([2], "int32")]).reports).toEqual([]);
  });
});
