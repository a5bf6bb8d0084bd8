import { dtypeBytes, FP8_NAN_BITS, fp8Bits, fp8Value, type DType } from "@tirx-ts/core";
import { bf16Bits, bf16Value, f16Bits, f16Value } from "./float.js";

/**
 * Element encodings in memory: little-endian bytes with each dtype's exact bits. Stores of NaN
 * write the canonical NaN of PTX arithmetic (0x7fff..., all mantissa bits set); float8 NaN is
 * written 0x7f (numeric/fp8.ts). A float8 value in a register is always one of its format's
 * values (loads and `cvt.rn.satfinite` make them), so a store writes its exact code.
 */
export interface NumCodec {
  readonly wide: false;
  load(dv: DataView, addr: number): number;
  store(dv: DataView, addr: number, v: number): void;
}

export interface BigCodec {
  readonly wide: true;
  load(dv: DataView, addr: number): bigint;
  store(dv: DataView, addr: number, v: bigint): void;
}

export type Codec = NumCodec | BigCodec;

const num = (
  load: (dv: DataView, a: number) => number,
  store: (dv: DataView, a: number, v: number) => void,
): NumCodec => ({ wide: false, load, store });

/** The codec of `dt`. */
export function codecOf(dt: DType): Codec {
  switch (dt) {
    case "bool":
      return num(
        (dv, a) => (dv.getUint8(a) !== 0 ? 1 : 0),
        (dv, a, v) => dv.setUint8(a, v ? 1 : 0),
      );
    case "int8":
      return num(
        (dv, a) => dv.getInt8(a),
        (dv, a, v) => dv.setInt8(a, v),
      );
    case "uint8":
      return num(
        (dv, a) => dv.getUint8(a),
        (dv, a, v) => dv.setUint8(a, v),
      );
    case "int16":
      return num(
        (dv, a) => dv.getInt16(a, true),
        (dv, a, v) => dv.setInt16(a, v, true),
      );
    case "uint16":
      return num(
        (dv, a) => dv.getUint16(a, true),
        (dv, a, v) => dv.setUint16(a, v, true),
      );
    case "int32":
      return num(
        (dv, a) => dv.getInt32(a, true),
        (dv, a, v) => dv.setInt32(a, v, true),
      );
    case "uint32":
    case "float16x2": // packed: a register value is its 32 bits, lane 0 in the low half
    case "bfloat16x2":
      return num(
        (dv, a) => dv.getUint32(a, true),
        (dv, a, v) => dv.setUint32(a, v, true),
      );
    case "float16":
      return num(
        (dv, a) => f16Value(dv.getUint16(a, true)),
        (dv, a, v) => dv.setUint16(a, f16Bits(v), true),
      );
    case "bfloat16":
      return num(
        (dv, a) => bf16Value(dv.getUint16(a, true)),
        (dv, a, v) => dv.setUint16(a, bf16Bits(v), true),
      );
    case "float32":
      return num(
        (dv, a) => dv.getFloat32(a, true),
        (dv, a, v) => (v !== v ? dv.setUint32(a, 0x7fffffff, true) : dv.setFloat32(a, v, true)),
      );
    case "float64":
      return num(
        (dv, a) => dv.getFloat64(a, true),
        (dv, a, v) =>
          v !== v ? dv.setBigUint64(a, 0x7fffffffffffffffn, true) : dv.setFloat64(a, v, true),
      );
    case "float8_e4m3":
      return num(
        (dv, a) => fp8Value(dv.getUint8(a), "e4m3"),
        (dv, a, v) => dv.setUint8(a, v !== v ? FP8_NAN_BITS : fp8Bits(v, "e4m3")),
      );
    case "float8_e5m2":
      return num(
        (dv, a) => fp8Value(dv.getUint8(a), "e5m2"),
        (dv, a, v) => dv.setUint8(a, v !== v ? FP8_NAN_BITS : fp8Bits(v, "e5m2")),
      );
    case "int64":
      return {
        wide: true,
        load: (dv, a) => dv.getBigInt64(a, true),
        store: (dv, a, v) => dv.setBigInt64(a, v, true),
      };
    case "uint64":
      return {
        wide: true,
        load: (dv, a) => dv.getBigUint64(a, true),
        store: (dv, a, v) => dv.setBigUint64(a, v, true),
      };
    default: {
      // A vector (float32x4, float16x8, …): its register bits as a bigint, lane 0 low, moved
      // unchanged (ld/st.v2/.v4 move bits; NaN payloads included).
      const words = dtypeBytes(dt) / 4;
      return {
        wide: true,
        load: (dv, a) => {
          let bits = 0n;
          for (let w = words - 1; w >= 0; w--)
            bits = (bits << 32n) | BigInt(dv.getUint32(a + 4 * w, true));
          return bits;
        },
        store: (dv, a, v) => {
          for (let w = 0; w < words; w++, v >>= 32n)
            dv.setUint32(a + 4 * w, Number(v & 0xffffffffn), true);
        },
      };
    }
  }
}
