// Warp- and wg-scope memset and copy_async share their work over the scope's threads: in a CTA
// smaller than one warp (warpgroup) that is the CTA's threads; a CTA of more than one but not
// whole warps (warpgroups) is TX2022 (its last scope's missing threads would leave their share
// undone: stale data, no report). On the simulated device against the host.
import { describe, expect, it } from "vitest";
import { T, compile, sim, tensor } from "tirx-ts";
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
