// Test kernels of the proxy fences (PTX ISA, fence.proxy.async), shared by the mutation test and
// the GPU test.
import { T } from "@tirx-ts/dsl";

/**
 * Global stores read back by a bulk load in the same launch: each writer's
 * fence.proxy.async.global orders its store for the async proxy, the cta_sync orders it before
 * thread 0's load (PTX ISA, fence.proxy.async; Memory Consistency Model, proxy causality).
 */
export const globalThenBulk = T.function(
  "global_then_bulk",
  { A: T.Tensor([64], "float32"), G: T.Tensor([64], "float32"), B: T.Tensor([64], "float32") },
  ({ A, G, B }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
    const tid = T.cuda.thread_idx("x");
    const s = T.alloc_shared([64], "float32");
    const bar = T.alloc_shared([1], "uint64");
    T.if_(tid.eq(0), () => {
      T.ptx.mbarrier.init(bar.sub(0), 1);
      T.ptx.fence.mbarrier_init();
    });
    G.set([tid], A.get([tid]).add(1));
    T.ptx.fence.proxy_async("global");
    T.cuda.cta_sync();
    T.if_(tid.eq(0), () => {
      T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 256);
      T.cuda.tile.apply(
        T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"]!,
        s,
        G,
        { chunk_bytes: 256, mbar: bar.sub(0) },
      );
    });
    T.ptx.mbarrier.try_wait(bar.sub(0), 0);
    B.set([tid], s.get([T.int32(63).sub(tid)]));
  },
);
