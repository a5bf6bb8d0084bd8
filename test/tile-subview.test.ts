// A register sub-view given to a T.tile primitive (TIRx takes register regions as operands,
// tile_primitives/elementwise/reg.rst: `Tx.warp.sqrt(R[fs], R[fs])`) is the part it selects, never
// the whole tile: a part that fixes or narrows digits of the layout's `m` iters is a register tile
// of its own shape and derived layout (same registers, an `m` offset), checked on the simulated
// device against host math for fill, element-wise ops, cast, copy both ways, reductions, select,
// permute_layout and gemm at thread, warp and cta scope; every other part (a slice through a
// thread iter, across a digit boundary, a step inside an iter, a runtime start, another dtype)
// is TX2022 at the call naming the operand, the tile's layout, the slice and one that works.
import { describe, expect, it } from "vitest";
import { T, compile, explainTile, sim, tensor } from "tirx-ts";
import { errorOf } from "./util/error-of.js";
import { smallInts as ints } from "./util/small-ints.js";

const dev = sim();

/** A float32 tensor on the simulated device. */
const f32 = (x: Float32Array, shape: number[]) =>
  tensor(x, { shape, dtype: "float32", device: dev });

/** The float32 contents of a tensor as a plain array. */
const values = (t: { toArray(): unknown }): number[] =>
  Array.from(t.toArray() as ArrayLike<number>, Number);

const rowSum = (x: Float32Array, r: number, n: number): number =>
  x.slice(r * n, r * n + n).reduce((a, b) => a + b, 0);

describe("a register sub-view is the part it selects", () => {
  it("thread fill: a row, then two columns of the other row; the rest keeps its value", () => {
    const fn = T.function("fill_rows", { Y: T.Tensor([2, 4], "float32") }, ({ Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      const f = T.alloc_local([2, 4], "float32", { layout: T.TileLayout("S[(2, 4) : (4, 1)]") });
      T.tile.fill(f, 1);
      T.tile.fill(f.sub(0, ":"), 7);
      T.tile.fill(f.sub("1:2", "1:3"), 9);
      T.tile.copy(Y, f);
    });
    const Y = tensor.zeros([2, 4], "float32", dev);
    compile(fn, { target: "cuda" })(Y);
    expect(values(Y)).toEqual([7, 7, 7, 7, 1, 9, 9, 1]);
    // The part's own layout: row 0 is S[4 : 1]; row 1's columns 1..2 are 2 slots from slot 5.
    expect(explainTile(fn)[1]).toMatch(/f S\[4 : 1\]$/);
    expect(explainTile(fn)[2]).toMatch(/f S\[2 : 1\] \+ O\[5\]$/);
  });

  it("thread fill of a stepped slice whose step is a whole m digit (odd columns)", () => {
    const fn = T.function("fill_odd", { Y: T.Tensor([2, 8], "float32") }, ({ Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      const f = T.alloc_local([2, 8], "float32");
      T.tile.fill(f, 0);
      T.tile.fill(f.sub(":", "1:8:2"), 5);
      T.tile.copy(Y, f);
    });
    const Y = tensor.zeros([2, 8], "float32", dev);
    compile(fn, { target: "cuda" })(Y);
    expect(values(Y)).toEqual(Array.from({ length: 16 }, (_, i) => (i % 2 === 1 ? 5 : 0)));
  });

  it("warp add on rows 1:2 leaves row 0 as it was", () => {
    const fn = T.function(
      "add_row",
      { X: T.Tensor([2, 32], "float32"), Y: T.Tensor([2, 32], "float32") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const f = T.alloc_local([2, 32], "float32", {
          layout: T.TileLayout("S[(2, 32) : (1, 1@laneid)]"),
        });
        T.tile.warp.copy(f, X);
        T.tile.warp.add(f.sub("1:2", ":"), f.sub("1:2", ":"), 5);
        T.tile.warp.copy(Y, f);
      },
    );
    expect(explainTile(fn)[1]).toMatch(/1 slot .*f S\[32 : 1@laneid\] \+ O\[1\]$/);
    const x = ints(64, 1);
    const X = f32(x, [2, 32]);
    const Y = tensor.zeros([2, 32], "float32", dev);
    compile(fn, { target: "cuda" })(X, Y);
    expect(values(Y)).toEqual(Array.from(x, (v, i) => (i < 32 ? v : v + 5)));
  });

  it("warp select with a function of the indices: the part's own indices", () => {
    const fn = T.function("select_row", { Y: T.Tensor([2, 32], "float32") }, ({ Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const f = T.alloc_local([2, 32], "float32", {
        layout: T.TileLayout("S[(2, 32) : (1, 1@laneid)]"),
      });
      T.tile.warp.fill(f, 0);
      T.tile.warp.select(f.sub(1, ":"), ([j]) => j.lt(4), 1, 2);
      T.tile.warp.copy(Y, f);
    });
    const Y = tensor.zeros([2, 32], "float32", dev);
    compile(fn, { target: "cuda" })(Y);
    expect(values(Y)).toEqual([
      ...Array<number>(32).fill(0),
      1,
      1,
      1,
      1,
      ...Array<number>(28).fill(2),
    ]);
  });

  it("cta cast of rows 2:4 into rows 2:4 (paired cvt); rows 0:2 keep their value", () => {
    const fn = T.function(
      "cast_rows",
      { X: T.Tensor([4, 128], "float32"), Y: T.Tensor([4, 128], "float16") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const layout = T.TileLayout("S[(4, 128) : (1, 1@tid)]");
        const f = T.alloc_local([4, 128], "float32", { layout });
        const h = T.alloc_local([4, 128], "float16", { layout });
        T.tile.cta.copy(f, X);
        T.tile.cta.fill(h, 0);
        T.tile.cta.cast(h.sub("2:4", ":"), f.sub("2:4", ":"));
        T.tile.cta.copy(Y, h);
      },
    );
    expect(explainTile(fn)[2]).toMatch(
      /T\.tile\.cta\.cast → per-thread loop, 2 slots as 1 pairs .* h S\[\(2, 128\) : \(1, 1@tid\)\] \+ O\[2\]$/,
    );
    const x = ints(512, 3);
    const X = f32(x, [4, 128]);
    const Y = tensor.zeros([4, 128], "float16", dev);
    compile(fn, { target: "cuda" })(X, Y);
    expect(values(Y)).toEqual(Array.from(x, (v, i) => (i >= 256 ? v : 0)));
  });

  for (const cols of ["1:3", "2:4"]) {
    it(`warp copy global → columns ${cols} of a [32, 4] tile (vectors from a slot offset) and back`, () => {
      const fn = T.function(
        "copy_cols",
        { X: T.Tensor([32, 4], "float32"), Y: T.Tensor([32, 4], "float32") },
        ({ X, Y }) => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
          const f = T.alloc_local([32, 4], "float32", {
            layout: T.TileLayout("S[(32, 4) : (1@laneid, 1)]"),
          });
          T.tile.warp.fill(f, -1);
          T.tile.warp.copy(f.sub(":", cols), X.sub(":", cols));
          T.tile.warp.copy(Y, f);
        },
      );
      expect(explainTile(fn)[1]).toMatch(/ld\.global vectors of 8 B \(2 × float32\)/);
      const [a, b] = cols.split(":").map(Number) as [number, number];
      const x = ints(128, 5);
      const X = f32(x, [32, 4]);
      const Y = tensor.zeros([32, 4], "float32", dev);
      compile(fn, { target: "cuda" })(X, Y);
      expect(values(Y)).toEqual(Array.from(x, (v, i) => (i % 4 >= a && i % 4 < b ? v : -1)));
    });
  }

  it("warp and cta copy: rows of a tile to and from rows of global memory", () => {
    for (const scope of ["warp", "cta"] as const) {
      const threads = scope === "warp" ? 32 : 64;
      const fn = T.function(
        `copy_rows_${scope}`,
        { X: T.Tensor([4, threads], "float32"), Y: T.Tensor([4, threads], "float32") },
        ({ X, Y }) => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: threads }) });
          const axis = scope === "warp" ? "laneid" : "tid";
          const f = T.alloc_local([4, threads], "float32", {
            layout: T.TileLayout(`S[(4, ${threads}) : (1, 1@${axis})]`),
          });
          T.tile[scope].fill(f, 0);
          T.tile[scope].copy(f.sub(1, ":"), X.sub(2)); // row 1 ← X row 2
          T.tile[scope].copy(f.sub("2:4", ":"), X.sub("0:2")); // rows 2, 3 ← X rows 0, 1
          T.tile[scope].copy(Y, f);
          T.tile[scope].copy(Y.sub(0), f.sub(3, ":")); // Y row 0 ← row 3 (X row 1)
        },
      );
      const x = ints(4 * threads, 7);
      const X = f32(x, [4, threads]);
      const Y = tensor.zeros([4, threads], "float32", dev);
      compile(fn, { target: "cuda" })(X, Y);
      const row = (r: number) => Array.from(x.slice(r * threads, (r + 1) * threads));
      expect(values(Y)).toEqual([...row(1), ...row(2), ...row(0), ...row(1)]);
    }
  });

  it("warp sum of rows 1:3 into rows 1:3 of the result; the other rows keep their value", () => {
    const fn = T.function(
      "sum_rows",
      { X: T.Tensor([4, 32], "float32"), Y: T.Tensor([4], "float32") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const f = T.alloc_local([4, 32], "float32", {
          layout: T.TileLayout("S[(4, 32) : (1, 1@laneid)]"),
        });
        const d = T.alloc_local([4, 1], "float32", {
          layout: T.TileLayout("S[4 : 1] + R[32 : 1@laneid]"),
        });
        T.tile.warp.copy(f, X);
        T.tile.warp.fill(d, -1);
        T.tile.warp.sum(d.sub("1:3", ":"), f.sub("1:3", ":"), 1);
        T.tile.warp.copy(Y, d.sub(":", 0));
      },
    );
    const x = ints(128, 9);
    const X = f32(x, [4, 32]);
    const Y = tensor.zeros([4], "float32", dev);
    compile(fn, { target: "cuda" })(X, Y);
    expect(values(Y)).toEqual([-1, rowSum(x, 1, 32), rowSum(x, 2, 32), -1]);
  });

  it("cta sum of one row across warps (shared scratch) into one slot of the result", () => {
    const fn = T.function(
      "sum_row_cta",
      { X: T.Tensor([2, 128], "float32"), Y: T.Tensor([2], "float32") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const f = T.alloc_local([2, 128], "float32", {
          layout: T.TileLayout("S[(2, 128) : (1, 1@tid)]"),
        });
        const d = T.alloc_local([2, 1], "float32", {
          layout: T.TileLayout("S[2 : 1] + R[128 : 1@tid]"),
        });
        T.tile.cta.copy(f, X);
        T.tile.cta.fill(d, -1);
        T.tile.cta.sum(d.sub(1, ":"), f.sub(1, ":"), 0);
        T.tile.cta.copy(Y, d.sub(":", 0));
      },
    );
    expect(explainTile(fn)[2]).toMatch(
      /T\.tile\.cta\.sum → .*shared scratch \(4 warps\).*reduces axis 0 of S\[128 : 1@tid\] \+ O\[1\]/,
    );
    const x = ints(256, 11);
    const X = f32(x, [2, 128]);
    const Y = tensor.zeros([2], "float32", dev);
    compile(fn, { target: "cuda" })(X, Y);
    expect(values(Y)).toEqual([-1, rowSum(x, 1, 128)]);
  });

  it("warp permute_layout from a row of a tile; a transposed rearrange copies transposed", () => {
    const perm = T.function(
      "permute_row",
      { X: T.Tensor([2, 32], "float32"), Y: T.Tensor([32], "float32") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const f = T.alloc_local([2, 32], "float32", {
          layout: T.TileLayout("S[(2, 32) : (1, 1@laneid)]"),
        });
        const g = T.alloc_local([32], "float32", { layout: T.TileLayout("S[32 : 1@laneid]") });
        T.tile.warp.copy(f, X);
        T.tile.warp.permute_layout(g, f.sub(1, ":"));
        T.tile.warp.copy(Y, g);
      },
    );
    const x = ints(64, 13);
    const X = f32(x, [2, 32]);
    const Y = tensor.zeros([32], "float32", dev);
    compile(perm, { target: "cuda" })(X, Y);
    expect(values(Y)).toEqual(Array.from(x.slice(32)));

    const transposed = T.function("copy_t", { Y: T.Tensor([4, 2], "float32") }, ({ Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      const f = T.alloc_local([2, 4], "float32", { layout: T.TileLayout("S[(2, 4) : (4, 1)]") });
      T.tile.fill(f.sub(0, ":"), 1);
      T.tile.fill(f.sub(1, ":"), 2);
      T.tile.fill(f.sub(":", 3), 3);
      T.tile.copy(Y, f.rearrange("r c -> c r"));
    });
    const Yt = tensor.zeros([4, 2], "float32", dev);
    compile(transposed, { target: "cuda" })(Yt);
    expect(values(Yt)).toEqual([1, 2, 1, 2, 1, 2, 3, 3]);
  });

  it("warp gemm into the right half of a 16 × 16 C (the second n8 atom's slots)", () => {
    const M = T.layout.mma_sync_tile_layout;
    const fn = T.function(
      "gemm_half",
      {
        A: T.Tensor([16, 16], "float16"),
        B: T.Tensor([16, 8], "float16"),
        C: T.Tensor([16, 16], "float32"),
      },
      ({ A, B, C }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const a = T.alloc_local([16, 16], "float16", {
          layout: M("A", "m16n8k16", "float16", 16, 16),
        });
        const b = T.alloc_local([16, 8], "float16", {
          layout: M("B", "m16n8k16", "float16", 16, 8),
        });
        const c = T.alloc_local([16, 16], "float32", {
          layout: M("C", "m16n8k16", "float32", 16, 16),
        });
        T.tile.warp.copy(a, A);
        T.tile.warp.copy(b, B);
        T.tile.warp.fill(c, 0);
        T.tile.warp.gemm(c.sub(":", "8:16"), a, b);
        T.tile.warp.copy(C, c);
      },
    );
    expect(explainTile(fn)[3]).toMatch(/mma\.sync\.m16n8k16\.f16→f32 ×1 .* \+ O\[4\] are grids/);
    const a = ints(256, 15);
    const b = ints(128, 17);
    const A = tensor(a, { shape: [16, 16], dtype: "float16", device: dev });
    const B = tensor(b, { shape: [16, 8], dtype: "float16", device: dev });
    const C = tensor.zeros([16, 16], "float32", dev);
    compile(fn, { target: "cuda" })(A, B, C);
    const want = new Array<number>(256).fill(0);
    for (let r = 0; r < 16; r++)
      for (let q = 0; q < 8; q++) {
        let s = 0;
        for (let p = 0; p < 16; p++) s += a[r * 16 + p]! * b[p * 8 + q]!;
        want[r * 16 + 8 + q] = s;
      }
    expect(values(C)).toEqual(want);
  });
});

describe("a part no layout of the registers expresses is TX2022 at the call", () => {
  /** The error of a warp kernel over `f` ([rows, 32] in `layout`) that runs `body`. */
  const warpError = (
    layout: string,
    rows: number,
    body: (f: ReturnType<typeof T.alloc_local>, X: ReturnType<typeof T.alloc_local>) => void,
  ) =>
    errorOf(() =>
      T.function("bad", { X: T.Tensor([rows, 32], "float32") }, ({ X }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const f = T.alloc_local([rows, 32], "float32", { layout: T.TileLayout(layout) });
        body(f, X);
      }),
    );
  const expectAtCall = (e: { code: string; span?: { file: string } }) => {
    expect(e.code).toBe("TX2022");
    expect(e.span?.file).toMatch(/tile-subview\.test\.ts$/);
  };

  it("a slice that narrows a thread iter (fill dst), naming the slice and the whole tile", () => {
    const e = warpError("S[(2, 32) : (1, 1@laneid)]", 2, (f) =>
      T.tile.warp.fill(f.sub(":", "0:16"), 1),
    );
    expectAtCall(e);
    expect(e.message).toMatch(
      /T\.tile\.warp\.fill: dst f\.sub\(":", "0:16"\) is a part of the register tile f \[2, 32\] S\[\(2, 32\) : \(1, 1@laneid\)\] that no layout of its registers expresses: dim 1's slice "0:16" keeps 16 of the 32 values of the thread iter 32:1@laneid/,
    );
    expect(e.message).toMatch(/a register sub-view may fix or narrow only digits of m iters/);
    expect(e.message).toMatch(/nearest that works: the whole tile f/);
  });

  it("an index that fixes a thread iter's digit (copy src, cta), suggesting the slice that works", () => {
    const e = errorOf(() =>
      T.function("bad", { Y: T.Tensor([4, 32], "float32") }, ({ Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const f = T.alloc_local([2, 4, 32], "float32", {
          layout: T.TileLayout("S[(2, 4, 32) : (1@warpid, 1, 1@laneid)]"),
        });
        T.tile.cta.copy(Y, f.sub(1, ":", ":"));
      }),
    );
    expectAtCall(e);
    expect(e.message).toMatch(
      /T\.tile\.cta\.copy: src f\.sub\(1, ":", ":"\) .*: dim 0's index 1 fixes the digit of the thread iter 2:1@warpid, so only the threads with that warpid digit would hold the part/,
    );
    expect(e.message).toMatch(/nearest that works: the whole tile f/);
  });

  it("a slice across a digit boundary (sum src) suggests the nearest whole run of digits", () => {
    const e = errorOf(() =>
      T.function("bad", { X: T.Tensor([8, 32], "float32") }, ({ X }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const f = T.alloc_local([8, 32], "float32", {
          layout: T.TileLayout("S[(2, 4, 4, 8) : (16, 4, 1, 1@laneid)]"),
        });
        const d = T.alloc_local([4, 1], "float32", {
          layout: T.TileLayout("S[4 : 1] + R[8 : 1@laneid]"),
        });
        T.tile.warp.copy(f, X);
        T.tile.warp.sum(d, f.sub("2:6", "5:9"), 1);
      }),
    );
    expectAtCall(e);
    expect(e.message).toMatch(
      /T\.tile\.warp\.sum: src f\.sub\("2:6", "5:9"\) .*: dim 0's slice "2:6" runs across a digit boundary of the layout's iters/,
    );
    expect(e.message).toMatch(/nearest that works: f\.sub\(":", "0:16"\), or a layout/);
  });

  it("a narrowed thread digit names the slice that keeps it whole (add's input b)", () => {
    const e = warpError("S[(2, 4, 4, 8) : (16, 4, 1, 1@laneid)]", 8, (f) => {
      T.tile.warp.add(f.sub("1:3", ":"), f.sub("1:3", ":"), f.sub("1:3", "0:4"));
    });
    expectAtCall(e);
    expect(e.message).toMatch(
      /T\.tile\.warp\.add: b f\.sub\("1:3", "0:4"\) .*: dim 1's slice "0:4" keeps 4 of the 8 values of the thread iter 8:1@laneid/,
    );
    expect(e.message).toMatch(/nearest that works: f\.sub\("1:3", "0:8"\)/);
  });

  it("stepped slices: a step through a thread iter, a step inside an iter", () => {
    const through = warpError("S[(2, 32) : (1, 1@laneid)]", 2, (f) =>
      T.tile.warp.fill(f.sub(":", "0:32:2"), 1),
    );
    expectAtCall(through);
    expect(through.message).toMatch(
      /dim 1's slice "0:32:2" fixes a digit of the thread iter 32:1@laneid/,
    );
    const inside = errorOf(() =>
      T.function("bad", { Y: T.Tensor([2, 3], "float32") }, ({ Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
        const f = T.alloc_local([2, 8], "float32");
        T.tile.fill(f, 0);
        T.tile.copy(Y, f.sub(":", "0:8:3"));
      }),
    );
    expectAtCall(inside);
    expect(inside.message).toMatch(
      /T\.tile\.copy: src f\.sub\(":", "0:8:3"\) .*: dim 1's slice "0:8:3" steps by 3 elements of the tile's row-major index, which falls inside an iter of the layout \(its digits step by 8, 1\)/,
    );
  });

  it("a runtime start, a view in another dtype (cast src)", () => {
    const runtime = warpError("S[(2, 32) : (1, 1@laneid)]", 2, (f) =>
      T.tile.warp.fill(f.sub(T.cuda.block_idx("x"), ":"), 1),
    );
    expectAtCall(runtime);
    expect(runtime.message).toMatch(
      /its start is a runtime index, but the slots of a register tile are fixed when the kernel is compiled/,
    );
    const dtype = errorOf(() =>
      T.function("bad", { Y: T.Tensor([4], "float32") }, ({ Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
        const f = T.alloc_local([4], "float32");
        const g = T.alloc_local([4], "float32");
        T.tile.cast(g, f.view_as("int32"));
      }),
    );
    expectAtCall(dtype);
    expect(dtype.message).toMatch(
      /T\.tile\.cast: src f as int32 is a part .*: it reads the float32 registers as int32 \(view_as\)/,
    );
  });
});
