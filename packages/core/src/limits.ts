/**
 * Largest tensor, in bytes (2^48, the GPU's virtual address space). Tensors up to 2^31 − 1 bytes
 * are addressed with 32-bit offsets, larger ones with 64-bit offsets (codegen-ptx
 * `emit/index-width.ts`).
 */
export const MAX_TENSOR_BYTES = 2 ** 48;

/** Largest tensor a simulated device holds, in bytes (its memory is one JS ArrayBuffer). */
export const MAX_SIM_TENSOR_BYTES = 2 ** 31 - 1;

/** Most copies of a body that full unrolling (T.unroll, tile-pattern repeats) may emit. */
export const MAX_UNROLL = 4096;

/** Static shared memory a CTA may use without opting in (bytes; CUDA programming guide). */
export const STATIC_SHARED_LIMIT = 48 * 1024;

/**
 * Deepest nesting of expressions and statements a function may have (TX2013). Every walker
 * behind the front doors (verify, compileToPtx, the simulator, printFunc) may then recurse.
 */
export const MAX_EXPR_DEPTH = 2048;
