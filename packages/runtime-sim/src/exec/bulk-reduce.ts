import { invariant, type BulkReduce } from "@tirx-ts/core";
import { bf16Bits, bf16Value, f16Bits, f16Value } from "../numeric/float.js";

/**
 * The element-wise update of a bulk reduction (PTX ISA, "cp.reduce.async.bulk"): `dst` (the
 * global tensor's bytes) at byte `at` and the `data.length` source bytes `data` (whole elements,
 * little-endian) make `dst[i] = dst[i] redOp data[i]` for each element i.
 */
export type BulkReducer = (dst: DataView, at: number, data: Uint8Array) => void;

/** One element's update: the new destination value from the old one and the source's. */
type Step<V> = (old: V, src: V) => V;

/**
 * The reducer of `r` (its operator and `.type`), computing each element as the instruction does:
 * - `.add` on `.u32`/`.s32`/`.u64` wraps; on `.f32`/`.f64` the sum is rounded once to nearest
 *   even (the float64 sum of two float32 values rounded to float32 is that: 53 ≥ 2·24 + 2);
 *   `.add.noftz` on `.f16`/`.bf16` rounds once to nearest even, subnormals kept (`.noftz`);
 * - `.min`/`.max` compare as the type's integers or half-precision values; a NaN operand gives
 *   the other one, two NaNs the canonical NaN (0x7fff), and -0 counts below +0 (the simulator's
 *   choice where the ISA's bulk reduction leaves it unsaid, as `min`/`max` do: PTX ISA, "min");
 * - `.inc`: `old >= src ? 0 : old + 1`; `.dec`: `old == 0 || old > src ? src : old - 1` (PTX
 *   ISA, "atom": .inc/.dec);
 * - `.and`/`.or`/`.xor` bitwise on 32 or 64 bits.
 */
export function bulkReducer(r: BulkReduce): BulkReducer {
  const { op, type } = r;
  switch (type) {
    case "f32":
      invariant(op === "add", `bulk reduction .${op}.f32`);
      return lanes(
        4,
        (d, a) => d.getFloat32(a, true),
        (d, a, v) => d.setFloat32(a, v, true),
        (o, s) => o + s,
      );
    case "f64":
      invariant(op === "add", `bulk reduction .${op}.f64`);
      return lanes(
        8,
        (d, a) => d.getFloat64(a, true),
        (d, a, v) => d.setFloat64(a, v, true),
        (o, s) => o + s,
      );
    case "f16":
    case "bf16": {
      const value = type === "f16" ? f16Value : bf16Value;
      const bits = type === "f16" ? f16Bits : bf16Bits;
      const step = halfStep(op, value, bits);
      return lanes(
        2,
        (d, a) => d.getUint16(a, true),
        (d, a, v) => d.setUint16(a, v, true),
        step,
      );
    }
    case "u64":
    case "s64":
    case "b64": {
      const signed = type === "s64";
      const get = signed
        ? (d: DataView, a: number) => d.getBigInt64(a, true)
        : (d: DataView, a: number) => d.getBigUint64(a, true);
      const set = (d: DataView, a: number, v: bigint) =>
        d.setBigUint64(a, BigInt.asUintN(64, v), true);
      return lanes(8, get, set, wideStep(op));
    }
    default: {
      const signed = type === "s32";
      const get = signed
        ? (d: DataView, a: number) => d.getInt32(a, true)
        : (d: DataView, a: number) => d.getUint32(a, true);
      return lanes(4, get, (d, a, v) => d.setUint32(a, v >>> 0, true), narrowStep(op));
    }
  }
}

/** Apply `step` to each `eb`-byte element, read and written through `get`/`set`. */
function lanes<V>(
  eb: number,
  get: (d: DataView, a: number) => V,
  set: (d: DataView, a: number, v: V) => void,
  step: Step<V>,
): BulkReducer {
  return (dst, at, data) => {
    const src = new DataView(data.buffer, data.byteOffset, data.byteLength);
    for (let i = 0; i < data.length; i += eb) set(dst, at + i, step(get(dst, at + i), get(src, i)));
  };
}

/** 32-bit integer steps (values as read: unsigned, or signed for .s32; stored modulo 2^32). */
function narrowStep(op: BulkReduce["op"]): Step<number> {
  switch (op) {
    case "add":
      return (o, s) => (o + s) | 0;
    case "min":
      return (o, s) => (s < o ? s : o);
    case "max":
      return (o, s) => (s > o ? s : o);
    case "inc":
      return (o, s) => (o >= s ? 0 : o + 1);
    case "dec":
      return (o, s) => (o === 0 || o > s ? s : o - 1);
    case "and":
      return (o, s) => o & s;
    case "or":
      return (o, s) => o | s;
    case "xor":
      return (o, s) => o ^ s;
  }
}

/** 64-bit integer steps (stored modulo 2^64). */
function wideStep(op: BulkReduce["op"]): Step<bigint> {
  switch (op) {
    case "add":
      return (o, s) => o + s;
    case "min":
      return (o, s) => (s < o ? s : o);
    case "max":
      return (o, s) => (s > o ? s : o);
    case "and":
      return (o, s) => o & s;
    case "or":
      return (o, s) => o | s;
    case "xor":
      return (o, s) => o ^ s;
    default:
      invariant(false, `bulk reduction .${op} on 64 bits`);
  }
}

/** Half-precision steps on bit patterns: `.add.noftz` rounded once, `.min`/`.max` (see bulkReducer). */
function halfStep(
  op: BulkReduce["op"],
  value: (bits: number) => number,
  bits: (x: number) => number,
): Step<number> {
  if (op === "add") return (o, s) => bits(value(o) + value(s));
  invariant(op === "min" || op === "max", `bulk reduction .${op} on 16-bit floats`);
  const less = op === "min";
  return (o, s) => {
    const x = value(o);
    const y = value(s);
    if (x !== x) return y !== y ? 0x7fff : s;
    if (y !== y) return o;
    if (x === y) {
      // ±0: -0 is the smaller one.
      const xNeg = (o & 0x8000) !== 0;
      const yNeg = (s & 0x8000) !== 0;
      return xNeg === yNeg ? o : xNeg === less ? o : s;
    }
    return x < y === less ? o : s;
  };
}
