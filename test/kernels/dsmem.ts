// Test kernels of the shared::cta → shared::cluster bulk copy (T.ptx.cp.async_.bulk.shared_cluster,
// PTX ISA cp.async.bulk), shared by the simulator tests (test/dsmem-copy.test.ts) and the GPU
// test (test/gpu/dsmem-copy.test.ts).
import type { PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";

/** Ways to break the ring kernel's protocol, each a hazard the simulator must report. */
export type DsmemMutation =
  /** No fence.proxy.async between the generic writes of the source and the copy (TX6015). */
  | "no-proxy-fence"
  /** The destination CTA reads its buffer without waiting on its mbarrier (TX6007). */
  | "no-wait"
  /** The issuing thread rewrites its source right after the copy (TX6007). */
  | "rewrite-source"
  /** The mbarrier named is the issuing CTA's own, the destination another CTA's (TX6030). */
  | "own-mbarrier"
  /** The destination address is 4 bytes past the buffer's start (TX6021). */
  | "misaligned"
  /** No barrier.cluster before exit: a CTA may exit while its peer's copy still lands (TX6025). */
  | "no-exit-sync";

/**
 * A ring of `ctas` CTAs of one cluster, 64 threads each: CTA r fills its source S with
 * X[r·n .. r·n + n) (n = 64 · `per` float32 elements; `per` elements per thread), and its thread 0
 * copies S into R of the CTA of rank (r + 1) mod ctas, completing on that CTA's mbarrier `bar`;
 * every CTA waits on its own `bar` and writes R to Y[r·n ..]. So Y[r·n + i] = X[p·n + i] with
 * p = (r − 1) mod ctas. Set-up: thread 0 initialises `bar` and announces the n·4 incoming bytes
 * (arrive.expect_tx), fence.mbarrier_init, then the cluster barrier; teardown: the cluster
 * barrier, so that no CTA exits while its peer may still read its source or write to it.
 * `mutation` breaks one step of that protocol.
 */
export function dsmemRing(ctas: number, per = 1, mutation?: DsmemMutation): PrimFunc {
  const n = 64 * per;
  const bytes = 4 * n;
  return T.function(
    `dsmem_ring_${ctas}_${per}${mutation ? `_${mutation.replace(/-/g, "_")}` : ""}`,
    { X: T.Tensor([ctas * n], "float32"), Y: T.Tensor([ctas * n], "float32") },
    ({ X, Y }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: [ctas, 1], block: 64, cluster: [ctas, 1, 1] }),
      });
      const tid = T.cuda.thread_idx("x");
      const rank = T.cuda.cluster_ctarank();
      const next = rank.add(1).floormod(ctas);
      const S = T.alloc_shared([n], "float32", { name: "S" });
      const R = T.alloc_shared([n], "float32", { name: "R" });
      const bar = T.alloc_shared([1], "uint64", { name: "bar" });
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.init(bar.sub(0), 1);
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), bytes);
        T.ptx.fence.mbarrier_init();
      });
      for (let j = 0; j < per; j++) {
        const i = tid.add(64 * j);
        S.set([i], X.get([rank.mul(n).add(i)]));
      }
      if (mutation !== "no-proxy-fence") T.ptx.fence.proxy_async();
      T.ptx.barrier.cluster.arrive();
      T.ptx.barrier.cluster.wait();
      T.if_(tid.eq(0), () => {
        const dst = T.ptx.mapa(R.ptr([0]), next);
        T.ptx.cp.async_.bulk.shared_cluster(
          mutation === "misaligned" ? dst.add(4) : dst,
          S.ptr([0]),
          bytes,
          mutation === "own-mbarrier"
            ? T.ptx.mapa(bar.ptr([0]), rank)
            : T.ptx.mapa(bar.ptr([0]), next),
        );
        if (mutation === "rewrite-source") S.set([0], T.float32(0));
      });
      if (mutation !== "no-wait") T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      for (let j = 0; j < per; j++) {
        const i = tid.add(64 * j);
        Y.set([rank.mul(n).add(i)], R.get([i]));
      }
      if (mutation !== "no-exit-sync") {
        T.ptx.barrier.cluster.arrive();
        T.ptx.barrier.cluster.wait();
      }
    },
  );
}

/** The ring's expected output for input `x` (see {@link dsmemRing}). */
export function dsmemRingExpected(x: Float32Array, ctas: number, per = 1): Float32Array {
  const n = 64 * per;
  return Float32Array.from({ length: ctas * n }, (_, k) => {
    const r = Math.floor(k / n);
    const p = (r + ctas - 1) % ctas;
    return x[p * n + (k % n)]!;
  });
}
