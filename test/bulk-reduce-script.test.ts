// The bulk reduction (PTX ISA, cp.reduce.async.bulk) in script mode: `T.ptx[opcode](dst, src,
// params)` and `T.cuda.tile.apply(T.ptx[opcode], ...)` both lower to the reduction; the
// simulator's sums equal the host's. (Its own file: script mode's parser costs a second to load.)
import { describe, expect, it } from "vitest";
import { verify } from "@tirx-ts/core";
import { runSim, simTensor } from "@tirx-ts/runtime-sim";
import { script as T, type Tensor } from "tirx-ts";

describe("cp.reduce.async.bulk in script mode", () => {
  it("script mode: the call form and tile.apply both reduce", () => {
    const fn = T.prim_func(function bulk_reduce_script(
      In: Tensor<[4, 64], "float32">,
      Out: Tensor<[64], "float32">,
    ) {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 4, block: 64 }) });
      const tid = T.cuda.thread_idx("x");
      const cta = T.cuda.block_idx("x");
      const tile = T.alloc_shared([64], "float32", { name: "tile", align: 16 });
      tile[tid] = In[cta]![tid]!;
      T.ptx.fence.proxy_async();
      T.cuda.cta_sync();
      if (tid === 0) {
        T.ptx["cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32"](Out, tile, {
          chunk_bytes: 256,
        });
        T.cuda.tile.apply(
          T.ptx["cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32"],
          Out.rearrange("(h c) -> h c", { c: 32 }),
          tile.rearrange("(h c) -> h c", { c: 32 }),
          { chunk_bytes: 128 },
        );
        T.ptx.cp.async_.bulk.commit_group();
        T.ptx.cp.async_.bulk.wait_group(0);
      }
    });
    const input = Array.from({ length: 4 * 64 }, (_, i) => (i % 13) - 6);
    const o = simTensor(new Array<number>(64).fill(0), { shape: [64], dtype: "float32" });
    const r = runSim(verify(fn), [simTensor(input, { shape: [4, 64], dtype: "float32" }), o], {
      hazards: "collect",
    });
    expect(r.reports).toEqual([]);
    const want = Array.from({ length: 64 }, (_, i) =>
      // Each CTA reduces its tile twice (the call form, then tile.apply by halves).
      [0, 1, 2, 3].reduce((a, c) => a + 2 * input[c * 64 + i]!, 0),
    );
    expect(Array.from(o.toArray() as ArrayLike<number>)).toEqual(want);
  });
});
