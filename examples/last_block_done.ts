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
  compile,
  device,
  isMain,
  runAsMain,
  tensor,
  type DeviceLike,
  type ExampleResult,
  type PrimFunc,
} from "tirx-ts";

/** CTAs of the example's grid, and threads per CTA (one element each). */
const CTAS = 8;
const BLOCK = 64;

/** How the counter orders the partials: see the file comment. */
export type Ordering = "acq_rel" | "fences" | "none";

/**
 * The kernel over `ctas` CTAs of 64 threads: X int32 [ctas · 64], Partial int32 [ctas]
 * (scratch), Count uint32 [1] (0 before the first launch; the last CTA leaves it 0), Out int32
 * [1] = the sum of X (int32, wrapping).
 */
export function makeLastBlockDone(ordering: Ordering, ctas = CTAS): PrimFunc {
  const N = ctas * BLOCK;
  return T.function(
    `last_block_done_${ordering}${ctas === CTAS ? "" : `_${ctas}`}`,
    {
      X: T.Tensor([N], "int32"),
      Partial: T.Tensor([ctas], "int32"),
      Count: T.Tensor([1], "uint32"),
      Out: T.Tensor([1], "int32"),
    },
    ({ X, Partial, Count, Out }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: ctas, block: BLOCK }) });
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
        last.set([0], T.if_then_else(ticket.eq(ctas - 1), 1, 0));
      });
      // Thread 0's acquire reaches the CTA's other threads through the barrier.
      T.cuda.cta_sync();
      T.if_(last.get([0]).eq(1), () => {
        // Thread t adds the partials t, t + 64, ...; then the CTA sums the threads'.
        const mine = T.local_scalar("int32", 0, { name: "mine" });
        for (const k of T.range(Math.ceil(ctas / BLOCK))) {
          const i = T.let_("i", k.mul(BLOCK).add(tid));
          T.if_(i.lt(ctas), () => mine.set(mine.add(Partial.get([i]))));
        }
        const total = T.cuda.cta_sum(mine, BLOCK / 32, scratch);
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

/** X[i] = (i * 37) % 2001 - 1000 for `ctas` CTAs' elements, the inputs of every run. */
export function inputs(ctas = CTAS): Int32Array {
  return Int32Array.from({ length: ctas * BLOCK }, (_, i) => ((i * 37) % 2001) - 1000);
}

/**
 * Launch `kernel` (made by makeLastBlockDone for `ctas` CTAs) `launches` times on `dev` with the
 * same tensors (each launch relies on the counter the last one left at 0) and return Out after
 * each launch, with the exact int32 sum of the inputs.
 */
export function runLastBlockDone(
  dev: DeviceLike,
  kernel: PrimFunc,
  ctas = CTAS,
  launches = 2,
): { sums: number[]; want: number } {
  const run = compile(kernel, { target: "cuda" });
  const x = inputs(ctas);
  let want = 0;
  for (const v of x) want = (want + v) | 0;
  const xs = tensor(x, { shape: [x.length], dtype: "int32", device: dev });
  const partial = tensor.zeros([ctas], "int32", dev);
  const count = tensor.zeros([1], "uint32", dev);
  const sums: number[] = [];
  for (let i = 0; i < launches; i++) {
    // A fresh Out each launch, so a launch whose last CTA never writes it shows 0.
    const out = tensor.zeros([1], "int32", dev);
    run(xs, partial, count, out);
    sums.push(Number(out.toArray()[0]));
    out.dispose();
  }
  for (const t of [xs, partial, count]) t.dispose();
  return { sums, want };
}

/**
 * Run `kernel` (default: the release/acquire form) on `dev` twice (the counter the first launch
 * leaves must serve the second) and compare Out with the exact sum of X each time.
 */
export function runExample(
  dev: DeviceLike = device(),
  kernel: PrimFunc = last_block_done,
): ExampleResult {
  const { sums, want } = runLastBlockDone(dev, kernel);
  const bytes = new Uint8Array(new Int32Array(sums.slice(-1)).buffer);
  const ok = sums.every((s) => s === want);
  return {
    ok,
    outputs: [bytes],
    summary: `${sums.filter((s) => s === want).length} of ${sums.length} launches give the exact sum ${want}`,
  };
}

if (isMain(import.meta.url)) runAsMain("last_block_done", runExample);
