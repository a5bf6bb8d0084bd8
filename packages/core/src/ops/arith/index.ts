import type { OpDef } from "../op.js";
import { BINARY_OPS } from "./binary.js";
import { COMPARE_OPS } from "./compare.js";
import { FMA } from "./fma.js";
import { FP8_CVT_OPS } from "./cvt-fp8.js";
import { ROUNDING_OPS } from "./rounding.js";
import { PACKED_OPS } from "./packed.js";
import { VECTOR_OPS } from "./vector.js";

/**
 * The arith family: binary operators, comparisons (looked up by the IR node's `op`), fma, the
 * packed float8 conversions, the rounding-mode variants (rounding.ts), the packed 16-bit float
 * pairs (packed.ts), the multi-register vectors (vector.ts).
 */
export const ARITH_OPS: readonly OpDef[] = [
  ...Object.values(BINARY_OPS),
  ...Object.values(COMPARE_OPS),
  FMA,
  ...FP8_CVT_OPS,
  ...ROUNDING_OPS,
  ...PACKED_OPS,
  ...VECTOR_OPS,
];

export { arithFamily, binaryOp, BINARY_OPS, type ArithFamily } from "./binary.js";
export { compareOpDef, COMPARE_OPS, setp } from "./compare.js";
export { dyadicFma, exactFma, FMA } from "./fma.js";
export { lowerFloatRem, type FloatRemKind } from "./float-rem-ptx.js";
export { fp8CastOp, FP8_CVT_OPS } from "./cvt-fp8.js";
export { PACKED_OPS } from "./packed.js";
export { VECTOR_OPS, VECTORS } from "./vector.js";
export { INT_ROUND_MODES, ROUND_MODES, ROUNDING_OPS } from "./rounding.js";
