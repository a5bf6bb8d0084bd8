// How the value of a thread iter is read off its axis's coordinate: the iters of one axis are
// digits of the coordinate (TIRx docs, "Tensor Layout": the coordinate is the sum of each iter's
// value times its stride, plus the offset), and threads whose coordinate no values give hold
// nothing (lanes 24..31 of each warp under S[(4, 24) : (1@warpid, 1@laneid)]).
import type { LayoutAxis } from "../ir/tile-layout.js";

/** A thread iter as a digit: its extent and stride on its axis. */
export interface Digit {
  readonly extent: number;
  readonly stride: number;
}

/**
 * The parts of a thread axis's coordinate that are coordinates of their own (PTX ISA, "Thread
 * hierarchy": a warp is 32 consecutive threads, a warpgroup 4 consecutive warps): tid's lane
 * (mod 32) and its thread in the warpgroup (mod 128), tid_in_wg's lane, warpid's warp in the
 * warpgroup (mod 4). A digit below such a boundary is read within it, so the next digit may
 * start at the boundary whatever this one's stride: `S[(4, 3, 10) : (1@warpid, 10@laneid,
 * 1@laneid)]` is 10:1, 3:10, 4:32 on tid, where 32 is no multiple of 10.
 */
const FIELDS: Partial<Record<LayoutAxis, readonly number[]>> = {
  tid: [32, 128],
  tid_in_wg: [32],
  warpid: [4],
};

/**
 * How the value of iter `all[i]` (one axis's iters by increasing stride) is read off `c`, the
 * coordinate less the axis's offset:
 * - `mod`: `(c / stride) % modulus`. The modulus is the extent when the next iter's stride is a
 *   multiple of stride × extent (mixed-radix digits; the top iter too), else the digit's radix,
 *   next stride / stride, whose values from the extent up hold nothing (`exact` false): 24:1
 *   beside 4:32 on tid is `tid % 32`, lanes 24..31 idle.
 * - `field`: `(c % field) / stride` when the next iter's stride is no multiple of this one's but
 *   starts at a field boundary of the axis ({@link FIELDS}) that this iter stays below; values
 *   up to (field − 1) / stride, those from the extent up holding nothing.
 * undefined when no such reading exists: a stride that is not positive, an iter that overlaps
 * the next (its stride below stride × extent), or a next stride that is neither a multiple of
 * this one's nor past a field boundary that it is a multiple of.
 */
export type DigitRead =
  | { readonly kind: "mod"; readonly modulus: number; readonly exact: boolean }
  | { readonly kind: "field"; readonly field: number };

/** See {@link DigitRead}. */
export function digitRead(
  all: readonly Digit[],
  i: number,
  axis: LayoutAxis,
): DigitRead | undefined {
  const x = all[i]!;
  if (x.stride <= 0) return undefined;
  const reach = x.stride * x.extent;
  const next = all[i + 1];
  if (!next) return { kind: "mod", modulus: x.extent, exact: true };
  if (next.stride < reach) return undefined;
  if (next.stride % reach === 0) return { kind: "mod", modulus: x.extent, exact: true };
  if (next.stride % x.stride === 0) {
    return { kind: "mod", modulus: next.stride / x.stride, exact: false };
  }
  const field = (FIELDS[axis] ?? []).find((f) => reach <= f && f <= next.stride);
  if (field !== undefined && next.stride % field === 0) return { kind: "field", field };
  return undefined;
}

/** Whether the value {@link digitRead} gives is below the extent on every thread. */
export function exactRead(r: DigitRead): boolean {
  return r.kind === "mod" && r.exact;
}

/**
 * The first iter of `all` (by increasing stride) that {@link digitRead} cannot read, or -1.
 */
export function unreadDigit(all: readonly Digit[], axis: LayoutAxis): number {
  return all.findIndex((_, i) => digitRead(all, i, axis) === undefined);
}
