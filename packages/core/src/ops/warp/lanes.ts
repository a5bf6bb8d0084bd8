import type { SimValue, WarpCall } from "../op.js";

/** `mask` as hex text for messages (`0x0000ffff`). */
export const hex = (mask: number): string => `0x${(mask >>> 0).toString(16).padStart(8, "0")}`;

/** The lanes set in `mask`, as text (`3, 5, 7` or `0..15`). */
export function laneList(mask: number): string {
  const out: number[] = [];
  for (let l = 0; l < 32; l++) if ((mask >>> l) & 1) out.push(l);
  const first = out[0]!;
  const contiguous = out.length > 2 && out[out.length - 1]! - first === out.length - 1;
  return contiguous ? `${first}..${out[out.length - 1]!}` : out.join(", ");
}

/** Bit mask of the executing lanes of a warp call. */
export function executingMask(w: WarpCall): number {
  let m = 0;
  for (const l of w.lanes) m |= 1 << l;
  return m >>> 0;
}

/**
 * The member-mask contract of a `.sync` warp instruction (PTX ISA, shfl.sync / vote.sync /
 * bar.warp.sync): every executing lane passes the same mask, names itself in it, and every
 * non-exited lane the mask names executes the instruction. Each broken rule is a TX6011 hazard.
 * @param maskOf the member mask lane `l` passes (read from an operand, or a fixed mask).
 * @returns the mask of the first executing lane (what the simulator goes on with).
 */
export function checkMembers(w: WarpCall, maskOf: (lane: number) => number): number {
  const lanes = w.lanes;
  const first = lanes[0]!;
  const mask = maskOf(first) >>> 0;
  for (const l of lanes) {
    const ml = maskOf(l) >>> 0;
    if (ml !== mask) {
      w.hazard(
        `lanes pass different member masks: lane ${first} passes ${hex(mask)}, lane ${l} passes ${hex(ml)}`,
      );
      break;
    }
  }
  const exec = executingMask(w);
  const outside = exec & ~mask;
  if (outside !== 0) {
    w.hazard(
      `lane ${laneList(outside)} executes it but is not named in member mask ${hex(mask)} (undefined in PTX)`,
    );
  }
  const missing = (mask & w.present & ~exec) >>> 0;
  if (missing !== 0) {
    w.hazard(
      `member mask ${hex(mask)} names lane ${laneList(missing)}, which does not execute it (inactive lanes; undefined in PTX)`,
    );
  }
  return mask;
}

/** The shuffle modes of `shfl.sync` (PTX ISA, shfl.sync). */
export type ShflMode = "idx" | "up" | "down" | "bfly";

/**
 * The `c` operand of `shfl.sync` for a logical warp of `width` lanes (CUDA's `width`):
 * segment mask `32 - width` in bits 12..8, clamp 31 (idx, down, bfly) or 0 (up) in bits 4..0.
 */
export function shflC(mode: ShflMode, width: number): number {
  return ((32 - width) << 8) | (mode === "up" ? 0 : 31);
}

/**
 * The source lane of `lane` for `shfl.sync.mode` with operands `b` and `c`, per the PTX ISA
 * pseudocode: a source outside the lane's segment (or past the clamp) is the lane itself.
 */
export function shflSource(mode: ShflMode, lane: number, b: number, c: number): number {
  const bval = b & 31;
  const cval = c & 31;
  const segmask = (c >>> 8) & 31;
  const maxLane = (lane & segmask) | (cval & ~segmask);
  const minLane = lane & segmask;
  let j: number;
  let pval: boolean;
  switch (mode) {
    case "up":
      j = lane - bval;
      pval = j >= maxLane;
      break;
    case "down":
      j = lane + bval;
      pval = j <= maxLane;
      break;
    case "bfly":
      j = lane ^ bval;
      pval = j <= maxLane;
      break;
    case "idx":
      j = minLane | (bval & ~segmask);
      pval = j <= maxLane;
      break;
  }
  return pval ? j : lane;
}

/**
 * Run one `shfl.sync` over a warp: each executing lane gets `value(src)` of its source lane.
 * A source lane that does not execute the shuffle or is not in the member mask gives an
 * undefined value on the GPU: TX6011, and the simulator goes on with the lane's own value.
 */
export function shuffle(
  w: WarpCall,
  mode: ShflMode,
  mask: number,
  value: (lane: number) => SimValue,
  b: (lane: number) => number,
  c: number,
  out: (lane: number, v: SimValue) => void,
): void {
  const exec = executingMask(w);
  const vals = new Map<number, SimValue>();
  for (const l of w.lanes) vals.set(l, value(l));
  for (const l of w.lanes) {
    const j = shflSource(mode, l, b(l), c);
    if (j !== l && !(((exec & mask) >>> j) & 1)) {
      w.hazard(
        `lane ${l} reads lane ${j}, which ${(exec >>> j) & 1 ? `is not in member mask ${hex(mask)}` : "does not execute it"}; the value is undefined`,
      );
      out(l, vals.get(l)!);
      continue;
    }
    out(l, vals.get(j)!);
  }
}
