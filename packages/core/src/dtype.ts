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
 * The vectors `float32x2`, `float32x4`, `int32x2`, `int32x4`, `uint32x2`, `uint32x4`, `float16x4`,
 * `float16x8`, `bfloat16x4` and `bfloat16x8` (TVM's dtype with lanes) are register values of 64
 * or 128 bits held in 2 or 4 32-bit registers, PTX's vector operands `{%f1, %f2, %f3, %f4}` (PTX
 * ISA, "Vectors": at most 128 bits on sm_90); a 16-bit vector's registers are packed pairs. Like
 * the pairs they are views of other buffers (`view_as`, one `ld.v4`/`st.v4` per access) and never
 * a tensor's or buffer's dtype. The simulator and the host carry one as its bits, a bigint with
 * lane 0 in the low bits (the pair's 32-bit number is the one-register case).
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
  | "bfloat16x2"
  | VectorDType;

/**
 * The family of a dtype: how its bits are read ("packed": two float lanes in one register;
 * "vector": lanes in several 32-bit registers).
 */
export type DTypeKind = "bool" | "int" | "uint" | "float" | "packed" | "vector";

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
  float32x2: { kind: "vector", bits: 64, bytes: 8 },
  float32x4: { kind: "vector", bits: 128, bytes: 16 },
  int32x2: { kind: "vector", bits: 64, bytes: 8 },
  int32x4: { kind: "vector", bits: 128, bytes: 16 },
  uint32x2: { kind: "vector", bits: 64, bytes: 8 },
  uint32x4: { kind: "vector", bits: 128, bytes: 16 },
  float16x4: { kind: "vector", bits: 64, bytes: 8 },
  float16x8: { kind: "vector", bits: 128, bytes: 16 },
  bfloat16x4: { kind: "vector", bits: 64, bytes: 8 },
  bfloat16x8: { kind: "vector", bits: 128, bytes: 16 },
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

/** `"bool" | "int" | "uint" | "float" | "packed" | "vector"`. */
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

/** The multi-register vector dtypes (see {@link DType}): 2 or 4 registers of 32 bits. */
export type VectorDType =
  | "float32x2"
  | "float32x4"
  | "int32x2"
  | "int32x4"
  | "uint32x2"
  | "uint32x4"
  | "float16x4"
  | "float16x8"
  | "bfloat16x4"
  | "bfloat16x8";
/** The lane dtypes a vector may have. */
export type VectorLane = "float32" | "int32" | "uint32" | "float16" | "bfloat16";
/** True for the multi-register vectors (float32x4, int32x2, float16x8, …; not the pairs). */
export const isVector = (dt: DType): dt is VectorDType => TABLE[dt].kind === "vector";
/**
 * True for every register value that is no scalar: the packed pairs and the vectors. None is a
 * tensor's or buffer's dtype (TX1027); the IR's operators and casts refuse them (TX2005, TX1007).
 */
export const isLaneValue = (dt: DType): dt is PackedDType | VectorDType =>
  TABLE[dt].kind === "packed" || TABLE[dt].kind === "vector";
/**
 * True where the simulator and the host carry a value as a bigint: int64, uint64 and the vectors
 * (their bits, lane 0 low).
 */
export const isBigValue = (dt: DType): boolean => isWideInt(dt) || isVector(dt);

/** The lane dtype of a pair or vector: float32x4 → float32, float16x8 → float16. */
export function laneDType(dt: PackedDType | VectorDType): VectorLane {
  const m = /^(float32|int32|uint32|float16|bfloat16)x\d$/.exec(dt);
  return m![1] as VectorLane;
}

/** The number of lanes of a pair or vector: float32x4 → 4, float16x8 → 8, float16x2 → 2. */
export function laneCount(dt: PackedDType | VectorDType): number {
  return Number(dt.slice(dt.lastIndexOf("x") + 1));
}

/** Number of 32-bit registers a pair (1) or vector (2, 4) is held in. */
export const laneRegisters = (dt: PackedDType | VectorDType): number => TABLE[dt].bits / 32;

/**
 * The pair or vector of `n` lanes of `lane` (float32 × 4 → float32x4, float16 × 2 → float16x2),
 * or undefined where tirx-ts has none (float32 × 8: 256 bits, more than one access moves on sm_90).
 */
export function vectorOf(lane: DType, n: number): PackedDType | VectorDType | undefined {
  const name = `${lane}x${n}`;
  return isDType(name) && isLaneValue(name) && laneDType(name) === lane ? name : undefined;
}

/**
 * True when an access as `access` to elements of `element` reads or writes whole elements as
 * the lanes of a vector of 32-bit lanes (float32x4 of float32, int32x2 of int32): a local array
 * of `element` may then stay in registers, each vector access naming its elements' registers.
 */
export const isLaneAccess = (access: DType, element: DType): boolean =>
  isVector(access) && laneDType(access) === element && TABLE[element].bits === 32;
