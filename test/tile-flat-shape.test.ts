// Register tiles whose shape's dims do not line up with runs of the layout's iters: TIRx maps
// an element's row-major index over the shape to the layout's flat domain (TIRx docs, "Tensor
// Layout": "A shape is admitted by a layout when its total size equals ∏ e_k"), so
// `T.alloc_local([2, 48], "float32", { layout: S[(3, 32) : (1, 1@laneid)] })` holds element
// (i, j) in slot (48i + j) / 32 of lane (48i + j) % 32. Allocation takes any shape of the
// layout's size; copies read the tile as the view's contiguous dims merged, else address each
// element through its row-major index; element-wise primitives, casts and permutes follow the
// slots; a function of the indices splits the row-major index; a reduction reads the tile as
// [outer, axis, inner] and a broadcast as its dims merged by what broadcasts. On the simulated
// device against host math, zero race or unwritten-register reports, PTX assembled by ptxas.
import { describe, expect, it } from "vitest";
import { T, compile, explainTile, sim, tensor, type PrimFunc } from "tirx-ts";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { applyLayout, layoutGroups, parseTileLayout, verify } from "@tirx-ts/core";
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

describe("the layout admits every shape of its size", () => {
  const L = parseTileLayout("S[(3, 32) : (1, 1@laneid)]");

  it("element (i, j) of [2, 48] is the shard's element 48i + j: slot and lane by the row-major index", () => {
    expect(layoutGroups(L, [2, 48])).toBeUndefined();
    expect(layoutGroups(L, [96])).toBeDefined();
    for (const [i, j] of [
      [0, 0],
      [0, 40],
      [1, 20],
      [1, 47],
    ] as const) {
      const f = 48 * i + j;
      expect(applyLayout(L, [i, j], [2, 48])).toEqual({ m: Math.floor(f / 32), laneid: f % 32 });
    }
  });

  it("T.alloc_local takes [2, 48] (the verifier too); another size is TX2021 at the allocation", () => {
    const kernel = (shape: number[]) =>
      T.function("alloc", { Y: T.Tensor([1], "float32") }, ({ Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const f = T.alloc_local(shape, "float32", {
          layout: T.TileLayout("S[(3, 32) : (1, 1@laneid)]"),
        });
        T.tile.warp.fill(f, 1);
        T.if_(T.cuda.thread_idx("x").eq(0), () => Y.set([0], f.get(shape.map(() => 0))));
      });
    expect(() => verify(kernel([2, 48]))).not.toThrow();
    expect(() => verify(kernel([4, 4, 6]))).not.toThrow();
    const e = errorOf(() => kernel([2, 47]));
    expect([e.code, e.message]).toEqual([
      "TX2021",
      expect.stringMatching(
        /does not group by the shape \[2, 47\]: the shard has 96 elements, the shape 94/,
      ),
    ]);
    // No one extent of (3, 32) gives 94: the fix offered is the layout's own shape and a sub-view.
    expect(e.notes.at(-1)?.message).toBe(
      "take the shape [3, 32] of the layout's 96 elements and a sub-view (.sub) of those you use",
    );
  });

  it("a size mismatch offers a layout of the shape's size that one changed extent gives, and it builds", () => {
    const kernel = (shape: number[], layout: string) =>
      T.function("alloc", { Y: T.Tensor([1], "float32") }, ({ Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const f = T.alloc_local(shape, "float32", { layout: T.TileLayout(layout) });
        T.tile.warp.fill(f, 1);
        T.if_(T.cuda.thread_idx("x").eq(0), () => Y.set([0], f.get(shape.map(() => 0))));
      });
    // 40 elements over 2 slots × 32 lanes: 20 lanes of 2 (the memory extent alone cannot: 40/32).
    const e = errorOf(() => kernel([40], "S[(2, 32) : (1, 1@laneid)]"));
    const note = e.notes.at(-1)?.message ?? "";
    expect(note).toBe(
      "take a layout of 40 elements, S[(2, 20) : (1, 1@laneid)] (one extent changed), or the shape [2, 32] of the layout's 64 elements and a sub-view (.sub) of those you use",
    );
    const offered = /elements, (S\[.*?\]) \(one extent/.exec(note)![1]!;
    expect(() => verify(kernel([40], offered))).not.toThrow();
    // 96 over 4 slots × 32 lanes: the memory extent is the one changed (every lane keeps its 3).
    const m = errorOf(() => kernel([96], "S[(4, 32) : (1, 1@laneid)]"));
    expect(m.notes.at(-1)?.message).toContain("S[(3, 32) : (1, 1@laneid)] (one extent changed)");
  });
});

const CASES: readonly ElementwiseCase[] = [
  {
    what: "[2, 48] over 3 slots × 32 lanes, a contiguous tensor",
    scope: "warp",
    block: 32,
    shape: [2, 48],
    layout: "S[(3, 32) : (1, 1@laneid)]",
  },
  {
    what: "[2, 48] over 3 slots × 32 lanes, rows 64 apart",
    scope: "warp",
    block: 32,
    shape: [2, 48],
    layout: "S[(3, 32) : (1, 1@laneid)]",
    viewCols: 64,
  },
  {
    what: "[6, 16] over 4 warps × 24 lanes (lanes 24..31 idle), rows 20 apart",
    scope: "cta",
    block: 128,
    shape: [6, 16],
    layout: "S[(4, 24) : (1@warpid, 1@laneid)]",
    viewCols: 20,
  },
  {
    what: "[3, 32] over 16 lanes × 6 slots, replicated over 2 warps",
    scope: "cta",
    block: 64,
    shape: [3, 32],
    layout: "S[(16, 6) : (1@laneid, 1)] + R[2 : 1@warpid]",
  },
  {
    what: "[8, 12] over 3 warps' rows of a warpgroup",
    scope: "wg",
    block: 128,
    shape: [8, 12],
    layout: "S[(3, 32) : (32@tid_in_wg, 1@tid_in_wg)]",
  },
];

describe("element-wise primitives, casts and copies of a tile whose dims do not line up", () => {
  for (const [i, c] of CASES.entries()) {
    it(`${c.what}: ${c.scope} scope, [${c.shape.join(", ")}] ${c.layout}`, () => {
      runElementwise(c, "flat_ew", dev, 40 + i);
    });
  }

  it("explain: a contiguous view is read as one run (vectors where the slots are), a strided one element by element", () => {
    const merged = explainTile(elementwiseKernel(CASES[3]!, "flat_ew"));
    expect(merged[0]).toMatch(
      /ld\.global vectors of 8 B .*\(read as \[96\], the view's contiguous dims merged\)/,
    );
    expect(merged.find((l) => l.includes("cast"))).toMatch(/pairs of adjacent slots/);
    const strided = explainTile(elementwiseKernel(CASES[1]!, "flat_ew"));
    expect(strided[0]).toMatch(
      /scalar ld\.global ×3 per thread, each address through the element's row-major index: the dims of \[2, 48\] do not line up/,
    );
  });

  it("tile.get and tile.set of one element go to its slot in its lane", () => {
    // Element [1, 20] is the shard's element 68: slot 2 of lane 4.
    const fn = T.function(
      "flat_get",
      {
        X: T.Tensor([2, 48], "float32"),
        Y: T.Tensor([2, 48], "float32"),
        Z: T.Tensor([1], "float32"),
      },
      ({ X, Y, Z }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const lane = T.cuda.thread_idx("x");
        const f = T.alloc_local([2, 48], "float32", {
          layout: T.TileLayout("S[(3, 32) : (1, 1@laneid)]"),
        });
        T.tile.warp.copy(f, X);
        T.if_(lane.eq(4), () => {
          Z.set([0], f.get([1, 20]));
          f.set([1, 20], T.float32(-1000));
        });
        T.tile.warp.copy(Y, f);
      },
    );
    assembleLater(compileToPtx(fn, { arch: "sm_80" }).text, "sm_80", fn.name);
    const x = smallInts(96, 3);
    const X = tensor(x, { shape: [2, 48], dtype: "float32", device: dev });
    const Y = tensor.zeros([2, 48], "float32", dev);
    const Z = tensor.zeros([1], "float32", dev);
    const r = compile(fn, { target: "cuda", hazards: "collect" })(X, Y, Z);
    expect(r.reports).toEqual([]);
    expect(Array.from(Z.toArray() as Float32Array)).toEqual([x[68]]);
    expect(Array.from(Y.toArray() as Float32Array)).toEqual(
      Array.from(x, (v, k) => (k === 68 ? -1000 : v)),
    );
  });

  it("permute_layout between [2, 48] tiles of two layouts, through the shared scratch", () => {
    const fn = T.function(
      "flat_permute",
      { X: T.Tensor([2, 48], "float32"), Y: T.Tensor([2, 48], "float32") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const a = T.alloc_local([2, 48], "float32", {
          layout: T.TileLayout("S[(3, 32) : (1, 1@laneid)]"),
        });
        const b = T.alloc_local([2, 48], "float32", {
          layout: T.TileLayout("S[(32, 3) : (1@laneid, 1)]"),
        });
        T.tile.cta.copy(a, X);
        T.tile.cta.permute_layout(b, a);
        T.tile.cta.copy(Y, b);
      },
    );
    assembleLater(compileToPtx(fn, { arch: "sm_80" }).text, "sm_80", fn.name);
    expect(explainTile(fn)[1]).toMatch(/shared scratch/);
    const x = smallInts(96, 8);
    const X = tensor(x, { shape: [2, 48], dtype: "float32", device: dev });
    const Y = tensor.zeros([2, 48], "float32", dev);
    const r = compile(fn, { target: "cuda", hazards: "collect" })(X, Y);
    expect(r.reports).toEqual([]);
    expect(Array.from(Y.toArray() as Float32Array)).toEqual(Array.from(x));
  });
});

interface RowCase {
  what: string;
  scope: Scope;
  block: number;
  src: string;
  dst: string;
}

/** [2, 3, 16] tiles whose rows (axis 2) are runs of 16 lanes, though dim 0 splits an iter. */
const ROWS: readonly RowCase[] = [
  {
    what: "3 slots × 32 lanes in one warp",
    scope: "warp",
    block: 32,
    src: "S[(3, 32) : (1, 1@laneid)]",
    dst: "S[(3, 2) : (1, 16@laneid)] + R[16 : 1@laneid]",
  },
  {
    what: "3 warps × 2 × 16 lanes",
    scope: "cta",
    block: 128,
    src: "S[(3, 2, 16) : (1@warpid, 16@laneid, 1@laneid)]",
    dst: "S[(3, 2) : (1@warpid, 16@laneid)] + R[16 : 1@laneid]",
  },
];

function rowsKernel(c: RowCase, op: "max" | "sum"): PrimFunc {
  return T.function(
    `flat_rows_${op}`,
    {
      X: T.Tensor([2, 3, 16], "float32"),
      Y: T.Tensor([2, 3, 16], "float32"),
      Z: T.Tensor([2, 3, 1], "float32"),
    },
    ({ X, Y, Z }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: c.block }) });
      const f = T.alloc_local([2, 3, 16], "float32", { layout: T.TileLayout(c.src) });
      const m = T.alloc_local([2, 3, 1], "float32", { layout: T.TileLayout(c.dst) });
      T.tile[c.scope].copy(f, X);
      T.tile[c.scope][op](m, f, 2);
      T.tile[c.scope].sub(f, f, m);
      T.tile[c.scope].select(f, ([i, j, k]) => k.lt(j.add(i.mul(3))), f, 100);
      T.tile[c.scope].copy(Y, f);
      T.tile[c.scope].copy(Z, m);
    },
  );
}

describe("reductions and broadcasts of a tile whose dims do not line up", () => {
  for (const c of ROWS) {
    it(`a row max and sum over 16 lanes, broadcast back, a causal-style mask: ${c.what}`, () => {
      for (const op of ["max", "sum"] as const) {
        const fn = rowsKernel(c, op);
        assembleLater(compileToPtx(fn, { arch: "sm_80" }).text, "sm_80", `${fn.name} ${c.what}`);
        const x = smallInts(96, op === "max" ? 12 : 13);
        const X = tensor(x, { shape: [2, 3, 16], dtype: "float32", device: dev });
        const Y = tensor.zeros([2, 3, 16], "float32", dev);
        const Z = tensor.zeros([2, 3, 1], "float32", dev);
        const r = compile(fn, { target: "cuda", hazards: "collect" })(X, Y, Z);
        expect(r.reports).toEqual([]);
        const rowOf = (q: number): number[] => Array.from(x.slice(q * 16, q * 16 + 16));
        const red = Array.from({ length: 6 }, (_, q) =>
          op === "max" ? Math.max(...rowOf(q)) : rowOf(q).reduce((a, b) => a + b, 0),
        );
        expect(Array.from(Z.toArray() as Float32Array)).toEqual(red);
        expect(Array.from(Y.toArray() as Float32Array)).toEqual(
          Array.from(x, (v, k) =>
            k % 16 < Math.floor(k / 16) ? v - red[Math.floor(k / 16)]! : 100,
          ),
        );
      }
    });
  }

  it("explain says how the tile was read", () => {
    const ex = explainTile(rowsKernel(ROWS[0]!, "max"));
    expect(ex[1]).toMatch(
      /warp shfl\.sync\.bfly ×4: .*\(src \[2, 3, 16\] read as \[6, 16, 1\]: its dims do not line up with the layout's iters\)/,
    );
  });
});

describe("what a primitive cannot do with such a tile, and why", () => {
  const L = "S[(3, 32) : (1, 1@laneid)]";
  const kernel = (body: (f: ReturnType<typeof T.alloc_local>) => void) => () =>
    T.function("refused", { X: T.Tensor([2, 48], "float32") }, ({ X }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const f = T.alloc_local([2, 48], "float32", { layout: T.TileLayout(L) });
      T.tile.warp.copy(f, X);
      body(f);
    });

  it("a reduction along an axis whose elements are no run of iters (rows of 48 over 32 lanes)", () => {
    const e = errorOf(
      kernel((f) => {
        const d = T.alloc_local([2, 1], "float32", {
          layout: T.TileLayout("S[(2, 1) : (1, 1)]"),
        });
        T.tile.warp.sum(d, f, 1);
      }),
    );
    expect([e.code, e.message]).toEqual([
      "TX2022",
      expect.stringMatching(
        /T\.tile\.warp\.sum: src f S\[\(3, 32\) : \(1, 1@laneid\)\] \[2, 48\]: a reduction along axis 1 needs the axis's elements to be a run of the layout's iters, but read as \[2, 48, 1\] \(the dims before the axis merged, the axis, the dims after it merged\), dim 0 \(2\) ends inside the iter 3:1, which it does not divide, so no slot, lane or warp pattern reduces it; nearest that works: a shape whose dims line up with the layout's iters \(its shard's \[3, 32\]\)/,
      ),
    ]);
  });

  it("a broadcast along rows that are no run of iters", () => {
    const e = errorOf(
      kernel((f) => {
        const r = T.alloc_local([2, 1], "float32", {
          layout: T.TileLayout("S[(2, 1) : (1, 1)] + R[32 : 1@laneid]"),
        });
        T.tile.warp.fill(r, 1);
        T.tile.warp.mul(f, f, r);
      }),
    );
    expect([e.code, e.message]).toEqual([
      "TX2022",
      expect.stringMatching(
        /dst f \[2, 48\] S\[\(3, 32\) : \(1, 1@laneid\)\] takes part in a broadcast, which reads each dim's iters, but its dims do not line up with the layout's iters even as \[2, 48\]/,
      ),
    ]);
  });

  it("a sub-view that no layout of the registers expresses (a row across slots and lanes)", () => {
    const e = errorOf(kernel((f) => T.tile.warp.fill(f.sub(1, ":"), 0)));
    expect([e.code, e.message]).toEqual([
      "TX2022",
      expect.stringMatching(/runs across a digit boundary of the layout's iters/),
    ]);
  });
});
