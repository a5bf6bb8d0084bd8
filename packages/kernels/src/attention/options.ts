// The option checks the FlashAttention forward and backward builders share: the error kind, and
// the heads and mask options (kvHeads, window, causal) both take alike.
import { TirxError, showValue } from "@tirx-ts/core";
import { T, type ExprLike } from "@tirx-ts/dsl";

/** The heads and mask options of a FlashAttention builder's sizes (FlashAttentionSizes). */
export interface HeadsAndWindow {
  readonly heads: number;
  readonly kvHeads?: number;
  readonly causal?: boolean;
  readonly window?: readonly [number, number];
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
  const leftOff: ExprLike | undefined =
    left === -1 ? undefined : typeof shift === "number" ? left - shift : T.sub(left, shift);
  return { rightOff, leftOff };
}

/** a + n, folded where a is a number and kept as a where n is 0. */
export const plus = (a: ExprLike, n: number): ExprLike =>
  typeof a === "number" ? a + n : n === 0 ? a : T.add(a, n);

/** TX9001 (kernels/config): sizes or options a kernel builder does not offer. */
export function configError(message: string): TirxError {
  return new TirxError("TX9001", message);
}

/**
 * Check `kvHeads` (a positive integer dividing `heads`; default `heads`) and `window` (two
 * integers, not given with `causal`), each error's message starting with `who` (e.g.
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
  }
  return kvHeads;
}
