// A float64 reference of gemm() (packages/kernels/src/gemm) for the simulator tests
// (test/kernels-gemm*.test.ts) and the GPU tests (test/gpu/gemm.test.ts): inputs as the device
// holds them (rounded to their dtypes), the product and the epilogue in float64, and the bound
// each element of D must meet.
//
// The bound of element (i, j), from the kernel's arithmetic (kernel.ts, epilogue.ts):
//   S    = |α·s|·Σ_x |a_ix·b_xj| + |β·C_ij| + |bias_j|    (s = scaleA·scaleB, 1 without scales)
//   pre  = (k + 8)·2^-24·S    float32 accumulation of k products (at most k roundings of partial
//                             sums, each ≤ 2^-24 of a sum ≤ Σ|a·b|) and ≤ 8 float32 roundings of
//                             the epilogue's steps (scale, α, β·C, bias)
//   act  = relu: pre; gelu: 1.2·pre + 2^-10·|g| (g the reference's GELU before the residual;
//          tanh.approx's relative error 2^-10.987, PTX ISA; the slope of GELU and SiLU is below
//          1.2); silu: 1.2·pre + 2^-20·|g| (ex2.approx, then a rounded division)
//   post = act + 2^-24·(|g| + |residual_ij|)   the residual's add
//   then half an ulp of D's dtype at |ref| + post (round to nearest), and D's smallest
//   subnormal for ties near zero.
// Block scales (float8, DeepSeek-V3's: sA [m, ⌈k/128⌉], sB [⌈n/128⌉, ⌈k/128⌉]): the product is
// Σ_kb sA[i, kb]·sB[⌊j/128⌋, kb]·Σ_{x in kb} a_ix·b_xj, Σ|a·b| becomes Σ_kb |sA·sB|·Σ_{x in kb}
// |a_ix·b_xj|, and pre gains 3 roundings per K block (sA·sB, then the fma into the accumulator;
// 3 leaves room for a separate multiply and add): (k + 8 + 3·⌈k/128⌉)·2^-24·S.
// With float8 inputs on a GPU the tensor cores keep about 13 fraction bits while they add
// (core's wgmmaFp8F32Bound: 33·2^(⌊log2 max term⌋ − 13) + 2^-24·|sum| per m64nNk32 instruction,
// the accumulator's value before it one of the terms): the GPU test passes `fp8Gpu`, which adds
// that bound for each k32 step of the element, its accumulator term the exact partial sum since
// the last promotion (128-wide K-tiles: gemm()'s default and block scales; all of K so far with
// `fastAccum`), times |α·s| (and the K block's scales).
import { wgmmaFp8F32Bound } from "@tirx-ts/core";
import { compile, tensor, type DeviceLike, type DeviceTensor } from "tirx-ts";
import { blockScaleShapes, makeGemm, type GemmKernels, type GemmSizes } from "@tirx-ts/kernels";
import { uniformFrom, type Uniform } from "./lcg.js";

/** A float dtype of D or of an epilogue tensor. */
export type Float = "float32" | "float16" | "bfloat16";

/** The operands and options of one gemm case, as host arrays (the device tensors' values). */
export interface GemmCase {
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly transA?: boolean;
  readonly transB?: boolean;
  readonly alpha?: number;
  readonly beta?: number;
  readonly activation?: "relu" | "gelu" | "silu";
  /** scaleA · scaleB (1 without scales). */
  readonly scale?: number;
  /** Float8: one accumulator over all of K (gemm()'s fastAccum) instead of promoted K-tiles. */
  readonly fastAccum?: boolean;
  readonly outDtype: Float;
}

/** Host values of the case's tensors (each as the device holds it). */
export interface GemmHost {
  readonly a: ArrayLike<number>;
  readonly b: ArrayLike<number>;
  readonly c?: ArrayLike<number>;
  readonly bias?: ArrayLike<number>;
  readonly residual?: ArrayLike<number>;
  /** Block scales of a [m, ⌈k/128⌉] and of b [⌈n/128⌉, ⌈k/128⌉] (float8's "block" mode). */
  readonly sa?: ArrayLike<number>;
  readonly sb?: ArrayLike<number>;
}

/** A device tensor of `shape` and `dtype` with values from `rnd` (rounded by the device). */
export function randomTensor(
  shape: readonly number[],
  dtype: string,
  dev: DeviceLike,
  rnd: Uniform,
): DeviceTensor & Disposable {
  const x = new Float32Array(shape.reduce((p, e) => p * e, 1));
  rnd.fill(x);
  return tensor(x, {
    shape: [...shape],
    dtype: dtype as "float32",
    device: dev,
  });
}

/** The float64 GELU of PyTorch's approximate="tanh". */
const gelu = (v: number): number =>
  0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v * v * v)));
const act = (v: number, a: GemmCase["activation"]): number =>
  a === "relu"
    ? Math.max(v, 0)
    : a === "gelu"
      ? gelu(v)
      : a === "silu"
        ? v / (1 + Math.exp(-v))
        : v;

/** Significand bits (without the implicit one) and the smallest subnormal of each float dtype. */
const FORMAT: Readonly<Record<Float, { bits: number; tiny: number }>> = {
  float32: { bits: 23, tiny: 2 ** -149 },
  float16: { bits: 10, tiny: 2 ** -24 },
  bfloat16: { bits: 7, tiny: 2 ** -133 },
};

/** Half an ulp of `dt` at magnitude `x` (and its smallest subnormal). */
function halfUlp(x: number, dt: Float): number {
  const f = FORMAT[dt];
  if (x === 0) return f.tiny;
  return 2 ** (Math.floor(Math.log2(x)) - f.bits - 1) + f.tiny;
}

/**
 * The reference D [m, n] (float64) of `c` on `h`, and each element's bound (see the file's
 * header; `fp8Gpu` for float8 inputs on a GPU). Only the rows in `rows` and the columns in
 * `cols` (default all; other elements stay 0).
 */
export function gemmReference(
  c: GemmCase,
  h: GemmHost,
  opts: {
    readonly fp8Gpu?: boolean;
    readonly rows?: readonly number[];
    readonly cols?: readonly number[];
  } = {},
): { readonly ref: Float64Array; readonly bound: Float64Array } {
  const { m, n, k } = c;
  const ref = new Float64Array(m * n);
  const bound = new Float64Array(m * n);
  const as = Math.abs((c.alpha ?? 1) * (c.scale ?? 1));
  const beta = c.beta ?? 1;
  const rows = opts.rows ?? Array.from({ length: m }, (_, i) => i);
  const cols = opts.cols ?? Array.from({ length: n }, (_, j) => j);
  const kBlocks = Math.ceil(k / 128);
  const blockScale = (i: number, j: number, x: number): number =>
    h.sa && h.sb
      ? h.sa[i * kBlocks + Math.floor(x / 128)]! *
        h.sb[Math.floor(j / 128) * kBlocks + Math.floor(x / 128)]!
      : 1;
  // Float8's promotions (block scales: sA·sB, then an fma; per-tensor: an add): 3 roundings per
  // 128-wide K block.
  const perBlock = (h.sa && h.sb) || (opts.fp8Gpu && !c.fastAccum) ? 3 * kBlocks : 0;
  const chunk = new Array<number>(32).fill(0);
  const [aStride, bStride] = [c.transA ? m : 1, c.transB ? 1 : n];
  for (const i of rows) {
    const aRow = c.transA ? i : i * k;
    for (const j of cols) {
      const bCol = c.transB ? j * k : j;
      let dot = 0;
      let mag = 0;
      // The tensor cores' truncation (fp8Gpu), in units of the products: per k32 step.
      let tc = 0;
      // One K block (128, or all of K without block scales) at a time, its scale applied once.
      const step = h.sa && h.sb ? 128 : k;
      for (let x0 = 0; x0 < k; x0 += step) {
        const s = blockScale(i, j, x0);
        const x1 = Math.min(k, x0 + step);
        for (let x = x0; x < x1; x++) {
          const p = h.a[aRow + x * aStride]! * h.b[bCol + x * bStride]! * s;
          dot += p;
          mag += Math.abs(p);
        }
      }
      if (opts.fp8Gpu) {
        // The raw products of each k32 wgmma, the accumulator restarting at each 128-wide K-tile
        // (its sum promoted, and scaled by the K block's scales) unless fastAccum.
        let acc = 0;
        for (let x0 = 0; x0 < k; x0 += 32) {
          const n32 = Math.min(32, k - x0);
          for (let e = 0; e < n32; e++) {
            const x = x0 + e;
            chunk[e] = h.a[aRow + x * aStride]! * h.b[bCol + x * bStride]!;
          }
          const part = n32 === 32 ? chunk : chunk.slice(0, n32);
          tc += Math.abs(blockScale(i, j, x0)) * wgmmaFp8F32Bound(acc, part);
          for (const p of part) acc += p;
          if (!c.fastAccum && (x0 + 32) % 128 === 0) acc = 0;
        }
      }
      let v = dot * (c.alpha ?? 1) * (c.scale ?? 1);
      let S = as * mag;
      if (h.c) {
        // β = 0 reads no C (gemm()'s epilogue, as cuBLAS).
        if (beta !== 0) {
          v += beta * h.c[i * n + j]!;
          S += Math.abs(beta * h.c[i * n + j]!);
        }
      }
      if (h.bias) {
        v += h.bias[j]!;
        S += Math.abs(h.bias[j]!);
      }
      let err = (k + 8 + perBlock) * 2 ** -24 * S;
      err += as * tc;
      const g = act(v, c.activation);
      if (c.activation === "gelu") err = 1.2 * err + 2 ** -10 * Math.abs(g);
      else if (c.activation === "silu") err = 1.2 * err + 2 ** -20 * Math.abs(g);
      let out = g;
      if (h.residual) {
        out += h.residual[i * n + j]!;
        err += 2 ** -24 * (Math.abs(g) + Math.abs(h.residual[i * n + j]!));
      }
      ref[i * n + j] = out;
      bound[i * n + j] = err + halfUlp(Math.abs(out) + err, c.outDtype);
    }
  }
  return { ref, bound };
}

/**
 * The worst error of `got` against the reference, as a fraction of each element's bound (≤ 1
 * passes), with the element that reaches it; only the rows in `rows` and the columns in `cols`
 * (default all). A non-finite element on either side counts 0 when both are the same (NaN and
 * NaN, or one infinity), else Infinity.
 */
export function gemmWorst(
  got: ArrayLike<number>,
  r: { readonly ref: Float64Array; readonly bound: Float64Array },
  n: number,
  rows?: readonly number[],
  cols?: readonly number[],
): { readonly ratio: number; readonly at: string } {
  let ratio = 0;
  let at = "none";
  const all = rows ?? Array.from({ length: r.ref.length / n }, (_, i) => i);
  const allCols = cols ?? Array.from({ length: n }, (_, j) => j);
  for (const i of all) {
    for (const j of allCols) {
      const e = i * n + j;
      const [g, want] = [got[e]!, r.ref[e]!];
      // A non-finite value on either side must be the same on both (NaN for NaN, an infinity of
      // the same sign); |g − NaN| would compare false with every ratio and pass unseen.
      const q =
        Number.isFinite(g) && Number.isFinite(want)
          ? Math.abs(g - want) / r.bound[e]!
          : g === want || (Number.isNaN(g) && Number.isNaN(want))
            ? 0
            : Infinity;
      if (q > ratio) {
        ratio = q;
        at = `D[${i}, ${j}] = ${got[e]}, reference ${r.ref[e]}, bound ${r.bound[e]}`;
      }
    }
  }
  return { ratio, at };
}

/** One gemm() call to check: sizes, dtypes of the tensors it passes, options. */
export interface GemmSpec extends GemmCase {
  readonly dtype: "float16" | "bfloat16" | "float8_e4m3" | "float8_e5m2";
  readonly dtypeB?: GemmSpec["dtype"];
  readonly c?: Float;
  readonly bias?: Float;
  readonly residual?: Float;
  /** scaleA and scaleB (float32 [1] tensors); `scale` is set from them. */
  readonly scales?: readonly [number, number];
  /**
   * Float8 block scales instead: scaleA [m, ⌈k/128⌉] and scaleB [⌈n/128⌉, ⌈k/128⌉], float32,
   * random in [0.25, 4).
   */
  readonly blockScales?: boolean;
  readonly config?: import("@tirx-ts/kernels").GemmConfig;
  readonly seed?: number;
}

/**
 * Run `gemm()` for `s` on `dev` (inputs uniform in [-1, 1), epilogue tensors too) and compare D
 * with {@link gemmReference} on `rows` and `cols` (default all): the worst error as a fraction of
 * the bound.
 * With `again`, gemm() is called a second time on the same inputs and that D is returned too.
 */
export function checkGemm(
  gemm: typeof import("@tirx-ts/kernels").gemm,
  dev: DeviceLike,
  s: GemmSpec,
  opts: {
    readonly rows?: readonly number[];
    readonly cols?: readonly number[];
    readonly fp8Gpu?: boolean;
    readonly again?: boolean;
  } = {},
): {
  readonly ratio: number;
  readonly at: string;
  readonly d: DeviceTensor;
  readonly again?: DeviceTensor;
} {
  const rnd = uniformFrom(s.seed ?? 5);
  const { m, n, k } = s;
  const a = randomTensor(s.transA ? [k, m] : [m, k], s.dtype, dev, rnd);
  const b = randomTensor(s.transB ? [n, k] : [k, n], s.dtypeB ?? s.dtype, dev, rnd);
  const C = s.c ? randomTensor([m, n], s.c, dev, rnd) : undefined;
  const bias = s.bias ? randomTensor([n], s.bias, dev, rnd) : undefined;
  const residual = s.residual ? randomTensor([m, n], s.residual, dev, rnd) : undefined;
  const scale = (x: number) =>
    tensor(Float32Array.of(x), { shape: [1], dtype: "float32", device: dev });
  const kBlocks = Math.ceil(k / 128);
  const srnd = uniformFrom((s.seed ?? 5) + 1, 0.25, 4);
  const sa = s.blockScales ? randomTensor([m, kBlocks], "float32", dev, srnd) : undefined;
  const sb = s.blockScales
    ? randomTensor([Math.ceil(n / 128), kBlocks], "float32", dev, srnd)
    : undefined;
  const call = () =>
    gemm(a, b, {
      outDtype: s.outDtype,
      ...(s.transA !== undefined ? { transA: s.transA } : {}),
      ...(s.transB !== undefined ? { transB: s.transB } : {}),
      ...(s.alpha !== undefined ? { alpha: s.alpha } : {}),
      ...(s.beta !== undefined ? { beta: s.beta } : {}),
      ...(s.activation !== undefined ? { activation: s.activation } : {}),
      ...(s.fastAccum !== undefined ? { fastAccum: s.fastAccum } : {}),
      ...(C ? { c: C } : {}),
      ...(bias ? { bias } : {}),
      ...(residual ? { residual } : {}),
      ...(s.scales ? { scaleA: scale(s.scales[0]), scaleB: scale(s.scales[1]) } : {}),
      ...(sa && sb ? { scaleA: sa, scaleB: sb } : {}),
      ...(s.config ? { config: s.config } : {}),
    });
  const d = call();
  // The same call again on the same inputs (for a check that two calls give the same bytes).
  const again = opts.again ? call() : undefined;
  const host = (t: DeviceTensor | undefined) => (t ? (t.toArray() as Float32Array) : undefined);
  const h: GemmHost = {
    a: host(a)!,
    b: host(b)!,
    ...(C ? { c: host(C)! } : {}),
    ...(bias ? { bias: host(bias)! } : {}),
    ...(residual ? { residual: host(residual)! } : {}),
    ...(sa && sb ? { sa: host(sa)!, sb: host(sb)! } : {}),
  };
  const c: GemmCase = s.scales ? { ...s, scale: Math.fround(s.scales[0] * s.scales[1]) } : s;
  const r = gemmReference(c, h, opts);
  return { ...gemmWorst(host(d)!, r, n, opts.rows, opts.cols), d, ...(again ? { again } : {}) };
}

/**
 * Run makeGemm(`s`)'s kernels themselves on `dev`, for what gemm() does not take (`ctas`, the
 * persistent grid's size): A and B uniform in [-1, 1) from `seed` (stored as transA / transB
 * say), block scales (`scales: "block"`, as given: A's [m, ⌈k/128⌉], B's [⌈n/128⌉, ⌈k/128⌉])
 * uniform in [0.25, 4) from seed + 1; with split-K the float32 workspace, then the finishing
 * kernel. Compared with {@link gemmReference} on every element.
 * @returns the worst error as a fraction of the bound, with where, and the built kernels.
 * @throws Error for sizes this runner does not feed: an epilogue tensor (c, bias, residual),
 *   per-tensor scales, or A's block scales MN-major (scaleLoad "tma" / "shared" with ⌈k/128⌉
 *   not a multiple of 4).
 */
export function checkMakeGemm(
  dev: DeviceLike,
  s: GemmSizes,
  seed: number,
): { readonly ratio: number; readonly at: string; readonly built: GemmKernels } {
  const { m, n, k } = s;
  const block = s.scales === "block";
  const mnScales =
    block &&
    s.config.scaleLoad !== undefined &&
    s.config.scaleLoad !== "global" &&
    Math.ceil(k / 128) % 4 !== 0;
  if (s.c || s.bias || s.residual || s.scales === true || s.scales === "tensor" || mnScales) {
    throw new Error("checkMakeGemm feeds A, B and block scales as given only");
  }
  const built = makeGemm(s);
  const rnd = uniformFrom(seed);
  const a = randomTensor(s.transA ? [k, m] : [m, k], s.dtype, dev, rnd);
  const b = randomTensor(s.transB ? [n, k] : [k, n], s.dtypeB ?? s.dtype, dev, rnd);
  const srnd = uniformFrom(seed + 1, 0.25, 4);
  const shapes = blockScaleShapes(m, n, k);
  const scales = block
    ? [
        randomTensor([...shapes.a], "float32", dev, srnd),
        randomTensor([...shapes.b], "float32", dev, srnd),
      ]
    : [];
  const fp8 = s.dtype.startsWith("float8");
  const outDtype = s.outDtype ?? (fp8 ? "bfloat16" : (s.dtype as Float));
  const d = tensor.zeros([m, n], outDtype, dev);
  if (built.finish) {
    const w = tensor.zeros([m, n], "float32", dev);
    compile(built.main, { target: "cuda" })(a, b, w, ...scales);
    compile(built.finish, { target: "cuda" })(w, d);
  } else {
    compile(built.main, { target: "cuda" })(a, b, d, ...scales);
  }
  const host = (t: DeviceTensor) => t.toArray() as Float32Array;
  const c: GemmCase = {
    m,
    n,
    k,
    outDtype,
    ...(s.transA !== undefined ? { transA: s.transA } : {}),
    ...(s.transB !== undefined ? { transB: s.transB } : {}),
    ...(s.alpha !== undefined ? { alpha: s.alpha } : {}),
    ...(s.activation !== undefined ? { activation: s.activation } : {}),
  };
  const [sa, sb] = scales;
  const r = gemmReference(c, {
    a: host(a),
    b: host(b),
    ...(sa && sb ? { sa: host(sa), sb: host(sb) } : {}),
  });
  return { ...gemmWorst(host(d), r, n), built };
}
