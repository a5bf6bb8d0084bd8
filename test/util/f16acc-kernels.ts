// T.tile.warp.gemm with a float16 accumulator (mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16)
// and its judge against float64 host math within MMA_F16_BOUND, shared by the simulator test
// (test/tile-gemm-f16acc.test.ts) and the GPU differential case
// (test/gpu/mma-differential.test.ts): one warp loads A (M × K), B (K × N) and C (M × N, all
// float16) into mma_sync_tile_layout tiles, runs C += A · B and stores C.
import { MMA_F16_BOUND, MMA_FORMS, mmaFormApprox, mmaFormBound, type MmaForm } from "@tirx-ts/core";
import { T, compile, tensor, type DeviceLike, type PrimFunc } from "tirx-ts";
import { prng } from "../diff/values.js";

/** The op table's form `m16n8k16 f16 = f16·f16 + f16`, whose bound is MMA_F16_BOUND. */
export const F16_ACC_FORM: MmaForm = (() => {
  const f = MMA_FORMS.find((x) => x.shape === "m16n8k16" && x.a === "f16" && x.c === "f16");
  if (!f || mmaFormApprox(f) !== MMA_F16_BOUND) {
    throw new Error("MMA_FORMS has no m16n8k16 f16 → f16 form bounded by MMA_F16_BOUND");
  }
  return f;
})();

/** The float16-accumulator gemm kernel: C (M × N) += A (M × K) · B (K × N), one warp. */
export function f16AccGemm(m: number, n: number, k: number): PrimFunc {
  return T.function(
    `gemm_f16acc_${m}x${n}x${k}`,
    {
      A: T.Tensor([m, k], "float16"),
      B: T.Tensor([k, n], "float16"),
      C: T.Tensor([m, n], "float16"),
    },
    ({ A, B, C }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const L = T.layout.mma_sync_tile_layout;
      const a = T.alloc_local([m, k], "float16", { layout: L("A", "m16n8k16", "float16", m, k) });
      const b = T.alloc_local([k, n], "float16", { layout: L("B", "m16n8k16", "float16", k, n) });
      const c = T.alloc_local([m, n], "float16", { layout: L("C", "m16n8k16", "float16", m, n) });
      T.tile.warp.copy(a, A);
      T.tile.warp.copy(b, B);
      T.tile.warp.copy(c, C);
      T.tile.warp.gemm(c, a, b);
      T.tile.warp.copy(C, c);
    },
  );
}

/** Inputs (float16 values as the device holds them) and the C the kernel stored. */
export interface F16AccRun {
  readonly a: Float32Array;
  readonly b: Float32Array;
  readonly c0: Float32Array;
  readonly got: Float32Array;
}

/** Uniform values in [-1, 1) (rounded to float16 by the tensor). */
export function uniform(len: number, seed: number): Float32Array {
  const rnd = prng(seed);
  return Float32Array.from({ length: len }, () => rnd() * 2 - 1);
}

/**
 * Run `fn` (from {@link f16AccGemm}) on `dev` with uniform inputs of `seed`: A, B and the initial
 * C in [-1, 1), so |c| + Σ|a·b| ≤ 1 + K stays inside MMA_F16_BOUND's domain (≤ 65504).
 */
export function runF16AccGemm(
  fn: PrimFunc,
  m: number,
  n: number,
  k: number,
  dev: DeviceLike,
  seed: number,
): F16AccRun {
  const A = tensor(uniform(m * k, seed), { shape: [m, k], dtype: "float16", device: dev });
  const B = tensor(uniform(k * n, seed + 1), { shape: [k, n], dtype: "float16", device: dev });
  const C = tensor(uniform(m * n, seed + 2), { shape: [m, n], dtype: "float16", device: dev });
  const c0 = Float32Array.from(C.toArray() as ArrayLike<number>);
  compile(fn, { target: "cuda" })(A, B, C);
  const out: F16AccRun = {
    a: Float32Array.from(A.toArray() as ArrayLike<number>),
    b: Float32Array.from(B.toArray() as ArrayLike<number>),
    c0,
    got: Float32Array.from(C.toArray() as ArrayLike<number>),
  };
  for (const t of [A, B, C]) t.dispose();
  return out;
}

/** How a run compares with float64 host math: errors as fractions of each element's bound. */
export interface F16AccVerdict {
  readonly checked: number;
  /** Elements equal to the float64 sum rounded once to float16. */
  readonly exact: number;
  /** The largest |got − exact| / bound. */
  readonly worst: number;
  /** The first few elements outside their bound. */
  readonly bad: string[];
}

/** Round to the nearest float16 (ties to even), for the once-rounded count only. */
function toF16(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const e = Math.max(-14, Math.floor(Math.log2(Math.abs(x))));
  const q = 2 ** (e - 10);
  const r = x / q;
  const f = Math.floor(r);
  const d = r - f;
  const i = d > 0.5 || (d === 0.5 && f % 2 !== 0) ? f + 1 : f;
  return i * q;
}

/**
 * Judge `run.got` against the float64 `C + A·B`: the gemm issues one mma per 16-wide k step, in k
 * order, so element [r, q] goes through K / 16 instructions, each within MMA_F16_BOUND of its
 * exact `A·B + C` (core's `mmaFormBound` of the f16 form: 2^-10 · (|c| + Σ|a·b|) plus half a
 * float16 ulp of the result). The bound of the chain is the sum of the steps' bounds, each with
 * |c| and |result| raised by the bound so far (C is then the rounded running sum, not the exact).
 */
export function judgeF16Acc(run: F16AccRun, m: number, n: number, k: number): F16AccVerdict {
  let exact = 0;
  let worst = 0;
  const bad: string[] = [];
  for (let r = 0; r < m; r++) {
    for (let q = 0; q < n; q++) {
      let sum = run.c0[r * n + q]!;
      let bound = 0;
      for (let k0 = 0; k0 < k; k0 += 16) {
        const products: number[] = [];
        for (let p = k0; p < k0 + 16; p++) products.push(run.a[r * k + p]! * run.b[p * n + q]!);
        const next = products.reduce((s, x) => s + x, sum);
        bound += mmaFormBound(
          F16_ACC_FORM,
          Math.abs(sum) + bound,
          products,
          Math.abs(next) + bound,
        );
        sum = next;
      }
      const got = run.got[r * n + q]!;
      const err = Math.abs(got - sum);
      if (got === toF16(sum)) exact++;
      worst = Math.max(worst, err / bound);
      if (!(err <= bound) && bad.length < 3) {
        bad.push(`C[${r}, ${q}] = ${got}, float64 ${sum}, error ${err} > bound ${bound}`);
      }
    }
  }
  return { checked: m * n, exact, worst, bad };
}
