// examples/tile/gemm_hopper.ts (the tile layer's Hopper GEMM) issues the instructions of the
// instruction-level examples/gemm_hopper.ts, as many of each, with one cluster and with two
// (multicast B); ptxas assembles both. The examples test runs it on the simulator with its
// numeric check; test/script-modes.test.ts checks its script twin. Both builders verify at sizes
// whose tile rows are not a multiple of the grouped order's 8.
import { describe, expect, it } from "vitest";
import { verify, type PrimFunc } from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { makeGemmHopper } from "../examples/gemm_hopper.js";
import { makeTileGemmHopper } from "../examples/tile/gemm_hopper.js";
import { assembleLater } from "./util/ptxas-deferred.js";

const ptx = (fn: PrimFunc): string => compileToPtx(fn, { arch: "sm_90a" }).text;
const count = (text: string, re: RegExp): number =>
  text.split("\n").filter((l) => re.test(l)).length;

describe("examples/tile/gemm_hopper.ts against examples/gemm_hopper.ts", () => {
  for (const cluster of [1, 2] as const) {
    it(`cluster ${cluster}: the same TMA, wgmma, mbarrier and store instructions`, () => {
      const sizes = { m: 512, n: 512, k: 256, ctas: 4, cluster, dtype: "bfloat16" } as const;
      const tile = ptx(makeTileGemmHopper(sizes));
      const plain = ptx(makeGemmHopper(sizes));
      assembleLater(tile, "sm_90a", `tile gemm_hopper cluster ${cluster}`);
      for (const re of [
        /cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes \[/,
        /cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes\.multicast::cluster/,
        /wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.bf16\.bf16/,
        /wgmma\.fence/,
        /wgmma\.commit_group/,
        /wgmma\.wait_group/,
        /mbarrier\.try_wait/,
        /mbarrier\.arrive\.expect_tx/,
        /setmaxnreg/,
        /st\.global\.b32/,
        /\.param .*tmap|_param_[3-9]/,
      ]) {
        expect(count(tile, re), String(re)).toBe(count(plain, re));
      }
      // Each kind is there: two TMA loads (one multicast with two CTAs), 64 stores of pairs.
      expect(count(tile, /cp\.async\.bulk\.tensor/)).toBe(2);
      expect(count(tile, /multicast::cluster/)).toBe(cluster - 1);
      expect(count(tile, /st\.global\.b32/)).toBe(64);
      expect(count(tile, /wgmma\.mma_async/)).toBe(4);
      expect(tile).not.toMatch(/\.local/);
    });
  }
});

describe("both builders verify at sizes whose tile rows are not a multiple of the grouped order's 8", () => {
  // m 1536: 12 tile rows (cluster 1) or 6 cluster rows (cluster 2); the last group is shorter
  // and C's stores (no guard: the sizes are tile multiples) were TX2006 before the tile row and
  // column were clamped where the verifier cannot tie them to the group.
  for (const cluster of [1, 2] as const) {
    it(`m 1536, n 768, cluster ${cluster}`, () => {
      const sizes = { m: 1536, n: 768, k: 128, ctas: 8, cluster, dtype: "bfloat16" } as const;
      expect(() => verify(makeTileGemmHopper(sizes))).not.toThrow();
      expect(() => verify(makeGemmHopper(sizes))).not.toThrow();
    });
  }
});
