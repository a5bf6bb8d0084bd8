// A float16 GEMM on tensor cores: C (M × N, float32) = A (M × K) · B (K × N), A and B float16
// row-major, float32 accumulation in mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32.
// The design (bench/cuda/gemm_mma.cu is the same kernel in CUDA C++ with inline PTX):
//   - a 128 × 128 tile of C per CTA of 256 threads (8 warps as 2 × 4, each warp 64 × 32 of C:
//     4 m16 × 4 n8 mma tiles, 64 float32 accumulators per lane in registers);
//   - K in tiles of 32; each K-tile of A (128 × 32) and B (32 × 128) goes to shared memory with
//     two 16-byte cp.async per thread each, STAGES (3) deep: tiles kt + 1 .. kt + STAGES - 1 are
//     in flight while tile kt is multiplied (one commit per iteration, cp.async.wait_group
//     STAGES - 2, then a CTA barrier, which also frees the stage the next prefetch overwrites);
//   - per k16 step a warp loads its A fragments with ldmatrix.x4 (lane l gives the address of
//     row l % 16, columns 8 · (l / 16)), its B fragments with ldmatrix.x4.trans from the
//     row-major K × N tile (two n8 tiles per instruction), and issues 16 mma.sync;
//   - C is stored from the accumulators as float32 pairs.
// Shared tiles are swizzled, not padded: the 16-byte chunk c of a 64-byte row r of A lands at
// c ^ ((r / 2) % 4) (Swizzle<2,4,3> on bytes, T.SwizzleLayout(3, 2, 3) in float16 elements), the
// chunk c of a 256-byte row r of B at c ^ (r % 8) within its 128-byte half (Swizzle<3,4,4>,
// T.SwizzleLayout(3, 3, 4)): the 8 rows one ldmatrix phase reads, and the 8 chunks 8 threads
// write by cp.async, fall in 8 different 16-byte bank groups (no bank conflicts).
// Any positive M, N, K work; each operand's shared tile is filled by one of three paths:
//   - plain (M, N, K multiples of 128, 128, 32): the cp.async chunks above, no guards;
//   - cp.async tail (the operand's rows a multiple of 8 elements, so that each row starts 16-byte
//     aligned: K for A, N for B): the grid covers M × N in whole tiles, a chunk outside the
//     operand is zero-filled by cp.async with src_size 0 (from a clamped, in-bounds address);
//   - element tail (K % 8 != 0 for A, N % 8 != 0 for B: rows are not 16-byte aligned): each
//     thread loads the tile's elements one float16 at a time (ld.global from a clamped address,
//     0 outside the operand) and stores them through the same swizzled layout (st.shared). The
//     stores are synchronous, so the pipeline's barriers order them: a stage is written after
//     the cta_sync that ends its last read, and read after at least one more cta_sync. Slower
//     (each prefetch's load latency is exposed before its iteration's mma, and a warp moves 64
//     bytes per load instead of 512), but the ldmatrix/mma part is unchanged.
// Stores of C outside M × N are skipped in both tail paths. Run: npx tsx examples/gemm_mma.ts
import {
  T,
  compile,
  device,
  isMain,
  runAsMain,
  tensor,
  type DeviceLike,
  type ExampleResult,
  type ExprLike,
} from "tirx-ts";
import type { PrimFunc } from "@tirx-ts/core";

const BM = 128;
const BN = 128;
const BK = 32;
const THREADS = 256;
/** Warp tile: 64 rows (4 m16 tiles) × 32 columns (4 n8 tiles). */
const WM = 64;
const WN = 32;

/**
 * The kernel for C (m × n, float32) = A (m × k, float16) · B (k × n, float16), all row-major,
 * with a `stages`-deep cp.async pipeline. m, n, k: any positive integers. The plain path needs
 * m, n, k multiples of 128, 128, 32; the cp.async tail path for A needs k % 8 == 0 and for B
 * n % 8 == 0 (16-byte aligned rows, PTX ISA cp.async: the source is aligned to the copy size);
 * otherwise that operand takes the element tail path (see the file's header).
 * `name` is the kernel's (and PTX entry's) name.
 * @throws Error unless m, n, k are positive integers and 3 ≤ stages ≤ 8 (the
 *   cp.async.wait_group count is 0..7). The tiles take 16 KiB of static shared memory per stage
 *   and static shared memory is at most 48 KiB, so compiling more than 3 stages is TX2008.
 */
export function makeGemm(m: number, n: number, k: number, stages = 3, name = "gemm_mma"): PrimFunc {
  if (![m, n, k].every((x) => Number.isInteger(x) && x >= 1)) {
    throw new Error(`gemm_mma needs positive integer m, n, k, got ${m}, ${n}, ${k}`);
  }
  if (stages < 3 || stages > 8) throw new Error(`gemm_mma needs 3..8 stages, got ${stages}`);
  const tail = m % BM !== 0 || n % BN !== 0 || k % BK !== 0;
  // Which operands can be copied in 16-byte cp.async chunks (rows start 16-byte aligned).
  const chunkedA = k % 8 === 0;
  const chunkedB = n % 8 === 0;
  const kTiles = Math.ceil(k / BK);
  return T.function(
    name,
    {
      A: T.Tensor([m, k], "float16"),
      B: T.Tensor([k, n], "float16"),
      C: T.Tensor([m, n], "float32"),
    },
    ({ A, B, C }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({
          grid: [Math.ceil(n / BN), Math.ceil(m / BM)],
          block: THREADS,
        }),
      });
      const tid = T.cuda.thread_idx("x");
      const lane = T.let_("lane", tid.floormod(32));
      const warp = T.let_("warp", tid.floordiv(32));
      const wm = T.let_("wm", warp.floordiv(BN / WN).mul(WM));
      const wn = T.let_("wn", warp.floormod(BN / WN).mul(WN));
      const m0 = T.let_("m0", T.cuda.block_idx("y").mul(BM));
      const n0 = T.let_("n0", T.cuda.block_idx("x").mul(BN));
      const As = T.alloc_shared([stages, BM, BK], "float16", {
        name: "As",
        layout: T.SwizzleLayout(3, 2, 3),
      });
      const Bs = T.alloc_shared([stages, BK, BN], "float16", {
        name: "Bs",
        layout: T.SwizzleLayout(3, 3, 4),
      });
      // The two 16-byte chunks of A and of B each thread copies per K-tile: chunk c = tid and
      // tid + THREADS, bound once so that every copy of the prologue and main loop shares them.
      const c0 = T.let_("c0", tid);
      const c1 = T.let_("c1", tid.add(THREADS));
      // The element tail path: the rows × cols tile at (r0, q0) of `src` (rowsTotal × colsTotal)
      // into `dst[stage]`, element e = tid + THREADS · j at (e / cols, e % cols), so that a
      // warp reads 32 consecutive elements of a row.
      const copyElements = (
        dst: typeof As,
        src: typeof A,
        stage: ExprLike,
        r0: ExprLike,
        q0: ExprLike,
        rows: number,
        cols: number,
        rowsTotal: number,
        colsTotal: number,
      ): void => {
        for (const j of T.unroll((rows * cols) / THREADS)) {
          const e = tid.add(j.mul(THREADS));
          const r = e.floordiv(cols);
          const q = e.floormod(cols);
          const gr = T.let_("gr", T.add(r0, r));
          const gq = T.let_("gq", T.add(q0, q));
          dst.set(
            [stage, r, q],
            T.if_then_else(
              T.and(gr.lt(rowsTotal), gq.lt(colsTotal)),
              src.get([T.min(gr, rowsTotal - 1), T.min(gq, colsTotal - 1)]),
              T.float16(0),
            ),
          );
        }
      };
      const copyTile = (kt: ExprLike, stage: ExprLike): void => {
        const cp = T.ptx["cp.async.cg.shared.global"];
        for (const c of [c0, c1]) {
          const aRow = c.floordiv(BK / 8);
          const aChunk = c.floormod(BK / 8);
          const bRow = c.floordiv(BN / 8);
          const bChunk = c.floormod(BN / 8);
          if (!tail) {
            T.cuda.tile.apply(
              cp,
              As.sub(stage, aRow).rearrange("(c v) -> c v", { v: 8 }).sub(aChunk),
              A.sub(m0.add(aRow))
                .rearrange("(c v) -> c v", { v: 8 })
                .sub(T.mul(kt, BK / 8).add(aChunk)),
              { chunk_bytes: 16 },
            );
            T.cuda.tile.apply(
              cp,
              Bs.sub(stage, bRow).rearrange("(c v) -> c v", { v: 8 }).sub(bChunk),
              B.sub(T.mul(kt, BK).add(bRow))
                .rearrange("(c v) -> c v", { v: 8 })
                .sub(n0.floordiv(8).add(bChunk)),
              { chunk_bytes: 16 },
            );
            continue;
          }
          // Tail path: a chunk outside A or B copies 0 bytes (zero fill) from a clamped address.
          if (chunkedA) {
            const ar = T.let_("ar", m0.add(aRow));
            const ac = T.let_("ac", T.mul(kt, BK / 8).add(aChunk));
            T.cuda.tile.apply(
              cp,
              As.sub(stage, aRow).rearrange("(c v) -> c v", { v: 8 }).sub(aChunk),
              A.sub(T.min(ar, m - 1))
                .rearrange("(c v) -> c v", { v: 8 })
                .sub(T.min(ac, k / 8 - 1)),
              {
                chunk_bytes: 16,
                src_size: T.if_then_else(T.and(ar.lt(m), ac.lt(k / 8)), T.uint32(16), T.uint32(0)),
              },
            );
          }
          if (chunkedB) {
            const br = T.let_("br", T.mul(kt, BK).add(bRow));
            const bc = T.let_("bc", n0.floordiv(8).add(bChunk));
            T.cuda.tile.apply(
              cp,
              Bs.sub(stage, bRow).rearrange("(c v) -> c v", { v: 8 }).sub(bChunk),
              B.sub(T.min(br, k - 1))
                .rearrange("(c v) -> c v", { v: 8 })
                .sub(T.min(bc, n / 8 - 1)),
              {
                chunk_bytes: 16,
                src_size: T.if_then_else(T.and(br.lt(k), bc.lt(n / 8)), T.uint32(16), T.uint32(0)),
              },
            );
          }
        }
        // Element tail path: rows not 16-byte aligned, one float16 per load, 0 outside.
        if (!chunkedA) copyElements(As, A, stage, m0, T.mul(kt, BK), BM, BK, m, k);
        if (!chunkedB) copyElements(Bs, B, stage, T.mul(kt, BK), n0, BK, BN, k, n);
      };
      const acc = T.alloc_local([64], "float32", { name: "acc" });
      for (const e of T.unroll(64)) acc.set([e], T.float32(0));
      const a = T.alloc_local([32], "float16", { name: "a" });
      const b = T.alloc_local([16], "float16", { name: "b" });
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
          for (const i of T.unroll(WM / 16)) {
            T.ptx.ldmatrix(
              false,
              4,
              ".b16",
              a,
              i.mul(8),
              As.ptr([
                s,
                wm.add(i.mul(16)).add(lane.floormod(16)),
                kk.mul(16).add(lane.floordiv(16).mul(8)),
              ]),
            );
          }
          for (const jj of T.unroll(WN / 16)) {
            T.ptx.ldmatrix(
              true,
              4,
              ".b16",
              b,
              jj.mul(8),
              Bs.ptr([
                s,
                kk.mul(16).add(lane.floormod(16)),
                wn.add(jj.mul(16)).add(lane.floordiv(16).mul(8)),
              ]),
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
                i.mul(8),
                b,
                j.mul(4),
                acc,
                i
                  .mul(WN / 8)
                  .add(j)
                  .mul(4),
              );
            }
          }
        }
      }
      const g = T.let_("g", lane.floordiv(4));
      const t = T.let_("t", lane.floormod(4));
      for (const i of T.unroll(WM / 16)) {
        for (const j of T.unroll(WN / 8)) {
          for (const h of T.unroll(2)) {
            for (const v of T.vectorized(2)) {
              const row = m0.add(wm).add(i.mul(16)).add(h.mul(8)).add(g);
              const col = n0.add(wn).add(j.mul(8)).add(t.mul(2)).add(v);
              const value = acc.get([
                i
                  .mul(WN / 8)
                  .add(j)
                  .mul(4)
                  .add(h.mul(2))
                  .add(v),
              ]);
              if (!tail) C.set([row, col], value);
              else T.if_(T.and(row.lt(m), col.lt(n)), () => C.set([row, col], value));
            }
          }
        }
      }
    },
  );
}

/** The example's size (the simulator runs it: one CTA, two K-tiles). */
export const gemm_mma = makeGemm(128, 128, 64);

/**
 * 37 × 45 × 29: K and N not multiples of 8, so both operands take the element tail path (the
 * script-mode twin in examples/script/gemm_mma.ts writes this path out).
 */
export const gemm_mma_odd = makeGemm(37, 45, 29, 3, "gemm_mma_odd");

/** The benchmark's kernel (bench/compute-kernels.ts). */
export function makeBenchKernel(sizes: { m: number; n: number; k: number }): { fn: PrimFunc } {
  return { fn: makeGemm(sizes.m, sizes.n, sizes.k) };
}

/**
 * Run at 128 × 128 × 64 on `dev` and compare with a float64 product. Tolerance: every element
 * within 2^-20 · Σ_k |a·b| of the float64 result (mma's accumulation order and internal
 * precision are unspecified; see MMA_F32_BOUND in core's mma ops: each of the K / 16 mma calls
 * may be off by 2^-21 of its addends' magnitude sum, and the float32 accumulator adds one
 * rounding per call).
 * `kernel` (default: this file's) is what runs; examples/script/gemm_mma.ts passes its
 * script-mode twin.
 */
export function runExample(dev: DeviceLike = device(), kernel: PrimFunc = gemm_mma): ExampleResult {
  const [m, n, k] = [128, 128, 64];
  const run = compile(kernel, { target: "cuda" });
  let seed = 11;
  const rnd = (): number =>
    ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  const ha = tensor(Float32Array.from({ length: m * k }, rnd), {
    shape: [m, k],
    dtype: "float16",
    device: dev,
  });
  const hb = tensor(Float32Array.from({ length: k * n }, rnd), {
    shape: [k, n],
    dtype: "float16",
    device: dev,
  });
  const c = tensor.zeros([m, n], "float32", dev);
  run(ha, hb, c);
  const a = ha.toArray() as Float32Array;
  const b = hb.toArray() as Float32Array;
  const got = c.toArray() as Float32Array;
  let worst = 0;
  for (let r = 0; r < m; r++) {
    for (let q = 0; q < n; q++) {
      let s = 0;
      let mag = 0;
      for (let p = 0; p < k; p++) {
        s += a[r * k + p]! * b[p * n + q]!;
        mag += Math.abs(a[r * k + p]! * b[p * n + q]!);
      }
      worst = Math.max(worst, Math.abs(got[r * n + q]! - s) / (mag * 2 ** -20));
    }
  }
  const bytes = c.toBytes();
  for (const x of [ha, hb, c]) x.dispose();
  return {
    ok: worst <= 1,
    outputs: [bytes],
    summary: `worst error ${worst.toFixed(3)} of the bound 2^-20 · Σ|a·b| against float64`,
    approximate:
      "mma.sync's accumulation order and internal precision are not specified by the PTX ISA; the simulator rounds each exact dot product once",
  };
}

if (isMain(import.meta.url)) runAsMain("gemm_mma", runExample);
