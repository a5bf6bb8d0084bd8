// The flash-attention tests' run on the simulator against float64, shared by the files that
// check makeFlashAttention's builds (flash-attention, flash-attention-192).
import { expect } from "vitest";
import { sim } from "tirx-ts";
import {
  checkFlashAttention,
  checkFlashAttentionVarlen,
  makeFlashAttention,
  type FlashAttentionSizes,
} from "../../examples/flash_attention.js";

/**
 * Runs the kernel of `s` on the simulator against the float64 reference (checkFlashAttention; a
 * varlen `s` with sequence b of `lensQ[b]` queries and `lensK[b]` keys:
 * checkFlashAttentionVarlen), expects its `ok` (within the bound, no reports) and returns its
 * summary.
 */
export function simulated(
  s: FlashAttentionSizes,
  lensQ?: readonly number[],
  lensK?: readonly number[],
): string {
  const f = makeFlashAttention(s);
  const r =
    lensQ === undefined || lensK === undefined
      ? checkFlashAttention(sim(), f, s)
      : checkFlashAttentionVarlen(sim(), f, s, lensQ, lensK);
  expect(r.ok, r.summary).toBe(true);
  return r.summary;
}
