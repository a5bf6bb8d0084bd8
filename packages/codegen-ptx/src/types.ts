import {
  dtypeBits,
  dtypeKind,
  isFloat,
  isVector,
  laneDType,
  laneRegisters,
  writeElement,
  type DType,
  type RegClass,
} from "@tirx-ts/core";

/** Register classes and PTX type suffixes live in core (ops/ptx-type.ts) for the op lowerings. */
export { bitType, cvtType, opType, regClass, type RegClass } from "@tirx-ts/core";

/** Declaration type of each register class, in the order the entry declares them. */
export const REG_DECL: Readonly<Record<RegClass, string>> = {
  p: ".pred",
  rs: ".b16",
  h: ".b16",
  r: ".b32",
  rd: ".b64",
  f: ".f32",
  fd: ".f64",
};

/**
 * Type suffix of ld/st/ld.param: bool is one byte; 16-bit floats move as raw `.b16` bits, float8
 * codes as `.b8` (into and out of the low byte of a `.b16` register). A vector moves as one vector
 * access of its registers: `v4.f32`, `v2.s32`, `v4.b32` for a float16x8's four pairs (PTX ISA,
 * ld / st: `.v2`, `.v4` of 32-bit elements, 128 bits at most on sm_90).
 */
export function memType(dt: DType): string {
  if (isVector(dt)) {
    const lane = laneDType(dt);
    const t =
      lane === "float32" ? "f32" : lane === "int32" ? "s32" : lane === "uint32" ? "u32" : "b32";
    return `v${laneRegisters(dt)}.${t}`;
  }
  if (dt === "bool") return "u8";
  if (dt === "float8_e4m3" || dt === "float8_e5m2") return "b8";
  if (dt === "float16" || dt === "bfloat16") return "b16";
  if (isFloat(dt)) return `f${dtypeBits(dt)}`;
  return `${dtypeKind(dt) === "int" ? "s" : "u"}${dtypeBits(dt)}`;
}

/** Kernel parameter type: tensors are `.u64` pointers; bool travels as one byte. */
export function paramType(dt: DType): string {
  return memType(dt);
}

/** Width in bytes of one element in memory. */
export function elemBytes(dt: DType): number {
  return dt === "bool" ? 1 : dtypeBits(dt) / 8;
}

const scratch = new DataView(new ArrayBuffer(8));

/** Hex digits of the IEEE bits of `v` as `dt` (rounded to nearest even, as the host encodes). */
export function floatBits(v: number, dt: DType): string {
  writeElement(scratch, 0, dt, v);
  const bytes = dtypeBits(dt) / 8;
  let hex = "";
  for (let i = bytes - 1; i >= 0; i--) hex += scratch.getUint8(i).toString(16).padStart(2, "0");
  return hex.toUpperCase();
}

/**
 * PTX immediate for a float constant: `0fXXXXXXXX` (f32), `0dXXXXXXXXXXXXXXXX` (f64), or the raw
 * `0xXXXX` bits of a 16-bit float (usable only with `.b16` moves).
 */
export function floatImmediate(v: number, dt: DType): string {
  if (dt === "float32") return `0f${floatBits(v, dt)}`;
  if (dt === "float64") return `0d${floatBits(v, dt)}`;
  return `0x${floatBits(v, dt)}`;
}

/**
 * PTX immediate for an integer constant of `dt`, wrapped to the dtype's width as a store would.
 * Values that do not fit a signed 64-bit literal are written in hex.
 */
export function intImmediate(v: number | bigint, dt: DType): string {
  if (dt === "bool") return BigInt(v) !== 0n ? "1" : "0";
  const bits = BigInt(dtypeBits(dt));
  const signed = dtypeKind(dt) === "int";
  const x = signed
    ? BigInt.asIntN(Number(bits), BigInt(v))
    : BigInt.asUintN(Number(bits), BigInt(v));
  if (x >= 2n ** 63n) return `0x${x.toString(16).toUpperCase()}`;
  return x.toString();
}

/** True when an operand string is a register (as opposed to an immediate). */
export const isReg = (op: string): boolean =>
  op.startsWith("%") || op.startsWith("!%") || op.startsWith("{");
