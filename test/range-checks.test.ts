// Range checks against element checks (issue 9, simulator speed): the simulator checks a batched
// statement's loads and stores as runs of consecutive threads at consecutive elements, and a
// cp.async wait's landed chunks as one range (packages/runtime-sim/src/exec/access-batch.ts,
// access-runs.ts). That is an optimisation only: with `rangeChecks: false` every access is
// checked as it is made, and both must give the same reports, in the same order, with the same
// lines and notes, and leave the same tensor bytes. Checked on every kernel of the mutation test
// and every mutant of it (racy kernels, where runs decline and accesses are checked one by one),
// under lockstep and a varied schedule, in "collect" and "throw" modes, and on kernels made for
// the cases a run must decline: broadcast loads, lanes masked off, one tensor passed as two
// parameters, writes of another CTA, float16 elements, unordered readers and writers. Each is
// also run on generated statement functions from the first lane (vector loops and block copies,
// packages/runtime-sim/src/compile/vector.ts).
import { describe, expect, it } from "vitest";
import type { KernelArg, PrimFunc } from "@tirx-ts/core";
import { T, type PrimExpr, type TileView } from "@tirx-ts/dsl";
import { simTensor, simZeros, type SimOptions } from "@tirx-ts/runtime-sim";
import { argsOf, CASES, mutants } from "./util/sync-mutants.js";
import { same } from "./util/same-outcome.js";

/**
 * The big kernels (a GEMM of three K-tiles, a 16-CTA row copy) run under one varied schedule and
 * their mutants in "throw" mode (to the first report), the others under lockstep too and their
 * mutants in both modes; a correct kernel in "collect" mode only (it reports nothing, so "throw"
 * runs the same).
 */
const BIG = new Set(["gemm_simt", "row_copy"]);

describe("range checks report what element checks report", () => {
  for (const c of CASES) {
    it(`${c.fn.name} and each mutant without one synchronization`, () => {
      const seeds = BIG.has(c.fn.name) ? [2] : [0, 2];
      expect(same(c.fn, () => argsOf(c), seeds, ["collect"])).toEqual([]);
      let racy = 0;
      for (const { fn } of mutants(c.fn)) {
        const modes = BIG.has(c.fn.name) ? (["throw"] as const) : undefined;
        const r = same(fn, () => argsOf(c), seeds, modes);
        if (r.length > 0) racy++;
      }
      // The mutants are racy (see mutation.test.ts), so runs declined and replayed there.
      if (mutants(c.fn).length > 1) expect(racy).toBeGreaterThan(0);
    });
  }
});

const f32 = (n: number): KernelArg =>
  simTensor(
    Array.from({ length: n }, (_, i) => i * 0.5),
    { shape: [n], dtype: "float32" },
  );

/** The handles a kernel body below gets: two float32 tensors, %tid.x, a shared buffer. */
interface Body {
  readonly A: TileView;
  readonly B: TileView;
  readonly tid: PrimExpr;
  readonly s: TileView;
}

/** 128 threads (`grid` CTAs) over A and B of 1024 float32, with 256 shared float32. */
function kernel(name: string, body: (h: Body) => void, grid = 1): PrimFunc {
  return T.function(
    name,
    { A: T.Tensor([1024], "float32"), B: T.Tensor([1024], "float32") },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid, block: 128 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([256], "float32");
      body({ A, B, tid, s });
    },
  );
}

const args2 = (): KernelArg[] => [f32(1024), simZeros([1024], "float32")];

describe("runs that must decline report as element checks do", () => {
  it("a clean staged copy takes runs and reports nothing", () => {
    const fn = kernel("staged", ({ A, B, tid, s }) => {
      s.set([tid], A.get([tid]));
      T.cuda.cta_sync();
      B.set([tid], s.get([tid.add(1).floormod(128)]));
    });
    expect(same(fn, args2)).toEqual([]);
  });

  it("a store run read by other warps with no cta_sync: one race, both lines", () => {
    const fn = kernel("no_sync", ({ A, B, tid, s }) => {
      s.set([tid], A.get([tid]));
      B.set([tid], s.get([tid.add(32).floormod(128)]));
    });
    const r = same(fn, args2);
    expect(r.length).toBeGreaterThan(0);
    expect(r[0]).toMatch(/^TX6003/);
    expect(r[0]).toMatch(/note @\d+:\d+/);
  });

  it("overwriting another warp's reads without a barrier (write-after-read)", () => {
    const fn = kernel("war", ({ A, B, tid, s }) => {
      s.set([tid], A.get([tid]));
      T.cuda.cta_sync();
      B.set([tid], s.get([tid.add(32).floormod(128)]));
      s.set([tid], A.get([tid.add(128)]));
    });
    const r = same(fn, args2);
    expect(r.some((x) => x.startsWith("TX6013"))).toBe(true);
  });

  it("broadcast loads, masked lanes and float16 elements", () => {
    const fn = T.function(
      "mixed",
      { A: T.Tensor([512], "float16"), B: T.Tensor([512], "float16") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([512], "float16");
        s.set([tid], A.get([tid]));
        T.if_(tid.floormod(3).ne(0), () => s.set([tid.add(128)], A.get([tid.add(128)])));
        T.cuda.cta_sync();
        B.set([tid], s.get([0]));
        T.if_(tid.lt(96), () => B.set([tid.add(128)], s.get([tid.add(128)])));
      },
    );
    const h = (): KernelArg[] => [
      simTensor(
        Array.from({ length: 512 }, (_, i) => i % 100),
        { shape: [512], dtype: "float16" },
      ),
      simZeros([512], "float16"),
    ];
    // Lanes 129, 130, 132, ... never stored their element: their reads are TX6004.
    const r = same(fn, h);
    expect(r.length).toBeGreaterThan(0);
    expect(r[0]).toMatch(/^TX6004/);
  });

  it("lanes out of bounds part-way through a statement (the vector loop stops there)", () => {
    // With k = 9, lanes 114 on read past A's end and write past B's end (an index the verifier
    // cannot bound): each reports TX6005 where it comes, in lane order, after the runs of the
    // lanes before it.
    const fn = T.function(
      "oob_mid",
      { A: T.Tensor([1024], "float32"), B: T.Tensor([1024], "float32"), k: T.int32 },
      ({ A, B, k }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([256], "float32");
        s.set([tid], A.get([tid.mul(k)]));
        B.set([tid.mul(k)], s.get([tid]));
        T.cuda.cta_sync();
        B.set([tid.add(k)], s.get([tid.add(1).floormod(128)]));
      },
    );
    const h = (): KernelArg[] => [f32(1024), simZeros([1024], "float32"), 9];
    const r = same(fn, h);
    expect(r.filter((x) => x.startsWith("TX6005")).length).toBe(2); // one per site
    expect(same(fn, () => [f32(1024), simZeros([1024], "float32"), 1])).toEqual([]);
  });

  it("one tensor passed as two parameters", () => {
    const fn = kernel("alias", ({ A, B, tid }) => {
      B.set([tid], A.get([tid.add(1)]));
    });
    const aliased = (): KernelArg[] => {
      const t = f32(1024);
      return [t, t];
    };
    // Thread t writes element t, thread t - 1 reads it in the same statement: a race.
    expect(same(fn, aliased).length).toBeGreaterThan(0);
  });

  it("two CTAs write the same elements (write-after-write across CTAs)", () => {
    const fn = kernel(
      "two_ctas",
      ({ A, B, tid }) => {
        B.set([tid], A.get([tid]));
      },
      2,
    );
    const r = same(fn, args2);
    expect(r[0]).toMatch(/^TX6014/);
  });

  it("a cp.async tile read back by other threads with and without the barrier", () => {
    const build = (sync: boolean): PrimFunc =>
      T.function(
        sync ? "tile_sync" : "tile_nosync",
        { A: T.Tensor([8, 128], "float32"), B: T.Tensor([8, 128], "float32") },
        ({ A, B }) => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 8, block: 32 }) });
          const tid = T.cuda.thread_idx("x");
          const row = T.cuda.block_idx("x");
          const s = T.alloc_shared([128], "float32");
          const src = A.sub(row, ":").rearrange("(r w t v) -> w t r v", { w: 1, t: 32, v: 4 });
          const dst = s.rearrange("(r w t v) -> w t r v", { w: 1, t: 32, v: 4 });
          T.cuda.tile.apply(T.ptx["cp.async.cg.shared.global"]!, dst, src, {
            chunk_bytes: 16,
            scope: "cta",
          });
          T.ptx.cp.async_.commit_group();
          T.ptx.cp.async_.wait_group(0);
          if (sync) T.cuda.cta_sync();
          for (const j of T.range(4)) B.set([row, tid.add(j.mul(32))], s.get([tid.add(j.mul(32))]));
        },
      );
    const a = (): KernelArg[] => [
      simTensor(
        Array.from({ length: 1024 }, (_, i) => i),
        { shape: [8, 128], dtype: "float32" },
      ),
      simZeros([8, 128], "float32"),
    ];
    expect(same(build(true), a)).toEqual([]);
    expect(same(build(false), a)[0]).toMatch(/^TX6003/);
  });
});

describe("strided runs (a column: consecutive threads, elements a fixed step apart)", () => {
  it("clean: strided shared reads and global writes after a barrier take runs", () => {
    const fn = kernel("column", ({ A, B, tid, s }) => {
      s.set([tid.mul(2)], A.get([tid]));
      T.cuda.cta_sync();
      B.set([tid.mul(4)], s.get([tid.mul(2)]));
    });
    expect(same(fn, args2)).toEqual([]);
  });

  it("a strided read of other warps' stores with no barrier: TX6003, both lines", () => {
    const fn = kernel("column_race", ({ A, B, tid, s }) => {
      s.set([tid.mul(2)], A.get([tid]));
      B.set([tid.mul(4)], s.get([tid.add(32).floormod(128).mul(2)]));
    });
    const r = same(fn, args2);
    expect(r[0]).toMatch(/^TX6003/);
    expect(r[0]).toMatch(/note @\d+:\d+/);
  });

  it("strided reads by two unordered readers, then a write (second reader slot, TX6013)", () => {
    const fn = kernel("column_readers", ({ A, B, tid, s }) => {
      s.set([tid], A.get([tid]));
      T.cuda.cta_sync();
      B.set([tid.mul(2)], s.get([tid.mul(2).floormod(128)]));
      B.set([tid.mul(2).add(1)], s.get([tid.add(64).mul(2).floormod(128)]));
      s.set([tid.mul(2).floormod(128)], A.get([tid.add(256)]));
    });
    const r = same(fn, args2);
    expect(r.some((x) => x.startsWith("TX6013"))).toBe(true);
  });

  it("strided shared stores (a transpose through shared memory), clean and racy", () => {
    const build = (sync: boolean): PrimFunc =>
      kernel(sync ? "transpose" : "transpose_race", ({ A, B, tid, s }) => {
        for (const j of T.range(2)) s.set([tid.mul(2).add(j)], A.get([tid.add(j.mul(128))]));
        if (sync) T.cuda.cta_sync();
        B.set([tid], s.get([tid.add(32).floormod(256)]));
        if (sync) T.cuda.cta_sync();
        s.set([tid.mul(2)], A.get([tid.add(512)]));
      });
    expect(same(build(true), args2)).toEqual([]);
    const r = same(build(false), args2);
    expect(r.some((x) => x.startsWith("TX6003"))).toBe(true);
    expect(r.some((x) => x.startsWith("TX6013"))).toBe(true);
  });

  it("two CTAs write the same strided elements (TX6014)", () => {
    const fn = kernel("column_waw", ({ A, B, tid }) => B.set([tid.mul(3)], A.get([tid])), 2);
    expect(same(fn, args2)[0]).toMatch(/^TX6014/);
  });

  it("a strided global read, then another thread's write without a barrier (TX6013)", () => {
    const fn = kernel("column_war", ({ A, B, tid, s }) => {
      B.set([tid], A.get([tid]));
      T.cuda.cta_sync();
      s.set([tid], B.get([tid.mul(4).floormod(128)]));
      B.set([tid.add(1).floormod(128)], A.get([tid.add(512)]));
    });
    const r = same(fn, args2);
    expect(r.some((x) => x.startsWith("TX6013"))).toBe(true);
  });
});

describe("a landing keeps what a range would drop", () => {
  /**
   * Threads 1..3 touch s[0] concurrently (`touch`: a read, so one reader overflows its two slots,
   * or a red.add), then a cp.async tile lands over s and thread 0 accesses s[0] (`after`). The
   * landing keeps the overflow readers and atomic records, so thread 0's access races with them:
   * a landing of consecutive threads' chunks must not be recorded as a range here.
   */
  const landing = (name: string, touch: (h: Body) => void, after: (h: Body) => void): PrimFunc =>
    T.function(
      name,
      { A: T.Tensor([128], "float32"), B: T.Tensor([128], "float32") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([128], "float32");
        for (const j of T.range(4)) s.set([tid.mul(4).add(j)], A.get([tid.mul(4).add(j)]));
        T.cuda.cta_sync();
        T.if_(tid.ge(1).and(tid.lt(4)), () => touch({ A, B, tid, s }));
        const src = A.rearrange("(r w t v) -> w t r v", { w: 1, t: 32, v: 4 });
        const dst = s.rearrange("(r w t v) -> w t r v", { w: 1, t: 32, v: 4 });
        T.cuda.tile.apply(T.ptx["cp.async.cg.shared.global"]!, dst, src, {
          chunk_bytes: 16,
          scope: "cta",
        });
        T.ptx.cp.async_.commit_group();
        T.ptx.cp.async_.wait_group(0);
        T.if_(tid.eq(0), () => after({ A, B, tid, s }));
      },
    );
  const a = (): KernelArg[] => [
    simTensor(
      Array.from({ length: 128 }, (_, i) => i),
      { shape: [128], dtype: "float32" },
    ),
    simZeros([128], "float32"),
  ];

  it("overflow readers: thread 0's later store is a write-after-read", () => {
    const fn = landing(
      "overflow_landing",
      ({ B, tid, s }) => B.set([tid], s.get([0])),
      ({ s }) => s.set([0], T.float32(1)),
    );
    const r = same(fn, a, [0, 2], ["collect"]);
    expect(r.filter((x) => x.startsWith("TX6013")).length).toBe(2);
  });

  it("atomic records: thread 0's later read races with a red.add", () => {
    const fn = landing(
      "atomic_landing",
      ({ s }) => T.cuda.red_add(s.ptr([0]), T.float32(1)),
      ({ B, s }) => B.set([0], s.get([0])),
    );
    const r = same(fn, a, [0, 2], ["collect"]);
    expect(r.some((x) => x.startsWith("TX6003"))).toBe(true);
  });
});

describe("generated statement functions report what closures report", () => {
  const ways: SimOptions[] = [{ jitAfter: 0 }, { jitAfter: Infinity }];

  it("one load node used twice in a statement is two accesses with a site each", () => {
    const fn = kernel("load_twice", ({ A, B, tid, s }) => {
      s.set([tid], A.get([tid]));
      const v = s.get([tid.add(32).floormod(128)]);
      B.set([tid], v.add(v));
    });
    const r = same(fn, args2, [0, 2], ["collect", "throw"], ways);
    // No cta_sync: each of the two reads races with another warp's store.
    expect(r.filter((x) => x.startsWith("TX6003")).length).toBe(2);
  });

  it("every kernel of the mutation test and its mutants", () => {
    for (const c of CASES) {
      if (BIG.has(c.fn.name)) continue;
      same(c.fn, () => argsOf(c), [0, 2], ["collect"], ways);
      for (const { fn } of mutants(c.fn)) same(fn, () => argsOf(c), [2], ["collect"], ways);
    }
  });
});
