// Reductions over layouts with a thread offset (`O[k@laneid]`, `O[k@warpid]`, `O[k@tid_in_wg]`),
// on the simulated device against host math (integer inputs: every float32 sum is exact):
// - the lane butterflies pair lanes by the layout's digits, not by the lane id's bits (16 lanes
//   from lane 8 combine among themselves: shfl.sync.idx to lane off + ((lane - off) ^ mask));
// - the per-warp partials are read back past the warp offset;
// - dst must keep src's thread offset and have src's shape with the axis 1 or dropped.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { T, compile, explainTile, sim, tensor, type PrimFunc } from "tirx-ts";
import { errorOf } from "./util/error-of.js";
import { smallInts as ints } from "./util/small-ints.js";

const dev = sim();

type Op = "sum" | "max" | "min";
const OPS: readonly Op[] = ["sum", "max", "min"];
const fold = (op: Op, xs: number[]): number =>
  op === "sum" ? xs.reduce((a, b) => a + b, 0) : op === "max" ? Math.max(...xs) : Math.min(...xs);

/** Host reduction of a row-major [rows, cols] array along `axis`. */
function hostReduce(op: Op, x: Float32Array, rows: number, cols: number, axis: 0 | 1): number[] {
  return axis === 1
    ? Array.from({ length: rows }, (_, r) =>
        fold(op, Array.from(x.slice(r * cols, r * cols + cols))),
      )
    : Array.from({ length: cols }, (_, c) =>
        fold(
          op,
          Array.from({ length: rows }, (_, r) => x[r * cols + c]!),
        ),
      );
}

interface Case {
  scope: "warp" | "wg" | "cta";
  block: number;
  shape: [number, number];
  src: string;
  dst: string;
  axis: 0 | 1;
}

function kernel(c: Case, op: Op): PrimFunc {
  const [rows, cols] = c.shape;
  const dShape = c.axis === 1 ? [rows, 1] : [1, cols];
  return T.function(
    "reduce_offset",
    { X: T.Tensor(c.shape, "float32"), Y: T.Tensor(dShape, "float32") },
    ({ X, Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: c.block }) });
      const f = T.alloc_local(c.shape, "float32", { layout: T.TileLayout(c.src) });
      const d = T.alloc_local(dShape, "float32", { layout: T.TileLayout(c.dst) });
      T.tile[c.scope].copy(f, X);
      T.tile[c.scope][op](d, f, c.axis);
      T.tile[c.scope].copy(Y, d);
    },
  );
}

function runCase(c: Case, op: Op, seed: number): void {
  const [rows, cols] = c.shape;
  const x = ints(rows * cols, seed);
  const X = tensor(x, { shape: c.shape, dtype: "float32", device: dev });
  const Y = tensor.zeros(c.axis === 1 ? [rows, 1] : [1, cols], "float32", dev);
  compile(kernel(c, op), { target: "cuda" })(X, Y);
  expect(Array.from(Y.toArray() as Float32Array)).toEqual(hostReduce(op, x, rows, cols, c.axis));
  X.dispose();
  Y.dispose();
}

describe("a reduction over lanes after a lane offset", () => {
  it("the trial's 16 lanes from lane 8: sum -136 and max -1 of -1..-16", () => {
    const c: Case = {
      scope: "warp",
      block: 32,
      shape: [1, 16],
      src: "S[(1, 16) : (1, 1@laneid)] + O[8@laneid]",
      dst: "S[(1, 1) : (1, 1)] + R[16 : 1@laneid] + O[8@laneid]",
      axis: 1,
    };
    expect(explainTile(kernel(c, "sum"))[1]).toMatch(
      /warp shfl\.sync\.idx ×4 \(a butterfly on the digits past lane offset 8\)/,
    );
    const x = Float32Array.from({ length: 16 }, (_, i) => -(i + 1));
    for (const [op, want] of [
      ["sum", -136],
      ["max", -1],
    ] as const) {
      const X = tensor(x, { shape: [1, 16], dtype: "float32", device: dev });
      const Y = tensor.zeros([1, 1], "float32", dev);
      const fn = kernel(c, op);
      expect(compile(fn, { target: "cuda" }).ptx).toMatch(/shfl\.sync\.idx/);
      compile(fn, { target: "cuda" })(X, Y);
      expect(Array.from(Y.toArray() as Float32Array)).toEqual([want]);
    }
  });

  it("random lane ranges, strides and offsets, rows on lanes or in registers", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }), // log2 of the reduced lanes
        fc.integer({ min: 0, max: 1 }), // lane stride 1 or 2
        fc.integer({ min: 0, max: 2 }), // rows: 1, 2 on m, 2 on lanes
        fc.integer({ min: 0, max: 31 }),
        fc.integer({ min: 0, max: 2 }),
        fc.integer({ min: 1, max: 1000 }),
        (lg, sl, rowsKind, offPick, opPick, seed) => {
          const e = 2 ** lg;
          const s = 2 ** sl;
          const rows = rowsKind === 0 ? 1 : 2;
          const rowStride = rowsKind === 2 ? s * e : 0; // on lanes above the columns
          const span = (e - 1) * s + (rowsKind === 2 ? rowStride : 0);
          const off = offPick % (32 - span);
          const rowIter = rowsKind === 2 ? `${rowStride}@laneid` : "1";
          const src = `S[(${rows}, ${e}, 2) : (${rowsKind === 1 ? 2 : rowIter}, ${s}@laneid, 1)] + O[${off}@laneid]`;
          const kept = rowsKind === 2 ? `${rowStride}@laneid` : "1";
          const dst = `S[(${rows}, 1) : (${kept}, 1)] + R[${e} : ${s}@laneid] + O[${off}@laneid]`;
          runCase(
            { scope: "warp", block: 32, shape: [rows, 2 * e], src, dst, axis: 1 },
            OPS[opPick]!,
            seed,
          );
        },
      ),
      { numRuns: 12, seed: 20261205 },
    );
  });
});

describe("a reduction over warps after a warp offset", () => {
  it("rows on warps 1..2 of 4 (O[1@warpid]): the column sum, max and min", () => {
    const c: Case = {
      scope: "cta",
      block: 128,
      shape: [2, 32],
      src: "S[(2, 32) : (1@warpid, 1@laneid)] + O[1@warpid]",
      dst: "S[(1, 32) : (1, 1@laneid)] + R[2 : 1@warpid] + O[1@warpid]",
      axis: 0,
    };
    for (const op of OPS) runCase(c, op, 3);
  });

  it("rows on warps 2..5 of 8, lanes in pairs from lane 1, both axes", () => {
    const src = "S[(4, 8, 2) : (1@warpid, 2@laneid, 1)] + O[2@warpid, 1@laneid]";
    for (const op of OPS) {
      runCase(
        {
          scope: "cta",
          block: 256,
          shape: [4, 16],
          src,
          dst: "S[(1, 8, 2) : (1, 2@laneid, 1)] + R[4 : 1@warpid] + O[2@warpid, 1@laneid]",
          axis: 0,
        },
        op,
        5,
      );
      runCase(
        {
          scope: "cta",
          block: 256,
          shape: [4, 16],
          src,
          dst: "S[(4, 1) : (1@warpid, 1)] + R[8 : 2@laneid] + O[2@warpid, 1@laneid]",
          axis: 1,
        },
        op,
        6,
      );
    }
  });

  it("wg scope: rows on warps 1..2 of the warpgroup (O[32@tid_in_wg])", () => {
    const c: Case = {
      scope: "wg",
      block: 128,
      shape: [2, 32],
      src: "S[(2, 32) : (32@tid_in_wg, 1@tid_in_wg)] + O[32@tid_in_wg]",
      dst: "S[(1, 32) : (1, 1@tid_in_wg)] + R[2 : 32@tid_in_wg] + O[32@tid_in_wg]",
      axis: 0,
    };
    for (const op of OPS) runCase(c, op, 7);
  });
});

describe("dst must hold the results where src's threads are", () => {
  const build =
    (src: string, dst: string, dShape: number[], shape = [1, 16]) =>
    () =>
      T.function("bad", { X: T.Tensor(shape, "float32") }, ({ X }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const f = T.alloc_local(shape, "float32", { layout: T.TileLayout(src) });
        const d = T.alloc_local(dShape, "float32", { layout: T.TileLayout(dst) });
        T.tile.warp.copy(f, X);
        T.tile.warp.sum(d, f, 1);
      });

  it("a dst without src's thread offset, or with another, is TX2022 naming the one that works", () => {
    const src = "S[(1, 16) : (1, 1@laneid)] + O[16@laneid]";
    for (const dst of [
      "S[(1, 1) : (1, 1)] + R[16 : 1@laneid]",
      "S[(1, 1) : (1, 1)] + R[16 : 1@laneid] + O[3@laneid]",
    ]) {
      const e = errorOf(build(src, dst, [1, 1]));
      expect(e.code).toBe("TX2022");
      expect(e.message).toMatch(/nearest that works: .*R\[16 : 1@laneid\] \+ O\[16@laneid\]/);
    }
    expect(
      build(src, "S[(1, 1) : (1, 1)] + R[16 : 1@laneid] + O[16@laneid]", [1, 1]),
    ).not.toThrow();
  });

  it("a dst of src's size but another shape is TX2022", () => {
    const e = errorOf(build("S[(4, 8) : (8, 1)]", "S[(1, 4) : (4, 1)]", [1, 4], [4, 8]));
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(/dst d \[1, 4\].*T\.alloc_local\(\[4, 1\]/);
    expect(build("S[(4, 8) : (8, 1)]", "S[4 : 1]", [4], [4, 8])).not.toThrow();
  });

  it("an offset that pushes the lanes past the warp is TX2022", () => {
    const e = errorOf(
      build("S[(1, 16) : (1, 1@laneid)] + O[20@laneid]", "S[1 : 1] + R[16 : 1@laneid]", [1, 1]),
    );
    expect(e.code).toBe("TX2022");
  });
});
