// softmax in script mode (examples/softmax.ts is the builder-mode twin, at its example size
// 32 × 2048 with 256 threads): one CTA per float16 row, float32 math in registers, warp and CTA
// reductions for the row's max and sum, exp2 with the max folded into an fma.
// Run: npx tsx examples/script/softmax.ts (its check is examples/softmax.ts's runExample).
import {
  device,
  isMain,
  runAsMain,
  script as T,
  type Tensor,
  type DeviceLike,
  type ExampleResult,
} from "tirx-ts";
import { runExample as check } from "../softmax.js";

const LOG2E = Math.fround(Math.LOG2E);
const ROWS = 32;
const THREADS = 256;
const WARPS = THREADS / 32;
const VECTORS = 2048 / (8 * THREADS);
const PER = 8 * VECTORS;

export const softmax = T.prim_func(function softmax(
  X: Tensor<[32, 2048], "float16">,
  Y: Tensor<[32, 2048], "float16">,
) {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: ROWS, block: THREADS }) });
  const tid = T.cuda.thread_idx("x");
  const lane = T.let_("lane", T.floormod(tid, 32));
  const warp = T.let_("warp", T.floordiv(tid, 32));
  const row = T.cuda.block_idx("x");
  const partMax = T.alloc_shared([WARPS], "float32", { name: "warp_max" });
  const partSum = T.alloc_shared([WARPS], "float32", { name: "warp_sum" });
  const h = T.alloc_local([PER], "float16", { name: "h" });
  const f = T.alloc_local([PER], "float32", { name: "f" });
  // Vector j of this thread covers columns (j · 256 + tid) · 8 .. + 8.
  for (const j of T.unroll(VECTORS)) {
    const col = T.let_("col", (j * THREADS + tid) * 8);
    for (const e of T.vectorized(8)) h[j * 8 + e] = X[row]![col + e]!;
  }
  for (const i of T.unroll(PER)) f[i] = T.float32(h[i]!);

  let m = T.local_scalar("float32", f[0], { name: "m" });
  for (const i of T.unroll(1, PER)) m = T.max(m, f[i]!);
  const wm = T.cuda.warp_max(m);
  if (lane === 0) partMax[warp] = wm;
  T.cuda.cta_sync();
  m = partMax[0]!;
  for (const w of T.unroll(1, WARPS)) m = T.max(m, partMax[w]!);

  const mb = T.let_("mb", m * LOG2E);
  let s0 = T.local_scalar("float32", 0, { name: "s0" });
  let s1 = T.local_scalar("float32", 0, { name: "s1" });
  for (const i of T.unroll(PER / 2)) {
    for (const p of T.unroll(2)) {
      const k = i * 2 + p;
      f[k] = T.exp2(T.fma(f[k]!, LOG2E, mb * -1), { approx: true });
    }
    s0 += f[i * 2]!;
    s1 += f[i * 2 + 1]!;
  }
  const ws = T.cuda.warp_sum(s0 + s1);
  if (lane === 0) partSum[warp] = ws;
  T.cuda.cta_sync();
  let s = T.local_scalar("float32", partSum[0], { name: "s" });
  for (const w of T.unroll(1, WARPS)) s += partSum[w]!;
  const inv = T.let_("inv", T.float32(1) / s);

  for (const j of T.unroll(VECTORS)) {
    const col = T.let_("col_out", (j * THREADS + tid) * 8);
    for (const e of T.vectorized(8)) Y[row]![col + e] = T.float16(f[j * 8 + e]! * inv);
  }
});

/**
 * Run this script-mode kernel on `dev` with the check of its builder twin, examples/softmax.ts.
 */
export function runExample(dev: DeviceLike = device()): ExampleResult {
  return check(dev, softmax);
}

if (isMain(import.meta.url)) runAsMain("softmax (script mode)", runExample);
