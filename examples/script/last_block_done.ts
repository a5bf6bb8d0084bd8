// last_block_done in script mode (examples/last_block_done.ts is the builder-mode twin, at its
// example size of 8 CTAs of 64 threads): each CTA sums its slice, thread 0 stores the partial and
// bumps the counter (atom.acq_rel.gpu, or fence.sc.gpu + a relaxed atomic + fence.acq_rel.gpu);
// the CTA that draws the last ticket sums the partials and resets the counter.
// Run: npx tsx examples/script/last_block_done.ts (its check is examples/last_block_done.ts's runExample).
import {
  device,
  isMain,
  runAsMain,
  script as T,
  type Tensor,
  type DeviceLike,
  type ExampleResult,
} from "tirx-ts";
import { runExample as check } from "../last_block_done.js";

const CTAS = 8;
const BLOCK = 64;

export const last_block_done = T.prim_func(function last_block_done_acq_rel(
  X: Tensor<[512], "int32">,
  Partial: Tensor<[8], "int32">,
  Count: Tensor<[1], "uint32">,
  Out: Tensor<[1], "int32">,
) {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: CTAS, block: BLOCK }) });
  const tid = T.cuda.thread_idx("x");
  const cta = T.cuda.block_idx("x");
  const scratch = T.alloc_shared([BLOCK / 32], "int32", { name: "scratch" });
  const last = T.alloc_shared([1], "int32", { name: "last" });
  const sum = T.cuda.cta_sum(X[cta * BLOCK + tid]!, BLOCK / 32, scratch);
  if (tid === 0) {
    Partial[cta] = sum;
    const ticket = T.cuda.atomic_add(Count.ptr([0]), 1, { sem: "acq_rel", scope: "gpu" });
    last[0] = T.if_then_else(ticket === CTAS - 1, 1, 0);
  }
  T.cuda.cta_sync();
  if (last[0] === 1) {
    let mine = T.local_scalar("int32", 0, { name: "mine" });
    for (const k of T.range(1)) {
      const i = T.let_("i", k * BLOCK + tid);
      if (i < CTAS) mine += Partial[i]!;
    }
    const total = T.cuda.cta_sum(mine, BLOCK / 32, scratch);
    if (tid === 0) {
      Out[0] = total;
      Count[0] = 0;
    }
  }
});

export const last_block_done_fences = T.prim_func(function last_block_done_fences(
  X: Tensor<[512], "int32">,
  Partial: Tensor<[8], "int32">,
  Count: Tensor<[1], "uint32">,
  Out: Tensor<[1], "int32">,
) {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: CTAS, block: BLOCK }) });
  const tid = T.cuda.thread_idx("x");
  const cta = T.cuda.block_idx("x");
  const scratch = T.alloc_shared([BLOCK / 32], "int32", { name: "scratch" });
  const last = T.alloc_shared([1], "int32", { name: "last" });
  const sum = T.cuda.cta_sum(X[cta * BLOCK + tid]!, BLOCK / 32, scratch);
  if (tid === 0) {
    Partial[cta] = sum;
    T.cuda.threadfence();
    const ticket = T.cuda.atomic_add(Count.ptr([0]), 1);
    T.ptx.fence.acq_rel("gpu");
    last[0] = T.if_then_else(ticket === CTAS - 1, 1, 0);
  }
  T.cuda.cta_sync();
  if (last[0] === 1) {
    let mine = T.local_scalar("int32", 0, { name: "mine" });
    for (const k of T.range(1)) {
      const i = T.let_("i", k * BLOCK + tid);
      if (i < CTAS) mine += Partial[i]!;
    }
    const total = T.cuda.cta_sum(mine, BLOCK / 32, scratch);
    if (tid === 0) {
      Out[0] = total;
      Count[0] = 0;
    }
  }
});

/**
 * Run this script-mode kernel (the release/acquire form) on `dev` with the check of its builder
 * twin, examples/last_block_done.ts.
 */
export function runExample(dev: DeviceLike = device()): ExampleResult {
  return check(dev, last_block_done);
}

if (isMain(import.meta.url)) runAsMain("last_block_done (script mode)", runExample);
