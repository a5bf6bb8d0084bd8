// An author index that reads data is left to the run by the verifier (test/axis-bounds.test.ts);
// issue 20: it must not give silently wrong data there either. The simulator checks each such
// index against its axis (the `axis-checks` pass keeps exactly those on the access): a column
// past its row whose flat offset stays inside the tensor is TX6005 at the access's line, naming
// the axis, its extent and the index, for loads and stores, global and shared memory, the index a
// `sub` fixed and a rearranged view's axis; the access is skipped. In-range indices run with no
// report. codegen's checkBounds guards the same axes (PTX checked, assembled by ptxas), and its
// report reads as the simulator's. The GPU run is in test/gpu/check-bounds.test.ts.
import { afterAll, describe, expect, test } from "vitest";
import { T } from "@tirx-ts/dsl";
import {
  DEFAULT_PASSES,
  runPipeline,
  stmtExprs,
  verify,
  walkExpr,
  walkStmt,
  type PrimFunc,
  type TirxError,
} from "@tirx-ts/core";
import { compileToPtx, OOB_RECORD_BYTES, type PtxModule } from "@tirx-ts/codegen-ptx";
import { boundsReport } from "@tirx-ts/runtime-cuda";
import { runSim, simTensor, simZeros, type SimOptions } from "@tirx-ts/runtime-sim";
import { assembleAll, type PtxJob } from "./conformance/ptxas-pool.js";
import { errorOf } from "./util/error-of.js";
import { lineContaining } from "./util/markers.js";

/** The line of this file that holds `marker`. */
const lineOf = lineContaining(import.meta.url);

const N = 128;
const launch = () => T.cuda.LaunchConfig({ grid: 1, block: N });

/** B[t, idx[t]] = 1 on B [128, 32]: the column is data. */
const colStore = T.function(
  "col_store",
  { idx: T.Tensor([N], "int32"), B: T.Tensor([N, 32], "float32") },
  ({ idx, B }) => {
    T.device_entry({ launch: launch() });
    const t = T.cuda.thread_idx("x");
    B.set([t, idx.get([t])], T.float32(1)); // COL STORE
  },
);

/** O[t] = B[t, idx[t]]. */
const colLoad = T.function(
  "col_load",
  { idx: T.Tensor([N], "int32"), B: T.Tensor([N, 32], "float32"), O: T.Tensor([N], "float32") },
  ({ idx, B, O }) => {
    T.device_entry({ launch: launch() });
    const t = T.cuda.thread_idx("x");
    O.set([t], B.get([t, idx.get([t])])); // COL LOAD
  },
);

/**
 * Through shared memory: each thread writes its row of S [128, 8], marks S[t, idx[t]], and reads
 * back S[t, jdx[t]]; a column past the row would be the next thread's element (a race too).
 */
const sharedCol = T.function(
  "shared_col",
  { idx: T.Tensor([N], "int32"), jdx: T.Tensor([N], "int32"), O: T.Tensor([N], "float32") },
  ({ idx, jdx, O }) => {
    T.device_entry({ launch: launch() });
    const t = T.cuda.thread_idx("x");
    const S = T.alloc_shared([N, 8], "float32", { name: "S" });
    for (const j of T.range(8)) S.set([t, j], T.float32(0));
    S.set([t, idx.get([t])], T.float32(1)); // SHARED STORE
    T.cuda.cta_sync();
    O.set([t], S.get([t, jdx.get([t])])); // SHARED LOAD
  },
);

/**
 * A row of S [128, 32] seen as 4 blocks of 8 (`rearrange`), block idx[t] taken by `sub`: the
 * index `sub` fixed is the view's axis 1 (a), extent 4. Then O[t] reads a rearranged view of B
 * at block jdx[t].
 */
const blocks = T.function(
  "blocks",
  {
    idx: T.Tensor([N], "int32"),
    jdx: T.Tensor([N], "int32"),
    B: T.Tensor([N, 32], "float32"),
    O: T.Tensor([N], "float32"),
  },
  ({ idx, jdx, B, O }) => {
    T.device_entry({ launch: launch() });
    const t = T.cuda.thread_idx("x");
    const S = T.alloc_shared([N, 32], "float32", { name: "S" });
    for (const j of T.range(32)) S.set([t, j], T.float32(0));
    const block = S.rearrange("r (a b) -> r a b", { b: 8 }).sub(t, idx.get([t]));
    for (const j of T.range(8)) block.set([j], T.float32(2)); // SUB STORE
    const Bv = B.rearrange("r (a b) -> r a b", { b: 8 });
    O.set([t], Bv.get([t, jdx.get([t]), 3])); // REARRANGED LOAD
  },
);

/**
 * A column selected by if_then_else: both arms are evaluated (selp), so B[t, j] past its row in
 * the arm not selected is no error; in the selected arm it is.
 */
const selected = T.function(
  "selected",
  { idx: T.Tensor([N], "int32"), B: T.Tensor([N, 32], "float32"), O: T.Tensor([N], "float32") },
  ({ idx, B, O }) => {
    T.device_entry({ launch: launch() });
    const t = T.cuda.thread_idx("x");
    const j = T.let_("j", idx.get([t]));
    O.set([t], T.if_then_else(j.lt(32), B.get([t, j]), T.float32(-1))); // SELECTED
  },
);

/** Two columns per thread in an unrolled loop: the index names the loop variable unrolling replaces. */
const unrolled = T.function(
  "unrolled",
  { idx: T.Tensor([N], "int32"), B: T.Tensor([N, 32], "float32") },
  ({ idx, B }) => {
    T.device_entry({ launch: launch() });
    const t = T.cuda.thread_idx("x");
    for (const u of T.unroll(2)) B.set([t, idx.get([t]).add(u)], T.float32(1)); // UNROLLED
  },
);

/** The column guarded as the verifier's note asks: proven, so nothing is left to the run. */
const guarded = T.function(
  "guarded",
  { idx: T.Tensor([N], "int32"), B: T.Tensor([N, 32], "float32") },
  ({ idx, B }) => {
    T.device_entry({ launch: launch() });
    const t = T.cuda.thread_idx("x");
    const j = T.let_("j", idx.get([t]));
    T.if_(j.ge(0).and(j.lt(32)), () => B.set([t, j], T.float32(1)));
  },
);

/**
 * A cp.async tile whose source row is read from a table: the tile's view offset holds a load
 * with author indices (rows[1, tid], axis 1), which axis-checks drops (proven) after lower-tile
 * has taken the tile's plan, looked up by the verified node.
 */
const tableRows = T.function(
  "table_rows",
  {
    A: T.Tensor([32, 4], "float32"),
    rows: T.Tensor([2, 32], "int32"),
    B: T.Tensor([32], "float32"),
  },
  ({ A, rows, B }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
    const tid = T.cuda.thread_idx("x");
    const s = T.alloc_shared([32, 4], "float32", { name: "s" });
    const row = rows.get([1, tid]).floormod(32);
    T.cuda.tile.apply(T.ptx["cp.async.cg.shared.global"]!, s.sub(tid, ":"), A.sub(row, ":"), {
      chunk_bytes: 16,
    });
    T.ptx.cp.async_.commit_group();
    T.ptx.cp.async_.wait_all();
    B.set([tid], s.get([tid, 0]));
  },
);

/** idx with `bad` at thread `at` and in-range columns (t mod `cols`) elsewhere. */
const indices = (cols: number, at = -1, bad = 0): number[] =>
  Array.from({ length: N }, (_, i) => (i === at ? bad : i % cols));
const ints = (xs: number[]) => simTensor(xs, { shape: [N], dtype: "int32" });
/** B [128, 32] holding 1000·row + column. */
const grid = () =>
  simTensor(
    Array.from({ length: N * 32 }, (_, i) => 1000 * Math.floor(i / 32) + (i % 32)),
    { shape: [N, 32], dtype: "float32" },
  );

/** The first report of running `fn` on `args` (throw mode, or `opts`). */
const reportOf = (fn: PrimFunc, args: unknown[], opts: SimOptions = {}): TirxError =>
  errorOf(() => runSim(verify(fn), args as never, opts));

describe("the simulator reports an index past its axis (TX6005)", () => {
  test("a store's column past its row, where the flat offset stays inside B: the axis, its extent, the index, the line", () => {
    const e = reportOf(colStore, [ints(indices(32, 5, 32)), simZeros([N, 32], "float32")]);
    expect(e.code).toBe("TX6005");
    expect(e.text).toBe(
      'thread (5, 0, 0) of CTA (0, 0, 0) writes axis 1 of global "B" (extent 32) at index 32, outside [0, 32)',
    );
    expect(e.span?.line).toBe(lineOf("// COL STORE"));
    expect(e.notes.map((n) => n.message).slice(0, 2)).toEqual([
      '"B" is declared here',
      'an index past its axis can leave the flat offset inside global "B", which then reads or writes another element silently; the access was skipped (a load reads 0)',
    ]);
    // Below 0 too.
    const low = reportOf(colStore, [ints(indices(32, 7, -1)), simZeros([N, 32], "float32")]);
    expect(low.text).toContain("thread (7, 0, 0) of CTA (0, 0, 0) writes axis 1 of global");
    expect(low.text).toContain("at index -1, outside [0, 32)");
  });

  test("collect mode: the access is skipped (B[6, 0], where the flat offset lands, keeps its value; the load reads 0), one report", () => {
    const B = simZeros([N, 32], "float32");
    const r = runSim(verify(colStore), [ints(indices(32, 5, 32)), B], { hazards: "collect" });
    expect(r.reports.map((e) => e.text)).toEqual([
      'thread (5, 0, 0) of CTA (0, 0, 0) writes axis 1 of global "B" (extent 32) at index 32, outside [0, 32)',
    ]);
    const b = B.toArray() as Float32Array;
    expect(b[6 * 32]).toBe(0); // B[5, 32] would be B[6, 0]
    expect([b[5 * 32 + 5], b[6 * 32 + 6]]).toEqual([0, 1]);
    const O = simZeros([N], "float32");
    const l = runSim(verify(colLoad), [ints(indices(32, 9, 33)), grid(), O], {
      hazards: "collect",
    });
    expect(l.reports.map((e) => e.text)).toEqual([
      'thread (9, 0, 0) of CTA (0, 0, 0) reads axis 1 of global "B" (extent 32) at index 33, outside [0, 32)',
    ]);
    const o = O.toArray() as Float32Array;
    expect(o[9]).toBe(0); // not B[10, 1] = 10001
    expect(o[8]).toBe(8008);
  });

  test("a load's column, in generated functions and without range checks alike", () => {
    const args = () => [ints(indices(32, 9, 33)), grid(), simZeros([N], "float32")];
    const want =
      'thread (9, 0, 0) of CTA (0, 0, 0) reads axis 1 of global "B" (extent 32) at index 33, outside [0, 32)';
    for (const opts of [{}, { jitAfter: 0 }, { rangeChecks: false }] as SimOptions[]) {
      const e = reportOf(colLoad, args(), opts);
      expect(e.text).toBe(want);
      expect(e.span?.line).toBe(lineOf("// COL LOAD"));
    }
    const s = reportOf(colStore, [ints(indices(32, 5, 32)), simZeros([N, 32], "float32")], {
      jitAfter: 0,
    });
    expect(s.text).toContain("writes axis 1 of global");
  });

  test("shared memory: a store past its row (the next thread's element), and a load", () => {
    const O = () => simZeros([N], "float32");
    const store = reportOf(sharedCol, [ints(indices(8, 12, 8)), ints(indices(8)), O()]);
    expect(store.text).toBe(
      'thread (12, 0, 0) of CTA (0, 0, 0) writes axis 1 of shared "S" (extent 8) at index 8, outside [0, 8)',
    );
    expect(store.span?.line).toBe(lineOf("// SHARED STORE"));
    const load = reportOf(sharedCol, [ints(indices(8)), ints(indices(8, 3, -2)), O()]);
    expect(load.text).toBe(
      'thread (3, 0, 0) of CTA (0, 0, 0) reads axis 1 of shared "S" (extent 8) at index -2, outside [0, 8)',
    );
    expect(load.span?.line).toBe(lineOf("// SHARED LOAD"));
  });

  test("the index `sub` fixed on a rearranged view, and a rearranged view's axis", () => {
    const O = () => simZeros([N], "float32");
    const fixed = reportOf(blocks, [ints(indices(4, 20, 4)), ints(indices(4)), grid(), O()]);
    expect(fixed.text).toBe(
      'thread (20, 0, 0) of CTA (0, 0, 0) writes axis 1 (a) of a view of shared "S" (extent 4, fixed by sub) at index 4, outside [0, 4)',
    );
    expect(fixed.span?.line).toBe(lineOf("// SUB STORE"));
    const view = reportOf(blocks, [ints(indices(4)), ints(indices(4, 2, 5)), grid(), O()]);
    expect(view.text).toBe(
      'thread (2, 0, 0) of CTA (0, 0, 0) reads axis 1 (a) of a view of global "B" (extent 4) at index 5, outside [0, 4)',
    );
    expect(view.span?.line).toBe(lineOf("// REARRANGED LOAD"));
  });

  test("if_then_else: past its row in the arm not selected is no error; in the selected arm it is", () => {
    const O = simZeros([N], "float32");
    const r = runSim(verify(selected), [ints(indices(32, 4, 32)), grid(), O], {
      hazards: "collect",
    });
    expect(r.reports).toEqual([]);
    expect((O.toArray() as Float32Array)[4]).toBe(-1);
    const e = reportOf(selected, [ints(indices(32, 4, -1)), grid(), simZeros([N], "float32")]);
    expect(e.text).toContain("thread (4, 0, 0) of CTA (0, 0, 0) reads axis 1 of global");
    expect(e.span?.line).toBe(lineOf("// SELECTED"));
  });

  test("an unrolled loop's copies check their own indices (the pass rewrites the index with the offset)", () => {
    const e = reportOf(unrolled, [ints(indices(31, 6, 31)), simZeros([N, 32], "float32")]);
    expect(e.text).toContain("thread (6, 0, 0) of CTA (0, 0, 0) writes axis 1 of global");
    expect(e.text).toContain("at index 32, outside [0, 32)");
    expect(e.span?.line).toBe(lineOf("// UNROLLED"));
  });
});

describe("in range, nothing is reported and the data is right", () => {
  test("every kernel with in-range data-dependent indices", () => {
    const run = (fn: PrimFunc, args: unknown[]) =>
      runSim(verify(fn), args as never, { hazards: "collect" }).reports.map((e) => e.text);
    const B = simZeros([N, 32], "float32");
    expect(run(colStore, [ints(indices(32)), B])).toEqual([]);
    const b = B.toArray() as Float32Array;
    expect([b[0], b[33], b[31 * 32 + 31], b[32 * 32], b[1]]).toEqual([1, 1, 1, 1, 0]);
    const O = simZeros([N], "float32");
    expect(run(colLoad, [ints(indices(32, 3, 31)), grid(), O])).toEqual([]);
    expect(Array.from((O.toArray() as Float32Array).slice(0, 4))).toEqual([0, 1001, 2002, 3031]);
    const S = simZeros([N], "float32");
    expect(run(sharedCol, [ints(indices(8)), ints(indices(8)), S])).toEqual([]);
    expect((S.toArray() as Float32Array).every((v) => v === 1)).toBe(true);
    expect(
      run(blocks, [ints(indices(4)), ints(indices(4)), grid(), simZeros([N], "float32")]),
    ).toEqual([]);
    expect(run(selected, [ints(indices(32)), grid(), simZeros([N], "float32")])).toEqual([]);
    expect(run(unrolled, [ints(indices(31)), simZeros([N, 32], "float32")])).toEqual([]);
    expect(run(guarded, [ints(indices(40, 1, 32)), simZeros([N, 32], "float32")])).toEqual([]);
  });

  test("a tile whose view offset reads a table runs after axis-checks rebuilt it (lower-tile ran first)", () => {
    const A = simTensor(
      Array.from({ length: 128 }, (_, i) => i),
      { shape: [32, 4], dtype: "float32" },
    );
    const rows = simTensor(
      Array.from({ length: 64 }, (_, i) => 63 - i),
      { shape: [2, 32], dtype: "int32" },
    );
    const B = simZeros([32], "float32");
    expect(runSim(verify(tableRows), [A, rows, B], { hazards: "collect" }).reports).toEqual([]);
    // Thread t copies row (31 - t) mod 32 of A: its first element is 4 (31 - t).
    expect(Array.from((B.toArray() as Float32Array).slice(0, 3))).toEqual([124, 120, 116]);
    expect(compileToPtx(tableRows, { arch: "sm_80" }).text).toContain("cp.async.cg.shared.global");
  });

  test("axis-checks keeps only the indices left to the run: none on a guarded or proven access", () => {
    const kept = (fn: PrimFunc): number => {
      const vf = runPipeline(verify(fn), DEFAULT_PASSES);
      let n = 0;
      walkStmt(vf.entry.body, (s) => {
        if (s.kind === "Store") n += s.index?.length ?? 0;
        for (const e of stmtExprs(s)) {
          walkExpr(e, (x) => {
            if (x.kind === "BufferLoad") n += x.index?.length ?? 0;
          });
        }
      });
      return n;
    };
    expect(kept(guarded)).toBe(0);
    expect(kept(colStore)).toBe(1);
    expect(kept(unrolled)).toBe(2); // one per copy
    expect(kept(sharedCol)).toBe(2); // S[t, j] of the loop is proven
  });
});

describe("checkBounds guards the same axes", () => {
  const jobs: PtxJob[] = [];
  const ptx = (fn: PrimFunc, arch = "sm_80"): PtxModule => {
    const m = compileToPtx(fn, { checkBounds: true, arch });
    jobs.push({ name: `${fn.name} ${arch}`, text: m.text, arch });
    return m;
  };
  /** A record as the guards write it: flag, site, tid.x, the 64-bit value. */
  const record = (site: number, tid: number, value: bigint): Uint8Array => {
    const bytes = new Uint8Array(OOB_RECORD_BYTES);
    const v = new DataView(bytes.buffer);
    v.setUint32(0, 1, true);
    v.setUint32(4, site, true);
    v.setUint32(8, tid, true);
    v.setBigInt64(32, value, true);
    return bytes;
  };

  test("a store's column: the index compared unsigned with the extent before the flat guard; the site names the axis", () => {
    const m = ptx(colStore);
    const lines = m.text.split("\n");
    const guard = lines.findIndex((l) => l.includes("setp.lt.u32"));
    expect(lines.slice(guard - 1, guard + 2).join("\n")).toMatchInlineSnapshot(`
      "	ld.global.s32 %r5, [%rd5];
      	setp.lt.u32 %p1, %r5, 32;
      	@%p1 bra $L__in_bounds1;"
    `);
    expect(m.text).toContain("cvt.s64.s32 %rd8, %r5;");
    expect(m.text).toContain("and.pred %p5, %p1, %p3;");
    expect(m.text).toContain("@%p5 st.global.f32");
    expect(m.boundsSites.map((s) => [s.buffer, s.axis, s.span?.line])).toEqual([
      ["B", { axis: 1, name: "", view: false, sub: false, extent: 32 }, lineOf("// COL STORE")],
      ["B", undefined, lineOf("// COL STORE")],
    ]);
  });

  test("the GPU's report of an axis site reads as the simulator's", () => {
    const m = ptx(colStore);
    const site = m.boundsSites.findIndex((s) => s.axis !== undefined);
    const gpu = boundsReport(m, record(site, 5, 32n))!;
    const sim = reportOf(colStore, [ints(indices(32, 5, 32)), simZeros([N, 32], "float32")]);
    expect(gpu.code).toBe("TX6005");
    expect(gpu.message).toBe(sim.message);
    expect(gpu.span?.line).toBe(sim.span?.line);
    expect(gpu.notes.slice(0, 2)).toEqual(sim.notes.slice(0, 2));
    const l = ptx(colLoad);
    const at = l.boundsSites.findIndex((s) => s.axis !== undefined);
    const gpuLoad = boundsReport(l, record(at, 9, -4n))!;
    const simLoad = reportOf(colLoad, [ints(indices(32, 9, -4)), grid(), simZeros([N], "float32")]);
    expect(gpuLoad.message).toBe(simLoad.message);
  });

  test("shared memory, a sub view and a rearranged view: one axis site each, named as the simulator names them", () => {
    const s = ptx(sharedCol);
    expect(
      s.boundsSites.filter((x) => x.axis).map((x) => `${x.verb} ${x.space} ${x.buffer}`),
    ).toEqual(["writes shared S", "reads shared S"]);
    const b = ptx(blocks, "sm_90");
    const axes = b.boundsSites.filter((x) => x.axis);
    expect(axes.map((x) => [x.verb, x.space, x.axis])).toEqual([
      ["writes", "shared", { axis: 1, name: "a", view: true, sub: true, extent: 4 }],
      ["reads", "global", { axis: 1, name: "a", view: true, sub: false, extent: 4 }],
    ]);
    const site = b.boundsSites.indexOf(axes[0]!);
    const gpu = boundsReport(b, record(site, 20, 4n))!;
    const sim = reportOf(blocks, [
      ints(indices(4, 20, 4)),
      ints(indices(4)),
      grid(),
      simZeros([N], "float32"),
    ]);
    expect(gpu.message).toBe(sim.message);
  });

  test("in an arm of if_then_else the guard holds where the arm is not selected", () => {
    const m = ptx(selected);
    const body = m.text.split("\n");
    const at = body.findIndex((l) => l.includes("setp.lt.u32"));
    // The arm is the then-arm of j < 32: its guard is "in range, or not selected".
    expect(body.slice(at - 1, at + 3).map((l) => l.trim().replace(/%\w+/g, "R"))).toEqual([
      "not.pred R, R;",
      "setp.lt.u32 R, R, 32;",
      "or.pred R, R, R;",
      "@R bra $L__in_bounds1;",
    ]);
  });

  test("a guarded column and the unchecked kernels have no axis site", () => {
    expect(ptx(guarded).boundsSites).toEqual([]);
    expect(compileToPtx(colStore, { arch: "sm_80" }).text).not.toContain("tirx_oob");
  });

  afterAll(async () => {
    const failures = await assembleAll(jobs);
    expect(failures.map((f) => f.message)).toEqual([]);
  }, 60_000);
});
