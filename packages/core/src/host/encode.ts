import { Float16Array, getFloat16, setFloat16 } from "@petamoriken/float16";
import { dtypeBits, dtypeBytes, dtypeKind, isFloat8, type DType } from "../dtype.js";
import { TirxError } from "../diagnostics.js";
import { showValue } from "../show.js";
import { fp8Bits, fp8Format, fp8Value } from "../numeric/fp8.js";
import { withArticle } from "../show.js";

/**
 * Host-side element encoding shared by every runtime: little-endian bytes with each dtype's
 * exact bits. float16 uses IEEE binary16 with round-to-nearest-even (@petamoriken/float16);
 * bfloat16 keeps the top 16 bits of the float32 after round-to-nearest-even; float8_e4m3 and
 * float8_e5m2 round once to nearest even and saturate as `cvt.rn.satfinite` does (numeric/fp8.ts:
 * NaN → 0x7f, ±inf and values beyond the largest finite → ±max); integers wrap; bool is one byte,
 * 0 or 1.
 */

const scratch = new DataView(new ArrayBuffer(8));

/** float32 bits → bfloat16 bits, round to nearest even (NaN stays a quiet NaN). */
export function float32ToBfloat16Bits(x: number): number {
  scratch.setFloat32(0, x, true);
  return bfloat16OfFloat32Bits(scratch.getUint32(0, true));
}

/** {@link float32ToBfloat16Bits} of the float32 whose bits are `u` (a uint32). */
function bfloat16OfFloat32Bits(u: number): number {
  if ((u & 0x7f800000) === 0x7f800000 && (u & 0x007fffff) !== 0)
    return ((u >>> 16) | 0x40) & 0xffff;
  const rounded = u + 0x7fff + ((u >>> 16) & 1);
  return (rounded >>> 16) & 0xffff;
}

/** bfloat16 bits → number. */
export function bfloat16BitsToNumber(bits: number): number {
  scratch.setUint32(0, (bits & 0xffff) << 16, true);
  return scratch.getFloat32(0, true);
}

/** Write one element of `dtype` at byte `off` of `dv`. Numbers for 64-bit ints are truncated toward zero. */
export function writeElement(
  dv: DataView,
  off: number,
  dtype: DType,
  v: number | bigint | boolean,
): void {
  switch (dtype) {
    case "bool":
      dv.setUint8(off, v ? 1 : 0);
      return;
    case "int8":
      dv.setInt8(off, Number(v));
      return;
    case "uint8":
      dv.setUint8(off, Number(v));
      return;
    case "int16":
      dv.setInt16(off, Number(v), true);
      return;
    case "uint16":
      dv.setUint16(off, Number(v), true);
      return;
    case "int32":
      dv.setInt32(off, Number(v), true);
      return;
    case "uint32":
    case "float16x2": // packed: the host value is the register's 32 bits (lane 0 low)
    case "bfloat16x2":
      dv.setUint32(off, Number(v), true);
      return;
    case "int64":
      dv.setBigInt64(off, typeof v === "bigint" ? v : BigInt(Math.trunc(Number(v))), true);
      return;
    case "uint64":
      dv.setBigUint64(
        off,
        BigInt.asUintN(64, typeof v === "bigint" ? v : BigInt(Math.trunc(Number(v)))),
        true,
      );
      return;
    case "float16":
      setFloat16(dv, off, Number(v), true);
      return;
    case "bfloat16":
      dv.setUint16(off, float32ToBfloat16Bits(Number(v)), true);
      return;
    case "float32":
      dv.setFloat32(off, Number(v), true);
      return;
    case "float64":
      dv.setFloat64(off, Number(v), true);
      return;
    case "float8_e4m3":
    case "float8_e5m2":
      dv.setUint8(off, fp8Bits(Number(v), fp8Format(dtype)));
      return;
    default: {
      // A vector: the host value is its bits as a bigint, lane 0 low (dtype.ts).
      let bits = BigInt.asUintN(dtypeBits(dtype), BigInt(v));
      for (let w = 0; w < dtypeBytes(dtype); w += 4, bits >>= 32n)
        dv.setUint32(off + w, Number(bits & 0xffffffffn), true);
      return;
    }
  }
}

/** Read one element of `dtype` at byte `off`: bigint for 64-bit ints, boolean for bool, else number. */
export function readElement(dv: DataView, off: number, dtype: DType): number | bigint | boolean {
  switch (dtype) {
    case "bool":
      return dv.getUint8(off) !== 0;
    case "int8":
      return dv.getInt8(off);
    case "uint8":
      return dv.getUint8(off);
    case "int16":
      return dv.getInt16(off, true);
    case "uint16":
      return dv.getUint16(off, true);
    case "int32":
      return dv.getInt32(off, true);
    case "uint32":
    case "float16x2":
    case "bfloat16x2":
      return dv.getUint32(off, true);
    case "int64":
      return dv.getBigInt64(off, true);
    case "uint64":
      return dv.getBigUint64(off, true);
    case "float16":
      return getFloat16(dv, off, true);
    case "bfloat16":
      return bfloat16BitsToNumber(dv.getUint16(off, true));
    case "float32":
      return dv.getFloat32(off, true);
    case "float64":
      return dv.getFloat64(off, true);
    case "float8_e4m3":
    case "float8_e5m2":
      return fp8Value(dv.getUint8(off), fp8Format(dtype));
    default: {
      // A vector: its bits as a bigint, lane 0 low.
      let bits = 0n;
      for (let w = dtypeBytes(dtype) - 4; w >= 0; w -= 4)
        bits = (bits << 32n) | BigInt(dv.getUint32(off + w, true));
      return bits;
    }
  }
}

/** Host values accepted for a tensor: a typed array, a plain array, or raw bytes. */
export type HostData = ArrayLike<number | bigint | boolean> | Uint8Array;

/**
 * Encode `data` (one value per element, row-major) as the bytes of a `dtype` tensor of `count`
 * elements. A Uint8Array is taken as raw bytes only when `dtype` is not uint8/int8/bool and
 * its length is count × element bytes. Integers wrap to their dtype's width; float16/bfloat16
 * round to nearest even; float8_e4m3/float8_e5m2 round to nearest even and saturate (NaN stays
 * NaN), as `cvt.rn.satfinite` does; a Uint8Array of count bytes for a float8 tensor is its raw
 * codes (as for every dtype but uint8/int8/bool).
 * @throws TirxError TX5007 when `data` is not array-like, the element count does not match, or an
 *   element is no value of
 *   `dtype`: not a number, bigint or boolean (a hole, undefined, a string), or for an integer
 *   dtype a fraction, NaN or ±Infinity (which no integer element can hold).
 */
export function encodeHost(data: HostData, dtype: DType, count: number): Uint8Array {
  const length: unknown =
    typeof data === "object" && data !== null ? (data as { length?: unknown }).length : undefined;
  if (typeof length !== "number" || !Number.isSafeInteger(length) || length < 0) {
    throw new TirxError(
      "TX5007",
      `tensor data must be a typed array or an array of ${count} values, got ${showValue(data)}`,
    );
  }
  const eb = dtypeBytes(dtype);
  if (data instanceof Uint8Array && (eb > 1 || isFloat8(dtype)) && data.length === count * eb) {
    return new Uint8Array(data);
  }
  if (data.length !== count) {
    throw new TirxError("TX5007", `expected ${count} elements of ${dtype}, got ${data.length}`);
  }
  checkElements(data, dtype);
  if ((dtype === "float16" || dtype === "bfloat16" || isFloat8(dtype)) && allNumbers(data)) {
    return dtype === "float16"
      ? encodeFloat16(data)
      : dtype === "bfloat16"
        ? encodeBfloat16(data)
        : encodeFloat8(data, fp8Format(dtype as "float8_e4m3" | "float8_e5m2"));
  }
  const out = new Uint8Array(count * eb);
  const dv = new DataView(out.buffer);
  for (let i = 0; i < count; i++) writeElement(dv, i * eb, dtype, data[i]!);
  return out;
}

/** Typed arrays whose elements are all integers. */
const INT_ARRAYS = [
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  BigInt64Array,
  BigUint64Array,
];

/**
 * Refuse an element that is no value of `dtype` (see {@link encodeHost}).
 * @throws TirxError TX5007 naming the first such element.
 */
function checkElements(data: HostData, dtype: DType): void {
  const integer = dtypeKind(dtype) !== "float" && dtype !== "bool";
  if (ArrayBuffer.isView(data) && (!integer || INT_ARRAYS.some((c) => data instanceof c))) return;
  for (let i = 0; i < data.length; i++) {
    const v: unknown = data[i];
    const t = typeof v;
    let why: string | undefined;
    if (t !== "number" && t !== "bigint" && t !== "boolean") {
      why = `is ${v === undefined && !(i in data) ? "a hole" : showValue(v)}, not a number`;
    } else if (integer && t === "number" && !Number.isInteger(v)) {
      why = `is ${String(v)}, which ${withArticle(dtype)} element cannot hold`;
    }
    if (why !== undefined) throw new TirxError("TX5007", `element ${i} of the data ${why}`);
  }
}

/** Whether every element of `data` is a number (typed arrays other than the BigInt ones are). */
function allNumbers(data: HostData): data is ArrayLike<number> {
  if (ArrayBuffer.isView(data))
    return !(data instanceof BigInt64Array || data instanceof BigUint64Array);
  for (let i = 0; i < data.length; i++) if (typeof data[i] !== "number") return false;
  return true;
}

/**
 * float16 bytes of `data` in one pass: the library's Float16Array constructor rounds each value to
 * nearest even like {@link writeElement} (about 40× faster than a setFloat16 call per element).
 */
function encodeFloat16(data: ArrayLike<number>): Uint8Array {
  const f = new Float16Array(data.length);
  const bits = new Uint16Array(f.buffer);
  const src = ArrayBuffer.isView(data) ? data : Float64Array.from(data);
  // Float16Array.set rounds each element exactly as setFloat16 does.
  f.set(src);
  return new Uint8Array(bits.buffer, bits.byteOffset, bits.byteLength);
}

/**
 * bfloat16 bytes of `data`: {@link float32ToBfloat16Bits} per element into a Uint16Array; a
 * Float32Array's elements are read as their bits directly (the same rounding, without a DataView
 * round trip per element).
 */
function encodeBfloat16(data: ArrayLike<number>): Uint8Array {
  const bits = new Uint16Array(data.length);
  if (data instanceof Float32Array) {
    const u = new Uint32Array(data.buffer, data.byteOffset, data.length);
    for (let i = 0; i < u.length; i++) bits[i] = bfloat16OfFloat32Bits(u[i]!);
  } else for (let i = 0; i < data.length; i++) bits[i] = float32ToBfloat16Bits(data[i]!);
  return new Uint8Array(bits.buffer);
}

/** float8 bytes of `data`: {@link fp8Bits} per element. */
function encodeFloat8(data: ArrayLike<number>, fmt: "e4m3" | "e5m2"): Uint8Array {
  const out = new Uint8Array(data.length);
  for (let i = 0; i < data.length; i++) out[i] = fp8Bits(data[i]!, fmt);
  return out;
}

/** float16 bits → float32 value, for all 65536 patterns (built on first use; 256 KiB). */
let f16Table: Float32Array | undefined;
function float16Table(): Float32Array {
  if (f16Table) return f16Table;
  const t = new Float32Array(65536);
  const dv = new DataView(new ArrayBuffer(2));
  for (let b = 0; b < 65536; b++) {
    dv.setUint16(0, b, true);
    t[b] = getFloat16(dv, 0, true);
  }
  return (f16Table = t);
}

/** The JS array type `toArray()` returns for each dtype. */
export type HostArray =
  | Float32Array
  | Float64Array
  | Int8Array
  | Int16Array
  | Int32Array
  | Uint8Array
  | Uint16Array
  | Uint32Array
  | BigInt64Array
  | BigUint64Array
  | number[];

/**
 * Decode tensor bytes into a host array: float16, bfloat16, float8_e4m3 and float8_e5m2 widen
 * exactly to Float32Array (float8 NaN codes to NaN),
 * bool decodes to Uint8Array of 0/1, 64-bit ints to BigInt64Array/BigUint64Array.
 */
export function decodeHost(bytes: Uint8Array, dtype: DType): HostArray {
  const eb = dtypeBytes(dtype);
  const n = bytes.length / eb;
  const buf = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  switch (dtype) {
    case "bool":
    case "uint8":
      return new Uint8Array(buf);
    case "int8":
      return new Int8Array(buf);
    case "int16":
      return new Int16Array(buf);
    case "uint16":
      return new Uint16Array(buf);
    case "int32":
      return new Int32Array(buf);
    case "uint32":
    case "float16x2":
    case "bfloat16x2":
      return new Uint32Array(buf);
    case "float32x2":
    case "float32x4":
    case "int32x2":
    case "int32x4":
    case "uint32x2":
    case "uint32x4":
    case "float16x4":
    case "float16x8":
    case "bfloat16x4":
    case "bfloat16x8":
      // A vector's 32-bit registers, in order (no tensor has a vector dtype: TX1027).
      return new Uint32Array(buf);
    case "int64":
      return new BigInt64Array(buf);
    case "uint64":
      return new BigUint64Array(buf);
    case "float32":
      return new Float32Array(buf);
    case "float64":
      return new Float64Array(buf);
    case "float16": {
      // Widening is exact: a table of the 65536 patterns instead of a getFloat16 call each.
      const table = float16Table();
      const bits = new Uint16Array(buf);
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) out[i] = table[bits[i]!]!;
      return out;
    }
    case "bfloat16": {
      // bfloat16 is the top half of a float32: shift the bits into place.
      const bits = new Uint16Array(buf);
      const out = new Float32Array(n);
      const wide = new Uint32Array(out.buffer);
      for (let i = 0; i < n; i++) wide[i] = bits[i]! << 16;
      return out;
    }
    case "float8_e4m3":
    case "float8_e5m2": {
      const fmt = fp8Format(dtype);
      const src = new Uint8Array(buf);
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) out[i] = fp8Value(src[i]!, fmt);
      return out;
    }
  }
}
