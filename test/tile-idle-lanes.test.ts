// Register tiles whose lanes do not fill their warp beside warp iters (TIRx admits them: each
// thread axis is its own coordinate, TIRx docs "Tensor Layout"), e.g. a [4, 24] tile in
// S[(4, 24) : (1@warpid, 1@laneid)] over a CTA of 4 warps: lanes 24..31 of each warp hold nothing.
// Read on the linear thread index the lane digit has radix 32 and extent 24 (tile/threads.ts
// digitModulus); idle threads run no register primitive (ownedOnly), store nothing, and a
// reduction over 24 lanes pads its butterfly to 32, where the idle lanes' partials never enter
// a result (tile/reduce-lanes.ts). On the simulated device against host math, with zero race or
// unwritten-register reports (hazards collected), every kernel's PTX assembled by ptxas.
import { describe, expect, it } from "vitest";
import { T, compile, explainTile, sim, tensor, type PrimFunc } from "tirx-ts";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";
import { errorOf } from "./util/error-of.js";
import { smallInts } from "./util/small-ints.js";
import {
  elementwiseKernel,
  runElementwise,
  type ElementwiseCase,
  type Scope,
} from "./util/tile-elementwise.js";

const dev = sim();

const CASES: readonly ElementwiseCase[] = [
  {
    what: "24 lanes beside 4 warps",
    scope: "cta",
    block: 128,
    shape: [4, 24],
    layout: "S[(4, 24) : (1@warpid, 1@laneid)]",
  },
  {
    what: "a single idle lane (31 of 32)",
    scope: "cta",
    block: 128,
    shape: [4, 31],
    layout: "S[(4, 31) : (1@warpid, 1@laneid)]",
  },
  {
    what: "warps that hold nothing (4 of 6 warps)",
    scope: "cta",
    block: 192,
    shape: [4, 24],
    layout: "S[(4, 24) : (1@warpid, 1@laneid)]",
  },
  {
    what: "3 of every 4 lanes beside warps",
    scope: "cta",
    block: 128,
    shape: [4, 24],
    layout: "S[(4, 8, 3) : (1@warpid, 4@laneid, 1@laneid)]",
  },
  {
    what: "3 of every 4 lanes in one warp",
    scope: "warp",
    block: 32,
    shape: [8, 3],
    layout: "S[(8, 3) : (4@laneid, 1@laneid)]",
  },
  {
    what: "24 lanes beside warps of a warpgroup (tid_in_wg)",
    scope: "wg",
    block: 128,
    shape: [4, 24],
    layout: "S[(4, 24) : (32@tid_in_wg, 1@tid_in_wg)]",
  },
  {
    what: "24 lanes beside warps, two slots each",
    scope: "cta",
    block: 128,
    shape: [4, 48],
    layout: "S[(4, 24, 2) : (1@warpid, 1@laneid, 1)]",
  },
  {
    what: "24 lanes replicated over 4 warps",
    scope: "cta",
    block: 128,
    shape: [24],
    layout: "S[24 : 1@laneid] + R[4 : 1@warpid]",
  },
];

describe("element-wise primitives, casts and copies over lanes that do not fill their warp", () => {
  for (const [i, c] of CASES.entries()) {
    it(`${c.what}: ${c.scope} scope, ${c.block} threads, [${c.shape.join(", ")}] ${c.layout}`, () => {
      runElementwise(c, "idle_lanes_ew", dev, 11 + i);
    });
  }

  it("the copies are scalar per lane, two slots a vector, and the cast takes pairs", () => {
    const ex = explainTile(elementwiseKernel(CASES[6]!, "idle_lanes_ew"));
    expect(ex[0]).toMatch(/ld\.global vectors of 8 B/);
    expect(ex.find((l) => l.includes("T.tile.cta.cast"))).toMatch(/pairs of adjacent slots/);
  });
});

type Op = "sum" | "max" | "min";
const OPS: readonly Op[] = ["sum", "max", "min"];

interface ReduceCase {
  what: string;
  scope: Scope;
  block: number;
  shape: [number, number];
  src: string;
  dst: string;
  axis: 0 | 1;
}

const REDUCES: readonly ReduceCase[] = [
  {
    what: "rows over 24 lanes (the butterfly padded to 32)",
    scope: "cta",
    block: 128,
    shape: [4, 24],
    src: "S[(4, 24) : (1@warpid, 1@laneid)]",
    dst: "S[(4, 1) : (1@warpid, 1)] + R[24 : 1@laneid]",
    axis: 1,
  },
  {
    what: "columns over 4 of 6 warps, a partial per lane",
    scope: "cta",
    block: 192,
    shape: [4, 24],
    src: "S[(4, 24) : (1@warpid, 1@laneid)]",
    dst: "S[(1, 24) : (1, 1@laneid)] + R[4 : 1@warpid]",
    axis: 0,
  },
  {
    what: "rows over 31 lanes (one idle lane)",
    scope: "cta",
    block: 128,
    shape: [4, 31],
    src: "S[(4, 31) : (1@warpid, 1@laneid)]",
    dst: "S[(4, 1) : (1@warpid, 1)] + R[31 : 1@laneid]",
    axis: 1,
  },
  {
    what: "rows over 3 warps of 4, 24 lanes",
    scope: "cta",
    block: 128,
    shape: [3, 24],
    src: "S[(3, 24) : (1@warpid, 1@laneid)]",
    dst: "S[(3, 1) : (1@warpid, 1)] + R[24 : 1@laneid]",
    axis: 1,
  },
  {
    what: "rows over 3 of every 4 lanes beside warps (two lane iters, one padded)",
    scope: "cta",
    block: 128,
    shape: [4, 24],
    src: "S[(4, 8, 3) : (1@warpid, 4@laneid, 1@laneid)]",
    dst: "S[(4, 1) : (1@warpid, 1)] + R[(8, 3) : (4@laneid, 1@laneid)]",
    axis: 1,
  },
  {
    what: "two row groups of 12 lanes in one warp",
    scope: "warp",
    block: 32,
    shape: [2, 12],
    src: "S[(2, 12) : (16@laneid, 1@laneid)]",
    dst: "S[(2, 1) : (16@laneid, 1)] + R[12 : 1@laneid]",
    axis: 1,
  },
  {
    what: "12 lanes from lane 8 (O[8@laneid]: partners by shfl.sync.idx, padded to 16)",
    scope: "warp",
    block: 32,
    shape: [2, 12],
    src: "S[(2, 12) : (1, 1@laneid)] + O[8@laneid]",
    dst: "S[(2, 1) : (1, 1)] + R[12 : 1@laneid] + O[8@laneid]",
    axis: 1,
  },
  {
    what: "rows over 24 lanes with two slots each",
    scope: "cta",
    block: 128,
    shape: [4, 48],
    src: "S[(4, 24, 2) : (1@warpid, 1@laneid, 1)]",
    dst: "S[(4, 1) : (1@warpid, 1)] + R[24 : 1@laneid]",
    axis: 1,
  },
  {
    what: "warpgroup rows over 24 lanes",
    scope: "wg",
    block: 128,
    shape: [4, 24],
    src: "S[(4, 24) : (32@tid_in_wg, 1@tid_in_wg)]",
    dst: "S[(4, 1) : (32@tid_in_wg, 1)] + R[24 : 1@tid_in_wg]",
    axis: 1,
  },
  {
    what: "warpgroup columns over its 4 warps, 24 lanes",
    scope: "wg",
    block: 128,
    shape: [4, 24],
    src: "S[(4, 24) : (32@tid_in_wg, 1@tid_in_wg)]",
    dst: "S[(1, 24) : (1, 1@tid_in_wg)] + R[4 : 32@tid_in_wg]",
    axis: 0,
  },
  {
    what: "columns over 3 warps beside a kept warp iter (warps 3 and 7 hold nothing)",
    scope: "cta",
    block: 256,
    shape: [3, 64],
    src: "S[(3, 2, 32) : (1@warpid, 4@warpid, 1@laneid)]",
    dst: "S[(1, 2, 32) : (1, 4@warpid, 1@laneid)] + R[3 : 1@warpid]",
    axis: 0,
  },
  // On tid these lane digits sit below 4:32, no multiple of their reach: each is read within
  // the warp, (tid % 32) % 10, as every higher iter's place must vanish (tid % 10 took 32 · warp
  // into the lane's digit, and the columns summed wrong elements).
  {
    what: "columns over 4 warps of 3 × 10 lanes (lanes 30, 31 idle; digits read in the warp)",
    scope: "cta",
    block: 128,
    shape: [4, 30],
    src: "S[(4, 3, 10) : (1@warpid, 10@laneid, 1@laneid)]",
    dst: "S[(1, 3, 10) : (1, 10@laneid, 1@laneid)] + R[4 : 1@warpid]",
    axis: 0,
  },
  {
    what: "columns over 4 warps of lanes 0..4 and 6..10 (the radix 6 read in the warp)",
    scope: "cta",
    block: 128,
    shape: [4, 10],
    src: "S[(4, 2, 5) : (1@warpid, 6@laneid, 1@laneid)]",
    dst: "S[(1, 2, 5) : (1, 6@laneid, 1@laneid)] + R[4 : 1@warpid]",
    axis: 0,
  },
  {
    what: "columns over 2 warpgroups of lanes 0..4 and 6..10 (tid_in_wg beside wgid)",
    scope: "cta",
    block: 256,
    shape: [2, 10],
    src: "S[(2, 2, 5) : (1@wgid, 6@tid_in_wg, 1@tid_in_wg)]",
    dst: "S[(1, 2, 5) : (1, 6@tid_in_wg, 1@tid_in_wg)] + R[2 : 1@wgid]",
    axis: 0,
  },
];

function reduceKernel(c: ReduceCase, op: Op): PrimFunc {
  const dShape = c.shape.map((n, d) => (d === c.axis ? 1 : n));
  return T.function(
    `idle_lanes_${op}`,
    { X: T.Tensor(c.shape, "float32"), Z: T.Tensor(dShape, "float32") },
    ({ X, Z }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: c.block }) });
      const f = T.alloc_local(c.shape, "float32", { layout: T.TileLayout(c.src) });
      const d = T.alloc_local(dShape, "float32", { layout: T.TileLayout(c.dst) });
      T.tile[c.scope].copy(f, X);
      T.tile[c.scope][op](d, f, c.axis);
      T.tile[c.scope].copy(Z, d);
    },
  );
}

const fold = (op: Op, xs: number[]): number =>
  op === "sum" ? xs.reduce((a, b) => a + b, 0) : op === "max" ? Math.max(...xs) : Math.min(...xs);

/**
 * Inputs whose result an idle lane's register (the simulator's 0) would change: all below 0
 * for max, all above 0 for min, any sign for sum (exact in float32).
 */
function inputsFor(op: Op, n: number, seed: number): Float32Array {
  const x = smallInts(n, seed);
  return op === "max"
    ? x.map((v) => -Math.abs(v) - 1)
    : op === "min"
      ? x.map((v) => Math.abs(v) + 1)
      : x;
}

function runReduce(c: ReduceCase, op: Op, seed: number): void {
  const fn = reduceKernel(c, op);
  assembleLater(compileToPtx(fn, { arch: "sm_80" }).text, "sm_80", `${fn.name} ${c.what}`);
  const [rows, cols] = c.shape;
  const x = inputsFor(op, rows * cols, seed);
  const dShape = c.shape.map((n, d) => (d === c.axis ? 1 : n));
  const X = tensor(x, { shape: c.shape, dtype: "float32", device: dev });
  const Z = tensor.zeros(dShape, "float32", dev);
  const r = compile(fn, { target: "cuda", hazards: "collect" })(X, Z);
  expect(r.reports.map((e) => `${e.code} ${e.message}`)).toEqual([]);
  const want =
    c.axis === 1
      ? Array.from({ length: rows }, (_, i) =>
          fold(op, Array.from(x.slice(i * cols, (i + 1) * cols))),
        )
      : Array.from({ length: cols }, (_, j) =>
          fold(
            op,
            Array.from({ length: rows }, (_, i) => x[i * cols + j]!),
          ),
        );
  expect(Array.from(Z.toArray() as Float32Array)).toEqual(want);
}

describe("reductions over lanes that do not fill their warp", () => {
  for (const [i, c] of REDUCES.entries()) {
    it(`${c.what}: ${c.scope} scope, axis ${c.axis} of ${c.src}`, () => {
      for (const op of OPS) runReduce(c, op, 100 + 7 * i + OPS.indexOf(op));
    });
  }

  it("explain names the padded butterfly; idle lanes take their partner's partial by selects", () => {
    const fn = reduceKernel(REDUCES[0]!, "max");
    expect(explainTile(fn)[1]).toMatch(
      /warp shfl\.sync\.bfly ×5 \(padded to a power of two: 24 of 32 lanes hold elements/,
    );
    const ptx = compileToPtx(fn, { arch: "sm_80" }).text;
    expect(ptx.match(/shfl\.sync\.bfly/g)?.length).toBe(5);
    expect(ptx).toMatch(/selp\.f32/);
  });

  it("a warpgroup reduction in each of two warpgroups (named barriers), 24 lanes each", () => {
    const fn = T.function(
      "idle_lanes_two_wg",
      { X: T.Tensor([2, 4, 24], "float32"), Z: T.Tensor([2, 1, 24], "float32") },
      ({ X, Z }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 256 }) });
        const wg = T.cuda.thread_idx("x").floordiv(128);
        const f = T.alloc_local([4, 24], "float32", {
          layout: T.TileLayout("S[(4, 24) : (32@tid_in_wg, 1@tid_in_wg)]"),
        });
        const d = T.alloc_local([1, 24], "float32", {
          layout: T.TileLayout("S[(1, 24) : (1, 1@tid_in_wg)] + R[4 : 32@tid_in_wg]"),
        });
        T.tile.wg.copy(f, X.sub(wg));
        T.tile.wg.max(d, f, 0);
        T.tile.wg.copy(Z.sub(wg), d);
      },
    );
    assembleLater(compileToPtx(fn, { arch: "sm_90" }).text, "sm_90", fn.name);
    expect(explainTile(fn)[1]).toMatch(/named bar\.sync/);
    const x = inputsFor("max", 192, 5);
    const X = tensor(x, { shape: [2, 4, 24], dtype: "float32", device: dev });
    const Z = tensor.zeros([2, 1, 24], "float32", dev);
    const r = compile(fn, { target: "cuda", hazards: "collect" })(X, Z);
    expect(r.reports).toEqual([]);
    const want = Array.from({ length: 48 }, (_, k) => {
      const [g, j] = [Math.floor(k / 24), k % 24];
      return Math.max(...Array.from({ length: 4 }, (_, i) => x[g * 96 + i * 24 + j]!));
    });
    expect(Array.from(Z.toArray() as Float32Array)).toEqual(want);
  });
});

describe("broadcast and permute_layout over lanes that do not fill their warp", () => {
  it("a row's max and sum broadcast back over its 24 lanes: (x - max) · sum", () => {
    const fn = T.function(
      "idle_lanes_rows",
      { X: T.Tensor([4, 24], "float32"), Y: T.Tensor([4, 24], "float32") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 160 }) });
        const f = T.alloc_local([4, 24], "float32", {
          layout: T.TileLayout("S[(4, 24) : (1@warpid, 1@laneid)]"),
        });
        const rowLayout = T.TileLayout("S[(4, 1) : (1@warpid, 1)] + R[24 : 1@laneid]");
        const mx = T.alloc_local([4, 1], "float32", { layout: rowLayout });
        const sm = T.alloc_local([4, 1], "float32", { layout: rowLayout });
        T.tile.cta.copy(f, X);
        T.tile.cta.max(mx, f, 1);
        T.tile.cta.sum(sm, f, 1);
        T.tile.cta.sub(f, f, mx);
        T.tile.cta.mul(f, f, sm);
        T.tile.cta.copy(Y, f);
      },
    );
    assembleLater(compileToPtx(fn, { arch: "sm_80" }).text, "sm_80", fn.name);
    const x = smallInts(96, 21);
    const X = tensor(x, { shape: [4, 24], dtype: "float32", device: dev });
    const Y = tensor.zeros([4, 24], "float32", dev);
    const r = compile(fn, { target: "cuda", hazards: "collect" })(X, Y);
    expect(r.reports).toEqual([]);
    const want = Array.from(x, (v, k) => {
      const row = Array.from(x.slice(Math.floor(k / 24) * 24, Math.floor(k / 24) * 24 + 24));
      return (v - Math.max(...row)) * row.reduce((a, b) => a + b, 0);
    });
    expect(Array.from(Y.toArray() as Float32Array)).toEqual(want);
  });

  it("permute_layout to and from lanes beside warps: through the shared scratch, and in registers", () => {
    const fn = T.function(
      "idle_lanes_permute",
      { X: T.Tensor([4, 24, 2], "float32"), Y: T.Tensor([4, 24, 2], "float32") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const a = T.alloc_local([4, 24, 2], "float32", {
          layout: T.TileLayout("S[(4, 24, 2) : (1@warpid, 1@laneid, 1)]"),
        });
        // Columns on lanes, rows on slots: every element changes threads.
        const b = T.alloc_local([4, 24, 2], "float32", {
          layout: T.TileLayout("S[(4, 24, 2) : (2, 1@laneid, 1)] + R[4 : 1@warpid]"),
        });
        // The same threads, the slot pair swapped: register moves.
        const c = T.alloc_local([4, 24, 2], "float32", {
          layout: T.TileLayout("S[(4, 24, 2) : (1@warpid, 1@laneid, -1)] + O[1]"),
        });
        T.tile.cta.copy(a, X);
        T.tile.cta.permute_layout(b, a);
        T.tile.cta.fill(a, 0);
        T.tile.cta.permute_layout(a, b);
        T.tile.cta.permute_layout(c, a);
        T.tile.cta.copy(Y, c);
      },
    );
    assembleLater(compileToPtx(fn, { arch: "sm_80" }).text, "sm_80", fn.name);
    const ex = explainTile(fn);
    expect(ex[1]).toMatch(/shared scratch/);
    expect(ex[4]).toMatch(/in-thread register moves/);
    const x = smallInts(192, 31);
    const X = tensor(x, { shape: [4, 24, 2], dtype: "float32", device: dev });
    const Y = tensor.zeros([4, 24, 2], "float32", dev);
    const r = compile(fn, { target: "cuda", hazards: "collect" })(X, Y);
    expect(r.reports).toEqual([]);
    expect(Array.from(Y.toArray() as Float32Array)).toEqual(Array.from(x));
  });
});

describe("what stays refused, and why", () => {
  const reduceOf =
    (src: string, shape: number[], dst: string, block = 128) =>
    () =>
      T.function("refused", { X: T.Tensor(shape, "float32") }, ({ X }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block }) });
        const f = T.alloc_local(shape, "float32", { layout: T.TileLayout(src) });
        const d = T.alloc_local([shape[0]!, 1], "float32", { layout: T.TileLayout(dst) });
        T.tile.cta.copy(f, X);
        T.tile.cta.sum(d, f, 1);
      });

  it("a padded lane iter that would reach the next lane iter is TX2022", () => {
    // 3 lanes padded to 4 meet the next iter's lanes at stride 3: lane 3 holds element 1.
    const e = errorOf(
      reduceOf(
        "S[(4, 10, 3) : (1@warpid, 3@laneid, 1@laneid)]",
        [40, 3],
        "S[(4, 10, 1) : (1@warpid, 3@laneid, 1)] + R[3 : 1@laneid]",
      ),
    );
    expect([e.code, e.message]).toEqual([
      "TX2022",
      expect.stringMatching(
        /lane iter 3:1@laneid has no power-of-two extent, and the 4 lanes a butterfly pads it to reach the lanes of the next lane iter 10:3@laneid/,
      ),
    ]);
  });

  it("thread iters that are no digits (a stride no multiple of the one below, no warp boundary between) are TX2022", () => {
    const refused = (layout: string, scope: "warp" | "cta") =>
      errorOf(() =>
        T.function("refused", { X: T.Tensor([2, 2], "float32") }, ({ X }) => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
          const f = T.alloc_local([2, 2], "float32", { layout: T.TileLayout(layout) });
          T.tile[scope].copy(f, X);
        }),
      );
    // Lanes 0, 2, 5, 7: no division and modulo of the lane reads the digit of stride 5.
    const lanes = refused("S[(2, 2) : (5@laneid, 2@laneid)]", "warp");
    expect([lanes.code, lanes.message]).toEqual([
      "TX2022",
      expect.stringMatching(/the iters of laneid must be digits of its coordinate/),
    ]);
    const mixed = refused("S[(2, 2) : (5@tid, 2@laneid)]", "cta");
    expect([mixed.code, mixed.message]).toEqual([
      "TX2022",
      expect.stringMatching(
        /are no digits of the linear thread index \(tid\): 2:5@tid starts at no multiple of 2/,
      ),
    ]);
  });

  it("a lane digit past a stride that is no multiple of it is read within the warp", () => {
    // 10:1, 3:10 and 4:32 on tid: 32 is no multiple of 10, but the lanes' digits are read off
    // the lane (tid % 32), lanes 30 and 31 idle.
    runElementwise(
      {
        what: "30 lanes as 3 × 10 beside warps",
        scope: "cta",
        block: 128,
        shape: [4, 3, 10],
        layout: "S[(4, 3, 10) : (1@warpid, 10@laneid, 1@laneid)]",
      },
      "idle_lanes_ew",
      dev,
      77,
    );
  });
});
