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
 * How the value of iter `all[i]` (one axis's iters by increasing stride, the digits of its
 * coordinate) is read off `c`, the coordinate less the axis's offset:
 * `((field ? c % field : c) / stride) % modulus` (no modulo where `modulus` is undefined).
 * Every higher iter's place must vanish from the reading, not only the next one's: `10:1` below
 * `3:10` and `4:32` on tid (`S[(4, 3, 10) : (1@warpid, 10@laneid, 1@laneid)]`) is
 * `(tid % 32) % 10`, where `tid % 10` would take 32 · warp mod 10 into the lane's digit.
 * - Without a field: every higher iter's stride is a multiple of this one's, and the modulus
 *   divides each of their quotients: the extent where it divides them all (mixed-radix digits;
 *   the top iter too), else their greatest common divisor when that reaches the extent, whose
 *   values from the extent up hold nothing (`exact` false): 24:1 beside 4:32 on tid is
 *   `tid % 32`, lanes 24..31 idle.
 * - Within a field (a warp or warpgroup boundary of the axis, {@link FIELDS}): when no such
 *   modulus exists, the first boundary at or past this iter's reach that every higher iter's
 *   stride either stays below (its reach too) or is a multiple of, the iters below it read as
 *   above among themselves; with none of them above this one, no modulo (values up to
 *   field / stride − 1, those from the extent up holding nothing).
 * undefined when no such reading exists: a stride that is not positive, an iter that overlaps
 * the next (its stride below stride × extent), or neither reading.
 */
export interface DigitRead {
  /** The boundary the coordinate is reduced modulo first; undefined for none. */
  readonly field?: number;
  /** The modulus after the division; undefined for none (the value stays below field / stride). */
  readonly modulus?: number;
  /** Whether the value is below the extent on every thread. */
  readonly exact: boolean;
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/**
 * The modulus reading iter `x` among `higher` (the iters above it that the reading sees), or
 * undefined: the extent when it divides every quotient of their strides by x's, else their gcd
 * when it reaches the extent; `top` (no modulo needed) when `higher` is empty.
 */
function modulusAmong(
  x: Digit,
  higher: readonly Digit[],
  top: number | undefined,
): { modulus?: number; exact: boolean } | undefined {
  if (higher.length === 0) {
    return top === undefined ? { modulus: x.extent, exact: true } : { exact: top <= x.extent };
  }
  if (higher.some((y) => y.stride % x.stride !== 0)) return undefined;
  const q = higher.map((y) => y.stride / x.stride);
  if (q.every((n) => n % x.extent === 0)) return { modulus: x.extent, exact: true };
  const g = q.reduce(gcd);
  return g >= x.extent ? { modulus: g, exact: false } : undefined;
}

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
  if (next && next.stride < reach) return undefined;
  const higher = all.slice(i + 1);
  const plain = modulusAmong(x, higher, undefined);
  if (plain) return plain;
  for (const field of FIELDS[axis] ?? []) {
    if (field < reach) continue;
    const inside = higher.filter((y) => y.stride < field);
    const outside = higher.filter((y) => y.stride >= field);
    if (inside.some((y) => y.stride * y.extent > field)) continue;
    if (outside.some((y) => y.stride % field !== 0)) continue;
    const read = modulusAmong(x, inside, Math.ceil(field / x.stride));
    if (read) return { field, ...read };
  }
  return undefined;
}

/** The value {@link digitRead}'s `read` gives for coordinate `c` (≥ 0) off stride `stride`. */
export function readDigit(c: number, stride: number, read: DigitRead): number {
  const v = Math.floor((read.field !== undefined ? c % read.field : c) / stride);
  return read.modulus !== undefined ? v % read.modulus : v;
}

/**
 * Whether the digits' readings of every coordinate in 0..extent − 1 that leaves each digit below
 * its extent rebuild that coordinate: then a thread whose digits are all in range holds elements,
 * and no comparison of the coordinate with the rebuilt one is needed to tell an owner.
 * False when a reading drops part of the coordinate (bits below the first stride or between
 * digits, values past the top) or a digit is unread.
 */
export function readsRebuild(all: readonly Digit[], axis: LayoutAxis, extent: number): boolean {
  const reads = all.map((_, i) => digitRead(all, i, axis));
  if (reads.some((r) => r === undefined)) return false;
  for (let c = 0; c < extent; c++) {
    let rebuilt = 0;
    let held = true;
    all.forEach((d, i) => {
      const v = readDigit(c, d.stride, reads[i]!);
      if (v >= d.extent) held = false;
      rebuilt += v * d.stride;
    });
    if (held && rebuilt !== c) return false;
  }
  return true;
}

/** Whether the value {@link digitRead} gives is below the extent on every thread. */
export function exactRead(r: DigitRead): boolean {
  return r.exact;
}

/**
 * The first iter of `all` (by increasing stride) that {@link digitRead} cannot read, or -1.
 */
export function unreadDigit(all: readonly Digit[], axis: LayoutAxis): number {
  return all.findIndex((_, i) => digitRead(all, i, axis) === undefined);
}
