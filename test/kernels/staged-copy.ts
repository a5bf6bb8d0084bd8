import type { DType, PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";

/**
 * A copy A → shared → B of `n` elements of `dtype` (n a multiple of 256) by 2 CTAs of 128
 * threads, element by element: Stores of bare loads of their own dtype, so `ld` and `st` only.
 */
export function stagedCopy(dtype: DType, n: number): PrimFunc {
  return T.function(
    `staged_${dtype}`,
    { A: T.Tensor([n], dtype), B: T.Tensor([n], dtype) },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 2, block: 128 }) });
      const tid = T.cuda.thread_idx("x");
      const cta = T.cuda.block_idx("x");
      const s = T.alloc_shared([n / 2], dtype);
      for (const j of T.range(n / 256)) {
        s.set(
          [tid.add(j.mul(128))],
          A.get([
            cta
              .mul(n / 2)
              .add(tid)
              .add(j.mul(128)),
          ]),
        );
      }
      T.cuda.cta_sync();
      for (const j of T.range(n / 256)) {
        B.set(
          [
            cta
              .mul(n / 2)
              .add(tid)
              .add(j.mul(128)),
          ],
          s.get([tid.add(j.mul(128))]),
        );
      }
    },
  );
}

/**
 * Element bit patterns a copy must keep, per dtype: a signaling NaN, quiet NaNs with payloads
 * (both signs), -0, -inf, the smallest denormal.
 */
export const SPECIAL_BITS = {
  float64: [
    0x7ff0000000000001n,
    0x7ff8000000001234n,
    0xfff8000000000001n,
    0x8000000000000000n,
    0xfff0000000000000n,
    0x0000000000000001n,
  ],
  float32: [0x7f800001n, 0x7fc01234n, 0xffc00001n, 0x80000000n, 0xff800000n, 0x00000001n],
  float16: [0x7c01n, 0x7e55n, 0xfe01n, 0x8000n, 0xfc00n, 0x0001n],
  bfloat16: [0x7f81n, 0x7fc5n, 0xffc1n, 0x8000n, 0xff80n, 0x0001n],
} as const;

/** The float dtypes of SPECIAL_BITS. */
export type SpecialDType = keyof typeof SPECIAL_BITS;

/** `n` elements of `dtype` cycling through SPECIAL_BITS[dtype], as little-endian bytes. */
export function specialBytes(dtype: SpecialDType, n: number): Uint8Array {
  const words = SPECIAL_BITS[dtype];
  const eb = dtype === "float64" ? 8 : dtype === "float32" ? 4 : 2;
  const out = new Uint8Array(n * eb);
  const dv = new DataView(out.buffer);
  for (let i = 0; i < n; i++) {
    const w = words[i % words.length]!;
    if (eb === 8) dv.setBigUint64(i * 8, w, true);
    else if (eb === 4) dv.setUint32(i * 4, Number(w), true);
    else dv.setUint16(i * 2, Number(w), true);
  }
  return out;
}
