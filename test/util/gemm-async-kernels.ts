// Kernels of T.tile.wg.gemm_async for the simulator test (test/tile-gemm-async.test.ts) and the
// GPU differential test (test/gpu/tile-gemm-async.test.ts): one warpgroup (128 threads) loads A
// and B into shared tiles (T.tile.wg.copy_async, the tile's swizzle applied), optionally A into
// registers (T.tile.wg.copy), computes C = A · op(B) with gemm_async, waits, and stores C
// (T.tile.wg.copy); or, `blocked`, loads them by TMA (T.tile.copy_async, one thread, an mbarrier)
// as 64-wide column blocks, FlashAttention's head dim 128 layout. The check is against a float64 product of the rounded inputs within
// 2^-20 · Σ|a·b| per element (examples/gemm_hopper.ts's bound without the output rounding: C
// stays float32).
import { T, compile, tensor, type DeviceLike } from "tirx-ts";
import type { PrimFunc } from "@tirx-ts/core";
import { uniformFrom } from "./lcg.js";

/**
 * One gemm_async case: C [M, N] = A · B, A stored [M, K] or [K, M] (`aMNMajor`), B stored [N, K]
 * (`bKMajor`) or [K, N].
 */
export interface GemmAsyncCase {
  readonly name: string;
  readonly M: number;
  readonly N: number;
  readonly K: number;
  readonly dtype: "float16" | "bfloat16";
  readonly swizzle: "128B" | "64B" | "32B";
  /** B stored [N, K] (K-major, transB) rather than [K, N] (MN-major). Default true. */
  readonly bKMajor?: boolean;
  /** A stored [K, M] (MN-major, transA) rather than [M, K]; SS only. */
  readonly aMNMajor?: boolean;
  /** A from registers (RS) rather than shared (SS). */
  readonly rs?: boolean;
  /** `accum: false` (scale-d 0 on the first k step) instead of zeroing C first. */
  readonly overwrite?: boolean;
  /**
   * Shared tiles as TMA writes them at 128B swizzle: a stored [R, W] tile with W > 64 in a buffer
   * [W / 64, R, 64] of column blocks, passed to gemm_async as `s.rearrange("b r c -> r b c")`
   * ([R, W / 64, 64]), loaded by T.tile.copy_async from `X.rearrange("r (b c) -> r b c")`.
   */
  readonly blocked?: boolean;
}

type Shared = ReturnType<typeof T.alloc_shared>;
type Global = Parameters<typeof T.tile.copy_async>[1];

/**
 * A shared tile for global `src` of shape `shape`: one buffer, or with `blocked` and more than 64
 * columns, 64-wide column blocks [W / 64, R, 64]; returns the view gemm_async takes and the
 * (dst, src) pair the load copies.
 */
function sharedTile(
  c: GemmAsyncCase,
  name: string,
  shape: [number, number],
  src: Global,
): { view: Shared; dst: Shared; src: Global } {
  const swz = { name, layout: T.swizzle_mode(c.swizzle), align: ATOM[c.swizzle] };
  const [R, W] = shape;
  if (!c.blocked || W <= 64) {
    const s = T.alloc_shared(shape, c.dtype, swz);
    return { view: s, dst: s, src };
  }
  const s = T.alloc_shared([W / 64, R, 64], c.dtype, swz);
  const v = s.rearrange("b r c -> r b c");
  return { view: v, dst: v, src: (src as Shared).rearrange("r (b c) -> r b c", { c: 64 }) };
}

const ATOM: Record<GemmAsyncCase["swizzle"], number> = { "128B": 1024, "64B": 512, "32B": 256 };

/** The kernel of `c` (grid 1, block 128). */
export function gemmAsyncKernel(c: GemmAsyncCase): PrimFunc {
  const { M, N, K, dtype: dt } = c;
  const bk = c.bKMajor ?? true;
  const bShape: [number, number] = bk ? [N, K] : [K, N];
  const aShape: [number, number] = c.aMNMajor ? [K, M] : [M, K];
  return T.function(
    c.name,
    { A: T.Tensor(aShape, dt), B: T.Tensor(bShape, dt), C: T.Tensor([M, N], "float32") },
    ({ A, B, C }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
      const tA = sharedTile(c, "sA", aShape, A);
      const tB = sharedTile(c, "sB", bShape, B);
      const sA = tA.view;
      const sB = tB.view;
      const acc = T.alloc_local([M, N], "float32", {
        name: "acc",
        layout: T.layout.wgmma_tile_layout("D", M, N, "float32"),
      });
      if (c.blocked) {
        const tid = T.cuda.thread_idx("x");
        const bar = T.alloc_shared([1], "uint64", { name: "bar" });
        T.if_(tid.eq(0), () => {
          T.ptx.mbarrier.init(bar.sub(0), 1);
          T.ptx.fence.mbarrier_init();
        });
        T.cuda.cta_sync();
        T.if_(tid.eq(0), () => {
          const bytes = 2 * K * (c.rs ? N : M + N);
          T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), bytes);
          T.tile.copy_async(tB.dst, tB.src, { mbar: bar.sub(0) });
          if (!c.rs) T.tile.copy_async(tA.dst, tA.src, { mbar: bar.sub(0) });
        });
        T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      } else {
        T.tile.wg.copy_async(sB, B);
        if (!c.rs) T.tile.wg.copy_async(sA, A);
        T.ptx.cp.async_.commit_group();
        T.ptx.cp.async_.wait_group(0);
        T.ptx.fence.proxy_async();
        T.cuda.cta_sync();
      }
      if (!c.overwrite) T.tile.wg.zero(acc);
      if (c.rs) {
        const a = T.alloc_local([M, K], dt, {
          name: "a",
          layout: T.layout.wgmma_tile_layout("A", M, K, dt),
        });
        T.tile.wg.copy(a, A);
        T.tile.wg.gemm_async(acc, a, sB, { transB: bk, accum: !c.overwrite });
      } else {
        T.tile.wg.gemm_async(acc, sA, sB, {
          transA: c.aMNMajor ?? false,
          transB: bk,
          accum: !c.overwrite,
        });
      }
      T.ptx.wgmma.wait_group(0);
      T.tile.wg.copy(C, acc);
    },
  );
}

/** Inputs in [-1, 1) from a fixed LCG. */
function values(n: number, seed: number): Float32Array {
  return Float32Array.from({ length: n }, uniformFrom(seed));
}

/**
 * Run case `c` on `dev` and return the worst error as a fraction of 2^-20 · Σ|a·b| (the wgmma
 * bound: its accumulation order and internal precision are unspecified) against a float64
 * product of the inputs as rounded to the dtype; ≤ 1 passes.
 */
export function runGemmAsync(c: GemmAsyncCase, dev: DeviceLike, fn = gemmAsyncKernel(c)): number {
  const { M, N, K, dtype } = c;
  const bk = c.bKMajor ?? true;
  const run = compile(fn, { target: "cuda", arch: "sm_90a" });
  const am = c.aMNMajor ?? false;
  const ha = tensor(values(M * K, 7), { shape: am ? [K, M] : [M, K], dtype, device: dev });
  const hb = tensor(values(N * K, 11), { shape: bk ? [N, K] : [K, N], dtype, device: dev });
  const hc = tensor.zeros([M, N], "float32", dev);
  run(ha, hb, hc);
  const a = ha.toArray() as Float32Array;
  const b = hb.toArray() as Float32Array;
  const got = hc.toArray() as Float32Array;
  let worst = 0;
  for (let r = 0; r < M; r++) {
    for (let q = 0; q < N; q++) {
      let s = 0;
      let mag = 0;
      for (let p = 0; p < K; p++) {
        const x = a[am ? p * M + r : r * K + p]! * b[bk ? q * K + p : p * N + q]!;
        s += x;
        mag += Math.abs(x);
      }
      const bound = mag * 2 ** -20;
      const err = Math.abs(got[r * N + q]! - s);
      worst = Math.max(worst, err === 0 ? 0 : err / (bound || Number.MIN_VALUE));
    }
  }
  for (const x of [ha, hb, hc]) x.dispose();
  return worst;
}
