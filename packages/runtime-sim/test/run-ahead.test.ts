import { describe, expect, it } from "vitest";
import { verify } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";

/**
 * Warps are independent on a GPU: in a kernel with mbarrier waits, one warp may run ahead of a
 * statement where another warp waits (each warp runs as its own coroutine, barriers are
 * rendezvous points). Both kernels are correct CUDA; the simulator used to report a false
 * deadlock (TX6006) because it ran the CTA's consecutive statements in step.
 */
const SEEDS = [0, 1, 4, 7];

describe("a warp runs ahead of a statement where another warp waits", () => {
  it("warp 0 passes a wait that warp 1 blocks on, then releases it", () => {
    const fn = T.function("run_ahead", { B: T.Tensor([64], "float32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
      const tid = T.cuda.thread_idx("x");
      const warp = T.let_("warp", tid.floordiv(32));
      const bar = T.alloc_shared([1], "uint64", { name: "bar" });
      T.if_(tid.eq(0), () => T.ptx.mbarrier.init(bar.sub(0), 1));
      T.cuda.cta_sync();
      // Parity 1 of a fresh barrier passes at once (warp 0); parity 0 waits (warp 1).
      T.ptx.mbarrier.try_wait(bar.sub(0), T.if_then_else(warp.eq(0), 1, 0));
      T.if_(tid.eq(0), () => T.ptx.mbarrier.arrive(bar.sub(0)));
      B.set([tid], T.float32(1));
    });
    for (const simSeed of SEEDS) {
      const B = simZeros([64], "float32");
      const r = runSim(verify(fn), [B], { hazards: "collect", simSeed });
      expect(r.reports).toEqual([]);
      expect(Array.from(B.toArray() as Float32Array)).toEqual(new Array(64).fill(1));
    }
  });

  it("producer and consumer roles as two separate T.if_ statements over a 2-stage ring", () => {
    const N = 256;
    const ST = 2;
    const IT = 4;
    const LOAD = "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes";
    const fn = T.function(
      "two_ifs",
      { A: T.Tensor([IT, N], "float32"), B: T.Tensor([IT, N], "float32") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const tid = T.cuda.thread_idx("x");
        const buf = T.alloc_shared([ST, N], "float32", { name: "buf" });
        const full = T.alloc_shared([ST], "uint64", { name: "full" });
        const empty = T.alloc_shared([ST], "uint64", { name: "empty" });
        T.if_(tid.eq(0), () => {
          for (const s of T.unroll(ST)) {
            T.ptx.mbarrier.init(full.sub(s), 1);
            T.ptx.mbarrier.init(empty.sub(s), 1);
          }
          T.ptx.fence.mbarrier_init();
        });
        T.cuda.cta_sync();
        T.if_(tid.eq(0), () => {
          for (const i of T.range(IT)) {
            const s = T.let_("s", i.floormod(ST));
            T.ptx.mbarrier.try_wait(empty.sub(s), T.sub(1, i.floordiv(ST).floormod(2)));
            T.ptx.mbarrier.arrive.expect_tx(full.sub(s), N * 4);
            T.cuda.tile.apply(T.ptx[LOAD], buf.sub(s, ":"), A.sub(i, ":"), {
              chunk_bytes: N * 4,
              mbar: full.sub(s),
            });
          }
        });
        T.if_(tid.ge(32), () => {
          const lane = T.let_("lane", tid.floormod(32));
          for (const i of T.range(IT)) {
            const s = T.let_("s", i.floormod(ST));
            T.ptx.mbarrier.try_wait(full.sub(s), i.floordiv(ST).floormod(2));
            for (const k of T.range(N / 32)) {
              B.set([i, k.mul(32).add(lane)], buf.get([s, k.mul(32).add(lane)]));
            }
            T.cuda.__syncwarp();
            T.if_(lane.eq(0), () => T.ptx.mbarrier.arrive(empty.sub(s)));
          }
        });
      },
    );
    const x = Float32Array.from({ length: IT * N }, (_, i) => i);
    for (const simSeed of SEEDS) {
      const A = simTensor(x, { shape: [IT, N], dtype: "float32" });
      const B = simZeros([IT, N], "float32");
      const r = runSim(verify(fn), [A, B], { hazards: "collect", simSeed });
      expect(r.reports).toEqual([]);
      expect(Array.from(B.toArray() as Float32Array)).toEqual(Array.from(x));
    }
  });
});
