// Warp- and wg-scope memset and copy_async share their work over the scope's threads: in a CTA
// smaller than one warp (warpgroup) that is the CTA's threads; a CTA of more than one but not
// whole warps (warpgroups) is TX2022 (its last scope's missing threads would leave their share
// undone: stale data, no report). And copy_async from a tensor with a symbolic dim takes TMA or is
// TX2022 at the call (the verifier refused it after the tile layer had accepted it). On the
// simulated device against the host.
import { describe, expect, it } from "vitest";
import { T, compile, explainTile, sim, tensor } from "tirx-ts";
import { errorOf } from "./util/error-of.js";
import { smallInts } from "./util/small-ints.js";

const dev = sim();

function kernel(op: "memset" | "copy_async", scope: "warp" | "wg", block: number) {
  return T.function(
    "partial",
    { X: T.Tensor([16, 32], "float32"), Y: T.Tensor([16, 32], "float32") },
    ({ X, Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([16, 32], "float32");
      // Every element written first, so that a share left undone shows as stale data.
      T.if_(tid.eq(0), () => {
        for (const i of T.range(16)) for (const j of T.range(32)) s.set([i, j], T.float32(-7));
      });
      T.cuda.cta_sync();
      if (op === "memset") T.tile[scope].memset(s, 0);
      else {
        T.tile[scope].copy_async(s, X);
        T.ptx.cp.async_.commit_group();
        T.ptx.cp.async_.wait_group(0);
      }
      T.cuda.cta_sync();
      T.if_(tid.eq(0), () => {
        for (const i of T.range(16)) for (const j of T.range(32)) Y.set([i, j], s.get([i, j]));
      });
    },
  );
}

describe("warp and wg scope in a CTA that is not whole warps or warpgroups", () => {
  for (const [scope, block] of [
    ["warp", 16],
    ["wg", 64],
    ["wg", 96],
  ] as const) {
    it(`${scope} scope in a CTA of ${block} threads: every element`, () => {
      const x = smallInts(512, block);
      for (const op of ["memset", "copy_async"] as const) {
        const X = tensor(x, { shape: [16, 32], dtype: "float32", device: dev });
        const Y = tensor.zeros([16, 32], "float32", dev);
        compile(kernel(op, scope, block), { target: "cuda" })(X, Y);
        expect(Array.from(Y.toArray() as Float32Array)).toEqual(
          op === "memset" ? Array.from(x, () => 0) : Array.from(x),
        );
      }
    });
  }

  it("48 threads at warp scope and 160 at wg scope are TX2022", () => {
    for (const [scope, block] of [
      ["warp", 48],
      ["wg", 160],
    ] as const) {
      for (const op of ["memset", "copy_async"] as const) {
        const e = errorOf(() => kernel(op, scope, block));
        expect([e.code, e.message]).toEqual([
          "TX2022",
          expect.stringMatching(/are not whole (warps|warpgroups)/),
        ]);
      }
    }
  });
});

describe("copy_async from a global tensor with a symbolic dim", () => {
  const kernel = (mode: "ldgsts" | "auto") =>
    T.function(
      `sym_${mode}`,
      { n: T.int32, X: T.Tensor(["n", 64], "float32"), Y: T.Tensor(["n", 64], "float32") },
      ({ n, X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [n], block: 64 }) });
        const row = T.cuda.block_idx("x");
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([64], "float32", { align: 128 });
        const bar = T.alloc_shared([1], "uint64");
        T.if_(tid.eq(0), () => {
          T.ptx.mbarrier.init(bar.sub(0), 1);
          T.ptx.fence.mbarrier_init();
        });
        T.cuda.cta_sync();
        if (mode === "ldgsts") {
          T.tile.cta.copy_async(s, X.sub(row));
          T.ptx.cp.async_.commit_group();
          T.ptx.cp.async_.wait_group(0);
          T.cuda.cta_sync();
        } else {
          T.if_(tid.eq(0), () => {
            T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 256);
            T.tile.copy_async(s, X.sub(row), { mbar: bar.sub(0) });
          });
          T.ptx.mbarrier.try_wait(bar.sub(0), 0);
        }
        T.if_(row.lt(n), () => Y.set([row, tid], s.get([tid]).mul(2)));
      },
    );

  it("with { mbar } it takes TMA (the map takes the launch's sizes) and runs", () => {
    const fn = kernel("auto");
    expect(explainTile(fn)[0]).toMatch(/TMA cp\.async\.bulk\.tensor/);
    const x = smallInts(3 * 64, 3);
    const X = tensor(x, { shape: [3, 64], dtype: "float32", device: dev });
    const Y = tensor.zeros([3, 64], "float32", dev);
    compile(fn, { target: "cuda" })(3, X, Y);
    expect(Array.from(Y.toArray() as Float32Array)).toEqual(Array.from(x, (v) => 2 * v));
  });

  it("cp.async chunks are TX2022 at the call, suggesting TMA", () => {
    const e = errorOf(() => kernel("ldgsts"));
    expect([e.code, e.message]).toEqual([
      "TX2022",
      expect.stringMatching(/X has the symbolic shape \[n, 64\].*dispatch: "tma"/),
    ]);
  });
});
