import type { DiagnosticCode } from "../catalog.js";
import { TirxError } from "../diagnostics.js";
import type { DType } from "../dtype.js";
import type { TensorMap, TmaL2Promotion, TmaOobFill, TmaSwizzle } from "../ir/tensor-map.js";
import type { Span } from "../span.js";

/**
 * The contract of `cuTensorMapEncodeTiled` (CUDA Driver API, "Tensor Map Object Management",
 * cuTensorMapEncodeTiled: "The parameters passed are bound to the following requirements"), as
 * one check of the driver's own arguments. The verifier runs it on what is static (a map's
 * dtype, box, modes and, for a static tensor, its dims and strides), the CUDA runtime and the
 * simulator on every map at launch (with the tensor's address and launch shape), so the
 * simulator never accepts a map the driver would refuse. docs/conformance-tensor-maps.md lists
 * the rules and their source.
 */

/** `CUtensorMapDataType` values (cuda.h), with the element bytes and whether it is a float type. */
const DATA_TYPES: Readonly<Record<number, { name: string; bytes: number; float: boolean }>> = {
  0: { name: "UINT8", bytes: 1, float: false },
  1: { name: "UINT16", bytes: 2, float: false },
  2: { name: "UINT32", bytes: 4, float: false },
  3: { name: "INT32", bytes: 4, float: false },
  4: { name: "UINT64", bytes: 8, float: false },
  5: { name: "INT64", bytes: 8, float: false },
  6: { name: "FLOAT16", bytes: 2, float: true },
  7: { name: "FLOAT32", bytes: 4, float: true },
  8: { name: "FLOAT64", bytes: 8, float: true },
  9: { name: "BFLOAT16", bytes: 2, float: true },
  10: { name: "FLOAT32_FTZ", bytes: 4, float: true },
  11: { name: "TFLOAT32", bytes: 4, float: true },
  12: { name: "TFLOAT32_FTZ", bytes: 4, float: true },
};

/**
 * Element dtypes a tensor map can describe, with the `CUtensorMapDataType` each encodes as. The
 * float8 dtypes have no data type of their own before CUDA 12.8's sub-byte types and move as
 * `CU_TENSOR_MAP_DATA_TYPE_UINT8` bytes (TMA copies bits; CUTLASS encodes fp8 the same way), so
 * a float8 map is not a float map for the driver (no NaN out-of-bounds fill).
 */
export const TMA_DTYPES: Readonly<Partial<Record<DType, number>>> = {
  uint8: 0,
  int8: 0,
  float8_e4m3: 0,
  float8_e5m2: 0,
  uint16: 1,
  int16: 1,
  uint32: 2,
  int32: 3,
  uint64: 4,
  int64: 5,
  float16: 6,
  float32: 7,
  float64: 8,
  bfloat16: 9,
};

/** `CUtensorMapInterleave` values (cuda.h). Maps made here never interleave. */
export const TMA_INTERLEAVE = { none: 0, "16B": 1, "32B": 2 } as const;
/** `CUtensorMapSwizzle` values (cuda.h) of the modes this toolchain writes. */
export const TMA_SWIZZLE: Readonly<Record<TmaSwizzle, number>> = {
  none: 0,
  "32B": 1,
  "64B": 2,
  "128B": 3,
};
/** `CUtensorMapL2promotion` values (cuda.h). */
export const TMA_L2_PROMOTION: Readonly<Record<TmaL2Promotion, number>> = {
  none: 0,
  "64B": 1,
  "128B": 2,
  "256B": 3,
};
/** `CUtensorMapFloatOOBfill` values (cuda.h): "nan" is `..._NAN_REQUEST_ZERO_FMA`. */
export const TMA_OOB_FILL: Readonly<Record<TmaOobFill, number>> = { none: 0, nan: 1 };

/** Bytes of the swizzle span of each `CUtensorMapSwizzle` value this toolchain writes. */
const SWIZZLE_SPAN: Readonly<Record<number, number>> = { 0: 0, 1: 32, 2: 64, 3: 128 };
const SWIZZLE_NAME: Readonly<Record<number, string>> = { 0: "none", 1: "32B", 2: "64B", 3: "128B" };

/**
 * The arguments of one `cuTensorMapEncodeTiled` call, in the driver's order and units: dims and
 * strides innermost first, enum values of cuda.h. Before launch (the verifier) the address is
 * unknown and a symbolic tensor's dims and the strides over them are `undefined`; those rules
 * are left to the launch. Matches runtime-cuda's `TensorMapArgs` (plus the address).
 */
export interface TensorMapEncoding {
  /** `CUtensorMapDataType`. */
  readonly dataType: number;
  readonly rank: number;
  /** The tensor's device address in bytes; undefined before launch. */
  readonly globalAddress?: bigint | undefined;
  /** Elements per dim, innermost first (`globalDim`). */
  readonly globalDim: ArrayLike<number | bigint | undefined>;
  /** Byte strides of dims 1..rank-1, innermost first (`globalStrides`; extra entries ignored). */
  readonly globalStrides: ArrayLike<number | bigint | undefined>;
  /** Box extent per dim in elements, innermost first (`boxDim`). */
  readonly boxDim: ArrayLike<number>;
  /** Traversal stride per dim, innermost first (`elementStrides`). */
  readonly elementStrides: ArrayLike<number>;
  readonly interleave: number;
  readonly swizzle: number;
  readonly l2Promotion: number;
  readonly oobFill: number;
}

/** One broken rule: its code and a message naming the rule and the value. */
export interface TensorMapViolation {
  readonly code: DiagnosticCode;
  readonly message: string;
}

/**
 * The encoding of `map`: its dtype's data type (-1 for a dtype with no TMA encoding), the
 * tensor's row-major dims and byte strides innermost first (from `shape`, the launch's, or the
 * tensor's own, whose symbolic dims and the strides over them stay undefined), box, element
 * strides and modes reversed or mapped to cuda.h's values. Pure.
 */
export function tensorMapEncoding(
  map: TensorMap,
  opts: { shape?: readonly number[]; globalAddress?: bigint } = {},
): TensorMapEncoding {
  const shape: readonly (number | undefined)[] =
    opts.shape ?? map.buffer.shape.map((d) => (typeof d === "number" ? d : undefined));
  const rank = shape.length;
  const eb = DATA_TYPES[TMA_DTYPES[map.dtype] ?? -1]?.bytes ?? 1;
  const dims = [...shape].reverse();
  const strides: (number | undefined)[] = [];
  let s: number | undefined = eb;
  for (let k = 0; k < rank - 1; k++) {
    const d = dims[k];
    s = s === undefined || d === undefined ? undefined : s * d;
    strides.push(s);
  }
  return {
    dataType: TMA_DTYPES[map.dtype] ?? -1,
    rank,
    globalAddress: opts.globalAddress,
    globalDim: dims,
    globalStrides: strides,
    boxDim: [...map.box].reverse(),
    elementStrides: [...map.elementStrides].reverse(),
    interleave: TMA_INTERLEAVE.none,
    swizzle: TMA_SWIZZLE[map.swizzle] ?? -1,
    l2Promotion: TMA_L2_PROMOTION[map.l2Promotion] ?? -1,
    oobFill: TMA_OOB_FILL[map.oobFill] ?? -1,
  };
}

const big = (v: number | bigint): bigint => (typeof v === "bigint" ? v : BigInt(v));

/**
 * The first rule of cuTensorMapEncodeTiled that encoding `e` of map `name` breaks, or undefined.
 * Dims are counted as the driver does (dim 0 innermost); messages also name the tensor axis
 * (outermost first). Codes, one per rule family:
 * - TX4024 (tma/global-tensor): `tensorDataType` one of CUtensorMapDataType; `tensorRank` in
 *   1..5 (at least 3 with interleave); every `globalDim` in 1..2^32; every `globalStrides` a
 *   multiple of 16 (32 with 32B interleave), below 2^40, and at least the extent of the dims
 *   inside it (globalStrides[0] ≥ globalDim[0] · element bytes, globalStrides[i] ≥
 *   globalStrides[i-1] · globalDim[i]: the driver's padding formula with padding ≥ 0).
 * - TX4017 (tma/box): every `boxDim` in 1..256, `boxDim[0]` · element bytes a multiple of 16
 *   (without interleave) and at most the swizzle span (32, 64 or 128 bytes) under a swizzle
 *   without interleave; every `elementStrides` in 1..8, and `elementStrides[0]` 1 without
 *   interleave (the driver ignores it there: "TMA doesn't support the stride for dimension
 *   zero"; taking a map whose inner stride the hardware drops would let the simulator differ).
 * - TX4027 (tma/global-address): `globalAddress` 16-byte aligned (32 with 32B interleave).
 * - TX4028 (tma/modes): `interleave` one of CUtensorMapInterleave, `swizzle` one of the
 *   CUtensorMapSwizzle modes written here (none, 32B, 64B, 128B), 32B interleave only with the
 *   32B swizzle, `l2Promotion` one of CUtensorMapL2promotion, `oobFill` one of
 *   CUtensorMapFloatOOBfill.
 * - TX4029 (tma/oob-fill): NAN_REQUEST_ZERO_FMA only for a floating-point `tensorDataType`.
 * Source: CUDA Driver API, cuTensorMapEncodeTiled (CUDA 12.x/13.0 driver documentation).
 */
export function tensorMapViolation(
  name: string,
  e: TensorMapEncoding,
): TensorMapViolation | undefined {
  const v = (code: DiagnosticCode, why: string): TensorMapViolation => ({
    code,
    message: `tensor map "${name}": ${why} (CUDA Driver API, cuTensorMapEncodeTiled)`,
  });
  const rank = e.rank;
  const axis = (dim: number): string => `dim ${dim} (tensor axis ${rank - 1 - dim})`;
  const dt = DATA_TYPES[e.dataType];
  if (!dt) {
    return v(
      "TX4024",
      `tensorDataType ${e.dataType} is not a CUtensorMapDataType this toolchain encodes (its dtypes: ${Object.keys(TMA_DTYPES).join(", ")})`,
    );
  }
  const il = e.interleave;
  if (il !== TMA_INTERLEAVE.none && il !== TMA_INTERLEAVE["16B"] && il !== TMA_INTERLEAVE["32B"]) {
    return v("TX4028", `interleave ${il} is not a CUtensorMapInterleave (0 none, 1 16B, 2 32B)`);
  }
  const interleaved = il !== TMA_INTERLEAVE.none;
  const il32 = il === TMA_INTERLEAVE["32B"];
  if (!Number.isInteger(rank) || rank < 1 || rank > 5 || (interleaved && rank < 3)) {
    return v(
      "TX4024",
      `tensorRank is ${rank}; it must be in 1..5${interleaved ? ", and at least 3 with interleave" : ""}`,
    );
  }
  const span = SWIZZLE_SPAN[e.swizzle];
  if (span === undefined) {
    return v(
      "TX4028",
      `swizzle ${e.swizzle} is not a CUtensorMapSwizzle mode this toolchain writes (0 none, 1 32B, 2 64B, 3 128B)`,
    );
  }
  if (il32 && e.swizzle !== TMA_SWIZZLE["32B"]) {
    return v(
      "TX4028",
      `with 32B interleave the swizzle must be 32B (CU_TENSOR_MAP_SWIZZLE_32B), got ${SWIZZLE_NAME[e.swizzle]}`,
    );
  }
  if (![0, 1, 2, 3].includes(e.l2Promotion)) {
    return v(
      "TX4028",
      `l2Promotion ${e.l2Promotion} is not a CUtensorMapL2promotion (0 none, 1 64B, 2 128B, 3 256B)`,
    );
  }
  if (e.oobFill !== TMA_OOB_FILL.none && e.oobFill !== TMA_OOB_FILL.nan) {
    return v(
      "TX4028",
      `oobFill ${e.oobFill} is not a CUtensorMapFloatOOBfill (0 none, 1 NAN_REQUEST_ZERO_FMA)`,
    );
  }
  if (e.oobFill === TMA_OOB_FILL.nan && !dt.float) {
    return v(
      "TX4029",
      `oob_fill "nan" (CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA) needs a floating-point tensorDataType, got ${dt.name}${dt.name === "UINT8" ? " (int8, uint8 and float8 tensors encode as UINT8)" : ""}; use oob_fill "none" (zeros)`,
    );
  }
  if (e.globalAddress !== undefined) {
    const align = il32 ? 32n : 16n;
    if (e.globalAddress % align !== 0n) {
      return v(
        "TX4027",
        `the tensor's global address 0x${e.globalAddress.toString(16)} is not ${align}-byte aligned${il32 ? " (32B interleave)" : ""} (it is ${e.globalAddress % align} bytes past a ${align}-byte boundary)`,
      );
    }
  }
  for (let k = 0; k < rank; k++) {
    const d = e.globalDim[k];
    if (d === undefined) continue;
    if (big(d) < 1n || big(d) > 2n ** 32n) {
      return v("TX4024", `globalDim of ${axis(k)} is ${d}; it must be in 1..2^32`);
    }
  }
  const unit = il32 ? 32n : 16n;
  let inside: bigint | undefined = BigInt(dt.bytes);
  for (let k = 0; k < rank - 1; k++) {
    const d = e.globalDim[k];
    inside = inside === undefined || d === undefined ? undefined : inside * big(d);
    const s = e.globalStrides[k];
    if (s === undefined) {
      inside = undefined;
      continue;
    }
    const st = big(s);
    if (st % unit !== 0n || st >= 2n ** 40n) {
      return v(
        "TX4024",
        `axis ${rank - 2 - k} has a stride of ${st} bytes (globalStrides[${k}], dim ${k + 1}); strides must be multiples of ${unit} bytes${il32 ? " (32B interleave)" : ""} below 2^40 (pad the inner axis)`,
      );
    }
    if (inside !== undefined && st < inside) {
      return v(
        "TX4024",
        `axis ${rank - 2 - k} has a stride of ${st} bytes (globalStrides[${k}], dim ${k + 1}), less than the ${inside} bytes of the dims inside it; rows would overlap`,
      );
    }
    inside = st;
  }
  for (let k = 0; k < rank; k++) {
    const b = e.boxDim[k]!;
    if (!Number.isInteger(b) || b < 1 || b > 256) {
      return v("TX4017", `boxDim of ${axis(k)} is ${b}; box extents must be in 1..256`);
    }
    const es = e.elementStrides[k]!;
    if (!Number.isInteger(es) || es < 1 || es > 8) {
      return v("TX4017", `elementStrides of ${axis(k)} is ${es}; element strides must be in 1..8`);
    }
  }
  const inner = e.boxDim[0]! * dt.bytes;
  if (!interleaved) {
    if (e.elementStrides[0] !== 1) {
      return v(
        "TX4017",
        `the element stride of the innermost ${axis(0)} is ${e.elementStrides[0]}; without interleave the driver ignores it (TMA has no stride on dimension 0), so it must be 1`,
      );
    }
    if (inner % 16 !== 0) {
      return v(
        "TX4017",
        `the inner box is ${inner} bytes (boxDim[0] ${e.boxDim[0]} × ${dt.bytes}); it must be a multiple of 16 bytes`,
      );
    }
    if (span > 0 && inner > span) {
      return v(
        "TX4017",
        `with ${SWIZZLE_NAME[e.swizzle]} swizzle the inner box may be at most the ${span}-byte swizzle span, got ${inner} bytes (boxDim[0] ${e.boxDim[0]} × ${dt.bytes})`,
      );
    }
  }
  return undefined;
}

/**
 * Throw the first rule of cuTensorMapEncodeTiled that encoding `e` of map `name` breaks
 * ({@link tensorMapViolation}) as a TirxError at `span`, with `notes`.
 * @throws TirxError TX4017, TX4024, TX4027, TX4028, TX4029 (see tensorMapViolation).
 */
export function checkTensorMapEncoding(
  name: string,
  e: TensorMapEncoding,
  span?: Span,
  notes: readonly { message: string; span?: Span }[] = [],
): void {
  const bad = tensorMapViolation(name, e);
  if (bad) throw new TirxError(bad.code, bad.message, span, notes);
}
