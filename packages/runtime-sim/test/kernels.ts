import { T } from "@tirx-ts/dsl";
import type { PrimFunc } from "@tirx-ts/core";

/**
 * Kernels shared by the tests and bench/sim-speed.ts, written with the DSL so that diagnostics
 * point at these lines.
 */

/** The seed's copy_async: (128, 32) float16, 128 threads, four 16-byte cp.async each at CTA scope. */
export const seedKernel: PrimFunc = T.function(
  "copy_async",
  { A: T.Tensor([128, 32], "float16"), B: T.Tensor([128, 32], "float16") },
  ({ A, B }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
    const tid = T.cuda.thread_idx("x");
    const shared = T.alloc_shared([128, 32], "float16", { layout: "default" });
    const src = A.rearrange("(w t) (r v) -> w t r v", { w: 4, t: 32, v: 8 });
    const dst = shared.rearrange("(w t) (r v) -> w t r v", { w: 4, t: 32, v: 8 });
    T.cuda.tile.apply(T.ptx["cp.async.cg.shared.global"]!, dst, src, {
      chunk_bytes: 16,
      scope: "cta",
    });
    T.ptx.cp.async_.commit_group();
    T.ptx.cp.async_.wait_group(0);
    T.cuda.cta_sync();
    for (const j of T.range(32)) B.set([tid, j], shared.get([tid, j]));
  },
);

/**
 * An (n, n) float32 copy through shared memory: CTA r copies row r (4 KiB for n = 1024) with
 * 16-byte cp.async at CTA scope, waits, syncs, and writes the row back with a coalesced pattern
 * (thread t stores elements t, t + 256, ...), so every thread reads other threads' copies.
 */
export function rowCopyKernel(n: number, threads = 256): PrimFunc {
  const v = 4;
  const reps = n / (threads * v);
  return T.function(
    "row_copy",
    { A: T.Tensor([n, n], "float32"), B: T.Tensor([n, n], "float32") },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: n, block: threads }) });
      const tid = T.cuda.thread_idx("x");
      const row = T.cuda.block_idx("x");
      const shared = T.alloc_shared([n], "float32");
      const src = A.sub(row, ":").rearrange("(r w t v) -> w t r v", { w: threads / 32, t: 32, v });
      const dst = shared.rearrange("(r w t v) -> w t r v", { w: threads / 32, t: 32, v });
      T.cuda.tile.apply(T.ptx["cp.async.cg.shared.global"]!, dst, src, {
        chunk_bytes: 16,
        scope: "cta",
      });
      T.ptx.cp.async_.commit_group();
      T.ptx.cp.async_.wait_group(0);
      T.cuda.cta_sync();
      for (const j of T.range(reps * v)) {
        const col = tid.add(j.mul(threads));
        B.set([row, col], shared.get([col]));
      }
    },
  );
}
