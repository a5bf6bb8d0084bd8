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
export const SPECIAL_BITS: Readonly<Record<"float32" | "float16" | "bfloat16", readonly number[]>> =
  {
    float32: [0x7f800001, 0x7fc01234, 0xffc00001, 0x80000000, 0xff800000, 0x00000001],
    float16: [0x7c01, 0x7e55, 0xfe01, 0x8000, 0xfc00, 0x0001],
    bfloat16: [0x7f81, 0x7fc5, 0xffc1, 0x8000, 0xff80, 0x0001],
  };

/** `n` elements of `dtype` cycling through SPECIAL_BITS[dtype], as little-endian bytes. */
export function specialBytes(dtype: keyof typeof SPECIAL_BITS, n: number): Uint8Array {
  const words = SPECIAL_BITS[dtype];
  const bits = dtype === "float32" ? new Uint32Array(n) : new Uint16Array(n);
  for (let i = 0; i < n; i++) bits[i] = words[i % words.length]!;
  return new Uint8Array(bits.buffer);
}
