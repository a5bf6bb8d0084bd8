import type { DType } from "../dtype.js";
import type { Span } from "../span.js";
import type { Buffer } from "./buffer.js";
import { freshBufferId } from "./ids.js";

/** Shared-memory swizzle of a TMA box (CUDA driver API, `CUtensorMapSwizzle`). */
export type TmaSwizzle = "none" | "32B" | "64B" | "128B";
/** L2 sector promotion of a TMA load (`CUtensorMapL2promotion`). */
export type TmaL2Promotion = "none" | "64B" | "128B" | "256B";
/**
 * What a TMA load writes for elements outside the tensor (`CUtensorMapFloatOOBfill`): "none"
 * writes zeros; "nan" writes a quiet NaN for floating-point tensors
 * (`CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA`).
 */
export type TmaOobFill = "none" | "nan";

/** Bytes of one swizzle span (the row length a swizzle permutes over); 0 for "none". */
export const SWIZZLE_BYTES: Readonly<Record<TmaSwizzle, number>> = {
  none: 0,
  "32B": 32,
  "64B": 64,
  "128B": 128,
};

/**
 * A tiled tensor map (CUDA `CUtensorMap` from `cuTensorMapEncodeTiled`; TIRx
 * `tensormap_encode_tiled`) over a global tensor parameter of the kernel. The runtime encodes it
 * at each launch from that tensor's argument and passes the 128-byte map as a
 * `.param .align 128 .b8 [128]` kernel parameter after the declared parameters; the
 * simulator reads the same fields. All per-axis lists are in the tensor's axis order (outermost
 * first, like indices); PTX and the driver count dimensions innermost first.
 */
export interface TensorMap {
  readonly kind: "TensorMap";
  /** Identity (two maps with equal fields are still two parameters). */
  readonly id: number;
  readonly name: string;
  /** The global tensor parameter it describes (its shape gives the global dims). */
  readonly buffer: Buffer;
  /** Element dtype (the tensor's). */
  readonly dtype: DType;
  /** Box extent per axis, in elements: each in [1, 256]. */
  readonly box: readonly number[];
  /** Element stride per axis (traversal stride within the box), each in [1, 8]. */
  readonly elementStrides: readonly number[];
  readonly swizzle: TmaSwizzle;
  readonly l2Promotion: TmaL2Promotion;
  readonly oobFill: TmaOobFill;
  readonly span?: Span;
}

/** A fresh tensor map. Fields are checked by the verifier (TX4015–TX4020), not here. */
export function mkTensorMap(
  fields: Omit<TensorMap, "kind" | "id" | "dtype" | "name"> & { readonly name?: string },
): TensorMap {
  return {
    kind: "TensorMap",
    id: freshBufferId(),
    name: fields.name ?? `${fields.buffer.name}_tmap`,
    dtype: fields.buffer.dtype,
    buffer: fields.buffer,
    box: [...fields.box],
    elementStrides: [...fields.elementStrides],
    swizzle: fields.swizzle,
    l2Promotion: fields.l2Promotion,
    oobFill: fields.oobFill,
    ...(fields.span ? { span: fields.span } : {}),
  };
}

/** Elements the box holds along each axis: `ceil(box / elementStride)` (the shared tile's shape). */
export function tmaTileShape(m: TensorMap): number[] {
  return m.box.map((b, k) => Math.ceil(b / m.elementStrides[k]!));
}

/** True when `p` is a tensor map. */
export function isTensorMap(p: unknown): p is TensorMap {
  return typeof p === "object" && p !== null && (p as { kind?: unknown }).kind === "TensorMap";
}
