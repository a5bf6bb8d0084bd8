/**
 * Scalar data types of tirx-ts, named as in TVM (`"float16"`, `"int32"`, ...).
 * `bool` is one byte in memory (as in CUDA C++) and a predicate in registers.
 * `float8_e4m3` and `float8_e5m2` are the OCP 8-bit floats (numeric/fp8.ts): one byte in memory,
 * the low byte of a 16-bit register; PTX has no arithmetic on them (conversions, loads, stores and
 * wgmma operands only).
 * `float16x2` and `bfloat16x2` are PTX's packed 16-bit float pairs (PTX ISA, "Packed Data
 * Types"): one `.b32` register holding two halves, lane 0 in the low 16 bits. They are register
 * values only (the packed-arithmetic ops of ops/packed/ and kernel scalar parameters, whose host
 * value is the register's 32 bits) and views of other buffers (`view_as`: two adjacent 16-bit
 * elements per access); no tensor or buffer has them as its dtype (TX1027, `checkStorageDType`).
 */
export type DType =
  | "bool"
  | "int8"
  | "int16"
  | "int32"
  | "int64"
  | "uint8"
  | "uint16"
  | "uint32"
  | "uint64"
  | "float8_e4m3"
  | "float8_e5m2"
  | "float16"
  | "bfloat16"
  | "float32"
  | "float64"
  | "float16x2"
  | "bfloat16x2";

/** The family of a dtype: how its bits are read ("packed": two float lanes in one register). */
export type DTypeKind = "bool" | "int" | "uint" | "float" | "packed";

interface DTypeInfo {
  readonly kind: DTypeKind;
  /** Width in bits of one element in registers (bool: 1). */
  readonly bits: number;
  /** Bytes of one element in memory (bool: 1). */
  readonly bytes: number;
}

const TABLE: Record<DType, DTypeInfo> = {
  bool: { kind: "bool", bits: 1, bytes: 1 },
  int8: { kind: "int", bits: 8, bytes: 1 },
  int16: { kind: "int", bits: 16, bytes: 2 },
  int32: { kind: "int", bits: 32, bytes: 4 },
  int64: { kind: "int", bits: 64, bytes: 8 },
  uint8: { kind: "uint", bits: 8, bytes: 1 },
  uint16: { kind: "uint", bits: 16, bytes: 2 },
  uint32: { kind: "uint", bits: 32, bytes: 4 },
  uint64: { kind: "uint", bits: 64, bytes: 8 },
  float16: { kind: "float", bits: 16, bytes: 2 },
  bfloat16: { kind: "float", bits: 16, bytes: 2 },
  float32: { kind: "float", bits: 32, bytes: 4 },
  float64: { kind: "float", bits: 64, bytes: 8 },
  float8_e4m3: { kind: "float", bits: 8, bytes: 1 },
  float8_e5m2: { kind: "float", bits: 8, bytes: 1 },
  float16x2: { kind: "packed", bits: 32, bytes: 4 },
  bfloat16x2: { kind: "packed", bits: 32, bytes: 4 },
};

/** Every dtype name, in a stable order. */
export const DTYPES: readonly DType[] = Object.keys(TABLE) as DType[];

/** True when `name` is a dtype name. */
export function isDType(name: unknown): name is DType {
  return typeof name === "string" && Object.prototype.hasOwnProperty.call(TABLE, name);
}

/** Register width in bits (bool: 1). */
export function dtypeBits(dt: DType): number {
  return TABLE[dt].bits;
}

/** Storage size of one element in bytes (bool: 1). */
export function dtypeBytes(dt: DType): number {
  return TABLE[dt].bytes;
}

/** `"bool" | "int" | "uint" | "float"`. */
export function dtypeKind(dt: DType): DTypeKind {
  return TABLE[dt].kind;
}

/** float8_e4m3, float8_e5m2, float16, bfloat16, float32, float64. */
export const isFloat = (dt: DType): boolean => TABLE[dt].kind === "float";
/** The OCP 8-bit floats float8_e4m3 and float8_e5m2: no arithmetic, conversions only. */
export const isFloat8 = (dt: DType): dt is "float8_e4m3" | "float8_e5m2" =>
  dt === "float8_e4m3" || dt === "float8_e5m2";
/** Signed or unsigned integers (not bool). */
export const isInt = (dt: DType): boolean => TABLE[dt].kind === "int" || TABLE[dt].kind === "uint";
/** Signed integers int8..int64. */
export const isSigned = (dt: DType): boolean => TABLE[dt].kind === "int";
/** The predicate type (one byte in memory). */
export const isBool = (dt: DType): boolean => dt === "bool";
/** 64-bit integers: their constants are carried as bigint. */
export const isWideInt = (dt: DType): boolean => dt === "int64" || dt === "uint64";

/** The packed pairs float16x2 and bfloat16x2 (PTX ISA, "Packed Data Types"). */
export type PackedDType = "float16x2" | "bfloat16x2";
/** True for float16x2 and bfloat16x2: two 16-bit float lanes in one 32-bit register. */
export const isPacked = (dt: DType): dt is PackedDType => TABLE[dt].kind === "packed";
/** The dtype of one lane of a packed pair: float16x2 → float16, bfloat16x2 → bfloat16. */
export const packedLane = (dt: PackedDType): "float16" | "bfloat16" =>
  dt === "float16x2" ? "float16" : "bfloat16";
/** The packed pair of a 16-bit float lane dtype: float16 → float16x2, bfloat16 → bfloat16x2. */
export const packedOf = (lane: "float16" | "bfloat16"): PackedDType =>
  lane === "float16" ? "float16x2" : "bfloat16x2";
