// The pair-cast kernel of test/tile-cast-pair.test.ts (simulator) and test/gpu/tile-cast-pair.test.ts
// (GPU against the simulator): a float32 tile in the wgmma accumulator layout cast to float16 or
// bfloat16 by T.tile.wg.cast (cvt.rn.{f16x2,bf16x2}.f32 per pair of adjacent slots, core
// tile/cast-pair.ts) and slot by slot by the IR's scalar cast (one cvt.rn.{f16,bf16}.f32 each),
// over float32 inputs with every edge class.
import { T, compile, tensor, type DeviceLike, type PrimFunc } from "tirx-ts";
import { bf16Bits, f16Bits } from "@tirx-ts/core";
import { prng } from "../diff/values.js";

/** The 16-bit float dtypes a float32 tile casts to in pairs. */
export type Half = "float16" | "bfloat16";

/** The wgmma accumulator layout of a 64 × n float32 tile (T.tile.wg.gemm_async's C). */
export const dLayout = (n: number) => T.layout.wgmma_tile_layout("D", 64, n, "float32");

/**
 * X [64, n] float32 → O [2, 64, n] `dt`, one warpgroup: O[0] = T.tile.wg.cast of X in the wgmma
 * accumulator layout (the pair path: n / 4 pairs a thread), O[1] the same tile converted slot by
 * slot with the IR's scalar cast (`.cast(dt)`: one cvt.rn.{f16,bf16}.f32 each, the tile cast's
 * lowering before pairs). `n` a multiple of 8.
 */
export function accCast(dt: Half, n: number): PrimFunc {
  return T.function(
    `acc_cast_${dt}_${n}`,
    { X: T.Tensor([64, n], "float32"), O: T.Tensor([2, 64, n], dt) },
    ({ X, O }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
      const S = T.alloc_local([64, n], "float32", { name: "S", layout: dLayout(n) });
      const P = T.alloc_local([64, n], dt, { name: "P", layout: dLayout(n) });
      const Q = T.alloc_local([64, n], dt, { name: "Q", layout: dLayout(n) });
      T.tile.wg.copy(S, X);
      T.tile.wg.cast(P, S);
      const sf = S.flat();
      const qf = Q.flat();
      for (const i of T.unroll(n / 2)) qf.set([i], sf.get([i]).cast(dt));
      T.tile.wg.copy(O.sub(0), P);
      T.tile.wg.copy(O.sub(1), Q);
    },
  );
}

/**
 * `n` float32 inputs: edge values first (NaN, ±inf, ±0, float32 and 16-bit subnormals, ties of
 * float16's and bfloat16's rounding, values at and past their largest finite), then random 32-bit
 * patterns (every class: NaNs with payloads, subnormals, infinities).
 */
export function castInputs(n: number, seed: number): Float32Array {
  const edges = [
    0,
    -0,
    Infinity,
    -Infinity,
    NaN,
    2 ** -149, // float32's least subnormal
    -1e-40,
    2 ** -126,
    2 ** -24, // float16's least subnormal
    2 ** -25, // half of it: a tie, to 0 (even)
    3 * 2 ** -26, // past the tie: up to 2^-24
    -(2 ** -20),
    6.1e-5, // just below float16's least normal 2^-14
    1 + 2 ** -11, // float16 tie: to 1 (even)
    1 + 3 * 2 ** -11, // float16 tie: up to 1 + 2^-9
    2049, // float16 tie (spacing 2): to 2048
    2051, // to 2052
    1 + 2 ** -8, // bfloat16 tie: to 1
    1 + 3 * 2 ** -8, // bfloat16 tie: up to 1 + 2^-6
    257, // bfloat16 tie (spacing 2): to 256
    -259, // to -260
    65504, // float16's largest finite
    65519, // to 65504
    65520, // the tie past 65504: to +inf
    -65520,
    1e5, // float16 overflow
    3.4028234663852886e38, // float32's largest finite: bfloat16 +inf (past the tie)
    -3.3895313892515355e38, // bfloat16's largest finite, negated
    1 / 3,
    -2.5,
  ].map(Math.fround);
  const rnd = prng(seed);
  const bits = Uint32Array.from({ length: n }, () => Math.floor(rnd() * 2 ** 32));
  const x = new Float32Array(bits.buffer);
  x.set(edges);
  return x;
}

/** The 16-bit code of `x` rounded to nearest even in `dt` (NaN → 0x7fff). */
export const halfCode = (x: number, dt: Half): number =>
  dt === "float16" ? f16Bits(x) : bf16Bits(x);

/** True when 16-bit codes `a` and `b` of `dt` are equal or both NaN. */
export function sameHalf(a: number, b: number, dt: Half): boolean {
  const nan = (c: number): boolean =>
    dt === "float16"
      ? (c & 0x7c00) === 0x7c00 && (c & 0x3ff) !== 0
      : (c & 0x7f80) === 0x7f80 && (c & 0x7f) !== 0;
  return a === b || (nan(a) && nan(b));
}

/**
 * Run `accCast(dt, n)` on `dev` over `x` ([64, n]); the output's 16-bit codes, O[0] (pairs)
 * then O[1] (scalar), 2 · 64 · n of them.
 */
export function runAccCast(dev: DeviceLike, dt: Half, n: number, x: Float32Array): Uint16Array {
  const fn = accCast(dt, n);
  using X = tensor(x, { shape: [64, n], dtype: "float32", device: dev });
  using O = tensor.zeros([2, 64, n], dt, dev);
  compile(fn, { target: "cuda" })(X, O);
  return new Uint16Array(O.toBytes().buffer.slice(0));
}
