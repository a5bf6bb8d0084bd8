// gemm_simt in script mode (examples/gemm_simt.ts is the builder-mode twin, at its example size
// 128 × 128 × 64): C = A · B with float16 inputs and float32 accumulation on CUDA cores, K-tiles
// double-buffered in shared memory with cp.async, a 4 × 4 register tile per thread.
// Run: npx tsx examples/script/gemm_simt.ts (its check is examples/gemm_simt.ts's runExample).
import {
  device,
  isMain,
  runAsMain,
  script as T,
  type Tensor,
  type int32,
  type DeviceLike,
  type ExampleResult,
} from "tirx-ts";
import { runExample as check } from "../gemm_simt.js";

const M = 128;
const N = 128;
const K = 64;
const BM = 64;
const BN = 64;
const BK = 32;
const THREADS = 256;
const K_TILES = K / BK;

export const gemm_simt = T.prim_func(function gemm_simt(
  A: Tensor<[128, 64], "float16">,
  B: Tensor<[64, 128], "float16">,
  C: Tensor<[128, 128], "float32">,
) {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [N / BN, M / BM], block: THREADS }) });
  const tid = T.cuda.thread_idx("x");
  const tx = T.let_("tx", T.floormod(tid, 16));
  const ty = T.let_("ty", T.floordiv(tid, 16));
  const m0 = T.let_("m0", T.cuda.block_idx("y") * BM);
  const n0 = T.let_("n0", T.cuda.block_idx("x") * BN);
  const As = T.alloc_shared([2, BM, BK], "float16", { name: "As" });
  const Bs = T.alloc_shared([2, BK, BN], "float16", { name: "Bs" });
  // This thread's 16-byte pieces of each K-tile.
  const aRow = T.let_("a_row", T.floordiv(tid, 4));
  const aChunk = T.let_("a_chunk", T.floormod(tid, 4));
  const bRow = T.let_("b_row", T.floordiv(tid, 8));
  const bChunk = T.let_("b_chunk", T.floormod(tid, 8));
  const copyTile = (kt: int32, stage: int32): void => {
    const cp = T.ptx["cp.async.cg.shared.global"];
    T.cuda.tile.apply(
      cp,
      As.sub(stage, aRow).rearrange("(c v) -> c v", { v: 8 }).sub(aChunk),
      A.sub(m0 + aRow)
        .rearrange("(c v) -> c v", { v: 8 })
        .sub(T.mul(kt, BK / 8) + aChunk),
      { chunk_bytes: 16 },
    );
    T.cuda.tile.apply(
      cp,
      Bs.sub(stage, bRow).rearrange("(c v) -> c v", { v: 8 }).sub(bChunk),
      B.sub(T.mul(kt, BK) + bRow)
        .rearrange("(c v) -> c v", { v: 8 })
        .sub(T.floordiv(n0, 8) + bChunk),
      { chunk_bytes: 16 },
    );
  };
  const acc = T.alloc_local([16], "float32", { name: "acc" });
  for (const e of T.unroll(16)) acc[e] = T.float32(0);
  const a = T.alloc_local([32], "float16", { name: "a" });
  const b = T.alloc_local([4], "float16", { name: "b" });
  const bf = T.alloc_local([4], "float32", { name: "bf" });
  copyTile(0, 0);
  T.ptx.cp.async_.commit_group();
  for (const kt of T.range(K_TILES)) {
    if (kt + 1 < K_TILES) copyTile(kt + 1, T.floormod(kt + 1, 2));
    T.ptx.cp.async_.commit_group();
    T.ptx.cp.async_.wait_group(1);
    T.cuda.cta_sync();
    const s = T.let_("s", T.floormod(kt, 2));
    for (const kk of T.unroll(BK / 8)) {
      for (const i of T.unroll(4)) {
        for (const v of T.vectorized(8)) a[i * 8 + v] = As[s]![ty + i * 16]![kk * 8 + v]!;
      }
      for (const kq of T.unroll(8)) {
        for (const v of T.vectorized(4)) b[v] = Bs[s]![kk * 8 + kq]![tx * 4 + v]!;
        for (const j of T.unroll(4)) bf[j] = T.float32(b[j]!);
        for (const i of T.unroll(4)) {
          const av = T.let_("av", T.float32(a[i * 8 + kq]!));
          for (const j of T.unroll(4)) {
            const e = i * 4 + j;
            acc[e] = T.fma(av, bf[j]!, acc[e]!);
          }
        }
      }
    }
    T.cuda.cta_sync();
  }
  for (const i of T.unroll(4)) {
    for (const j of T.vectorized(4)) C[m0 + ty + i * 16]![n0 + tx * 4 + j] = acc[i * 4 + j]!;
  }
});

/**
 * Run this script-mode kernel on `dev` with the check of its builder twin, examples/gemm_simt.ts.
 */
export function runExample(dev: DeviceLike = device()): ExampleResult {
  return check(dev, gemm_simt);
}

if (isMain(import.meta.url)) runAsMain("gemm_simt (script mode)", runExample);
