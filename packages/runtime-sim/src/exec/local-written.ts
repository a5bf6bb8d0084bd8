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
 * every CTA start. Cost: an element store marks its bytes and a tracked element load tests them
 * with one DataView access for 1, 2 and 4 bytes (two for 8: markElement, elementWritten).
 */
export class LocalWritten {
  /** Per byte of local memory: 1 once its thread wrote it in the running CTA. */
  readonly bytes: Uint8Array;
  /** `bytes` as a DataView (the element marks and tests). */
  readonly view: DataView;

  /** Flags for `size` bytes of local memory (every thread's). */
  constructor(size: number) {
    this.bytes = new Uint8Array(size);
    this.view = new DataView(this.bytes.buffer);
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

/** Four written flags, as one 32-bit word. */
const ALL4 = 0x01010101;

/**
 * Mark the `n` local bytes at `a` (absolute) written, through `w` (LocalWritten.view): one store
 * for an element of 1, 2 or 4 bytes, two for 8.
 */
export function markElement(w: DataView, a: number, n: number): void {
  switch (n) {
    case 4:
      w.setUint32(a, ALL4);
      return;
    case 2:
      w.setUint16(a, 0x0101);
      return;
    case 1:
      w.setUint8(a, 1);
      return;
    case 8:
      w.setUint32(a, ALL4);
      w.setUint32(a + 4, ALL4);
      return;
    default:
      for (let b = a, e = a + n; b < e; b++) w.setUint8(b, 1);
  }
}

/** True when every one of the `n` local bytes at `a` (absolute) is written (see markElement). */
export function elementWritten(w: DataView, a: number, n: number): boolean {
  switch (n) {
    case 4:
      return w.getUint32(a) === ALL4;
    case 2:
      return w.getUint16(a) === 0x0101;
    case 1:
      return w.getUint8(a) === 1;
    case 8:
      return w.getUint32(a) === ALL4 && w.getUint32(a + 4) === ALL4;
    default:
      for (let b = a, e = a + n; b < e; b++) if (w.getUint8(b) === 0) return false;
      return true;
  }
}
