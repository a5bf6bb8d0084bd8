// The Hopper GEMM of examples/gemm_hopper.ts written with the tile layer: C (M × N) = A · Bᵀ,
// A (M × K) and B (N × K) row-major, float16 or bfloat16 in and out, float32 accumulation.
// Same design, same tile sizes, same instructions:
//   - a persistent grid (one CTA per SM) walks 128 × 256 tiles of C in groups of 8 tile rows;
//   - warpgroup 0 produces: one thread waits for a stage of the 4-deep ring to be empty, arms
//     its "full" mbarrier with the stage's bytes and issues T.tile.copy_async of A's and B's
//     K-tiles (128 × 64 and 256 × 64) into 128B-swizzled shared tiles: the tile layer plans
//     the tensor maps from the two views and issues cp.async.bulk.tensor (TMA);
//   - warpgroups 1 and 2 consume, 64 rows of the tile each: T.tile.wg.gemm_async derives the
//     shared-memory descriptors from the swizzled views (K-major, SBO 1024 bytes, +32 bytes per
//     k16 step) and issues four wgmma.mma_async.m64n256k16 per K-tile into a register tile in
//     the wgmma accumulator layout (T.layout.wgmma_tile_layout), then commits; the author
//     waits for the group and frees the stage. The accumulators are zeroed per tile
//     (T.tile.wg.zero, as the instruction-level kernel does) rather than `accum: kt.gt(0)`: a
//     runtime scale-d cost 0.5–1% on the H200;
//   - the epilogue casts the accumulators to float16/bfloat16 (T.tile.wg.cast) and stores them
//     (T.tile.wg.copy: pairs of 16-bit values per 32-bit store, the fragment's contiguous runs).
//   - With cluster 2, the CTAs of a cluster take vertically adjacent tiles that share B's
//     K-tiles: each loads half of B's tile and multicasts it to both (cta_mask), and a consumer
//     frees a stage in both CTAs.
// Shapes: M a multiple of 128 · cluster, N of 256, K of 64. Run: npx tsx examples/tile/gemm_hopper.ts
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

/** An int32 expression of the kernel (a loop variable, a let, an index). */
type E = ExprLike;
import { checkGemmHopper, type GemmHopperSizes } from "../gemm_hopper.js";

const BM = 128;
const BN = 256;
const BK = 64;
const STAGES = 4;
/** Tile rows per group of the tile order (L2 reuse of B's tiles). */
const GROUP = 8;

/**
 * The kernel for C (m × n) = A (m × k) · B (n × k)ᵀ, `name` its PTX entry.
 * @throws Error unless m, n, k are positive multiples of 128 · cluster, 256, 64.
 */
export function makeTileGemmHopper(s: GemmHopperSizes, name = "gemm_hopper"): PrimFunc {
  const { m, n, k } = s;
  const dt = s.dtype ?? "float16";
  const CL = s.cluster ?? 1;
  if (CL !== 1 && CL !== 2) throw new Error(`gemm_hopper clusters have 1 or 2 CTAs, got ${CL}`);
  if (m <= 0 || n <= 0 || k <= 0 || m % (BM * CL) || n % BN || k % BK) {
    throw new Error(`gemm_hopper needs m, n, k positive multiples of ${BM * CL}, ${BN}, ${BK}`);
  }
  const mTiles = m / (BM * CL);
  const nTiles = n / BN;
  const units = mTiles * nTiles;
  const clusters = Math.min(units, Math.floor((s.ctas ?? 132) / CL));
  const turns = Math.ceil(units / clusters);
  const kTiles = k / BK;
  return T.function(
    name,
    { A: T.Tensor([m, k], dt), B: T.Tensor([n, k], dt), C: T.Tensor([m, n], dt) },
    ({ A, B, C }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({
          grid: clusters * CL,
          block: 384,
          dynamic_shared_bytes: STAGES * (BM + BN) * BK * 2,
          ...(CL > 1 ? { cluster: [CL, 1, 1] as [number, number, number] } : {}),
        }),
      });
      const tid = T.cuda.thread_idx("x");
      const wg = T.let_("wg", tid.floordiv(128));
      const swz = { align: 1024, layout: T.swizzle_mode("128B"), dynamic: true } as const;
      const sA = T.alloc_shared([STAGES, BM, BK], dt, { name: "sA", ...swz });
      const sB = T.alloc_shared([STAGES, BN, BK], dt, { name: "sB", ...swz });
      const full = T.alloc_shared([STAGES], "uint64", { name: "full" });
      const empty = T.alloc_shared([STAGES], "uint64", { name: "empty" });
      const rank = CL > 1 ? T.let_("rank", T.cuda.cluster_ctarank()) : undefined;
      const unit0 = CL > 1 ? T.let_("unit0", T.cuda.block_idx("x").floordiv(CL)) : undefined;
      T.if_(tid.eq(0), () => {
        for (const st of T.unroll(STAGES)) {
          T.ptx.mbarrier.init(full.sub(st), 1);
          T.ptx.mbarrier.init(empty.sub(st), 2 * CL);
        }
        T.ptx.fence.mbarrier_init();
      });
      if (CL > 1) T.cuda.cluster_sync();
      else T.cuda.cta_sync();
      // x (rows × cols) as a grid of r × c tiles: tiles(x, r, c).sub(i, j) is tile (i, j).
      const tiles = (x: typeof A, r: number, c: number) =>
        x.rearrange("(i r) (j c) -> i j r c", { r, c });
      // Work unit u in the grouped order (GROUP tile rows at a time) → this CTA's tile row (of
      // 128 rows) and tile column (of 256).
      const g = GROUP * nTiles;
      const rowsOf = (u: E) => T.min(T.sub(mTiles, T.floordiv(u, g).mul(GROUP)), GROUP);
      // Both are in range for every unit, but with mTiles not a multiple of GROUP (the last
      // group shorter) the verifier cannot tie rowsOf(u) to u's group: they are clamped there
      // (no-ops at run time) so that C's stores are provably inside it (TX2006 otherwise).
      // (One group, or whole groups: provable as it is.)
      const whole = mTiles <= GROUP || mTiles % GROUP === 0;
      const mtOf = (u: E) => {
        const grouped = T.floordiv(u, g)
          .mul(GROUP)
          .add(T.floormod(T.floormod(u, g), rowsOf(u)));
        const mb = whole ? grouped : T.min(grouped, mTiles - 1);
        return rank ? mb.mul(CL).add(rank) : mb;
      };
      const ntOf = (u: E) => {
        const nt = T.floordiv(T.floormod(u, g), rowsOf(u));
        return whole ? nt : T.min(nt, nTiles - 1);
      };
      // K-tile kt of a turn is the ring's iteration i: stage i mod STAGES, phase ⌊i / STAGES⌋ mod 2.
      const phase = (i: E) => T.floormod(T.floordiv(i, STAGES), 2);
      /** `body(u, turn)` for each turn's work unit u of this CTA's cluster, when in range. */
      const eachUnit = (body: (u: E, turn: E) => void): void => {
        for (const turn of T.range(turns)) {
          const u = T.let_("u", T.add(unit0 ?? T.cuda.block_idx("x"), turn.mul(clusters)));
          T.if_(u.lt(units), () => body(u, turn));
        }
      };
      T.if_(
        wg.eq(0),
        () => {
          T.ptx.setmaxnreg(false, 40);
          T.if_(tid.eq(0), () =>
            eachUnit((u, turn) => {
              for (const kt of T.range(kTiles)) {
                const st = T.let_("st", T.floormod(T.add(T.mul(turn, kTiles), kt), STAGES));
                T.ptx.mbarrier.try_wait(
                  empty.sub(st),
                  T.sub(1, phase(T.add(T.mul(turn, kTiles), kt))),
                );
                T.ptx.mbarrier.arrive.expect_tx(full.sub(st), (BM + BN) * BK * 2);
                const bar = full.sub(st);
                T.tile.copy_async(sA.sub(st), tiles(A, BM, BK).sub(mtOf(u), kt), { mbar: bar });
                if (rank) {
                  // B's tile as CL parts of BN / CL rows: this CTA loads part `rank` into both.
                  T.tile.copy_async(
                    sB.sub(st).rearrange("(p r) c -> p r c", { p: CL }).sub(rank),
                    tiles(B, BN / CL, BK).sub(T.mul(ntOf(u), CL).add(rank), kt),
                    { mbar: bar, cta_mask: T.uint16((1 << CL) - 1) },
                  );
                } else {
                  T.tile.copy_async(sB.sub(st), tiles(B, BN, BK).sub(ntOf(u), kt), { mbar: bar });
                }
              }
            }),
          );
        },
        () => {
          T.ptx.setmaxnreg(true, 232);
          // Consumer cw = wg - 1 ∈ {0, 1}, spelled (wg + 1) mod 2 so that bounds analysis sees
          // it non-negative.
          const cw = T.let_("cw", wg.add(1).floormod(2));
          // The accumulators in the wgmma D fragment, and their 16-bit copy in the same layout.
          const D = T.layout.wgmma_tile_layout("D", 64, BN, "float32");
          const acc = T.alloc_local([64, BN], "float32", { name: "acc", layout: D });
          const out = T.alloc_local([64, BN], dt, { name: "out", layout: D });
          eachUnit((u, turn) => {
            T.tile.wg.zero(acc);
            for (const kt of T.range(kTiles)) {
              const st = T.let_("st", T.floormod(T.add(T.mul(turn, kTiles), kt), STAGES));
              T.ptx.mbarrier.try_wait(full.sub(st), phase(T.add(T.mul(turn, kTiles), kt)));
              const rowsA = sA.sub(st).rearrange("(w r) c -> w r c", { r: 64 }).sub(cw);
              T.tile.wg.gemm_async(acc, rowsA, sB.sub(st), { transB: true });
              T.ptx.wgmma.wait_group(0);
              const t = T.floormod(tid, 128);
              if (rank) {
                // Thread r frees the stage in CTA r of the cluster (the multicast wrote both).
                T.if_(t.lt(CL), () =>
                  T.ptx.mbarrier.arrive.cluster(empty.sub(st), t.cast("uint32")),
                );
              } else {
                T.if_(t.eq(0), () => T.ptx.mbarrier.arrive(empty.sub(st)));
              }
            }
            T.tile.wg.cast(out, acc);
            T.tile.wg.copy(tiles(C, 64, BN).sub(T.add(T.mul(mtOf(u), 2), cw), ntOf(u)), out);
          });
        },
      );
      // No CTA exits while a peer may still multicast into it or arrive on its barriers.
      if (CL > 1) T.cuda.cluster_sync();
    },
  );
}

/** The example's size: the simulator runs it (one CTA, two turns of one 128 × 256 tile each). */
export const gemm_hopper = makeTileGemmHopper({ m: 256, n: 256, k: 128, ctas: 1 });

/** The benchmark's kernel (bench/hopper.ts), beside examples/gemm_hopper.ts's. */
export function makeBenchKernel(sizes: GemmHopperSizes): { fn: PrimFunc } {
  return { fn: makeTileGemmHopper(sizes) };
}

/**
 * Run at 256 × 256 × 128 on `dev` (float16) with examples/gemm_hopper.ts's check (within
 * 2^-20 · Σ|a·b| + ½ ulp of float64).
 */
export function runExample(
  dev: DeviceLike = device(),
  kernel: PrimFunc = gemm_hopper,
): ExampleResult {
  return checkGemmHopper(dev, kernel, { m: 256, n: 256, k: 128 });
}

if (isMain(import.meta.url)) {
  for (const line of explainTile(gemm_hopper)) console.error(line);
  runAsMain("gemm_hopper", runExample);
}
