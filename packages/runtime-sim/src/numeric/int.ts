// Integer wrapping lives in core (numeric/int.ts), next to the op table's semantics that use it.
export { bigWrapper, floatToBig, floatToInt, intRange, intWrapper } from "@tirx-ts/core";
