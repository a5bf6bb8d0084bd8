// T.tile.wg.sum / max / min across the 4 warps of a warpgroup: lane butterflies, then a shared
// scratch per warpgroup and the warpgroup's named barrier (bar.sync 1 + wgid, 128), so two
// warpgroups reduce different data independently. On the simulated device with its hazard checks
// on (any report throws: a race on the scratch, a barrier that never completes or is shared)
// against exact math: integer-valued inputs, so every float32 sum is exact. Also the call nested
// in a loop, the negative axis, and the TX2022 messages that remain.
import { describe, expect, it } from "vitest";
import { T, compile, explainTile, sim, tensor, type PrimFunc } from "tirx-ts";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";
import {
  COLS,
  dstLayout,
  ints,
  ROWS,
  srcLayout,
  wgReduce,
  wgReduceReference,
} from "./util/wg-reduce-kernels.js";
import { errorOf } from "./util/error-of.js";

const dev = sim();

function check(fn: PrimFunc, iters: number, seed: number): void {
  const x = ints(iters * 2 * ROWS * COLS, seed);
  const k = compile(fn, { target: "cuda" });
  const X = tensor(x, { shape: [iters, 2, ROWS, COLS], dtype: "float32", device: dev });
  const R = tensor.zeros([iters, 2, 3, ROWS], "float32", dev);
  k(X, R);
  const got = Array.from(R.toArray() as Float32Array);
  const want = wgReduceReference(x, iters);
  expect(got).toEqual(want);
  X.dispose();
  R.dispose();
}

describe("T.tile.wg reductions across the warpgroup's warps", () => {
  it("two warpgroups reduce different data: exact, zero simulator reports, named barriers 1 and 2", () => {
    const fn = wgReduce("wg_reduce", 1, 1);
    const ptx = compileToPtx(fn, { arch: "sm_80" }).text;
    assembleLater(ptx, "sm_80", fn.name);
    const bars = [...new Set(ptx.match(/bar\.sync\s+\d+(, \d+)?;/g))].sort();
    expect(bars).toMatchInlineSnapshot(`
      [
        "bar.sync 1, 128;",
        "bar.sync 2, 128;",
      ]
    `);
    expect(explainTile(fn)[1]).toMatch(
      /T\.tile\.wg\.sum → warp shfl\.sync\.bfly ×5 \+ shared scratch \(4 warps per warpgroup\) \+ named bar\.sync \(1 \+ wgid, 128\): reduces axis 1 of S\[\(4, 128\) : \(1, 1@tid_in_wg\)\]$/,
    );
    check(fn, 1, 3);
  });

  it("nested in a loop (a barrier first frees the scratch), axis -1", () => {
    const fn = wgReduce("wg_reduce_loop", 2, -1);
    expect(explainTile(fn)[1]).toMatch(/named bar\.sync \(1 \+ wgid, 128\) ×2: reduces axis 1/);
    check(fn, 2, 11);
  });
});

describe("wg reduction dispatch errors", () => {
  it("an axis over wgid at wg scope is TX2022 naming the cta scope", () => {
    const e = errorOf(() =>
      T.function("wg_red_wgid", { R: T.Tensor([4], "float32") }, () => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 256 }) });
        const a = T.alloc_local([4, 256], "float32", {
          layout: T.TileLayout(T.S([4, 2, 128], [1, "1@wgid", "1@tid_in_wg"])),
        });
        const d = T.alloc_local([4, 1], "float32", {
          layout: T.TileLayout(T.S([4, 1]), T.R([2, 128], ["1@wgid", "1@tid_in_wg"])),
        });
        T.tile.wg.sum(d, a, 1);
      }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(
      /spreads over wgid \(the iter 2 : 1@wgid\); a wg reduction combines the warps of each warpgroup .*; nearest that works: T\.tile\.cta\.sum/,
    );
  });

  it("a dst of the wrong shape is TX2022 naming the exact dst allocation", () => {
    const e = errorOf(() =>
      T.function("wg_red_dst", { R: T.Tensor([4], "float32") }, () => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const a = T.alloc_local([ROWS, COLS], "float32", { layout: srcLayout() });
        const d = T.alloc_local([ROWS, 2], "float32", {
          layout: T.TileLayout(T.S([ROWS, 2]), T.R([64], ["2@tid_in_wg"])),
        });
        T.tile.wg.max(d, a, 1);
      }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.message).toContain(
      'must hold src\'s elements reduced along axis 1, replicated over the threads that reduced them; nearest that works: T.alloc_local([4, 1], "float32") laid out as S[4 : 1] + R[128 : 1@tid_in_wg] (or the shape [4] without the reduced dim)',
    );
  });

  it("an axis out of range is TX2022 naming both ways to count", () => {
    const e = errorOf(() =>
      T.function("wg_red_axis", { R: T.Tensor([4], "float32") }, () => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const a = T.alloc_local([ROWS, COLS], "float32", { layout: srcLayout() });
        const d = T.alloc_local([ROWS, 1], "float32", { layout: dstLayout() });
        T.tile.wg.sum(d, a, -3);
      }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(
      /axis -3 is not a dim of src \[4, 128\]; nearest that works: an axis in 0\.\.1, or -2\.\.-1 counted from the last/,
    );
  });

  it("across warps at warp scope is TX2022 naming wg and cta", () => {
    const e = errorOf(() =>
      T.function("wg_red_warp", { R: T.Tensor([4], "float32") }, () => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const a = T.alloc_local([ROWS, COLS], "float32", { layout: srcLayout() });
        const d = T.alloc_local([ROWS, 1], "float32", { layout: dstLayout() });
        T.tile.warp.sum(d, a, 1);
      }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(/T\.tile\.wg\.sum for warps of one warpgroup, T\.tile\.cta\.sum/);
  });
});
