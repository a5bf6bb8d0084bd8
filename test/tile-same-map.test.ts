// Register tiles whose layouts are one element → (thread, slot) map written two ways combine slot
// for slot (element-wise inputs, casts, register copies), as TIRx aligns operands after
// canonicalizing them: an iter split in two, an iter of extent 1 with any stride, 1@warpid for
// 32@tid. Maps that differ stay TX2022. On the simulated device against host math.
import { describe, expect, it } from "vitest";
import { T, compile, explainTile, sim, tensor } from "tirx-ts";
import { errorOf } from "./util/error-of.js";
import { smallInts as ints } from "./util/small-ints.js";

const dev = sim();

/** Y = X + X, X loaded into `la` and again into `lb`, added, cast to float16 and back. */
function kernel(
  scope: "warp" | "cta",
  block: number,
  shape: [number, number],
  la: string,
  lb: string,
) {
  return T.function(
    "same_map",
    { X: T.Tensor(shape, "float32"), Y: T.Tensor(shape, "float32") },
    ({ X, Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block }) });
      const a = T.alloc_local(shape, "float32", { layout: T.TileLayout(la) });
      const b = T.alloc_local(shape, "float32", { layout: T.TileLayout(lb) });
      const h = T.alloc_local(shape, "float16", { layout: T.TileLayout(lb) });
      T.tile[scope].copy(a, X);
      T.tile[scope].copy(b, X);
      T.tile[scope].add(a, a, b);
      T.tile[scope].cast(h, a);
      T.tile[scope].cast(b, h);
      T.tile[scope].copy(a, b);
      T.tile[scope].copy(Y, a);
    },
  );
}

function check(
  scope: "warp" | "cta",
  block: number,
  shape: [number, number],
  la: string,
  lb: string,
) {
  const n = shape[0] * shape[1];
  const x = ints(n, n + la.length);
  const X = tensor(x, { shape, dtype: "float32", device: dev });
  const Y = tensor.zeros(shape, "float32", dev);
  compile(kernel(scope, block, shape, la, lb), { target: "cuda" })(X, Y);
  expect(Array.from(Y.toArray() as Float32Array)).toEqual(Array.from(x, (v) => 2 * v));
}

describe("one element map in two notations combines slot for slot", () => {
  it("an m iter split in two, and an extent-1 iter of any stride (the trial's)", () => {
    const base = "S[(32, 4) : (1@laneid, 1)]";
    for (const other of ["S[(32, 2, 2) : (1@laneid, 2, 1)]", "S[(32, 1, 4) : (1@laneid, 7, 1)]"]) {
      check("warp", 32, [32, 4], base, other);
      // The cast takes the paired form, as it does for equal notations.
      expect(explainTile(kernel("warp", 32, [32, 4], base, other))[3]).toMatch(
        /pairs of adjacent slots/,
      );
    }
  });

  it("1@warpid for 32@tid, and a lane iter split in two, at cta scope", () => {
    check(
      "cta",
      128,
      [4, 32],
      "S[(4, 32) : (32@tid, 1@laneid)]",
      "S[(4, 32) : (1@warpid, 1@laneid)]",
    );
    check(
      "cta",
      128,
      [4, 32],
      "S[(4, 32) : (1@warpid, 1@laneid)]",
      "S[(4, 4, 8) : (1@warpid, 8@laneid, 1@laneid)]",
    );
  });

  it("maps that differ stay TX2022", () => {
    for (const [la, lb] of [
      ["S[(32, 4) : (1@laneid, 1)]", "S[(32, 4) : (1@laneid, 2)]"],
      ["S[(32, 4) : (1@laneid, 1)]", "S[(32, 4) : (1, 1@laneid)]"],
    ] as const) {
      const e = errorOf(() => kernel("warp", 32, [32, 4], la, lb));
      expect(e.code).toBe("TX2022");
    }
  });
});

describe("two parts of one tile at different slots", () => {
  it("add, cast and copy between rows of one register tile", () => {
    const fn = T.function(
      "parts",
      { X: T.Tensor([2, 32], "float32"), Y: T.Tensor([32], "float32") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const L = T.TileLayout("S[(2, 32) : (1, 1@laneid)]");
        const f = T.alloc_local([2, 32], "float32", { layout: L });
        const h = T.alloc_local([2, 32], "float16", { layout: L });
        const g = T.alloc_local([32], "float32", { layout: T.TileLayout("S[32 : 1@laneid]") });
        T.tile.warp.copy(f, X);
        // g = row 0 + row 1; row 0 = g (a copy into a part); row 1's float16 = row 0 as float16.
        T.tile.warp.add(g, f.sub(0, ":"), f.sub(1, ":"));
        T.tile.warp.copy(f.sub(0, ":"), g);
        T.tile.warp.cast(h.sub(1, ":"), f.sub(0, ":"));
        T.tile.warp.cast(f.sub(1, ":"), h.sub(1, ":"));
        T.tile.warp.add(g, f.sub(1, ":"), f.sub(0, ":"));
        T.tile.warp.copy(Y, g);
      },
    );
    const x = ints(64, 21);
    const X = tensor(x, { shape: [2, 32], dtype: "float32", device: dev });
    const Y = tensor.zeros([32], "float32", dev);
    compile(fn, { target: "cuda" })(X, Y);
    // Each column: 2 · (x0 + x1), exact for these integers in float16 too.
    expect(Array.from(Y.toArray() as Float32Array)).toEqual(
      Array.from({ length: 32 }, (_, j) => 2 * (x[j]! + x[32 + j]!)),
    );
  });
});

describe("a reduction's dst and a broadcast input in another notation of the expected map", () => {
  /** acc [8, 32] over 256 threads (rows replicated over 8 groups); s [8, 1] in `ls`. */
  const rowOp = (ls: string, what: "sum" | "bcast") =>
    T.function(
      "rows",
      { X: T.Tensor([8, 32], "float32"), Y: T.Tensor([8, 32], "float32") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 256 }) });
        const acc = T.alloc_local([8, 32], "float32", {
          layout: T.TileLayout("S[(8, 32) : (1, 1@tid)] + R[8 : 32@tid]"),
        });
        const s = T.alloc_local([8, 1], "float32", { layout: T.TileLayout(ls) });
        T.tile.cta.copy(acc, X);
        if (what === "sum") T.tile.cta.sum(s, acc, 1);
        else T.tile.cta.fill(s, 2);
        T.tile.cta.add(acc, acc, s);
        T.tile.cta.copy(Y, acc);
      },
    );

  it("R[256 : 1@tid] for R[(8, 32) : (32@tid, 1@tid)], an m iter in two, warpid for tid", () => {
    for (const ls of [
      "S[8 : 1] + R[256 : 1@tid]",
      "S[(2, 4) : (4, 1)] + R[(8, 32) : (32@tid, 1@tid)]",
      "S[8 : 1] + R[(8, 32) : (1@warpid, 1@laneid)]",
    ]) {
      for (const what of ["sum", "bcast"] as const) {
        const x = ints(256, ls.length);
        const X = tensor(x, { shape: [8, 32], dtype: "float32", device: dev });
        const Y = tensor.zeros([8, 32], "float32", dev);
        compile(rowOp(ls, what), { target: "cuda" })(X, Y);
        const rowSum = (r: number) => x.slice(r * 32, r * 32 + 32).reduce((a, b) => a + b, 0);
        expect(Array.from(Y.toArray() as Float32Array), `${what} ${ls}`).toEqual(
          Array.from(x, (v, i) => v + (what === "sum" ? rowSum(Math.floor(i / 32)) : 2)),
        );
      }
    }
  });

  it("another map is still TX2022 naming the one that works", () => {
    const e = errorOf(() => rowOp("S[8 : 1] + R[128 : 1@tid]", "sum"));
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(/nearest that works/);
  });
});
