// A Hopper GEMM: C (M × N) = A (M × K) · Bᵀ, A (M × K) and B (N × K) row-major (both K-major),
// float16 or bfloat16 in and out, float32 accumulation in wgmma. The design of
// bench/cuda/gemm_hopper.cu (its variant bn256_bm128_st4_cl1_w0_pers):
//   - a 128 × 256 tile of C per CTA and per turn, K in tiles of 64 (one 128-byte swizzle row);
//   - TMA (cp.async.bulk.tensor.2d) loads each K-tile of A (128 × 64) and B (256 × 64) into
//     128B-swizzled shared tiles (T.swizzle_mode("128B"), the tensor maps' swizzle), completing
//     on the stage's "full" mbarrier (expect_tx of the stage's bytes);
//   - a STAGES (4) deep ring of full/empty mbarriers: warpgroup 0 is the producer
//     (setmaxnreg.dec 40; one thread waits for a stage to be empty, then issues its two copies),
//     warpgroups 1 and 2 are the consumers (setmaxnreg.inc 232), each owning 64 rows of the tile;
//   - per K-tile a consumer waits for the stage to be full, issues four
//     wgmma.mma_async.m64n256k16 (one per k16 step) from shared-memory descriptors (K-major,
//     128B swizzle: SBO 1024 bytes between 8-row groups, the k16 step moves the start address
//     by 32 bytes), commits, waits for the group and frees the stage (one arrive per consumer);
//   - a persistent grid (at most one CTA per SM) walks the tiles in groups of 8 tile rows, so the
//     producer loads the next tile while the consumers store the last one;
//   - the epilogue converts the 128 float32 accumulators per thread to float16/bfloat16 pairs.
// Shapes: M a multiple of 128, N of 256, K of 64. Run: npx tsx examples/gemm_hopper.ts
// (sm_90a: compile with { arch: "sm_90a" }).
import {
  T,
  compile,
  device,
  isMain,
  runAsMain,
  tensor,
  type DeviceLike,
  type ExampleResult,
} from "tirx-ts";
import type { PrimFunc } from "@tirx-ts/core";

const BM = 128;
const BN = 256;
const BK = 64;
const STAGES = 4;
/** Tile rows per group of the tile order (L2 reuse of B's tiles). */
const GROUP = 8;
const LOAD_2D = "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes";

/** Sizes and launch of {@link makeGemmHopper}. */
export interface GemmHopperSizes {
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly dtype?: "float16" | "bfloat16";
  /** CTAs of the persistent grid (the GPU's SM count; default 132, the H200's). */
  readonly ctas?: number;
  /**
   * CTAs per cluster along M: 1 (default) or 2. With 2 the CTAs of a cluster take vertically
   * adjacent 128 × 256 tiles that share B's K-tiles: each loads half of B's tile and multicasts
   * it to both (`.multicast::cluster`), and a consumer frees a stage in both CTAs (mapa + remote
   * mbarrier.arrive). The simulator runs both (the CTAs of a cluster run together there).
   */
  readonly cluster?: 1 | 2;
}

/**
 * The kernel for C (m × n) = A (m × k) · B (n × k)ᵀ.
 * @throws Error unless m, n, k are positive multiples of 128, 256, 64.
 */
export function makeGemmHopper(s: GemmHopperSizes): PrimFunc {
  const { m, n, k } = s;
  const dt = s.dtype ?? "float16";
  if (m <= 0 || n <= 0 || k <= 0 || m % BM || n % BN || k % BK) {
    throw new Error(`gemm_hopper needs m, n, k positive multiples of ${BM}, ${BN}, ${BK}`);
  }
  const CL = s.cluster ?? 1;
  if (CL !== 1 && CL !== 2) throw new Error(`gemm_hopper clusters have 1 or 2 CTAs, got ${CL}`);
  if (m % (BM * CL))
    throw new Error(`gemm_hopper with cluster ${CL} needs m a multiple of ${BM * CL}`);
  // Units of work are cluster tiles: CL vertically adjacent 128 × 256 tiles.
  const mTiles = m / (BM * CL);
  const nTiles = n / BN;
  const units = mTiles * nTiles;
  const clusters = Math.min(units, Math.floor((s.ctas ?? 132) / CL));
  const ctas = clusters * CL;
  const turns = Math.ceil(units / clusters);
  const kTiles = k / BK;
  const stageBytes = (BM + BN) * BK * 2;
  return T.function(
    "gemm_hopper",
    { A: T.Tensor([m, k], dt), B: T.Tensor([n, k], dt), C: T.Tensor([m, n], dt) },
    ({ A, B, C }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({
          grid: ctas,
          block: 384,
          dynamic_shared_bytes: STAGES * stageBytes,
          ...(CL > 1 ? { cluster: [CL, 1, 1] as [number, number, number] } : {}),
        }),
      });
      const tid = T.cuda.thread_idx("x");
      const cta = T.cuda.block_idx("x");
      const wg = T.let_("wg", tid.floordiv(128));
      const swz = { align: 1024, layout: T.swizzle_mode("128B"), dynamic: true } as const;
      const sA = T.alloc_shared([STAGES, BM, BK], dt, { name: "sA", ...swz });
      // B's tile as CL parts of BN / CL rows (one multicast each); in memory the whole tile.
      const sB =
        CL > 1
          ? T.alloc_shared([STAGES, CL, BN / CL, BK], dt, { name: "sB", ...swz })
          : T.alloc_shared([STAGES, BN, BK], dt, { name: "sB", ...swz });
      const full = T.alloc_shared([STAGES], "uint64", { name: "full" });
      const empty = T.alloc_shared([STAGES], "uint64", { name: "empty" });
      const mapA = T.tensormap_encode_tiled(A, { box: [BM, BK], swizzle: "128B" });
      const mapB = T.tensormap_encode_tiled(B, { box: [BN / CL, BK], swizzle: "128B" });
      // This CTA's rank in its cluster, and the cluster's index among the grid's.
      const rank = CL > 1 ? T.let_("rank", T.cuda.cluster_ctarank()) : undefined;
      const unit0 = CL > 1 ? T.let_("cl", cta.floordiv(CL)) : cta;
      T.if_(tid.eq(0), () => {
        for (const st of T.unroll(STAGES)) {
          T.ptx.mbarrier.init(full.sub(st), 1);
          T.ptx.mbarrier.init(empty.sub(st), 2 * CL);
        }
        T.ptx.fence.mbarrier_init();
      });
      if (CL > 1) {
        // Every CTA's mbarriers are initialised before any peer multicasts into it.
        T.ptx.barrier.cluster.arrive();
        T.ptx.barrier.cluster.wait();
      } else {
        T.cuda.cta_sync();
      }
      /** Tile `u` of the grouped order → its first row and column of C. */
      const origin = (u: ReturnType<typeof cta.add>) => {
        const first = T.let_("first", u.floordiv(GROUP * nTiles).mul(GROUP));
        const rows = T.let_("rows", T.min(T.sub(mTiles, first), GROUP));
        const r = T.let_("r", u.floormod(GROUP * nTiles));
        // In range for every tile, but with mTiles not a multiple of GROUP (the last group
        // shorter) the verifier cannot tie `rows` to the group: the tile row and column are
        // clamped there (no-ops at run time) so that C's stores are provably inside it.
        const whole = mTiles <= GROUP || mTiles % GROUP === 0;
        const mb = whole
          ? first.add(r.floormod(rows))
          : T.min(first.add(r.floormod(rows)), mTiles - 1);
        const nb = whole ? r.floordiv(rows) : T.min(r.floordiv(rows), nTiles - 1);
        return {
          m0: T.let_("m0", CL > 1 ? mb.mul(CL).add(rank!).mul(BM) : mb.mul(BM)),
          n0: T.let_("n0", nb.mul(BN)),
        };
      };
      T.if_(
        wg.eq(0),
        () => {
          T.ptx.setmaxnreg(false, 40);
          T.if_(tid.eq(0), () => {
            for (const turn of T.range(turns)) {
              const u = T.let_("u", unit0.add(turn.mul(clusters)));
              T.if_(u.lt(units), () => {
                const { m0, n0 } = origin(u);
                for (const kt of T.range(kTiles)) {
                  const it = T.let_("it", turn.mul(kTiles).add(kt));
                  const st = T.let_("st", it.floormod(STAGES));
                  const ph = T.let_("ph", it.floordiv(STAGES).floormod(2));
                  T.ptx.mbarrier.try_wait(empty.sub(st), T.sub(1, ph));
                  T.ptx.mbarrier.arrive.expect_tx(full.sub(st), stageBytes);
                  T.cuda.tile.apply(T.ptx[LOAD_2D], sA.sub(st), A, {
                    tensor_map: mapA,
                    coords: [m0, kt.mul(BK)],
                    mbar: full.sub(st),
                  });
                  if (CL > 1) {
                    T.cuda.tile.apply(
                      T.ptx[`${LOAD_2D}.multicast::cluster`],
                      sB.sub(st, rank!),
                      B,
                      {
                        tensor_map: mapB,
                        coords: [n0.add(rank!.mul(BN / CL)), kt.mul(BK)],
                        mbar: full.sub(st),
                        cta_mask: T.uint16((1 << CL) - 1),
                      },
                    );
                  } else {
                    T.cuda.tile.apply(T.ptx[LOAD_2D], sB.sub(st), B, {
                      tensor_map: mapB,
                      coords: [n0, kt.mul(BK)],
                      mbar: full.sub(st),
                    });
                  }
                }
              });
            }
          });
        },
        () => {
          T.ptx.setmaxnreg(true, 232);
          // Consumer index wg - 1 ∈ {0, 1}, spelled (wg + 1) mod 2 so that bounds analysis sees it
          // non-negative (it does not know this branch has wg ≥ 1).
          const cw = T.let_("cw", wg.add(1).floormod(2));
          const t = T.let_("t", tid.floormod(128));
          const lane = T.let_("lane", t.floormod(32));
          const warp = T.let_("warp", t.floordiv(32));
          const acc = T.alloc_local([BN / 2], "float32", { name: "acc" });
          for (const turn of T.range(turns)) {
            const u = T.let_("u", unit0.add(turn.mul(clusters)));
            T.if_(u.lt(units), () => {
              const { m0, n0 } = origin(u);
              for (const e of T.unroll(BN / 2)) acc.set([e], T.float32(0));
              for (const kt of T.range(kTiles)) {
                const it = T.let_("it", turn.mul(kTiles).add(kt));
                const st = T.let_("st", it.floormod(STAGES));
                T.ptx.mbarrier.try_wait(full.sub(st), it.floordiv(STAGES).floormod(2));
                T.ptx.wgmma.fence();
                for (const kk of T.unroll(BK / 16)) {
                  const da = T.ptx.wgmma.encode_matrix_descriptor(
                    sA.ptr([st, cw.mul(64), kk.mul(16)]),
                    16,
                    1024,
                    3,
                  );
                  const db = T.ptx.wgmma.encode_matrix_descriptor(
                    CL > 1 ? sB.ptr([st, 0, 0, kk.mul(16)]) : sB.ptr([st, 0, kk.mul(16)]),
                    16,
                    1024,
                    3,
                  );
                  T.ptx.wgmma.mma_async(`m64n${BN}k16`, dt, acc, 0, da, db);
                }
                T.ptx.wgmma.commit_group();
                T.ptx.wgmma.wait_group(0);
                if (CL > 1) {
                  // Thread r frees the stage in CTA r of the cluster (the multicast wrote both).
                  T.if_(t.lt(CL), () =>
                    T.ptx.mbarrier.arrive.cluster(empty.sub(st), t.cast("uint32")),
                  );
                } else {
                  T.if_(t.eq(0), () => T.ptx.mbarrier.arrive(empty.sub(st)));
                }
              }
              // D fragment of m64nN: element 4j + 2h + v of a thread is row 16·warp + lane/4 + 8h,
              // column 8j + 2·(lane % 4) + v of the consumer's 64 × 256 block.
              const row0 = T.let_(
                "row0",
                m0.add(cw.mul(64)).add(warp.mul(16)).add(lane.floordiv(4)),
              );
              const col0 = T.let_("col0", n0.add(lane.floormod(4).mul(2)));
              for (const j of T.unroll(BN / 8)) {
                for (const h of T.unroll(2)) {
                  for (const v of T.vectorized(2)) {
                    C.set(
                      [row0.add(h.mul(8)), col0.add(j.mul(8)).add(v)],
                      acc.get([j.mul(4).add(h.mul(2)).add(v)]).cast(dt),
                    );
                  }
                }
              }
            });
          }
        },
      );
      if (CL > 1) {
        // No CTA exits while a peer may still multicast into it or arrive on its barriers.
        T.ptx.barrier.cluster.arrive();
        T.ptx.barrier.cluster.wait();
      }
    },
  );
}

/** The example's size: the simulator runs it (one CTA, two turns of one 128 × 256 tile each). */
export const gemm_hopper = makeGemmHopper({ m: 256, n: 256, k: 128, ctas: 1 });

/** The benchmark's kernel (bench/hopper.ts). */
export function makeBenchKernel(sizes: GemmHopperSizes): { fn: PrimFunc } {
  return { fn: makeGemmHopper(sizes) };
}

/**
 * Run `fn` (m × n × k) on `dev` and compare with a float64 product. Tolerance: every element
 * within 2^-20 · Σ_k |a·b| plus half an ulp of the output dtype of the float64 result (wgmma's
 * accumulation order and internal precision are unspecified, as for mma: MMA_F32_BOUND per
 * k16 step, K / 16 steps accumulated in float32; then one rounding to float16/bfloat16).
 */
export function checkGemmHopper(
  dev: DeviceLike,
  fn: PrimFunc,
  sizes: { m: number; n: number; k: number; dtype?: "float16" | "bfloat16" },
  sample = 0,
): ExampleResult {
  const { m, n, k } = sizes;
  const dt = sizes.dtype ?? "float16";
  const run = compile(fn, { target: "cuda", arch: "sm_90a" });
  let seed = 5;
  const rnd = (): number =>
    ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  const ha = tensor(Float32Array.from({ length: m * k }, rnd), {
    shape: [m, k],
    dtype: dt,
    device: dev,
  });
  const hb = tensor(Float32Array.from({ length: n * k }, rnd), {
    shape: [n, k],
    dtype: dt,
    device: dev,
  });
  const c = tensor.zeros([m, n], dt, dev);
  run(ha, hb, c);
  const a = ha.toArray() as Float32Array;
  const b = hb.toArray() as Float32Array;
  const got = c.toArray() as Float32Array;
  const ulp = dt === "float16" ? 2 ** -10 : 2 ** -7;
  let worst = 0;
  const rows =
    sample > 0 ? Array.from({ length: sample }, (_, i) => (i * 7919) % m) : [...Array(m).keys()];
  for (const r of rows) {
    for (let q = 0; q < n; q++) {
      let s = 0;
      let mag = 0;
      for (let p = 0; p < k; p++) {
        const x = a[r * k + p]! * b[q * k + p]!;
        s += x;
        mag += Math.abs(x);
      }
      // Half an ulp of |s| in the output format (the binade of |s|), plus the accumulation bound.
      const half = Math.abs(s) > 0 ? 2 ** Math.floor(Math.log2(Math.abs(s))) * ulp * 0.5 : 0;
      const bound = mag * 2 ** -20 + half;
      worst = Math.max(worst, Math.abs(got[r * n + q]! - s) / (bound || 1));
    }
  }
  const bytes = c.toBytes();
  for (const x of [ha, hb, c]) x.dispose();
  return {
    ok: worst <= 1,
    outputs: [bytes],
    summary: `worst error ${worst.toFixed(3)} of the bound (2^-20 · Σ|a·b| + ½ ulp of ${dt}) against float64`,
    approximate:
      "wgmma's accumulation order and internal precision are not specified by the PTX ISA; the simulator rounds each exact k16 dot product once",
  };
}

/**
 * Run at 256 × 256 × 128 on `dev` (float16) against float64.
 * `kernel` (default: this file's) is what runs; examples/script/gemm_hopper.ts passes its
 * script-mode twin.
 */
export function runExample(
  dev: DeviceLike = device(),
  kernel: PrimFunc = gemm_hopper,
): ExampleResult {
  return checkGemmHopper(dev, kernel, { m: 256, n: 256, k: 128 });
}

if (isMain(import.meta.url)) runAsMain("gemm_hopper", runExample);
