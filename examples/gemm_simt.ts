// A float16 GEMM on the CUDA cores: C (M × N, float32) = A (M × K) · B (K × N), A and B float16
// row-major, float32 accumulation with fma.rn. The design of bench/cuda/gemm_cp_async.cu:
//   - a 64 × 64 tile of C per CTA of 256 threads, K in tiles of 32;
//   - each K-tile of A (64 × 32) and B (32 × 64) goes to shared memory with one 16-byte
//     cp.async per thread each (thread t: A row t / 4, halves 8 · (t % 4); B row t / 8, halves
//     8 · (t % 8)), two stages deep: tile kt + 1 is in flight while tile kt is multiplied
//     (commit every iteration, cp.async.wait_group 1, then a CTA barrier; a second barrier frees
//     the stage);
//   - thread (ty, tx) = (t / 16, t % 16) accumulates C[ty + 16 i][4 tx + j], i, j < 4, in 16
//     registers; per 8 k-steps it reads A's four rows as 16-byte shared vectors, per k-step B's
//     four halves as one 8-byte vector, widens them to float32 and does 16 fma.rn;
//   - C is stored as four 16-byte vectors per thread.
// M and N are multiples of 64, K of 32. Run: npx tsx examples/gemm_simt.ts
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

const BM = 64;
const BN = 64;
const BK = 32;
const THREADS = 256;

/**
 * The kernel for C (m × n) = A (m × k) · B (k × n).
 * @throws Error unless m and n are multiples of 64 and k of 32.
 */
export function makeGemm(m: number, n: number, k: number): PrimFunc {
  if (m % BM || n % BN || k % BK) {
    throw new Error(`gemm_simt needs m, n multiples of ${BM} and k a multiple of ${BK}`);
  }
  const kTiles = k / BK;
  return T.function(
    "gemm_simt",
    {
      A: T.Tensor([m, k], "float16"),
      B: T.Tensor([k, n], "float16"),
      C: T.Tensor([m, n], "float32"),
    },
    ({ A, B, C }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [n / BN, m / BM], block: THREADS }) });
      const tid = T.cuda.thread_idx("x");
      const tx = T.let_("tx", tid.floormod(16));
      const ty = T.let_("ty", tid.floordiv(16));
      const m0 = T.let_("m0", T.cuda.block_idx("y").mul(BM));
      const n0 = T.let_("n0", T.cuda.block_idx("x").mul(BN));
      const As = T.alloc_shared([2, BM, BK], "float16", { name: "As" });
      const Bs = T.alloc_shared([2, BK, BN], "float16", { name: "Bs" });
      // This thread's 16-byte pieces of each K-tile.
      const aRow = T.let_("a_row", tid.floordiv(4));
      const aChunk = T.let_("a_chunk", tid.floormod(4));
      const bRow = T.let_("b_row", tid.floordiv(8));
      const bChunk = T.let_("b_chunk", tid.floormod(8));
      const copyTile = (kt: ExprLike, stage: ExprLike): void => {
        const cp = T.ptx["cp.async.cg.shared.global"];
        const opts = { chunk_bytes: 16 } as const;
        T.cuda.tile.apply(
          cp,
          As.sub(stage, aRow).rearrange("(c v) -> c v", { v: 8 }).sub(aChunk),
          A.sub(m0.add(aRow))
            .rearrange("(c v) -> c v", { v: 8 })
            .sub(T.mul(kt, BK / 8).add(aChunk)),
          opts,
        );
        T.cuda.tile.apply(
          cp,
          Bs.sub(stage, bRow).rearrange("(c v) -> c v", { v: 8 }).sub(bChunk),
          B.sub(T.mul(kt, BK).add(bRow))
            .rearrange("(c v) -> c v", { v: 8 })
            .sub(n0.floordiv(8).add(bChunk)),
          opts,
        );
      };
      const acc = T.alloc_local([16], "float32", { name: "acc" });
      for (const e of T.unroll(16)) acc.set([e], T.float32(0));
      const a = T.alloc_local([32], "float16", { name: "a" });
      const b = T.alloc_local([4], "float16", { name: "b" });
      const bf = T.alloc_local([4], "float32", { name: "bf" });
      copyTile(0, 0);
      T.ptx.cp.async_.commit_group();
      for (const kt of T.range(kTiles)) {
        T.if_(kt.add(1).lt(kTiles), () => copyTile(kt.add(1), kt.add(1).floormod(2)));
        T.ptx.cp.async_.commit_group();
        T.ptx.cp.async_.wait_group(1);
        T.cuda.cta_sync();
        const s = T.let_("s", kt.floormod(2));
        for (const kk of T.unroll(BK / 8)) {
          for (const i of T.unroll(4)) {
            for (const v of T.vectorized(8)) {
              a.set([i.mul(8).add(v)], As.get([s, ty.add(i.mul(16)), kk.mul(8).add(v)]));
            }
          }
          for (const kq of T.unroll(8)) {
            for (const v of T.vectorized(4)) {
              b.set([v], Bs.get([s, kk.mul(8).add(kq), tx.mul(4).add(v)]));
            }
            for (const j of T.unroll(4)) bf.set([j], b.get([j]).cast("float32"));
            for (const i of T.unroll(4)) {
              const av = T.let_("av", a.get([i.mul(8).add(kq)]).cast("float32"));
              for (const j of T.unroll(4)) {
                const e = i.mul(4).add(j);
                acc.set([e], T.fma(av, bf.get([j]), acc.get([e])));
              }
            }
          }
        }
        T.cuda.cta_sync();
      }
      for (const i of T.unroll(4)) {
        for (const j of T.vectorized(4)) {
          C.set([m0.add(ty).add(i.mul(16)), n0.add(tx.mul(4)).add(j)], acc.get([i.mul(4).add(j)]));
        }
      }
    },
  );
}

/** The example's size. */
export const gemm_simt = makeGemm(128, 128, 64);

/** The benchmark's kernel (bench/compute-kernels.ts). */
export function makeBenchKernel(sizes: { m: number; n: number; k: number }): { fn: PrimFunc } {
  return { fn: makeGemm(sizes.m, sizes.n, sizes.k) };
}

/**
 * Run at 128 × 128 × 64 on `dev` and compare with a float64 product (relative Frobenius error).
 * `kernel` (default: this file's) is what runs; examples/script/gemm_simt.ts passes its
 * script-mode twin.
 */
export function runExample(
  dev: DeviceLike = device(),
  kernel: PrimFunc = gemm_simt,
): ExampleResult {
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
  let err = 0;
  let norm = 0;
  for (let r = 0; r < m; r++) {
    for (let q = 0; q < n; q++) {
      let s = 0;
      for (let p = 0; p < k; p++) s += a[r * k + p]! * b[p * n + q]!;
      err += (got[r * n + q]! - s) ** 2;
      norm += s * s;
    }
  }
  const rel = Math.sqrt(err / norm);
  const bytes = c.toBytes();
  for (const t of [ha, hb, c]) t.dispose();
  return {
    ok: rel < 1e-6,
    outputs: [bytes],
    summary: `relative Frobenius error ${rel.toExponential(1)} against float64 (limit 1e-6)`,
  };
}

if (isMain(import.meta.url)) runAsMain("gemm_simt", runExample);
