// The fused epilogue of the GEMM kernels: what happens to one float32 element of A·B between the
// accumulator and D, written once as a function of the element's row and column so that the
// main kernel (on its wgmma accumulators) and the split-K finishing kernel (on the float32
// workspace) apply the same instructions in the same order.
import { invariant, showValue } from "@tirx-ts/core";
import { T, type ExprLike, type PrimExpr, type TileView } from "@tirx-ts/dsl";
import { configError } from "../attention/options.js";

/** An activation of the epilogue. */
export type GemmActivation = "relu" | "gelu" | "silu";

/** The float dtypes the epilogue's tensors (C, bias, residual) and D may have. */
export type GemmFloat = "float32" | "float16" | "bfloat16";

/**
 * The epilogue of {@link makeGemm}, applied to each element v = (A·B)[r, c] in float32, in this
 * order (each step only when given):
 * 1. `scales` true or "tensor": v ·= scaleA · scaleB (two float32 kernel parameters [1]: FP8
 *    per-tensor scales, torch._scaled_mm's scale_a and scale_b); "block" (FP8 block scales,
 *    DeepSeek-V3's) is applied in the main loop instead (kernel.ts), not here;
 * 2. `alpha` (default 1): v ·= alpha;
 * 3. `c` (C's dtype; D's shape): v += beta · C[r, c] (`beta` default 1; β = 0 reads no C, so a
 *    NaN or Inf there does not reach D, as cuBLAS and torch.addmm);
 * 4. `bias` (its dtype; length n): v += bias[c];
 * 5. `activation`: "relu" max(v, 0) by `max.f32` (PTX ISA, max: a NaN operand gives the other,
 *    so NaN → 0, as CUDA's fmaxf; torch.relu keeps NaN); "gelu" the tanh approximation 0.5·v·(1 + tanh(√(2/π)·(v +
 *    0.044715·v³))) with `tanh.approx.f32` (PTX ISA, tanh: relative error 2^-10.987; PyTorch's
 *    gelu(approximate="tanh")); "silu" v / (1 + e^-v) with e^-v by `ex2.approx.ftz.f32` of
 *    −v·log2 e (CUDA's __expf) and a correctly rounded division;
 * 6. `residual` (its dtype; D's shape): v += residual[r, c];
 * 7. the conversion to D's dtype (round to nearest even).
 * Every step is float32 arithmetic rounded once (mul.rn / add.rn / div.rn).
 */
export interface GemmEpilogue {
  /** α (step 2), a constant of the kernel (not given with `alphaAtLaunch`). */
  readonly alpha?: number;
  /** β (step 3), a constant of the kernel (not given with `betaAtLaunch`). */
  readonly beta?: number;
  /**
   * α is a launch argument instead: the float32 scalar parameter `alpha` after the epilogue's
   * tensors (C, bias, residual, per-tensor scales), of the main kernel (of split-K's finishing
   * kernel instead), so that one kernel serves every α (gemm()'s build for α ≠ 1).
   */
  readonly alphaAtLaunch?: boolean;
  /**
   * β is a launch argument: the float32 parameter `beta`, after `alpha`'s place (with `c`). Such
   * a kernel reads C whatever β is: launched with β = 0, a NaN or Inf in C reaches D (0 · NaN);
   * only a build with the constant `beta: 0` reads no C (gemm() builds that one for β = 0).
   */
  readonly betaAtLaunch?: boolean;
  readonly c?: GemmFloat;
  readonly bias?: GemmFloat;
  readonly activation?: GemmActivation;
  readonly residual?: GemmFloat;
  /**
   * Float8 scales: true or "tensor" (per-tensor, float32 [1] each, step 1), or "block" (A's
   * float32 [m, ⌈k/128⌉] and B's float32 [⌈n/128⌉, ⌈k/128⌉], applied per 128-wide K block in
   * the main loop: makeGemm's header). Absent or false: none.
   */
  readonly scales?: boolean | "tensor" | "block";
}

/** The scaling of a spec: none, per-tensor (epilogue step 1) or per K block (the main loop). */
export function scaleMode(spec: GemmEpilogue): "none" | "tensor" | "block" {
  if (spec.scales === "block") return "block";
  return spec.scales === true || spec.scales === "tensor" ? "tensor" : "none";
}

/** The epilogue's tensors in a kernel (those its spec names). */
export interface EpilogueTensors {
  readonly C?: TileView;
  readonly bias?: TileView;
  readonly residual?: TileView;
  /** scaleA[0] · scaleB[0] (float32), read once per thread. */
  readonly scale?: PrimExpr;
  /** The kernel's float32 parameter `alpha` (a spec with `alphaAtLaunch`). */
  readonly alpha?: PrimExpr;
  /** The kernel's float32 parameter `beta` (a spec with `betaAtLaunch`). */
  readonly beta?: PrimExpr;
}

/**
 * Check a value of α or β (`name`): a finite number, finite in float32 too (the epilogue
 * multiplies in float32, where a larger one would be ±Inf). Undefined passes (the default).
 * @throws TirxError TX9001 (kernels/config) naming `name` and the value.
 */
export function checkEpilogueScalar(name: "alpha" | "beta", v: unknown): void {
  if (v === undefined) return;
  if (!(typeof v === "number" && Number.isFinite(v))) {
    throw configError(`gemm: ${name} is a finite number, got ${showValue(v)}`);
  }
  if (!Number.isFinite(Math.fround(v))) {
    throw configError(
      `gemm: ${name} ${v} is past float32's range (the epilogue computes in float32: |${name}| ≤ 3.4028234663852886e38)`,
    );
  }
}

/** The kernel's parameter α or β of a spec that takes it at launch. */
function launched(param: PrimExpr | undefined): PrimExpr {
  invariant(param !== undefined, "gemm epilogue: a launch scalar without its parameter");
  return param;
}

/** √(2/π), GELU's tanh-approximation constant. */
const GELU_K = Math.sqrt(2 / Math.PI);

/** `act(v)` in float32 (see {@link GemmEpilogue}, step 5). */
function activate(v0: PrimExpr, act: GemmActivation): PrimExpr {
  if (act === "relu") return T.max(v0, T.float32(0));
  // GELU and SiLU read v more than once: bound once, so that its loads (bias, C) and arithmetic
  // are emitted once and not once per use.
  const v = T.let_("v", v0);
  switch (act) {
    case "gelu": {
      // 0.5·v·(1 + tanh(√(2/π)·(v + 0.044715·v³))) as h + h·t, h = 0.5·v, t = tanh(v·w), w =
      // √(2/π) + (0.044715·√(2/π))·v²: 3 multiplies and 2 fma around tanh.approx (it was 7
      // rounded multiplies and adds, which ptxas does not contract).
      const w = T.fma(T.mul(v, v), GELU_K * 0.044715, GELU_K);
      const t = T.let_("t", T.tanh(T.mul(v, w), { approx: true }));
      const h = T.let_("h", T.mul(v, 0.5));
      return T.fma(h, t, h);
    }
    case "silu": {
      const e = T.exp(T.sub(T.float32(0), v), { approx: true });
      return T.div(v, T.add(e, 1));
    }
  }
}

/**
 * The epilogue value of element (r, c) from its float32 product `v` (see {@link GemmEpilogue}),
 * still float32: the caller converts it to D's dtype. `pre.bias`: the bias of column c as float32,
 * loaded by the caller (once for the rows it stores), instead of a load here.
 */
export function epilogueValue(
  v0: PrimExpr,
  r: ExprLike,
  c: ExprLike,
  spec: GemmEpilogue,
  x: EpilogueTensors,
  pre?: { readonly bias?: PrimExpr },
): PrimExpr {
  let v = v0;
  if (x.scale !== undefined) v = T.mul(v, x.scale);
  if (spec.alphaAtLaunch === true) v = T.mul(v, launched(x.alpha));
  else if (spec.alpha !== undefined && spec.alpha !== 1) v = T.mul(v, spec.alpha);
  // β = 0 reads no C (as cuBLAS and torch.addmm: a NaN or Inf in C does not reach D).
  if (x.C !== undefined && spec.beta !== 0) {
    const cv = x.C.get([r, c]).cast("float32");
    const beta = spec.betaAtLaunch === true ? launched(x.beta) : (spec.beta ?? 1);
    v = T.add(v, beta === 1 ? cv : T.mul(cv, beta));
  }
  if (x.bias !== undefined) v = T.add(v, pre?.bias ?? x.bias.get([c]).cast("float32"));
  if (spec.activation !== undefined) v = activate(v, spec.activation);
  if (x.residual !== undefined) v = T.add(v, x.residual.get([r, c]).cast("float32"));
  return v;
}
