// gemm_mma in script mode (examples/gemm_mma.ts is the builder-mode twin, at its example size
// 128 × 128 × 64, 3 stages): C = A · B with float16 inputs and float32 accumulation on the tensor
// cores (ldmatrix + mma.sync.m16n8k16), K-tiles in a 3-stage cp.async pipeline, swizzled shared
// tiles (T.SwizzleLayout).
// Run: npx tsx examples/script/gemm_mma.ts (its check is examples/gemm_mma.ts's runExample).
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
import { runExample as check } from "../gemm_mma.js";

const M = 128;
const N = 128;
const K = 64;
const BM = 128;
const BN = 128;
const BK = 32;
const THREADS = 256;
const WM = 64;
const WN = 32;
const STAGES = 3;
const K_TILES = K / BK;

export const gemm_mma = T.prim_func(function gemm_mma(
  A: Tensor<[128, 64], "float16">,
  B: Tensor<[64, 128], "float16">,
  C: Tensor<[128, 128], "float32">,
) {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [N / BN, M / BM], block: THREADS }) });
  const tid = T.cuda.thread_idx("x");
  const lane = T.let_("lane", T.floormod(tid, 32));
  const warp = T.let_("warp", T.floordiv(tid, 32));
  const wm = T.let_("wm", T.floordiv(warp, BN / WN) * WM);
  const wn = T.let_("wn", T.floormod(warp, BN / WN) * WN);
  const m0 = T.let_("m0", T.cuda.block_idx("y") * BM);
  const n0 = T.let_("n0", T.cuda.block_idx("x") * BN);
  const As = T.alloc_shared([STAGES, BM, BK], "float16", {
    name: "As",
    layout: T.SwizzleLayout(3, 2, 3),
  });
  const Bs = T.alloc_shared([STAGES, BK, BN], "float16", {
    name: "Bs",
    layout: T.SwizzleLayout(3, 3, 4),
  });
  const c0 = T.let_("c0", tid);
  const c1 = T.let_("c1", tid + THREADS);
  const copyTile = (kt: int32, stage: int32): void => {
    const cp = T.ptx["cp.async.cg.shared.global"];
    for (const c of [c0, c1]) {
      const aRow = T.floordiv(c, BK / 8);
      const aChunk = T.floormod(c, BK / 8);
      T.cuda.tile.apply(
        cp,
        As.sub(stage, aRow).rearrange("(c v) -> c v", { v: 8 }).sub(aChunk),
        A.sub(m0 + aRow)
          .rearrange("(c v) -> c v", { v: 8 })
          .sub(T.mul(kt, BK / 8) + aChunk),
        { chunk_bytes: 16 },
      );
      const bRow = T.floordiv(c, BN / 8);
      const bChunk = T.floormod(c, BN / 8);
      T.cuda.tile.apply(
        cp,
        Bs.sub(stage, bRow).rearrange("(c v) -> c v", { v: 8 }).sub(bChunk),
        B.sub(T.mul(kt, BK) + bRow)
          .rearrange("(c v) -> c v", { v: 8 })
          .sub(T.floordiv(n0, 8) + bChunk),
        { chunk_bytes: 16 },
      );
    }
  };
  const acc = T.alloc_local([64], "float32", { name: "acc" });
  for (const e of T.unroll(64)) acc[e] = T.float32(0);
  const a = T.alloc_local([32], "float16", { name: "a" });
  const b = T.alloc_local([16], "float16", { name: "b" });
  // The prologue: stages - 1 tiles in flight (both K-tiles at this size).
  copyTile(0, 0);
  T.ptx.cp.async_.commit_group();
  copyTile(1, 1);
  T.ptx.cp.async_.commit_group();
  for (const kt of T.range(K_TILES)) {
    T.ptx.cp.async_.wait_group(STAGES - 2);
    T.cuda.cta_sync();
    const next = T.let_("next", kt + (STAGES - 1));
    if (next < K_TILES) copyTile(next, T.floormod(next, STAGES));
    T.ptx.cp.async_.commit_group();
    const s = T.let_("s", T.floormod(kt, STAGES));
    for (const kk of T.unroll(BK / 16)) {
      for (const i of T.unroll(WM / 16)) {
        T.ptx.ldmatrix(
          false,
          4,
          ".b16",
          a,
          i * 8,
          As.ptr([s, wm + i * 16 + T.floormod(lane, 16), kk * 16 + T.floordiv(lane, 16) * 8]),
        );
      }
      for (const jj of T.unroll(WN / 16)) {
        T.ptx.ldmatrix(
          true,
          4,
          ".b16",
          b,
          jj * 8,
          Bs.ptr([s, kk * 16 + T.floormod(lane, 16), wn + jj * 16 + T.floordiv(lane, 16) * 8]),
        );
      }
      for (const i of T.unroll(WM / 16)) {
        for (const j of T.unroll(WN / 8)) {
          T.ptx.mma(
            "m16n8k16",
            "row",
            "col",
            "fp16",
            "fp16",
            "fp32",
            a,
            i * 8,
            b,
            j * 4,
            acc,
            (i * (WN / 8) + j) * 4,
          );
        }
      }
    }
  }
  const g = T.let_("g", T.floordiv(lane, 4));
  const t = T.let_("t", T.floormod(lane, 4));
  for (const i of T.unroll(WM / 16)) {
    for (const j of T.unroll(WN / 8)) {
      for (const h of T.unroll(2)) {
        for (const v of T.vectorized(2)) {
          C[m0 + wm + i * 16 + h * 8 + g]![n0 + wn + j * 8 + t * 2 + v] =
            acc[(i * (WN / 8) + j) * 4 + h * 2 + v]!;
        }
      }
    }
  }
});

// The element tail path at 37 × 45 × 29 (examples/gemm_mma.ts's gemm_mma_odd): K and N are not
// multiples of 8, so neither operand's rows start 16-byte aligned and both tiles are filled one
// float16 at a time (clamped ld.global, 0 outside A or B) through the same swizzled layout; one
// K-tile, one CTA; stores of C outside 37 × 45 are skipped.
const OM = 37;
const ON = 45;
const OK = 29;

export const gemm_mma_odd = T.prim_func(function gemm_mma_odd(
  A: Tensor<[37, 29], "float16">,
  B: Tensor<[29, 45], "float16">,
  C: Tensor<[37, 45], "float32">,
) {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [1, 1], block: THREADS }) });
  const tid = T.cuda.thread_idx("x");
  const lane = T.let_("lane", T.floormod(tid, 32));
  const warp = T.let_("warp", T.floordiv(tid, 32));
  const wm = T.let_("wm", T.floordiv(warp, BN / WN) * WM);
  const wn = T.let_("wn", T.floormod(warp, BN / WN) * WN);
  const m0 = T.let_("m0", T.cuda.block_idx("y") * BM);
  const n0 = T.let_("n0", T.cuda.block_idx("x") * BN);
  const As = T.alloc_shared([STAGES, BM, BK], "float16", {
    name: "As",
    layout: T.SwizzleLayout(3, 2, 3),
  });
  const Bs = T.alloc_shared([STAGES, BK, BN], "float16", {
    name: "Bs",
    layout: T.SwizzleLayout(3, 3, 4),
  });
  // Bound as in the builder, where the cp.async paths use them.
  T.let_("c0", tid);
  T.let_("c1", tid + THREADS);
  const copyTile = (kt: int32, stage: int32): void => {
    for (const j of T.unroll((BM * BK) / THREADS)) {
      const e = tid + j * THREADS;
      const gr = T.let_("gr", T.add(m0, T.floordiv(e, BK)));
      const gq = T.let_("gq", T.add(T.mul(kt, BK), T.floormod(e, BK)));
      As[stage]![T.floordiv(e, BK)]![T.floormod(e, BK)] = T.if_then_else(
        T.and(gr < OM, gq < OK),
        A[T.min(gr, OM - 1)]![T.min(gq, OK - 1)]!,
        T.float16(0),
      );
    }
    for (const j of T.unroll((BK * BN) / THREADS)) {
      const e = tid + j * THREADS;
      const gr = T.let_("gr", T.add(T.mul(kt, BK), T.floordiv(e, BN)));
      const gq = T.let_("gq", T.add(n0, T.floormod(e, BN)));
      Bs[stage]![T.floordiv(e, BN)]![T.floormod(e, BN)] = T.if_then_else(
        T.and(gr < OK, gq < ON),
        B[T.min(gr, OK - 1)]![T.min(gq, ON - 1)]!,
        T.float16(0),
      );
    }
  };
  const acc = T.alloc_local([64], "float32", { name: "acc" });
  for (const e of T.unroll(64)) acc[e] = T.float32(0);
  const a = T.alloc_local([32], "float16", { name: "a" });
  const b = T.alloc_local([16], "float16", { name: "b" });
  // The prologue: one K-tile exists, the second group is empty.
  copyTile(0, 0);
  T.ptx.cp.async_.commit_group();
  T.ptx.cp.async_.commit_group();
  for (const kt of T.range(1)) {
    T.ptx.cp.async_.wait_group(STAGES - 2);
    T.cuda.cta_sync();
    const next = T.let_("next", kt + (STAGES - 1));
    if (next < 1) copyTile(next, T.floormod(next, STAGES));
    T.ptx.cp.async_.commit_group();
    const s = T.let_("s", T.floormod(kt, STAGES));
    for (const kk of T.unroll(BK / 16)) {
      for (const i of T.unroll(WM / 16)) {
        T.ptx.ldmatrix(
          false,
          4,
          ".b16",
          a,
          i * 8,
          As.ptr([s, wm + i * 16 + T.floormod(lane, 16), kk * 16 + T.floordiv(lane, 16) * 8]),
        );
      }
      for (const jj of T.unroll(WN / 16)) {
        T.ptx.ldmatrix(
          true,
          4,
          ".b16",
          b,
          jj * 8,
          Bs.ptr([s, kk * 16 + T.floormod(lane, 16), wn + jj * 16 + T.floordiv(lane, 16) * 8]),
        );
      }
      for (const i of T.unroll(WM / 16)) {
        for (const j of T.unroll(WN / 8)) {
          T.ptx.mma(
            "m16n8k16",
            "row",
            "col",
            "fp16",
            "fp16",
            "fp32",
            a,
            i * 8,
            b,
            j * 4,
            acc,
            (i * (WN / 8) + j) * 4,
          );
        }
      }
    }
  }
  const g = T.let_("g", T.floordiv(lane, 4));
  const t = T.let_("t", T.floormod(lane, 4));
  for (const i of T.unroll(WM / 16)) {
    for (const j of T.unroll(WN / 8)) {
      for (const h of T.unroll(2)) {
        for (const v of T.vectorized(2)) {
          const row = m0 + wm + i * 16 + h * 8 + g;
          const col = n0 + wn + j * 8 + t * 2 + v;
          if (T.and(row < OM, col < ON)) C[row]![col] = acc[(i * (WN / 8) + j) * 4 + h * 2 + v]!;
        }
      }
    }
  }
});

/**
 * Run this script-mode kernel on `dev` with the check of its builder twin, examples/gemm_mma.ts.
 */
export function runExample(dev: DeviceLike = device()): ExampleResult {
  return check(dev, gemm_mma);
}

if (isMain(import.meta.url)) runAsMain("gemm_mma (script mode)", runExample);
