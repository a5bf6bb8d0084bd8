// A register primitive whose dst shares registers with an input at other slots (two parts of one
// tile) writes slot by slot, so it must not overwrite an input slot before reading it: element-
// wise ops and register copies go through a scratch, permute_layout's register moves read every
// value first, and a gemm whose C is a part of A's or B's tile is TX2022. On the simulated
// device against host math (each case was silently wrong before).
import { describe, expect, it } from "vitest";
import { T, compile, explainTile, sim, tensor } from "tirx-ts";
import { errorOf } from "./util/error-of.js";
import { smallInts } from "./util/small-ints.js";

const dev = sim();

/** Y = body(X) for a [rows, cols] float32 tile at the given block size. */
function run(
  shape: [number, number],
  block: number,
  body: (X: any, Y: any) => void,
): { out: number[]; x: Float32Array; explain: string[] } {
  const fn = T.function(
    "alias",
    { X: T.Tensor(shape, "float32"), Y: T.Tensor(shape, "float32") },
    ({ X, Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block }) });
      body(X, Y);
    },
  );
  const x = smallInts(shape[0] * shape[1], shape[0] * 31 + shape[1]);
  const X = tensor(x, { shape, dtype: "float32", device: dev });
  const Y = tensor.zeros(shape, "float32", dev);
  compile(fn, { target: "cuda" })(X, Y);
  return { out: Array.from(Y.toArray() as Float32Array), x, explain: explainTile(fn) };
}

describe("dst and an input are parts of one register tile", () => {
  it("f -= f[:, 0:1] (a broadcast from dst's own column) at thread scope", () => {
    const r = run([4, 4], 1, (X, Y) => {
      const f = T.alloc_local([4, 4], "float32", { layout: T.TileLayout("S[(4, 4) : (4, 1)]") });
      T.tile.copy(f, X);
      T.tile.sub(f, f, f.sub(":", "0:1"));
      T.tile.copy(Y, f);
    });
    expect(r.out).toEqual(Array.from(r.x, (v, e) => v - r.x[e - (e % 4)]!));
    expect(r.explain[1]).toMatch(/through a scratch, as an input shares dst's registers/);
  });

  it("f -= f[0:1, :] over a warp's lanes", () => {
    const r = run([4, 32], 32, (X, Y) => {
      const f = T.alloc_local([4, 32], "float32", {
        layout: T.TileLayout("S[(4, 32) : (1, 1@laneid)]"),
      });
      T.tile.warp.copy(f, X);
      T.tile.warp.sub(f, f, f.sub("0:1", ":"));
      T.tile.warp.copy(Y, f);
    });
    expect(r.out).toEqual(Array.from(r.x, (v, e) => v - r.x[e % 32]!));
  });

  it("rows 1:3 = rows 0:2 + 1 (add), and a register copy of overlapping rows", () => {
    const add = run([3, 4], 1, (X, Y) => {
      const f = T.alloc_local([3, 4], "float32", { layout: T.TileLayout("S[(3, 4) : (4, 1)]") });
      T.tile.copy(f, X);
      T.tile.add(f.sub("1:3", ":"), f.sub("0:2", ":"), 1);
      T.tile.copy(Y, f);
    });
    expect(add.out).toEqual(Array.from(add.x, (v, e) => (e >= 4 ? add.x[e - 4]! + 1 : v)));
    const copy = run([3, 32], 32, (X, Y) => {
      const f = T.alloc_local([3, 32], "float32", {
        layout: T.TileLayout("S[(3, 32) : (1, 1@laneid)]"),
      });
      T.tile.warp.copy(f, X);
      T.tile.warp.copy(f.sub("1:3", ":"), f.sub("0:2", ":"));
      T.tile.warp.copy(Y, f);
    });
    expect(copy.out).toEqual(Array.from(copy.x, (v, e) => (e >= 32 ? copy.x[e - 32]! : v)));
  });

  it("an in-place transpose by permute_layout reads every value before writing", () => {
    const r = run([4, 4], 1, (X, Y) => {
      const f = T.alloc_local([4, 4], "float32", { layout: T.TileLayout("S[(4, 4) : (4, 1)]") });
      T.tile.copy(f, X);
      T.tile.permute_layout(f, f.rearrange("r c -> c r"));
      T.tile.copy(Y, f);
    });
    expect(r.out).toEqual(
      Array.from({ length: 16 }, (_, i) => r.x[(i % 4) * 4 + Math.floor(i / 4)]!),
    );
    expect(r.explain[1]).toMatch(/read before written: in place/);
  });

  it("the same slots in place stay a plain loop (f = f + f)", () => {
    const r = run([4, 4], 1, (X, Y) => {
      const f = T.alloc_local([4, 4], "float32", { layout: T.TileLayout("S[(4, 4) : (4, 1)]") });
      T.tile.copy(f, X);
      T.tile.add(f, f, f);
      T.tile.copy(Y, f);
    });
    expect(r.out).toEqual(Array.from(r.x, (v) => 2 * v));
    expect(r.explain[1]).not.toMatch(/scratch/);
  });

  it("a gemm whose C is a part of A's tile is TX2022", () => {
    const L = T.layout.mma_sync_tile_layout;
    const e = errorOf(() =>
      T.function("c_is_a", { A: T.Tensor([16, 32], "float16") }, ({ A }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const h = T.alloc_local([16, 32], "float16", {
          layout: L("C", "m16n8k16", "float16", 16, 32),
        });
        const b = T.alloc_local([16, 16], "float16", {
          layout: L("B", "m16n8k16", "float16", 16, 16),
        });
        T.tile.warp.copy(h, A);
        T.tile.warp.fill(b, 0);
        T.tile.warp.gemm(h.sub(":", "0:16"), h.sub(":", "0:16"), b);
      }),
    );
    expect([e.code, e.message]).toEqual([
      "TX2022",
      expect.stringMatching(/C and A are parts of one register tile h/),
    ]);
  });
});
