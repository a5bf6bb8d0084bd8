// Float rounding lives in core (numeric/float.ts), next to the op table's semantics that use it.
export {
  bf16Bits,
  bf16Value,
  bigToFloat,
  f16Bits,
  f16Value,
  floatRounder,
  roundBf16,
  roundF16,
  roundToFormat,
} from "@tirx-ts/core";
