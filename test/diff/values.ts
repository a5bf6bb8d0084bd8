// Operand values for the differential test: edge values of each dtype plus seeded random ones,
// as raw little-endian bytes so signed zeros, subnormals and NaN reach the kernel exactly.
import { dtypeBytes, dtypeKind, type DType } from "@tirx-ts/core";
import { getFloat16, setFloat16 } from "@petamoriken/float16";

/** A small seeded PRNG (mulberry32), so every run of the test sees the same inputs. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** A value of a dtype as a test case holds it: a number, or a bigint for 64-bit integers. */
export type Value = number | bigint;

// One scratch buffer viewed as float32 / uint32 / float64 for the bit casts below (the test builds
// ~10^6 values: a fresh typed array per value was most of the cost of making the cases).
const scratch = new ArrayBuffer(8);
const f32s = new Float32Array(scratch);
const u32s = new Uint32Array(scratch);
const f64s = new Float64Array(scratch);
const dv16 = new DataView(scratch);

/**
 * The value of each of the 65536 float16 codes, as @petamoriken/float16's getFloat16 reads it
 * (asked once per code, at the first use), and the code of each value but NaN (one each; -0
 * has its own): the cases encode and decode about 10^6 float16 values, and the library's calls were the
 * largest part of building them (3.6 s of a 50 s profile of test/diff/ops-cpu).
 */
let f16Values: Float64Array | undefined;
let f16Codes: Map<number, number> | undefined;

/** The value of float16 code `code` (its low 16 bits): getFloat16's, from the table. */
export function f16Value(code: number): number {
  if (f16Values === undefined) {
    f16Values = new Float64Array(0x10000);
    const dv = new DataView(new ArrayBuffer(2));
    for (let c = 0; c < 0x10000; c++) {
      dv.setUint16(0, c, true);
      f16Values[c] = getFloat16(dv, 0, true);
    }
  }
  return f16Values[code & 0xffff]!;
}

/**
 * The float16 code of `x`, as setFloat16 writes it: from the table when `x` is a float16 value
 * (each value but NaN has one code; -0 is 0x8000), else (NaN, or a value float16
 * rounds) from setFloat16 itself.
 */
export function f16Code(x: number): number {
  if (f16Codes === undefined) {
    f16Codes = new Map();
    for (let c = 0; c < 0x10000; c++) {
      const v = f16Value(c);
      if (v === v && !Object.is(v, -0) && !f16Codes.has(v)) f16Codes.set(v, c);
    }
  }
  if (Object.is(x, -0)) return 0x8000;
  const c = f16Codes.get(x);
  if (c !== undefined) return c;
  setFloat16(dv16, 0, x, true);
  return dv16.getUint16(0, true);
}

const bf16 = (x: number): number => {
  f32s[0] = x;
  const u = u32s[0]!;
  return u >>> 16;
};

/**
 * The value of float8 code `code` read off the OCP 8-bit float definition (sign, biased exponent,
 * mantissa): e4m3 bias 7, no infinities, NaN S.1111.111; e5m2 bias 15, IEEE-like. Independent of
 * the simulator's codec.
 */
export function ocpFp8Value(code: number, dt: "float8_e4m3" | "float8_e5m2"): number {
  const [eb, mb, bias] = dt === "float8_e4m3" ? [4, 3, 7] : [5, 2, 15];
  const s = code & 0x80 ? -1 : 1;
  const e = (code >> mb) & ((1 << eb) - 1);
  const m = code & ((1 << mb) - 1);
  const top = (1 << eb) - 1;
  if (dt === "float8_e4m3" && e === top && m === 7) return NaN;
  if (dt === "float8_e5m2" && e === top) return m === 0 ? s * Infinity : NaN;
  return e === 0 ? s * m * 2 ** (1 - bias - mb) : s * (1 + m / (1 << mb)) * 2 ** (e - bias);
}

/** Per format: the first of the 256 codes with each value other than NaN, made once. */
const fp8Codes = new Map<string, Map<number | "-0", number>>();
/** A Map key of a float8 value: a Map takes -0 and 0 for one key, the codes do not. */
const fp8Key = (x: number): number | "-0" => (Object.is(x, -0) ? "-0" : x);

/**
 * The code of float8 value `v` (a value of the format; NaN → 0x7f): the first of the 256 codes
 * whose ocpFp8Value is `v` (Object.is: -0 is its own code).
 */
export function ocpFp8Code(v: number, dt: "float8_e4m3" | "float8_e5m2"): number {
  if (v !== v) return 0x7f;
  let codes = fp8Codes.get(dt);
  if (!codes) {
    codes = new Map();
    for (let c = 0; c < 256; c++) {
      const x = ocpFp8Value(c, dt);
      if (x === x && !codes.has(fp8Key(x))) codes.set(fp8Key(x), c);
    }
    fp8Codes.set(dt, codes);
  }
  const c = codes.get(fp8Key(v));
  if (c === undefined) throw new RangeError(`${v} is no ${dt} value`);
  return c;
}

/**
 * The finite non-negative values of a float8 format in increasing order, the midpoints between
 * neighbours (rounding ties) with a float32 step either side, and the saturation edge (max + half
 * an ulp, max + an ulp, twice max), each with both signs: inputs for the conversions into float8.
 */
export function fp8Ties(dt: "float8_e4m3" | "float8_e5m2"): number[] {
  const vals = Array.from({ length: 128 }, (_, c) => ocpFp8Value(c, dt))
    .filter((v) => Number.isFinite(v))
    .sort((a, b) => a - b);
  const out: number[] = [];
  for (let i = 0; i + 1 < vals.length; i++) {
    const mid = (vals[i]! + vals[i + 1]!) / 2;
    out.push(mid, nextF32(mid, 1), nextF32(mid, -1));
  }
  const max = vals[vals.length - 1]!;
  const ulp = max - vals[vals.length - 2]!;
  out.push(max + ulp / 2, max + ulp, 2 * max, nextF32(max, 1));
  return [...out, ...out.map((v) => -v)];
}

/** The float32 neighbour of float32 `x` in direction `dir` (x > 0). */
function nextF32(x: number, dir: 1 | -1): number {
  const u = new Uint32Array(new Float32Array([x]).buffer);
  u[0] = u[0]! + dir;
  return new Float32Array(u.buffer)[0]!;
}

/** Edge values of `dt`: signed zeros, subnormals, extremes, infinities, NaN, integer limits. */
export function edges(dt: DType): Value[] {
  switch (dt) {
    case "float8_e4m3":
      return [0, -0, 2 ** -9, -(2 ** -9), 7 * 2 ** -9, 2 ** -6, 1, -1, 0.5, 3, 448, -448, NaN];
    case "float8_e5m2":
      return [
        0,
        -0,
        2 ** -16,
        -(2 ** -16),
        3 * 2 ** -16,
        2 ** -14,
        1,
        -1,
        0.5,
        3,
        57344,
        -57344,
        Infinity,
        -Infinity,
        NaN,
      ];
    case "bool":
      return [0, 1];
    case "float16":
      return [
        0,
        -0,
        2 ** -24,
        -(2 ** -24),
        2 ** -14,
        1,
        -1,
        0.5,
        -57,
        65504,
        -65504,
        Infinity,
        -Infinity,
        NaN,
        3,
        2048,
        2049,
      ];
    case "bfloat16":
      return [
        0,
        -0,
        2 ** -133,
        2 ** -126,
        1,
        -1,
        0.5,
        -57,
        3.3895313892515355e38,
        -3.3895313892515355e38,
        Infinity,
        -Infinity,
        NaN,
        3,
        256,
        257,
      ];
    case "float32":
      return [
        0,
        -0,
        2 ** -149,
        -(2 ** -149),
        2 ** -126,
        1,
        -1,
        0.5,
        -0.5,
        3,
        2 ** 24,
        2 ** 24 + 2,
        -288148.25,
        Math.fround(-0.025021079927682877),
        213733.015625,
        Math.fround(-0.0005346030229702592),
        3.4028234663852886e38,
        -3.4028234663852886e38,
        Infinity,
        -Infinity,
        NaN,
      ];
    case "float64":
      return [
        0,
        -0,
        5e-324,
        -5e-324,
        2.2250738585072014e-308,
        1,
        -1,
        0.5,
        3,
        2 ** 53,
        2 ** 53 + 2,
        1e300,
        -1e300,
        1.7976931348623157e308,
        Infinity,
        -Infinity,
        NaN,
      ];
    default: {
      const bits = dtypeBytes(dt) * 8;
      const signed = dtypeKind(dt) === "int";
      const lo = signed ? -(2n ** BigInt(bits - 1)) : 0n;
      const hi = signed ? 2n ** BigInt(bits - 1) - 1n : 2n ** BigInt(bits) - 1n;
      const set = new Set<bigint>([
        0n,
        1n,
        2n,
        3n,
        7n,
        31n,
        32n,
        33n,
        63n,
        64n,
        lo,
        lo + 1n,
        hi,
        hi - 1n,
      ]);
      if (signed) for (const v of [-1n, -2n, -3n, -7n, -32n]) set.add(v);
      const vals = [...set].filter((v) => v >= lo && v <= hi);
      return bits === 64 ? vals : vals.map(Number);
    }
  }
}

/** A random value of `dt`: random bit patterns for floats (every class), uniform for integers. */
export function random(dt: DType, rnd: () => number): Value {
  const u32 = (): number => Math.floor(rnd() * 2 ** 32);
  switch (dt) {
    case "bool":
      return rnd() < 0.5 ? 0 : 1;
    case "float8_e4m3":
    case "float8_e5m2":
      return ocpFp8Value(u32() & 0xff, dt);
    case "float32": {
      // Half the time a "nice" magnitude, so results are rarely all inf/0.
      if (rnd() < 0.5) return Math.fround((rnd() - 0.5) * 2 ** Math.floor(rnd() * 40 - 20));
      u32s[0] = u32();
      return f32s[0]!;
    }
    case "float16": {
      if (rnd() < 0.5) return getF16(setF16((rnd() - 0.5) * 2 ** Math.floor(rnd() * 20 - 10)));
      return getF16(u32() & 0xffff);
    }
    case "bfloat16": {
      if (rnd() < 0.5) return getBf16(bf16((rnd() - 0.5) * 2 ** Math.floor(rnd() * 40 - 20)));
      return getBf16(u32() & 0xffff);
    }
    case "float64": {
      if (rnd() < 0.5) return (rnd() - 0.5) * 2 ** Math.floor(rnd() * 80 - 40);
      const lo = u32();
      u32s[1] = u32();
      u32s[0] = lo;
      return f64s[0]!;
    }
    default: {
      const bits = dtypeBytes(dt) * 8;
      const signed = dtypeKind(dt) === "int";
      if (bits === 64) {
        const v = (BigInt(u32()) << 32n) | BigInt(u32());
        return signed ? BigInt.asIntN(64, v) : v;
      }
      const v = u32() % 2 ** bits;
      return signed && v >= 2 ** (bits - 1) ? v - 2 ** bits : v;
    }
  }
}

function setF16(x: number): number {
  setFloat16(dv16, 0, x, true);
  return dv16.getUint16(0, true);
}
function getF16(bits: number): number {
  return f16Value(bits);
}
function getBf16(bits: number): number {
  u32s[0] = bits << 16;
  return f32s[0]!;
}

/** Little-endian bytes of `values` as `dt` (16-bit floats: the values are already representable). */
export function encode(values: readonly Value[], dt: DType): Uint8Array {
  const eb = dtypeBytes(dt);
  const out = new Uint8Array(values.length * eb);
  const dv = new DataView(out.buffer);
  values.forEach((v, i) => {
    const o = i * eb;
    switch (dt) {
      case "bool":
        dv.setUint8(o, v ? 1 : 0);
        return;
      case "float8_e4m3":
      case "float8_e5m2":
        dv.setUint8(o, ocpFp8Code(Number(v), dt));
        return;
      case "float16":
        dv.setUint16(o, f16Code(Number(v)), true);
        return;
      case "bfloat16":
        dv.setUint16(o, bf16(Number(v)), true);
        return;
      case "float32":
        dv.setFloat32(o, Number(v), true);
        return;
      case "float64":
        dv.setFloat64(o, Number(v), true);
        return;
      case "int8":
        dv.setInt8(o, Number(v));
        return;
      case "uint8":
        dv.setUint8(o, Number(v));
        return;
      case "int16":
        dv.setInt16(o, Number(v), true);
        return;
      case "uint16":
        dv.setUint16(o, Number(v), true);
        return;
      case "int32":
        dv.setInt32(o, Number(v), true);
        return;
      case "uint32":
        dv.setUint32(o, Number(v), true);
        return;
      case "int64":
        dv.setBigInt64(o, BigInt(v), true);
        return;
      case "uint64":
        dv.setBigUint64(o, BigInt(v), true);
        return;
    }
  });
  return out;
}

/** The values of little-endian `bytes` of `dt` (16-bit floats widened exactly). */
export function decode(bytes: Uint8Array, dt: DType): Value[] {
  const eb = dtypeBytes(dt);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Value[] = [];
  for (let o = 0; o < bytes.length; o += eb) {
    switch (dt) {
      case "bool":
        out.push(dv.getUint8(o));
        break;
      case "float8_e4m3":
      case "float8_e5m2":
        out.push(ocpFp8Value(dv.getUint8(o), dt));
        break;
      case "float16":
        out.push(f16Value(dv.getUint16(o, true)));
        break;
      case "bfloat16":
        out.push(getBf16(dv.getUint16(o, true)));
        break;
      case "float32":
        out.push(dv.getFloat32(o, true));
        break;
      case "float64":
        out.push(dv.getFloat64(o, true));
        break;
      case "int8":
        out.push(dv.getInt8(o));
        break;
      case "uint8":
        out.push(dv.getUint8(o));
        break;
      case "int16":
        out.push(dv.getInt16(o, true));
        break;
      case "uint16":
        out.push(dv.getUint16(o, true));
        break;
      case "int32":
        out.push(dv.getInt32(o, true));
        break;
      case "uint32":
        out.push(dv.getUint32(o, true));
        break;
      case "int64":
        out.push(dv.getBigInt64(o, true));
        break;
      case "uint64":
        out.push(dv.getBigUint64(o, true));
        break;
    }
  }
  return out;
}
