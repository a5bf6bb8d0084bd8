// The float16 tensor-core GEMM of examples/gemm_mma.ts written with the tile layer: C (M × N,
// float32) = A (M × K) · B (K × N), A and B float16 row-major. Same design and tile sizes:
//   - a 128 × 128 tile of C per CTA of 256 threads, two CTAs per SM (min_ctas_per_sm: 2 caps
//     registers at 128 per thread; left to itself the driver's JIT used 130 and halved the
//     occupancy), 8 warps as 2 × 4, each warp 64 × 32 of C in
//     a register tile laid out as 4 × 4 mma.sync m16n8k16 C fragments
//     (T.layout.mma_sync_tile_layout);
//   - K in tiles of 32, a 3-stage pipeline: T.tile.cta.copy_async moves each K-tile of A
//     (128 × 32) and B (32 × 128) into swizzled shared tiles with 16-byte cp.async chunks (two per
//     thread each: chunk tid and tid + 256, as the instruction-level kernel), commit/wait and the
//     CTA barrier are written out as there;
//   - per k16 step T.tile.warp.copy loads the warp's A (64 × 16, 4 A fragments) and B (16 × 32,
//     4 B fragments) register tiles from shared memory: the layouts make it ldmatrix.x4 for A
//     and ldmatrix.x4.trans for the row-major B, and T.tile.warp.gemm issues the 16 mma.sync;
//   - T.tile.warp.copy stores the accumulators to C as float32 pairs.
// The shared swizzles are the instruction-level kernel's (T.SwizzleLayout(3, 2, 3) for A,
// (3, 3, 4) for B); each keeps 16-byte atoms, so the ldmatrix rows and the cp.async chunks stay
// whole (a swizzle that split them would be TX2022). The mma calls and their order per C
// element are the same as in examples/gemm_mma.ts, so the result is equal bit for bit.
// Only the plain path: M, N, K multiples of 128, 128, 32 (the instruction-level example also
// has tail paths). Run: npx tsx examples/tile/gemm_mma.ts
import {
  T,
  device,
  explainTile,
  isMain,
  runAsMain,
  type DeviceLike,
  type ExampleResult,
  type ExprLike,
} from "tirx-ts";
import type { PrimFunc } from "@tirx-ts/core";
import { gemm_mma as instructionLevel, runExample as check } from "../gemm_mma.js";

const BM = 128;
const BN = 128;
const BK = 32;
const THREADS = 256;
/** Warp tile: 64 rows (4 m16 fragments) × 32 columns (4 n8 fragments). */
const WM = 64;
const WN = 32;

/**
 * The kernel for C (m × n, float32) = A (m × k, float16) · B (k × n, float16), all row-major,
 * with a `stages`-deep cp.async pipeline (3 ≤ stages; more than 3 exceed 48 KiB of static
 * shared memory, TX2008). `name` is the PTX entry's.
 * @throws Error unless m, n, k are positive multiples of 128, 128 and 32.
 */
export function makeTileGemm(
  m: number,
  n: number,
  k: number,
  stages = 3,
  name = "gemm_mma",
): PrimFunc {
  if (![m % BM, n % BN, k % BK].every((r) => r === 0) || Math.min(m, n, k) < 1) {
    throw new Error(`tile gemm_mma needs m, n, k multiples of 128, 128, 32; got ${m}, ${n}, ${k}`);
  }
  const kTiles = k / BK;
  const L = T.layout.mma_sync_tile_layout;
  return T.function(
    name,
    {
      A: T.Tensor([m, k], "float16"),
      B: T.Tensor([k, n], "float16"),
      C: T.Tensor([m, n], "float32"),
    },
    ({ A, B, C }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: [n / BN, m / BM], block: THREADS, min_ctas_per_sm: 2 }),
      });
      const warp = T.let_("warp", T.cuda.thread_idx("x").floordiv(32));
      const by = T.cuda.block_idx("y");
      const bx = T.cuda.block_idx("x");
      const As = T.alloc_shared([stages, BM, BK], "float16", {
        name: "As",
        layout: T.SwizzleLayout(3, 2, 3),
      });
      const Bs = T.alloc_shared([stages, BK, BN], "float16", {
        name: "Bs",
        layout: T.SwizzleLayout(3, 3, 4),
      });
      const acc = T.alloc_local([WM, WN], "float32", {
        name: "acc",
        layout: L("C", "m16n8k16", "float32", WM, WN),
      });
      const a = T.alloc_local([WM, 16], "float16", {
        name: "a",
        layout: L("A", "m16n8k16", "float16", WM, 16),
      });
      const b = T.alloc_local([16, WN], "float16", {
        name: "b",
        layout: L("B", "m16n8k16", "float16", 16, WN),
      });
      const tiles = (x: typeof A, r: number, c: number) =>
        x.rearrange("(i r) (j c) -> i j r c", { r, c });
      const copyTile = (kt: ExprLike, stage: ExprLike): void => {
        T.tile.cta.copy_async(As.sub(stage), tiles(A, BM, BK).sub(by, kt));
        T.tile.cta.copy_async(Bs.sub(stage), tiles(B, BK, BN).sub(kt, bx));
      };
      T.tile.warp.zero(acc);
      for (let s = 0; s < stages - 1; s++) {
        if (s < kTiles) copyTile(s, s);
        T.ptx.cp.async_.commit_group();
      }
      for (const kt of T.range(kTiles)) {
        T.ptx.cp.async_.wait_group(stages - 2);
        T.cuda.cta_sync();
        const next = T.let_("next", kt.add(stages - 1));
        T.if_(next.lt(kTiles), () => copyTile(next, next.floormod(stages)));
        T.ptx.cp.async_.commit_group();
        const s = T.let_("s", kt.floormod(stages));
        for (const kk of T.unroll(BK / 16)) {
          T.tile.warp.copy(a, tiles(As.sub(s), WM, 16).sub(warp.floordiv(BN / WN), kk));
          T.tile.warp.copy(b, tiles(Bs.sub(s), 16, WN).sub(kk, warp.floormod(BN / WN)));
          T.tile.warp.gemm(acc, a, b);
        }
      }
      const cTile = tiles(C, WM, WN).sub(
        by.mul(BM / WM).add(warp.floordiv(BN / WN)),
        bx.mul(BN / WN).add(warp.floormod(BN / WN)),
      );
      T.tile.warp.copy(cTile, acc);
    },
  );
}

/** The example's size, as examples/gemm_mma.ts's (one CTA, two K-tiles). */
export const gemm_mma = makeTileGemm(128, 128, 64);

/** The benchmark's kernel (sizes multiples of 128, 128, 32). */
export function makeBenchKernel(sizes: { m: number; n: number; k: number }): { fn: PrimFunc } {
  return { fn: makeTileGemm(sizes.m, sizes.n, sizes.k) };
}

/**
 * Run at 128 × 128 × 64 on `dev` with examples/gemm_mma.ts's check (within 2^-20 · Σ|a·b| of
 * float64), and compare the output bytes with the instruction-level kernel's: the same mma
 * calls in the same order per element, so equal bit for bit.
 */
export function runExample(dev: DeviceLike = device(), kernel: PrimFunc = gemm_mma): ExampleResult {
  const r = check(dev, kernel);
  const twin = check(dev, instructionLevel);
  const x = r.outputs?.[0];
  const y = twin.outputs?.[0];
  const same =
    x !== undefined && y !== undefined && x.length === y.length && x.every((v, i) => v === y[i]);
  return {
    ...r,
    ok: r.ok && same,
    summary: `${r.summary}; ${same ? "bit for bit" : "NOT bit for bit"} the output of examples/gemm_mma.ts`,
  };
}

if (isMain(import.meta.url)) {
  for (const line of explainTile(gemm_mma)) console.error(line);
  runAsMain("gemm_mma", runExample);
}
