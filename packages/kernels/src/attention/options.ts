// The option checks the FlashAttention forward and backward builders share: the error kind, and
// the heads and mask options (kvHeads, window, causal) both take alike.
import { TirxError, showValue } from "@tirx-ts/core";

/** The heads and mask options of a FlashAttention builder's sizes (FlashAttentionSizes). */
export interface HeadsAndWindow {
  readonly heads: number;
  readonly kvHeads?: number;
  readonly causal?: boolean;
  readonly window?: readonly [number, number];
}

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
