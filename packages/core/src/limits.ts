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
 * Deepest nesting of expressions and statements a function may have (TX2013). Every front door
 * (the builder, verify, the passes, compileToPtx, the printers, the simulator) takes IR this deep:
 * statement walkers keep their own stacks, and expressions higher than 64 levels are walked
 * bottom-up (analysis/deep.ts), so no JS recursion follows the nesting. What recurses elsewhere
 * is bounded instead: prettier (skipped past 256 levels), the TypeScript parser of script mode
 * (TX2013 where it gives up), and the simulator's coroutines for waits (512 nested statements,
 * TX2010).
 */
export const MAX_EXPR_DEPTH = 2048;

/**
 * Most operations one expression may have, counted as a tree: a value used twice counts twice,
 * as code generation computes it twice (TX2018). Walkers are linear in this count, so an
 * expression that doubles itself (`e = e.add(e)` in a loop) stops at the author's line instead
 * of taking exponential time.
 */
export const MAX_EXPR_NODES = 65536;

/**
 * Local memory a thread may have, in bytes: 512 KiB (CUDA C++ Programming Guide, "Features and
 * Technical Specifications": maximum amount of local memory per thread). The sum of a kernel's
 * `T.alloc_local` arrays is checked against it (TX2020).
 */
export const MAX_LOCAL_BYTES = 512 * 1024;

/**
 * Shared memory a CTA may have on any supported target, static and dynamic together, in bytes:
 * 227 KiB, sm_90's (CUDA C++ Programming Guide, "Features and Technical Specifications": maximum
 * amount of shared memory per thread block; sm_80 and sm_87 have 163 KiB, sm_86 and sm_89 99 KiB,
 * which code generation checks per target).
 */
export const MAX_SHARED_PER_CTA = 227 * 1024;

/**
 * Longest PTX identifier, in characters (PTX ISA, "Identifiers": no maximum is specified, and
 * every implementation supports at least 1024).
 */
export const MAX_PTX_IDENT = 1024;

/**
 * Most errors the verifier collects from one kernel before it stops and reports them (esbuild's
 * logger stops likewise; a kernel with more shows the first this many, in source order).
 */
export const MAX_DIAGNOSTICS = 20;
