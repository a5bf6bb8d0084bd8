// makeFlashAttention's wider KV blocks at head dims 128 and 256 (FlashAttention-3's tiles without
// causal or a window, hopper/tile_size.h): `blockN` 176 or 192 at head dim 128 (S 88 or 96
// float32 registers a thread, setmaxnreg 24 / 240), 80 at head dim 256. None divides the
// benchmark's sequence lengths: the last KV block is partial, its keys past seq_k masked. On the
// simulator against float64 (checkFlashAttention through test/util/flash-attention-sim.ts's
// `simulated`: within the bound, the simulator's hazard checks throwing on the first, every row
// written), and ptxas -v for sm_90a: no spills with each schedule, causal, and the persistent grid.
import { describe, expect, it } from "vitest";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { findPtxas } from "@tirx-ts/runtime-cuda";
import { makeFlashAttention, type FlashAttentionSizes } from "../examples/flash_attention.js";
import { ptxasUsage, simulated } from "./util/flash-attention-sim.js";

describe("flash_attention forward, wider KV blocks", () => {
  it("head dim 128, blockN 176: 128 queries on 256 keys (a partial second block), LSE, bfloat16, the ping-pong", () => {
    simulated({
      batch: 1,
      heads: 2,
      seqQ: 128,
      seqK: 256,
      headDim: 128,
      dtype: "bfloat16",
      blockN: 176,
      lse: true,
    });
  });

  it("head dim 256, blockN 80: causal, 128 queries on 200 keys (bottom-right; a partial third block), float16", () => {
    simulated({
      batch: 1,
      heads: 1,
      seqQ: 128,
      seqK: 200,
      headDim: 256,
      dtype: "float16",
      blockN: 80,
      causal: true,
    });
  });
});

describe("PTX of the wider KV blocks (sm_90a)", () => {
  const ptxas = findPtxas();
  const build = (s: Partial<FlashAttentionSizes>): string =>
    compileToPtx(
      makeFlashAttention({
        batch: 4,
        heads: 16,
        seqQ: 4096,
        seqK: 4096,
        headDim: 128,
        dtype: "bfloat16",
        ...s,
      } as FlashAttentionSizes),
      { arch: "sm_90a" },
    ).text;

  it("blockN 176 and 192 at head dim 128 take setmaxnreg 24 / 240; 80 at 256 keeps 40 / 232", () => {
    for (const blockN of [176, 192] as const) {
      const text = build({ blockN });
      expect(text).toMatch(/setmaxnreg\.dec\.sync\.aligned\.u32 24;/);
      expect(text).toMatch(/setmaxnreg\.inc\.sync\.aligned\.u32 240;/);
      // S = Q·K_jᵀ is one wgmma of N = blockN per 16 columns of the head dim.
      expect(text).toMatch(new RegExp(`wgmma\\.mma_async\\.sync\\.aligned\\.m64n${blockN}k16\\.`));
    }
    const text = build({ headDim: 256, heads: 8, blockN: 80 });
    expect(text).toMatch(/setmaxnreg\.inc\.sync\.aligned\.u32 232;/);
    expect(text).toMatch(/wgmma\.mma_async\.sync\.aligned\.m64n80k16\./);
  });

  it.skipIf(ptxas === undefined)(
    "ptxas -v: no spills at 128 × 176 (ping-pong, causal), 128 × 192 (a persistent grid) and 256 × 80 (causal); 168 registers at launch",
    () => {
      const builds: Partial<FlashAttentionSizes>[] = [
        { blockN: 176, causal: true, lse: true },
        { blockN: 192, seqQ: 1024, seqK: 1024, batch: 16, ctas: 132 },
        { headDim: 256, heads: 8, blockN: 80, causal: true },
      ];
      for (const s of builds) {
        expect(ptxasUsage(ptxas!, build(s)), JSON.stringify(s)).toEqual({
          registers: 168,
          spillStores: 0,
          spillLoads: 0,
        });
      }
    },
  );
});
