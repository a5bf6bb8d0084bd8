// gemm_hopper in script mode (examples/gemm_hopper.ts is the builder-mode twin, at its example
// size 256 × 256 × 128 on one CTA): C = A · Bᵀ, float16 in and out, float32 accumulation in
// wgmma.mma_async.m64n256k16 from 128B-swizzled shared tiles that TMA fills, a 4-stage
// full/empty mbarrier ring between one producer warpgroup and two consumer warpgroups
// (setmaxnreg), persistent over the tiles in groups of 8 tile rows.
// Run: npx tsx examples/script/gemm_hopper.ts (its check is examples/gemm_hopper.ts's runExample).
import {
  device,
  isMain,
  runAsMain,
  script as T,
  type Tensor,
  type DeviceLike,
  type ExampleResult,
} from "tirx-ts";
import { runExample as check } from "../gemm_hopper.js";

const BM = 128;
const BN = 256;
const BK = 64;
const STAGES = 4;
const GROUP = 8;
const M_TILES = 2;
const UNITS = 2;
const CTAS = 1;
const TURNS = 2;
const K_TILES = 2;
const STAGE_BYTES = (BM + BN) * BK * 2;
const LOAD_2D = "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes";

export const gemm_hopper = T.prim_func(function gemm_hopper(
  A: Tensor<[256, 128], "float16">,
  B: Tensor<[256, 128], "float16">,
  C: Tensor<[256, 256], "float16">,
) {
  T.device_entry({
    launch: T.cuda.LaunchConfig({
      grid: CTAS,
      block: 384,
      dynamic_shared_bytes: STAGES * STAGE_BYTES,
    }),
  });
  const tid = T.cuda.thread_idx("x");
  const cta = T.cuda.block_idx("x");
  const wg = T.let_("wg", T.floordiv(tid, 128));
  const sA = T.alloc_shared([STAGES, BM, BK], "float16", {
    name: "sA",
    align: 1024,
    layout: T.swizzle_mode("128B"),
    dynamic: true,
  });
  const sB = T.alloc_shared([STAGES, BN, BK], "float16", {
    name: "sB",
    align: 1024,
    layout: T.swizzle_mode("128B"),
    dynamic: true,
  });
  const full = T.alloc_shared([STAGES], "uint64", { name: "full" });
  const empty = T.alloc_shared([STAGES], "uint64", { name: "empty" });
  const mapA = T.tensormap_encode_tiled(A, { box: [BM, BK], swizzle: "128B" });
  const mapB = T.tensormap_encode_tiled(B, { box: [BN, BK], swizzle: "128B" });
  if (tid === 0) {
    for (const st of T.unroll(STAGES)) {
      T.ptx.mbarrier.init(full.sub(st), 1);
      T.ptx.mbarrier.init(empty.sub(st), 2);
    }
    T.ptx.fence.mbarrier_init();
  }
  T.cuda.cta_sync();
  if (wg === 0) {
    T.ptx.setmaxnreg(false, 40);
    if (tid === 0) {
      for (let turn = 0; turn < TURNS; turn++) {
        const u = T.let_("u", cta + turn * CTAS);
        if (u < UNITS) {
          const first = T.let_("first", T.floordiv(u, GROUP) * GROUP);
          const rows = T.let_("rows", T.min(T.int32(M_TILES) - first, GROUP));
          const r = T.let_("r", T.floormod(u, GROUP));
          const m0 = T.let_("m0", (first + T.floormod(r, rows)) * BM);
          const n0 = T.let_("n0", T.floordiv(r, rows) * BN);
          for (let kt = 0; kt < K_TILES; kt++) {
            const it = T.let_("it", turn * K_TILES + kt);
            const st = T.let_("st", T.floormod(it, STAGES));
            const ph = T.let_("ph", T.floormod(T.floordiv(it, STAGES), 2));
            T.ptx.mbarrier.try_wait(empty.sub(st), T.int32(1) - ph);
            T.ptx.mbarrier.arrive.expect_tx(full.sub(st), STAGE_BYTES);
            T.cuda.tile.apply(T.ptx[LOAD_2D], sA.sub(st), A, {
              tensor_map: mapA,
              coords: [m0, kt * BK],
              mbar: full.sub(st),
            });
            T.cuda.tile.apply(T.ptx[LOAD_2D], sB.sub(st), B, {
              tensor_map: mapB,
              coords: [n0, kt * BK],
              mbar: full.sub(st),
            });
          }
        }
      }
    }
  } else {
    T.ptx.setmaxnreg(true, 232);
    const cw = T.let_("cw", T.floormod(wg + 1, 2));
    const t = T.let_("t", T.floormod(tid, 128));
    const lane = T.let_("lane", T.floormod(t, 32));
    const warp = T.let_("warp", T.floordiv(t, 32));
    const acc = T.alloc_local([BN / 2], "float32", { name: "acc" });
    for (let turn = 0; turn < TURNS; turn++) {
      const u = T.let_("u", cta + turn * CTAS);
      if (u < UNITS) {
        const first = T.let_("first", T.floordiv(u, GROUP) * GROUP);
        const rows = T.let_("rows", T.min(T.int32(M_TILES) - first, GROUP));
        const r = T.let_("r", T.floormod(u, GROUP));
        const m0 = T.let_("m0", (first + T.floormod(r, rows)) * BM);
        const n0 = T.let_("n0", T.floordiv(r, rows) * BN);
        for (const e of T.unroll(BN / 2)) acc[e] = T.float32(0);
        for (let kt = 0; kt < K_TILES; kt++) {
          const it = T.let_("it", turn * K_TILES + kt);
          const st = T.let_("st", T.floormod(it, STAGES));
          T.ptx.mbarrier.try_wait(full.sub(st), T.floormod(T.floordiv(it, STAGES), 2));
          T.ptx.wgmma.fence();
          for (const kk of T.unroll(BK / 16)) {
            const da = T.ptx.wgmma.encode_matrix_descriptor(
              sA.ptr([st, cw * 64, kk * 16]),
              16,
              1024,
              3,
            );
            const db = T.ptx.wgmma.encode_matrix_descriptor(sB.ptr([st, 0, kk * 16]), 16, 1024, 3);
            T.ptx.wgmma.mma_async("m64n256k16", "float16", acc, 0, da, db);
          }
          T.ptx.wgmma.commit_group();
          T.ptx.wgmma.wait_group(0);
          if (t === 0) T.ptx.mbarrier.arrive(empty.sub(st));
        }
        const row0 = T.let_("row0", m0 + cw * 64 + warp * 16 + T.floordiv(lane, 4));
        const col0 = T.let_("col0", n0 + T.floormod(lane, 4) * 2);
        for (const j of T.unroll(BN / 8)) {
          for (const h of T.unroll(2)) {
            for (const v of T.vectorized(2)) {
              C[row0 + h * 8]![col0 + j * 8 + v] = T.float16(acc[j * 4 + h * 2 + v]!);
            }
          }
        }
      }
    }
  }
});

/**
 * Run this script-mode kernel on `dev` with the check of its builder twin, examples/gemm_hopper.ts.
 */
export function runExample(dev: DeviceLike = device()): ExampleResult {
  return check(dev, gemm_hopper);
}

if (isMain(import.meta.url)) runAsMain("gemm_hopper (script mode)", runExample);
