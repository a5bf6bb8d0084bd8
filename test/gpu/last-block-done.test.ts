// The last-block-done reduction (examples/last_block_done.ts) on a real GPU: the grid's integer
// sum through a counter whose atom is acq_rel (or __threadfence + a relaxed atomicAdd +
// fence.acq_rel), checked against the exact int32 sum computed here, launch after launch (each
// relies on the counter the previous one reset), on the example's 8 CTAs and on 1024 CTAs where
// many CTAs finish at once. Skipped (with the reason printed) where there is no driver.
import { describe, expect, it } from "vitest";
import { cuda, cudaAvailable } from "@tirx-ts/runtime-cuda";
import { compile } from "tirx-ts";
import { makeLastBlockDone, runLastBlockDone } from "../../examples/last_block_done.js";

const available = cudaAvailable();
if (!available.ok) console.log(`test/gpu/last-block-done: skipped, ${available.reason}`);

describe.skipIf(!available.ok)("the last-block-done reduction on the GPU", () => {
  for (const ordering of ["acq_rel", "fences"] as const) {
    for (const [ctas, launches] of [
      [8, 4],
      [1024, 20],
    ] as const) {
      it(`${ordering}, ${ctas} CTAs, ${launches} launches: the exact sum every time`, () => {
        const kernel = makeLastBlockDone(ordering, ctas);
        const ptx = compile(kernel, { target: "cuda" }).ptx;
        expect(ptx).toMatch(
          ordering === "acq_rel"
            ? /atom\.acq_rel\.gpu\.global\.add\.u32/
            : /fence\.sc\.gpu;[\s\S]*atom\.global\.add\.u32[\s\S]*fence\.acq_rel\.gpu;/,
        );
        const { sums, want } = runLastBlockDone(cuda(0), kernel, ctas, launches);
        expect(sums).toEqual(Array.from({ length: launches }, () => want));
      });
    }
  }
});
