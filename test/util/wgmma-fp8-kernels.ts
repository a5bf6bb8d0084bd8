// Kernels and the reference of float8 wgmma (m64nNk32, SS, K-major): one warpgroup computes a
// 64 × N tile from float8 A and B staged in shared memory in the canonical K-major layouts, for
// test/wgmma-fp8.test.ts (simulator) and test/gpu/wgmma-fp8.test.ts (GPU).
import { fp8Value, type PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { storeAccumulators } from "../wgmma/fragment.js";
import { roundTo } from "../diff/reference.js";
import { lcg } from "./lcg.js";

export type F8 = "float8_e4m3" | "float8_e5m2";

/** A float8 wgmma configuration of the test. */
export interface Fp8Wgmma {
  readonly n: number;
  readonly a: F8;
  readonly b: F8;
  readonly acc: "float32" | "float16";
  /** TMA-numbered swizzle of both tiles: 0 none (core matrices), 1 32B, 2 64B. */
  readonly swizzle: 0 | 1 | 2;
}

/**
 * One warpgroup computes D (64 × n) = A (64 × K) · Bᵀ (B n × K), K = 32 one-byte elements per
 * swizzle row (32B: one k32 step; 64B: K = 64, two steps at byte offsets 0 and 32 of the row;
 * none: K = 32 in two 8 × 16-byte core matrices along K, LBO 128). Element (r, k) of a tile sits
 * at logical byte (r >> 3)·SBO + (r & 7)·W + k swizzled (W the row bytes), and at
 * (r >> 3)·SBO + (k >> 4)·LBO + (r & 7)·16 + (k & 15) in the core-matrix layout (PTX ISA,
 * "Shared Memory Matrix Layout", K-major, with 1-byte elements: a k32 step is the 32 bytes a
 * k16 step of a 2-byte type spans).
 */
export function fp8WgmmaKernel(o: Fp8Wgmma): { fn: PrimFunc; K: number } {
  const K = o.swizzle === 2 ? 64 : 32;
  const W = K;
  const n = o.n;
  const fn = T.function(
    `wg_fp8_${o.a}_${o.b}_${o.acc}_${n}_${o.swizzle}`,
    { A: T.Tensor([64, K], o.a), B: T.Tensor([n, K], o.b), D: T.Tensor([64, n], o.acc) },
    ({ A, B, D }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
      const tid = T.cuda.thread_idx("x");
      const layout =
        o.swizzle === 0 ? {} : { layout: T.swizzle_mode(o.swizzle === 2 ? "64B" : "32B") };
      const sA = T.alloc_shared([64 * K], o.a, { name: "sA", align: 1024, ...layout });
      const sB = T.alloc_shared([n * K], o.b, { name: "sB", align: 1024, ...layout });
      const LBO = 128;
      const SBO = o.swizzle === 0 ? 256 : 8 * W;
      const at = (r: ReturnType<typeof tid.add>, k: ReturnType<typeof tid.add>) =>
        o.swizzle === 0
          ? r.floordiv(8).mul(SBO).add(k.floordiv(16).mul(LBO)).add(r.mod(8).mul(16)).add(k.mod(16))
          : r.floordiv(8).mul(SBO).add(r.mod(8).mul(W)).add(k);
      for (const i of T.range((64 * K) / 128)) {
        const e = tid.add(i.mul(128));
        sA.set([at(e.floordiv(K), e.mod(K))], A.get([e.floordiv(K), e.mod(K)]));
      }
      for (const i of T.range((n * K) / 128)) {
        const e = tid.add(i.mul(128));
        sB.set([at(e.floordiv(K), e.mod(K))], B.get([e.floordiv(K), e.mod(K)]));
      }
      T.ptx.fence.proxy_async();
      T.cuda.cta_sync();
      const acc = T.alloc_local([n / 2], o.acc, { name: "acc" });
      T.ptx.wgmma.fence();
      for (let kk = 0; kk < K / 32; kk++) {
        const dA = T.ptx.wgmma.encode_matrix_descriptor(sA.ptr([kk * 32]), LBO, SBO, o.swizzle);
        const dB = T.ptx.wgmma.encode_matrix_descriptor(sB.ptr([kk * 32]), LBO, SBO, o.swizzle);
        T.ptx.wgmma.mma_async(`m64n${n}k32`, o.a, acc, 0, dA, dB, {
          scale_d: kk === 0 ? 0 : 1,
          b_dtype: o.b,
          acc_dtype: o.acc,
        });
      }
      T.ptx.wgmma.commit_group();
      T.ptx.wgmma.wait_group(0);
      storeAccumulators(D, acc, T.cuda.thread_idx("x"), n);
    },
  );
  return { fn, K };
}

/** Finite values of `dt`, drawn from its codes by a seeded generator. */
export function fp8Values(dt: F8, count: number, seed: number): number[] {
  const fmt = dt === "float8_e4m3" ? "e4m3" : "e5m2";
  const next = lcg(seed);
  const out: number[] = [];
  while (out.length < count) {
    const v = fp8Value(next() >>> 24, fmt);
    if (Number.isFinite(v)) out.push(v);
  }
  return out;
}

/**
 * D = A·Bᵀ as the chain of k32 instructions computes it: each adds its exact sum (float64 is
 * exact here) to the accumulator and rounds once to `acc`, which holds D between instructions.
 */
export function fp8Reference(av: number[], bv: number[], n: number, K: number, acc: string) {
  const dt = acc === "float32" ? "float32" : "float16";
  const want: number[] = [];
  for (let i = 0; i < 64; i++) {
    for (let j = 0; j < n; j++) {
      let d = 0;
      for (let k0 = 0; k0 < K; k0 += 32) {
        let s = d;
        for (let k = k0; k < k0 + 32; k++) s += av[i * K + k]! * bv[j * K + k]!;
        d = roundTo(s, dt);
      }
      want.push(d);
    }
  }
  return want;
}

/**
 * T.tile.wg.gemm_async on float8: C [64, n] (float32) = A [64, K] · B [n, K]ᵀ, both loaded into
 * shared tiles of one swizzle row per row (`swizzle` 64B: K = 64, two k32 steps; 128B: K = 128,
 * four) by T.tile.wg.copy_async, C stored by T.tile.wg.copy.
 */
export function fp8GemmAsyncKernel(
  n: number,
  a: F8,
  b: F8,
  swizzle: "64B" | "128B",
): { fn: PrimFunc; K: number } {
  const K = swizzle === "64B" ? 64 : 128;
  const align = swizzle === "64B" ? 512 : 1024;
  const fn = T.function(
    `tile_fp8_${a}_${b}_${n}_${swizzle}`,
    { A: T.Tensor([64, K], a), B: T.Tensor([n, K], b), C: T.Tensor([64, n], "float32") },
    ({ A, B, C }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
      const sA = T.alloc_shared([64, K], a, { name: "sA", layout: T.swizzle_mode(swizzle), align });
      const sB = T.alloc_shared([n, K], b, { name: "sB", layout: T.swizzle_mode(swizzle), align });
      T.tile.wg.copy_async(sA, A);
      T.tile.wg.copy_async(sB, B);
      T.ptx.cp.async_.commit_group();
      T.ptx.cp.async_.wait_group(0);
      T.ptx.fence.proxy_async();
      T.cuda.cta_sync();
      const acc = T.alloc_local([64, n], "float32", {
        name: "acc",
        layout: T.layout.wgmma_tile_layout("D", 64, n, "float32"),
      });
      T.tile.wg.gemm_async(acc, sA, sB, { transB: true, accum: false });
      T.ptx.wgmma.wait_group(0);
      T.tile.wg.copy(C, acc);
    },
  );
  return { fn, K };
}
