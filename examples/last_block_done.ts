// Last-block-done reduction: a whole-grid integer sum in one launch. Each CTA sums its slice
// (T.cuda.cta_sum), thread 0 stores the CTA's partial and bumps a global counter; the CTA that
// draws the last ticket reads every partial and writes the total, then resets the counter for
// the next launch. The counter is what orders the partials before the last CTA's reads
// (PTX ISA, Memory Consistency Model, "Release and Acquire Patterns"):
// - "acq_rel": the counter's atom is atom.acq_rel.gpu: its release orders this CTA's partial
//   before it, its acquire orders every earlier CTA's partial before the last CTA's reads
//   (through the chain of atomics on the counter);
// - "fences": CUDA's classic form: __threadfence() (fence.sc.gpu) before a relaxed atomicAdd
//   releases, and a fence.acq_rel.gpu after it acquires;
// - "none": a relaxed atomic alone orders nothing: the simulator reports the last CTA's read of
//   another CTA's partial (TX6003), naming the missing release/acquire.
// Needs sm_70 (sm_80 is the lowest target). Run: npx tsx examples/last_block_done.ts
import {
  T,
  checkOutput,
  compile,
  device,
  isMain,
  runAsMain,
  tensor,
  type DeviceLike,
  type ExampleResult,
  type PrimFunc,
} from "tirx-ts";

/** CTAs, threads per CTA, and elements per thread. */
const CTAS = 8;
const BLOCK = 64;
const N = CTAS * BLOCK;

/** How the counter orders the partials: see the file comment. */
export type Ordering = "acq_rel" | "fences" | "none";

/**
 * The kernel: X int32 [N], Partial int32 [CTAS] (scratch), Count uint32 [1] (0 before the first
 * launch; the last CTA leaves it 0), Out int32 [1] = the sum of X (int32, wrapping).
 */
export function makeLastBlockDone(ordering: Ordering): PrimFunc {
  return T.function(
    `last_block_done_${ordering}`,
    {
      X: T.Tensor([N], "int32"),
      Partial: T.Tensor([CTAS], "int32"),
      Count: T.Tensor([1], "uint32"),
      Out: T.Tensor([1], "int32"),
    },
    ({ X, Partial, Count, Out }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: CTAS, block: BLOCK }) });
      const tid = T.cuda.thread_idx("x");
      const cta = T.cuda.block_idx("x");
      const scratch = T.alloc_shared([BLOCK / 32], "int32", { name: "scratch" });
      const last = T.alloc_shared([1], "int32", { name: "last" });
      const sum = T.cuda.cta_sum(X.get([cta.mul(BLOCK).add(tid)]), BLOCK / 32, scratch);
      T.if_(tid.eq(0), () => {
        Partial.set([cta], sum);
        if (ordering === "fences") T.cuda.threadfence();
        const ticket =
          ordering === "acq_rel"
            ? T.cuda.atomic_add(Count.ptr([0]), 1, { sem: "acq_rel", scope: "gpu" })
            : T.cuda.atomic_add(Count.ptr([0]), 1);
        if (ordering === "fences") T.ptx.fence.acq_rel("gpu");
        last.set([0], T.if_then_else(ticket.eq(CTAS - 1), 1, 0));
      });
      // Thread 0's acquire reaches the CTA's other threads through the barrier.
      T.cuda.cta_sync();
      T.if_(last.get([0]).eq(1), () => {
        const total = T.cuda.cta_sum(
          T.if_then_else(tid.lt(CTAS), Partial.get([tid.min(CTAS - 1)]), 0),
          BLOCK / 32,
          scratch,
        );
        T.if_(tid.eq(0), () => {
          Out.set([0], total);
          Count.set([0], 0);
        });
      });
    },
  );
}

/** The release/acquire form (the example's kernel). */
export const last_block_done = makeLastBlockDone("acq_rel");
/** The fence form: fence.sc.gpu, a relaxed atomic, fence.acq_rel.gpu. */
export const last_block_done_fences = makeLastBlockDone("fences");

/** X[i] = (i * 37) % 2001 - 1000, the inputs of every run. */
export function inputs(): Int32Array {
  return Int32Array.from({ length: N }, (_, i) => ((i * 37) % 2001) - 1000);
}

/**
 * Run `kernel` (default: the release/acquire form) on `dev` twice (the counter the first launch
 * leaves must serve the second) and compare Out with the exact sum of X each time.
 */
export function runExample(
  dev: DeviceLike = device(),
  kernel: PrimFunc = last_block_done,
): ExampleResult {
  const run = compile(kernel, { target: "cuda" });
  const x = inputs();
  let want = 0;
  for (const v of x) want = (want + v) | 0;
  const xs = tensor(x, { shape: [N], dtype: "int32", device: dev });
  const partial = tensor.zeros([CTAS], "int32", dev);
  const count = tensor.zeros([1], "uint32", dev);
  const out = tensor.zeros([1], "int32", dev);
  run(xs, partial, count, out);
  run(xs, partial, count, out);
  return checkOutput(out, [want], [xs, partial, count], "sums");
}

if (isMain(import.meta.url)) runAsMain("last_block_done", runExample);
