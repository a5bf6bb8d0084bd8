// Whether two device tensors share memory, for the library calls' refusal of an output written
// over an input that other CTAs still read (a race: wrong data on the GPU, a hazard report on the
// simulator). Tensors are compared by what each runtime exposes, without importing the runtimes:
// a CUDA tensor's device address `ptr` (a bigint) and `nbytes`; a simulated tensor's `storage`
// (a Uint8Array view of its ArrayBuffer). Two distinct tensor objects over one allocation (a
// borrowed CUDA view, or Uint8Array views of one buffer) are compared by their byte ranges.
import { TirxError, type DeviceTensor } from "@tirx-ts/core";

/** A tensor's bytes: an address space (the ArrayBuffer, or "cuda" with the device), a range. */
interface Extent {
  readonly space: unknown;
  readonly start: bigint;
  readonly end: bigint;
}

/** `t`'s byte range in its address space, when its runtime exposes one (undefined otherwise). */
function extentOf(t: DeviceTensor): Extent | undefined {
  const x = t as { ptr?: unknown; storage?: unknown; disposed?: boolean };
  if (x.disposed === true) return undefined;
  let ptr: unknown;
  try {
    ptr = x.ptr;
  } catch {
    return undefined;
  }
  if (typeof ptr === "bigint") {
    return { space: t.device, start: ptr, end: ptr + BigInt(t.nbytes) };
  }
  let storage: unknown;
  try {
    storage = x.storage;
  } catch {
    return undefined;
  }
  if (storage instanceof Uint8Array) {
    const start = BigInt(storage.byteOffset);
    return { space: storage.buffer, start, end: start + BigInt(storage.byteLength) };
  }
  return undefined;
}

/**
 * How `x`'s memory relates to `y`'s: "same" (one object, or the same byte range), "overlap"
 * (some bytes in common), or "none" (also when a runtime exposes no address: a disposed tensor,
 * or one of a runtime without `ptr` or `storage`). Throws nothing.
 */
export function memoryRelation(x: DeviceTensor, y: DeviceTensor): "same" | "overlap" | "none" {
  if (x === y) return "same";
  const a = extentOf(x);
  const b = extentOf(y);
  if (!a || !b || a.space !== b.space) return "none";
  if (a.start === b.start && a.end === b.end) return "same";
  return a.start < b.end && b.start < a.end && a.start < a.end && b.start < b.end
    ? "overlap"
    : "none";
}

/**
 * Refuse outputs written over inputs, or over each other: for each output (role name, tensor)
 * and each input, an output that shares memory with the input is TX9002, unless the input's role
 * is in `inPlace` and the two are the very same memory (an elementwise in-place update, such as
 * gemm's D = α·AB + β·C with out = c, where each element of C is read by the thread that then
 * writes it). Two outputs that share memory are always TX9002.
 * @param who the call's name for the message, e.g. "gemm".
 * @throws TirxError TX9002 (kernels/tensors) naming both roles.
 */
export function refuseAliasing(
  who: string,
  outputs: readonly (readonly [string, DeviceTensor | undefined])[],
  inputs: readonly (readonly [string, DeviceTensor | undefined])[],
  inPlace: readonly string[] = [],
): void {
  const outs = outputs.filter((o): o is readonly [string, DeviceTensor] => o[1] !== undefined);
  for (const [oName, o] of outs) {
    for (const [iName, t] of inputs) {
      if (t === undefined) continue;
      const r = memoryRelation(o, t);
      if (r === "none" || (r === "same" && inPlace.includes(iName))) continue;
      const what = r === "same" ? `${oName} is ${iName}` : `${oName} overlaps ${iName} in memory`;
      const allowed =
        inPlace.length > 0
          ? ` (only ${inPlace.join(" or ")} may be updated in place, as the very same tensor)`
          : "";
      throw new TirxError(
        "TX9002",
        `${who}: ${what}: the output cannot be written over an input that other CTAs still read${allowed}; give another tensor, or leave ${oName} unset for a new one`,
      );
    }
  }
  for (let i = 0; i < outs.length; i++) {
    for (let j = i + 1; j < outs.length; j++) {
      const [n1, t1] = outs[i]!;
      const [n2, t2] = outs[j]!;
      if (memoryRelation(t1, t2) === "none") continue;
      throw new TirxError(
        "TX9002",
        `${who}: ${n1} and ${n2} share memory: each output needs its own tensor`,
      );
    }
  }
}
