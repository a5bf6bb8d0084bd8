import {
  isPacked,
  laneCount,
  laneDType,
  laneRegisters,
  type PackedDType,
  type VectorDType,
  type VectorLane,
} from "../dtype.js";
import { bf16Bits, bf16Value, f16Bits, f16Value } from "./float.js";

/**
 * Lanes of the vector dtypes (dtype.ts) as the simulator holds them: a vector is its register bits
 * as one unsigned bigint, register 0 in the low 32 bits; a 32-bit lane fills a register, two
 * 16-bit lanes share one (lane 2k in the low half, as a packed pair). A float32 lane written from a
 * value is its IEEE bits with NaN as the canonical NaN 0x7fffffff (PTX arithmetic's NaN result);
 * a 16-bit lane's code is rounded to nearest even, NaN 0x7fff (numeric/float.ts).
 */

const f32 = new DataView(new ArrayBuffer(4));

/** The 32 (or 16) bits of the value `x` in a lane of `lane`. */
export function laneCode(x: number, lane: VectorLane): number {
  switch (lane) {
    case "float32":
      if (x !== x) return 0x7fffffff;
      f32.setFloat32(0, x);
      return f32.getUint32(0);
    case "int32":
    case "uint32":
      return x >>> 0;
    case "float16":
      return f16Bits(x);
    case "bfloat16":
      return bf16Bits(x);
  }
}

/** The value of the lane code `bits` (32 or 16 bits) of `lane`. */
export function codeValue(bits: number, lane: VectorLane): number {
  switch (lane) {
    case "float32":
      f32.setUint32(0, bits >>> 0);
      return f32.getFloat32(0);
    case "int32":
      return bits | 0;
    case "uint32":
      return bits >>> 0;
    case "float16":
      return f16Value(bits & 0xffff);
    case "bfloat16":
      return bf16Value(bits & 0xffff);
  }
}

/** The 32-bit registers of a vector's bits, register 0 first. */
export function vectorWords(v: bigint, count: number): number[] {
  const out = new Array<number>(count);
  for (let k = 0; k < count; k++, v >>= 32n) out[k] = Number(v & 0xffffffffn);
  return out;
}

/** A vector's bits from its 32-bit registers, register 0 first. */
export function wordsVector(words: readonly number[]): bigint {
  let v = 0n;
  for (let k = words.length - 1; k >= 0; k--) v = (v << 32n) | BigInt(words[k]! >>> 0);
  return v;
}

/** The register words of a pair (one number) or a vector (a bigint). */
export function wordsOf(v: number | bigint, dt: PackedDType | VectorDType): number[] {
  return typeof v === "bigint" ? vectorWords(v, laneRegisters(dt)) : [v >>> 0];
}

/** A pair's number or a vector's bigint from its register words. */
export function fromWords(
  words: readonly number[],
  dt: PackedDType | VectorDType,
): number | bigint {
  return isPacked(dt) ? words[0]! >>> 0 : wordsVector(words);
}

/** The lane values of a pair (a number) or a vector (a bigint), lane 0 first. */
export function lanesOf(v: number | bigint, dt: PackedDType | VectorDType): number[] {
  const lane = laneDType(dt);
  const words = wordsOf(v, dt);
  if (lane === "float16" || lane === "bfloat16") {
    return words.flatMap((w) => [codeValue(w & 0xffff, lane), codeValue(w >>> 16, lane)]);
  }
  return words.map((w) => codeValue(w, lane));
}

/** The pair's number or vector's bigint whose lanes have the values `xs` (lane 0 first). */
export function ofLanes(xs: readonly number[], dt: PackedDType | VectorDType): number | bigint {
  const lane = laneDType(dt);
  const n = laneCount(dt);
  const words: number[] = [];
  if (lane === "float16" || lane === "bfloat16") {
    for (let k = 0; k < n; k += 2) {
      words.push(((laneCode(xs[k + 1]!, lane) << 16) | laneCode(xs[k]!, lane)) >>> 0);
    }
  } else {
    for (let k = 0; k < n; k++) words.push(laneCode(xs[k]!, lane));
  }
  return fromWords(words, dt);
}
