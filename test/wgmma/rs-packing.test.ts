// Register A operands of wgmma (RS) hold 16-bit elements in pairs of 32-bit registers; the code
// generator packs every pair of a wgmma.fence's run of mma_asyncs before the fence, so that no
// register is written between the fence and the wgmmas that read it (ptxas would inject a
// warpgroup.arrive before each such wgmma, C7519). FlashAttention's O += P·V is this shape.
import { describe, expect, it } from "vitest";
import { T } from "tirx-ts";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "../util/ptxas-deferred.js";

describe("wgmma RS: register A packed before the fence", () => {
  it("every mov.b32 of a register pair precedes wgmma.fence; the wgmmas follow it directly", () => {
    const fn = T.function(
      "rs_pack",
      { A: T.Tensor([64, 64], "bfloat16"), B: T.Tensor([64, 64], "bfloat16") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }), arch: "sm_90a" });
        const sB = T.alloc_shared([64, 64], "bfloat16", {
          name: "sB",
          layout: T.swizzle_mode("128B"),
          align: 1024,
        });
        const a = T.alloc_local([64, 64], "bfloat16", {
          name: "a",
          layout: T.layout.wgmma_tile_layout("A", 64, 64, "bfloat16"),
        });
        const acc = T.alloc_local([64, 64], "float32", {
          name: "acc",
          layout: T.layout.wgmma_tile_layout("D", 64, 64, "float32"),
        });
        T.tile.wg.copy_async(sB, B);
        T.ptx.cp.async_.commit_group();
        T.ptx.cp.async_.wait_group(0);
        T.ptx.fence.proxy_async();
        T.cuda.cta_sync();
        T.tile.wg.copy(a, A);
        T.tile.wg.gemm_async(acc, a, sB, { accum: false });
        T.ptx.wgmma.wait_group(0);
      },
    );
    const ptx = compileToPtx(fn, { arch: "sm_90a" }).text;
    assembleLater(ptx, "sm_90a", "rs_pack");
    const lines = ptx.split("\n").map((l) => l.trim());
    const fence = lines.findIndex((l) => l.startsWith("wgmma.fence"));
    const commit = lines.findIndex((l) => l.startsWith("wgmma.commit_group"));
    expect(fence).toBeGreaterThan(0);
    const between = lines.slice(fence + 1, commit);
    // Four k16 steps, each reading 4 packed registers; no packing after the fence.
    expect(between.filter((l) => l.startsWith("wgmma.mma_async"))).toHaveLength(4);
    expect(between.filter((l) => /^mov\.b32 %r\d+, \{/.test(l))).toEqual([]);
    const packs = lines.slice(0, fence).filter((l) => /^mov\.b32 %r\d+, \{%h/.test(l));
    expect(packs.length).toBeGreaterThanOrEqual(16);
  });
});
