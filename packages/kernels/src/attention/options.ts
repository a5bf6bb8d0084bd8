// The option checks the FlashAttention forward and backward builders share: the error kind, and
// the heads and mask options (kvHeads, window, causal) both take alike.
import { TirxError, showValue } from "@tirx-ts/core";
import { T, type ExprLike, type PrimExpr } from "@tirx-ts/dsl";

/** The heads and mask options of a FlashAttention builder's sizes (FlashAttentionSizes). */
export interface HeadsAndWindow {
  readonly heads: number;
  readonly kvHeads?: number;
  readonly causal?: boolean;
  readonly window?: readonly [number, number];
  readonly scale?: number;
  readonly scaleAtLaunch?: boolean;
  readonly negativeScale?: boolean;
}

/**
 * The magnitude a window offset may take in a build: the kernels add offsets to row and key
 * indices in int32 (PTX s32 arithmetic), which 2^30 plus any sequence of fewer than 2^30 rows
 * keeps in range. attention() first clamps an offset past the sequences to what it means
 * ({@link clampWindow}).
 */
export const WINDOW_LIMIT = 2 ** 30;

/**
 * `window` [left, right] with each offset that reaches past the sequences replaced by one that
 * means the same for every query of every sequence of at most `seqQ` queries and `seqK` keys
 * (query i of a sequence of lenQ ≤ seqQ queries and lenK ≤ seqK keys sees keys
 * i + lenK − lenQ − left … i + lenK − lenQ + right): left ≥ seqK leaves no key out on the left
 * (−1, unbounded), right ≥ seqQ none on the right (−1); an offset below −(seqQ + seqK) hides
 * every key as −(seqQ + seqK) does. Anything but two integers is returned as given (the builder
 * refuses it, TX9001).
 * @example clampWindow([2147483647, 0], 128, 200); // [-1, 0]
 */
export function clampWindow(window: unknown, seqQ: number, seqK: number): unknown {
  if (!Array.isArray(window) || window.length !== 2 || !window.every(Number.isInteger)) {
    return window;
  }
  const [left, right] = window as [number, number];
  const far = -(seqQ + seqK);
  const clamp = (x: number, past: number): number =>
    x >= past ? -1 : x < -1 ? Math.max(x, far) : x;
  return [clamp(left, seqK), clamp(right, seqQ)];
}

/** The largest finite float32, (2 − 2^-23) · 2^127. */
const FLT_MAX = 3.4028234663852886e38;

/**
 * Why `scale` is not a softmax scale the kernels take, or undefined: it must be a finite number
 * whose product with log2 e is finite and not 0 in float32 (the kernels compute exp(x · scale)
 * as exp2(x · scale · log2 e) with that product a float32 value, a constant or a launch
 * argument, after setting masked logits to −inf, or +inf for a negative scale).
 */
export function scaleProblem(scale: unknown): string | undefined {
  if (typeof scale !== "number" || !Number.isFinite(scale)) {
    return `scale is a finite number, got ${showValue(scale)}`;
  }
  // Masked logits are ∓inf before the scaling by c = scale · log2 e: c = 0 (a scale of 0, or
  // one that rounds to 0 in float32) would make them NaN.
  if (Math.fround(scale * Math.LOG2E) === 0) {
    return `scale · log2 e is 0 in float32 (masked logits are ±inf before the scaling, and 0 · inf is NaN), got scale ${showValue(scale)}; for a uniform softmax, give q of zeros`;
  }
  if (!Number.isFinite(Math.fround(scale * Math.LOG2E))) {
    return `scale ${scale} overflows float32 once multiplied by log2 e (the kernels compute exp2(x · scale · log2 e) in float32): |scale| is at most ${FLT_MAX / Math.LOG2E}`;
  }
  return undefined;
}

/**
 * The launch arguments of a softmax scale, for kernels built with `scaleAtLaunch`: `scale` and
 * `scaleLog2` = scale · log2 e, each rounded once to float32 from the double (the bits a
 * build-time scale gives its constants, so both builds compute the same). `negative` is the
 * build's `negativeScale`: the sign its kernels were built for.
 * @throws TirxError TX9001 (kernels/config) for a scale that {@link scaleProblem} rejects, or
 *   whose sign is not the build's (a kernel built for a positive launch scale masks logits to
 *   −inf before the scaling and takes c · rowmax(S) as the running max, right for c > 0 only;
 *   one built with `negativeScale` masks to +inf and takes c · rowmin(S), right for c < 0
 *   only), each message starting with `who`.
 */
export function launchScale(
  scale: number,
  who: string,
  negative = false,
): { scale: number; scaleLog2: number } {
  const problem = scaleProblem(scale);
  if (problem) throw configError(`${who}: ${problem}`);
  if (negative ? !(scale < 0) : !(scale > 0)) {
    throw configError(
      negative
        ? `${who}: a kernel built with scaleAtLaunch and negativeScale takes a negative scale, got ${showValue(scale)}; build without negativeScale for a positive one`
        : `${who}: a kernel built with scaleAtLaunch takes a positive scale, got ${showValue(scale)}; build with negativeScale for a negative one`,
    );
  }
  return { scale: Math.fround(scale), scaleLog2: Math.fround(scale * Math.LOG2E) };
}

/**
 * For sizes `s` built with `scaleAtLaunch`: the sign the kernels assume for the launch scale, −1
 * with `negativeScale`, else 1. The kernels choose by it the value of a masked logit (−inf, or
 * +inf for a negative scale, so that the scaled logit is −inf either way) and the running max
 * (c · rowmax(S), or c · rowmin(S)), as a build-time scale's own sign chooses them.
 */
export function launchScaleSign(s: HeadsAndWindow): 1 | -1 {
  return s.negativeScale === true ? -1 : 1;
}

/**
 * The window `[left, right]` (−1: unbounded; causal is [−1, 0]) as offsets between a query and
 * the keys it sees, bottom-right aligned as FlashAttention's: query q sees key k when
 * k − rightOff ≤ q ≤ k + leftOff (undefined: unbounded), rightOff = shift + right, leftOff =
 * left − shift, `shift` = seq_k − seq_q (a number for static lengths, else the runtime value:
 * a varlen sequence's lenK − lenQ, a dynamic build's seq_k − seq_q).
 */
export function windowOffsets(
  left: number,
  right: number,
  shift: ExprLike,
): { rightOff: ExprLike | undefined; leftOff: ExprLike | undefined } {
  const rightOff = right === -1 ? undefined : plus(shift, right);
  const leftOff = left === -1 ? undefined : minus(left, shift);
  return { rightOff, leftOff };
}

/** a + n, folded where a is a number and kept as a where n is 0. */
export const plus = (a: ExprLike, n: number): ExprLike =>
  typeof a === "number" ? a + n : n === 0 ? a : T.add(a, n);

/** Whether any of the conditions `ps` (at least one) holds: their `or`. */
export const anyOf = (ps: readonly PrimExpr[]): PrimExpr => ps.reduce((a, p) => a.or(p));

/** n − a, folded where a is a number. */
export const minus = (n: number, a: ExprLike): ExprLike =>
  typeof a === "number" ? n - a : T.sub(n, a);

/** TX9001 (kernels/config): sizes or options a kernel builder does not offer. */
export function configError(message: string): TirxError {
  return new TirxError("TX9001", message);
}

/**
 * Check `kvHeads` (a positive integer dividing `heads`; default `heads`), `window` (two
 * integers of magnitude at most {@link WINDOW_LIMIT}, not given with `causal`) and `scale`
 * ({@link scaleProblem}), each error's message starting with `who` (e.g.
 * "flash_attention"), and return the KV heads.
 * @throws TirxError TX9001 (kernels/config) naming the option and the value given.
 */
export function checkHeadsAndWindow(s: HeadsAndWindow, who: string): number {
  const kvHeads = s.kvHeads ?? s.heads;
  if (!Number.isInteger(kvHeads) || kvHeads < 1 || s.heads % kvHeads !== 0) {
    throw configError(
      `${who}: kvHeads must be a positive integer dividing heads (${s.heads}), got ${kvHeads}`,
    );
  }
  if (s.window !== undefined) {
    const w = s.window;
    if (!Array.isArray(w) || w.length !== 2 || !w.every((x) => Number.isInteger(x))) {
      throw configError(
        `${who}: window is [left, right], two integers (-1: unbounded), got ${showValue(w)}`,
      );
    }
    if (s.causal) {
      throw configError(`${who}: give causal or window, not both (causal is window [-1, 0])`);
    }
    if (w.some((x) => Math.abs(x) > WINDOW_LIMIT)) {
      throw configError(
        `${who}: window offsets are at most 2^30 in magnitude (the kernel adds them to indices in int32), got ${showValue(w)}; -1 leaves a side unbounded (attention() clamps an offset past the sequences itself)`,
      );
    }
  }
  if (s.scaleAtLaunch !== undefined && typeof s.scaleAtLaunch !== "boolean") {
    throw configError(`${who}: scaleAtLaunch is a boolean, got ${showValue(s.scaleAtLaunch)}`);
  }
  if (s.negativeScale !== undefined && typeof s.negativeScale !== "boolean") {
    throw configError(`${who}: negativeScale is a boolean, got ${showValue(s.negativeScale)}`);
  }
  if (s.negativeScale === true && s.scaleAtLaunch !== true) {
    throw configError(
      `${who}: negativeScale is the sign of a launch-time scale: give it with scaleAtLaunch (a build-time scale carries its own sign)`,
    );
  }
  if (s.scaleAtLaunch === true && s.scale !== undefined) {
    throw configError(
      `${who}: give scale (a build-time constant) or scaleAtLaunch (a launch argument), not both`,
    );
  }
  if (s.scale !== undefined) {
    const problem = scaleProblem(s.scale);
    if (problem) throw configError(`${who}: ${problem}`);
  }
  return kvHeads;
}
