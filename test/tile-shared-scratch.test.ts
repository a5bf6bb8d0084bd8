// The tile primitives that exchange values through shared memory (reductions across warps,
// cta-scope permute_layout) share one scratch region per kernel and scope, sized by the largest
// call, instead of one allocation per call (core SharedScratch). Each kernel here runs on the
// simulated device, whose hazard checks throw on any report (a race on the reused bytes: TX6003,
// TX6013, TX6014), against host math, and its PTX goes through ptxas. The shared-memory totals
// are those of the shared regions; each allocation per call made them the sum (TX2008 for the
// twenty large reductions).
import { describe, expect, it } from "vitest";
import { T, compile, explainTile, sim, tensor, type PrimFunc } from "tirx-ts";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";

const dev = sim();

/** Integers in [-50, 50]: every float32 sum here is exact. */
function ints(n: number, seed: number): Float32Array {
  let s = seed >>> 0;
  return Float32Array.from(
    { length: n },
    () => (((s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 16) % 101) - 50,
  );
}

/** Static shared bytes of `fn`'s PTX for `arch`, its `.shared` arrays, and ptxas queued. */
function shared(fn: PrimFunc, arch = "sm_80"): { bytes: number; arrays: string[]; ptx: string } {
  const m = compileToPtx(fn, { arch });
  assembleLater(m.text, arch, fn.name);
  const arrays = [...m.text.matchAll(/\.shared \.align \d+ \.b8 (\w+\[\d+\]);/g)].map((x) => x[1]!);
  return { bytes: m.staticSharedBytes, arrays, ptx: m.text };
}

/** Run `fn` on the simulator with `ins` (float32) and zeroed outputs of `outs`; the outputs. */
function run(fn: PrimFunc, ins: [Float32Array, number[]][], outs: number[][]): number[][] {
  const a = ins.map(([x, shape]) => tensor(x, { shape, dtype: "float32", device: dev }));
  const o = outs.map((shape) => tensor.zeros(shape, "float32", dev));
  compile(fn, { target: "cuda" })(...a, ...o);
  const got = o.map((t) => Array.from(t.toArray() as Float32Array));
  for (const t of [...a, ...o]) t.dispose();
  return got;
}

type Op = "sum" | "max" | "min";
const combine = {
  sum: (a: number, b: number) => a + b,
  max: (a: number, b: number) => Math.max(a, b),
  min: (a: number, b: number) => Math.min(a, b),
};
const fold = (op: Op, xs: number[]): number => xs.reduce(combine[op]);

// A [warps, 32, kept] tile: rows on warps, columns on lanes, `kept` slots per thread. Its sum
// along axis 0 keeps a partial per lane, warp and slot in the scratch: kept · 32 · warps floats.
const WARPS = 8;
const KEPT = 8;
const colTile = () => T.TileLayout(T.S([WARPS, 32, KEPT], ["1@warpid", "1@laneid", 1]));
const colSum = () =>
  T.TileLayout(T.S([1, 32, KEPT], [1, "1@laneid", 1]), T.R([WARPS], ["1@warpid"]));
/** Bytes of one column reduction's scratch: 8 KiB. */
const COL_BYTES = KEPT * 32 * WARPS * 4;

/** Host reference of one column reduction of x's [WARPS, 32, KEPT] block `k`. */
function colReference(op: Op, x: Float32Array, k: number): number[] {
  const n = 32 * KEPT;
  return Array.from({ length: n }, (_, j) =>
    fold(
      op,
      Array.from({ length: WARPS }, (_, w) => x[k * WARPS * n + w * n + j]!),
    ),
  );
}

describe("one shared scratch per kernel for the tile primitives", () => {
  it("twenty 8 KiB reductions back to back take 8 KiB (each allocation its own was 160 KiB, TX2008)", () => {
    const CALLS = 20;
    const ops: Op[] = Array.from(
      { length: CALLS },
      (_, k) => (["sum", "max", "min"] as const)[k % 3]!,
    );
    const fn = T.function(
      "twenty_reductions",
      {
        X: T.Tensor([CALLS, WARPS, 32, KEPT], "float32"),
        R: T.Tensor([CALLS, 1, 32, KEPT], "float32"),
      },
      ({ X, R }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 * WARPS }) });
        const a = T.alloc_local([WARPS, 32, KEPT], "float32", { layout: colTile() });
        const d = T.alloc_local([1, 32, KEPT], "float32", { layout: colSum() });
        ops.forEach((op, k) => {
          T.tile.cta.copy(a, X.sub(k));
          T.tile.cta[op](d, a, 0);
          T.tile.cta.copy(R.sub(k), d);
        });
      },
    );
    const s = shared(fn);
    expect(s.bytes).toBe(COL_BYTES);
    expect(s.arrays).toEqual([`smem_tile_scratch[${COL_BYTES}]`]);
    // Every call after the first waits for the one before it to finish reading.
    const notes = explainTile(fn).filter((l) => l.includes("shared scratch"));
    expect(notes).toHaveLength(CALLS);
    expect(notes.filter((l) => / \+ bar\.sync ×2: /.test(l))).toHaveLength(CALLS - 1);
    expect(s.ptx.match(/bar\.sync 0;/g)).toHaveLength(2 * CALLS - 1);
    const x = ints(CALLS * WARPS * 32 * KEPT, 5);
    const [r] = run(fn, [[x, [CALLS, WARPS, 32, KEPT]]], [[CALLS, 1, 32, KEPT]]);
    expect(r).toEqual(ops.flatMap((op, k) => colReference(op, x, k)));
  });

  // [4, 64] float32 on 64 threads: rows in each thread, columns on 2 warps × 32 lanes; and
  // the layout of rows of threads, which permute_layout reaches through the scratch.
  const ROWS = () => T.TileLayout(T.S([4, 2, 32], [1, "1@warpid", "1@laneid"]));
  const ROW_RED = () => T.TileLayout(T.S([4, 1]), T.R([2, 32], ["1@warpid", "1@laneid"]));
  const THREAD_ROWS = () => T.TileLayout(T.S([4, 16, 4], ["16@tid", "1@tid", 1]));

  it("reductions and permutes of two dtypes, with warp-scope calls between: sized by the largest", () => {
    const fn = T.function(
      "mixed_calls",
      {
        A: T.Tensor([4, 64], "float32"),
        R: T.Tensor([3, 4, 1], "float32"),
        O: T.Tensor([2, 4, 64], "float32"),
      },
      ({ A, R, O }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const a = T.alloc_local([4, 64], "float32", { layout: ROWS() });
        const b = T.alloc_local([4, 64], "float32", { layout: THREAD_ROWS() });
        const h = T.alloc_local([4, 64], "float16", { layout: ROWS() });
        const h2 = T.alloc_local([4, 64], "float16", { layout: THREAD_ROWS() });
        const d = T.alloc_local([4, 1], "float32", { layout: ROW_RED() });
        // A warp's own [4, 32]: lane butterflies, no scratch.
        const l = T.alloc_local([4, 32], "float32", {
          layout: T.TileLayout(T.S([4, 32], [1, "1@laneid"])),
        });
        const dl = T.alloc_local([4, 1], "float32", {
          layout: T.TileLayout(T.S([4, 1]), T.R([32], ["1@laneid"])),
        });
        T.tile.cta.copy(a, A);
        T.tile.cta.max(d, a, 1); // 32 B at 0
        T.tile.cta.copy(R.sub(0), d);
        T.tile.warp.copy(l, A.sub(":", "0:32"));
        T.tile.warp.sum(dl, l, 1);
        T.tile.cta.cast(h, a);
        T.tile.cta.permute_layout(h2, h); // 512 B past the max's partials: no wait
        T.tile.cta.cast(b, h2);
        T.tile.cta.copy(O.sub(0), b);
        T.tile.cta.permute_layout(b, a); // 1 KiB: waits, at 0
        T.tile.cta.copy(O.sub(1), b);
        T.tile.cta.sum(d, a, 1); // waits, at 0
        T.tile.cta.copy(R.sub(1), d);
        T.tile.warp.min(dl, l, 1);
        T.tile.cta.copy(R.sub(2), dl);
      },
    );
    const s = shared(fn);
    expect(s.bytes).toBe(1024); // was 32 + 512 + 1024 + 32
    const notes = explainTile(fn).filter((n) => n.includes("shared scratch"));
    expect(notes.map((n) => n.includes("bar.sync ×2"))).toEqual([false, false, true, true]);
    const x = ints(256, 9);
    const [r, o] = run(
      fn,
      [[x, [4, 64]]],
      [
        [3, 4, 1],
        [2, 4, 64],
      ],
    );
    const row = (i: number, n = 64) => Array.from(x.subarray(i * 64, i * 64 + n));
    expect(r).toEqual([
      ...[0, 1, 2, 3].map((i) => fold("max", row(i))),
      ...[0, 1, 2, 3].map((i) => fold("sum", row(i))),
      ...[0, 1, 2, 3].map((i) => fold("min", row(i, 32))),
    ]);
    expect(o).toEqual([...x, ...x]);
  });

  it("calls in a loop and in both branches of an if, then after the loop", () => {
    const ITERS = 3;
    const fn = T.function(
      "loop_branch_calls",
      {
        A: T.Tensor([ITERS, 4, 64], "float32"),
        R: T.Tensor([ITERS + 1, 2, 4, 1], "float32"),
        O: T.Tensor([ITERS, 4, 64], "float32"),
      },
      ({ A, R, O }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const a = T.alloc_local([4, 64], "float32", { layout: ROWS() });
        const b = T.alloc_local([4, 64], "float32", { layout: THREAD_ROWS() });
        const d = T.alloc_local([4, 1], "float32", { layout: ROW_RED() });
        for (const it of T.serial(0, ITERS)) {
          T.tile.cta.copy(a, A.sub(it));
          T.tile.cta.sum(d, a, 1);
          T.tile.cta.copy(R.sub(it, 0), d);
          T.if_(
            it.floormod(2).eq(0),
            () => {
              T.tile.cta.permute_layout(b, a);
              T.tile.cta.copy(O.sub(it), b);
            },
            () => {
              T.tile.cta.max(d, a, 1);
              T.tile.cta.copy(R.sub(it, 1), d);
            },
          );
        }
        T.tile.cta.min(d, a, 1);
        T.tile.cta.copy(R.sub(ITERS, 0), d);
      },
    );
    const s = shared(fn);
    expect(s.bytes).toBe(1024); // was 32 + 1024 + 32 + 32
    const notes = explainTile(fn).filter((n) => n.includes("shared scratch"));
    // Nested calls wait first (the loop's next iteration reuses their bytes); the call after
    // the loop waits too: the loop's permute may still be read at 0..1023.
    expect(notes.every((n) => n.includes("bar.sync ×2"))).toBe(true);
    const x = ints(ITERS * 256, 21);
    const [r, o] = run(
      fn,
      [[x, [ITERS, 4, 64]]],
      [
        [ITERS + 1, 2, 4, 1],
        [ITERS, 4, 64],
      ],
    );
    const row = (it: number, i: number) =>
      Array.from(x.subarray((it * 4 + i) * 64, (it * 4 + i + 1) * 64));
    const rows = [0, 1, 2, 3];
    const want: number[] = [];
    for (let it = 0; it < ITERS; it++) {
      want.push(...rows.map((i) => fold("sum", row(it, i))));
      want.push(...rows.map((i) => (it % 2 === 1 ? fold("max", row(it, i)) : 0)));
    }
    want.push(...rows.map((i) => fold("min", row(ITERS - 1, i))), 0, 0, 0, 0);
    expect(r).toEqual(want);
    expect(o).toEqual(Array.from(x, (v, i) => (Math.floor(i / 256) % 2 === 0 ? v : 0)));
  });

  /** Two 8 KiB column sums with `between` traced between them. */
  const twoSums = (name: string, between: () => void): PrimFunc =>
    T.function(
      name,
      { X: T.Tensor([2, WARPS, 32, KEPT], "float32"), R: T.Tensor([2, 1, 32, KEPT], "float32") },
      ({ X, R }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 * WARPS }) });
        const a = T.alloc_local([WARPS, 32, KEPT], "float32", { layout: colTile() });
        const d = T.alloc_local([1, 32, KEPT], "float32", { layout: colSum() });
        T.tile.cta.copy(a, X.sub(0));
        T.tile.cta.sum(d, a, 0);
        T.tile.cta.copy(R.sub(0), d);
        between();
        T.tile.cta.copy(a, X.sub(1));
        T.tile.cta.sum(d, a, 0);
        T.tile.cta.copy(R.sub(1), d);
      },
    );

  it("a CTA barrier the author wrote between two calls orders the first's reads: no second wait", () => {
    const fenced = twoSums("user_barrier", () => T.cuda.cta_sync());
    const s = shared(fenced);
    expect(s.bytes).toBe(COL_BYTES);
    expect(explainTile(fenced).filter((n) => n.includes("bar.sync ×2"))).toEqual([]);
    expect(s.ptx.match(/bar\.sync 0;/g)).toHaveLength(3); // the author's and one per call
    const x = ints(2 * WARPS * 32 * KEPT, 33);
    const [r] = run(fenced, [[x, [2, WARPS, 32, KEPT]]], [[2, 1, 32, KEPT]]);
    expect(r).toEqual([...colReference("sum", x, 0), ...colReference("sum", x, 1)]);
    // A named barrier of every thread counts too; a barrier that may not run (in a branch), a
    // named barrier of some threads, or none at all does not: the second call waits.
    const tid = () => T.cuda.thread_idx("x");
    for (const [name, between, waits] of [
      ["named_barrier_all", () => T.cuda.bar_sync(1, 32 * WARPS), 0],
      ["no_barrier", () => undefined, 1],
      ["branch_barrier", () => T.if_(tid().lt(1000), () => T.cuda.cta_sync()), 1],
      ["named_barrier_some", () => T.if_(tid().lt(64), () => T.cuda.bar_sync(1, 64)), 1],
    ] as const) {
      const fn = twoSums(name, between);
      expect(shared(fn).bytes).toBe(COL_BYTES);
      expect(explainTile(fn).filter((n) => n.includes("bar.sync ×2"))).toHaveLength(waits);
      const [got] = run(fn, [[x, [2, WARPS, 32, KEPT]]], [[2, 1, 32, KEPT]]);
      expect(got).toEqual(r);
    }
  });

  it("a CTA barrier before a loop orders the reads before it for the calls after the loop too", () => {
    const rows = () => T.TileLayout(T.S([4, WARPS, 32], [1, "1@warpid", "1@laneid"]));
    const rowRed = () => T.TileLayout(T.S([4, 1]), T.R([WARPS, 32], ["1@warpid", "1@laneid"]));
    const fn = T.function(
      "barrier_before_loop",
      {
        X: T.Tensor([WARPS, 32, KEPT], "float32"),
        C: T.Tensor([3, 4, 32 * WARPS], "float32"),
        R: T.Tensor([1, 32, KEPT], "float32"),
        RC: T.Tensor([3, 4, 1], "float32"),
      },
      ({ X, C, R, RC }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 * WARPS }) });
        const a = T.alloc_local([WARPS, 32, KEPT], "float32", { layout: colTile() });
        const d = T.alloc_local([1, 32, KEPT], "float32", { layout: colSum() });
        const c = T.alloc_local([4, 32 * WARPS], "float32", { layout: rows() });
        const dc = T.alloc_local([4, 1], "float32", { layout: rowRed() });
        T.tile.cta.copy(a, X);
        T.tile.cta.sum(d, a, 0); // 8 KiB at 0
        T.tile.cta.copy(R, d);
        T.cuda.cta_sync();
        for (const it of T.serial(0, 2)) {
          T.tile.cta.copy(c, C.sub(it));
          T.tile.cta.max(dc, c, 1); // 128 B at 0, waiting first (the loop)
          T.tile.cta.copy(RC.sub(it), dc);
        }
        T.tile.cta.copy(c, C.sub(2));
        T.tile.cta.min(dc, c, 1); // past the loop's bytes: the sum's were ordered by the barrier
        T.tile.cta.copy(RC.sub(2), dc);
      },
    );
    expect(shared(fn).bytes).toBe(COL_BYTES);
    const notes = explainTile(fn).filter((n) => n.includes("shared scratch"));
    expect(notes.map((n) => n.includes("×2"))).toEqual([false, true, false]);
    const x = ints(WARPS * 32 * KEPT, 51);
    const cv = ints(3 * 4 * 32 * WARPS, 53);
    const [r, rc] = run(
      fn,
      [
        [x, [WARPS, 32, KEPT]],
        [cv, [3, 4, 32 * WARPS]],
      ],
      [
        [1, 32, KEPT],
        [3, 4, 1],
      ],
    );
    expect(r).toEqual(colReference("sum", x, 0));
    const row = (k: number) => Array.from(cv.subarray(k * 32 * WARPS, (k + 1) * 32 * WARPS));
    expect(rc).toEqual(
      [0, 1, 2].flatMap((it) =>
        [0, 1, 2, 3].map((i) => fold(it < 2 ? "max" : "min", row(it * 4 + i))),
      ),
    );
  });

  it("warp-specialized wg reductions: each warpgroup its own slice; cta calls their own region", () => {
    // Per warpgroup: [4, 128] and [16, 128] tiles over tid_in_wg, reduced along axis 1 through
    // one partial per warp and row (64 and 256 B a warpgroup).
    const wgTile = (rows: number) => T.TileLayout(T.S([rows, 128], [1, "1@tid_in_wg"]));
    const wgRed = (rows: number) => T.TileLayout(T.S([rows, 1]), T.R([128], ["1@tid_in_wg"]));
    const fn = T.function(
      "wg_specialized",
      {
        X: T.Tensor([2, 4, 128], "float32"),
        Y: T.Tensor([16, 128], "float32"),
        C: T.Tensor([4, 256], "float32"),
        R: T.Tensor([2, 4, 4], "float32"),
        RY: T.Tensor([16, 1], "float32"),
        RC: T.Tensor([4, 1], "float32"),
      },
      ({ X, Y, C, R, RY, RC }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 256 }) });
        const wg = T.cuda.thread_idx("x").floordiv(128);
        const a = T.alloc_local([4, 128], "float32", { layout: wgTile(4) });
        const d = T.alloc_local([4, 1], "float32", { layout: wgRed(4) });
        const y = T.alloc_local([16, 128], "float32", { layout: wgTile(16) });
        const dy = T.alloc_local([16, 1], "float32", { layout: wgRed(16) });
        const c = T.alloc_local([4, 256], "float32", {
          layout: T.TileLayout(T.S([4, 8, 32], [1, "1@warpid", "1@laneid"])),
        });
        const dc = T.alloc_local([4, 1], "float32", {
          layout: T.TileLayout(T.S([4, 1]), T.R([8, 32], ["1@warpid", "1@laneid"])),
        });
        T.tile.wg.copy(a, X.sub(wg));
        T.tile.wg.sum(d, a, 1);
        T.tile.wg.copy(R.sub(wg, 0), d);
        // Warpgroup 0 reduces Y while warpgroup 1 reduces its X twice: no CTA barrier between.
        T.if_(
          wg.eq(0),
          () => {
            T.tile.wg.copy(y, Y);
            T.tile.wg.max(dy, y, 1);
            T.tile.wg.copy(RY, dy);
          },
          () => {
            T.tile.wg.min(d, a, 1);
            T.tile.wg.copy(R.sub(1, 1), d);
            T.tile.wg.max(d, a, 1);
            T.tile.wg.copy(R.sub(1, 2), d);
          },
        );
        T.tile.wg.max(d, a, 1);
        T.tile.wg.copy(R.sub(wg, 3), d);
        T.tile.cta.copy(c, C);
        T.tile.cta.sum(dc, c, 1);
        T.tile.cta.copy(RC, dc);
      },
    );
    const s = shared(fn);
    // wg: 256 B for the branch's [16, 128] max, and the last max placed past it (64 B) instead
    // of waiting, in each of 2 slices; cta: 4 rows × 8 warps × 4 B. Was 1152.
    expect(s.arrays.sort()).toEqual(["smem_tile_scratch[128]", "smem_tile_scratch_wg[640]"]);
    expect(s.bytes).toBe(768);
    const notes = explainTile(fn).filter((n) => n.includes("shared scratch"));
    expect(notes.map((n) => n.includes("×2"))).toEqual([false, true, true, true, false, false]);
    const x = ints(2 * 4 * 128, 41);
    const yv = ints(16 * 128, 43);
    const cv = ints(4 * 256, 47);
    const [r, ry, rc] = run(
      fn,
      [
        [x, [2, 4, 128]],
        [yv, [16, 128]],
        [cv, [4, 256]],
      ],
      [
        [2, 4, 4],
        [16, 1],
        [4, 1],
      ],
    );
    const rowOf = (v: Float32Array, i: number, n: number) =>
      Array.from(v.subarray(i * n, (i + 1) * n));
    const xr = (g: number, op: Op) => [0, 1, 2, 3].map((i) => fold(op, rowOf(x, g * 4 + i, 128)));
    expect(r).toEqual([
      ...xr(0, "sum"),
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      ...xr(0, "max"),
      ...xr(1, "sum"),
      ...xr(1, "min"),
      ...xr(1, "max"),
      ...xr(1, "max"),
    ]);
    expect(ry).toEqual(Array.from({ length: 16 }, (_, i) => fold("max", rowOf(yv, i, 128))));
    expect(rc).toEqual([0, 1, 2, 3].map((i) => fold("sum", rowOf(cv, i, 256))));
  });

  it("permutes of mma fragments through the byte region by stmatrix and ldmatrix (sm_90)", () => {
    const C = () => T.layout.mma_sync_tile_layout("C", "m16n8k16", "float16", 16, 16);
    const B = () => T.layout.mma_sync_tile_layout("B", "m16n8k16", "float16", 16, 16);
    const fn = T.function(
      "fragment_permutes",
      { A: T.Tensor([16, 16], "float16"), O: T.Tensor([3, 16, 16], "float16") },
      ({ A, O }) => {
        // Two warps: each holds the fragments (warp 0 stores them, both load them).
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }), arch: "sm_90" });
        const c = T.alloc_local([16, 16], "float16", { layout: C() });
        const b = T.alloc_local([16, 16], "float16", { layout: B() });
        T.tile.cta.copy(c, A);
        T.tile.cta.permute_layout(b, c); // at 0
        T.tile.cta.copy(O.sub(0), b);
        T.tile.cta.permute_layout(c, b); // at 512: past the first, within 1 KiB
        T.tile.cta.copy(O.sub(1), c);
        T.tile.cta.permute_layout(b, c); // at 0 again: the second's barrier ordered the first's reads
        T.tile.cta.copy(O.sub(2), b);
      },
    );
    const s = shared(fn, "sm_90");
    expect(s.bytes).toBe(1024);
    expect(
      s.ptx.match(/\b(stmatrix|ldmatrix)\.sync\.aligned\.m8n8\.x4(\.trans)?\.shared\.b16/g),
    ).toHaveLength(6);
    const notes = explainTile(fn).filter((n) => n.includes("shared scratch"));
    expect(notes.map((n) => n.includes("×2"))).toEqual([false, false, false]);
    const a = Float32Array.from({ length: 256 }, (_, i) => (i % 97) - 40);
    const A = tensor(a, { shape: [16, 16], dtype: "float16", device: dev });
    const O = tensor.zeros([3, 16, 16], "float16", dev);
    compile(fn, { target: "cuda" })(A, O);
    expect(Array.from(O.toArray() as ArrayLike<number>)).toEqual([...a, ...a, ...a]);
  });
});
