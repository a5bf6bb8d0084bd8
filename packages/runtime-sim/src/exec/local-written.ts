/**
 * Which bytes of each thread's local memory (where the simulator keeps register arrays,
 * `T.alloc_local`) the thread has written since its CTA started, so that a read of a register
 * element no instruction wrote is reported (TX6028, exec/reports.ts reportUnwrittenLocal)
 * instead of reading the zero the simulator fills local memory with: on the GPU a register
 * holds whatever it held before (PTX ISA, "Initializers": only .const and .global variables are
 * initialized, to zero when no initializer is given; .reg and .local variables have no defined
 * value before their first write).
 *
 * Every path that touches local memory goes through here: element loads and stores
 * (compile/access.ts, which the generated functions call too; a local buffer is never batched),
 * fragment operands of ldmatrix / stmatrix / mma.sync (compile/fragment.ts: a fragment written
 * whole, a fragment read whole), and wgmma's register operands (compile/units/wgmma.ts: the
 * accumulator written by every mma_async, read only when it accumulates, A read from registers).
 *
 * One byte per local byte (`local`'s layout: thread t's byte b at `t * stride + b`), cleared at
 * every CTA start. Cost: a store marks its bytes, a tracked load tests them.
 */
export class LocalWritten {
  /** Per byte of local memory: 1 once its thread wrote it in the running CTA. */
  readonly bytes: Uint8Array;

  /** Flags for `size` bytes of local memory (every thread's). */
  constructor(size: number) {
    this.bytes = new Uint8Array(size);
  }

  /** A new CTA: nothing written. */
  reset(): void {
    this.bytes.fill(0);
  }

  /** Local bytes [a, a + n) (absolute in local memory) are written. */
  mark(a: number, n: number): void {
    const w = this.bytes;
    for (let b = a, e = a + n; b < e; b++) w[b] = 1;
  }

  /** The first byte of [a, a + n) (absolute in local memory) not written, or -1. */
  firstUnwritten(a: number, n: number): number {
    const w = this.bytes;
    for (let b = a, e = a + n; b < e; b++) if (w[b] === 0) return b;
    return -1;
  }
}
