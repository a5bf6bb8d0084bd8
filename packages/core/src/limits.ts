/** Largest tensor, in bytes: offsets are computed in 32 bits (int32 elements, byte offsets). */
export const MAX_TENSOR_BYTES = 2 ** 31 - 1;

/** Most copies of a body that full unrolling (T.unroll, tile-pattern repeats) may emit. */
export const MAX_UNROLL = 4096;

/** Static shared memory a CTA may use without opting in (bytes; CUDA programming guide). */
export const STATIC_SHARED_LIMIT = 48 * 1024;
