// The transposition of A's float8 block scales that gemm() launches before a main kernel built
// with config.scaleLoad "tma" (kernel.ts's header): X [m, ⌈k/128⌉] (the public layout, one row
// per row of A) → Y [⌈k/128⌉, m rounded up to 4] (MN-major: a K block's scales of consecutive
// rows contiguous, so that a TMA box can copy a tile's run of them; rows of 16 bytes, TMA's
// pitch), the columns past m zero. One thread per element of Y: its stores are consecutive
// (coalesced), its loads stride by ⌈k/128⌉ floats.
import { T } from "@tirx-ts/dsl";
import type { PrimFunc } from "@tirx-ts/core";
import { blockScaleShapeMN } from "./kernel.js";

/** Threads per CTA of the transposition kernel. */
const THREADS = 256;

/**
 * The kernel `gemm_scale_a_mn(X [m, kb], Y [kb, mp])`, float32, kb = ⌈k/128⌉ and mp = m rounded
 * up to a multiple of 4 ({@link blockScaleShapeMN}): Y[b, i] = X[i, b] for i < m, 0 for
 * m ≤ i < mp. m, k ≥ 1 (the caller's sizes; kb · mp below 2^31, as gemm()'s m and k give).
 * @example makeScaleTransposeA(130, 300) // X [130, 3] → Y [3, 132]
 */
export function makeScaleTransposeA(m: number, k: number): PrimFunc {
  const [kb, mp] = blockScaleShapeMN(m, k);
  return T.function(
    "gemm_scale_a_mn",
    { X: T.Tensor([m, kb], "float32"), Y: T.Tensor([kb, mp], "float32") },
    ({ X, Y }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: Math.ceil((kb * mp) / THREADS), block: THREADS }),
      });
      const idx = T.let_(
        "idx",
        T.add(T.mul(T.cuda.block_idx("x"), THREADS), T.cuda.thread_idx("x")),
      );
      T.if_(idx.lt(kb * mp), () => {
        const b = T.let_("b", T.floordiv(idx, mp));
        const i = T.let_("i", T.floormod(idx, mp));
        if (mp === m) Y.set([b, i], X.get([i, b]));
        else {
          T.if_(
            i.lt(m),
            () => Y.set([b, i], X.get([i, b])),
            () => Y.set([b, i], T.float32(0)),
          );
        }
      });
    },
  );
}
