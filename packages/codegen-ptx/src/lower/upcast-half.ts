/**
 * float16/bfloat16 arithmetic through float32 is a core pass now (`upcast-half`, run by
 * `emitPtx` before emission); this module keeps codegen's former entry points.
 */
export { directCast, upcastHalf } from "@tirx-ts/core";
