// The transposition of A's float8 block scales that gemm() launches before a main kernel built
// with config.scaleLoad "tma" (kernel.ts's header): X [m, ⌈k/128⌉] (the public layout, one row
// per row of A) → Y [⌈k/128⌉, m rounded up to 4] (MN-major: a K block's scales of consecutive
// rows contiguous, so that a TMA box can copy a tile's run of them; rows of 16 bytes, TMA's
// pitch), the columns past m zero. A CTA per 32 × 32 tile of X, through shared memory: its loads
// run along X's rows and its stores along Y's, both coalesced (one thread per element of Y,
// loading down X's columns, read 32-byte sectors for 4 bytes each: 16.4 µs for X [8192, 224]
// on the H200, 9.6 µs tiled; bench/results/gemm-fp8-block-2026-12-04.md). Only where the main
// kernel cannot read A's scales as given: ⌈k/128⌉ not a multiple of 4 (tmaScalesAsGiven).
import { T } from "@tirx-ts/dsl";
import type { PrimFunc } from "@tirx-ts/core";
import { blockScaleShapeMN } from "./kernel.js";

/** The side of a CTA's square tile. */
const TILE = 32;
/** Rows of the tile a warp moves per step (256 threads: 8 warps). */
const ROWS = 8;

/**
 * The kernel `gemm_scale_a_mn(X [m, kb], Y [kb, mp])`, float32, kb = ⌈k/128⌉ and mp = m rounded
 * up to a multiple of 4 ({@link blockScaleShapeMN}): Y[b, i] = X[i, b] for i < m, 0 for
 * m ≤ i < mp. A CTA of 256 threads per 32 × 32 tile (a [32, 33] float32 shared buffer: the
 * padding column puts a tile column's 32 elements in 32 banks). m, k ≥ 1 (the caller's sizes;
 * kb · mp below 2^31, as gemm()'s m and k give).
 * @example makeScaleTransposeA(130, 300) // X [130, 3] → Y [3, 132]
 */
export function makeScaleTransposeA(m: number, k: number): PrimFunc {
  const [kb, mp] = blockScaleShapeMN(m, k);
  return T.function(
    "gemm_scale_a_mn",
    { X: T.Tensor([m, kb], "float32"), Y: T.Tensor([kb, mp], "float32") },
    ({ X, Y }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({
          grid: [Math.ceil(mp / TILE), Math.ceil(kb / TILE)],
          block: TILE * ROWS,
        }),
      });
      const tile = T.alloc_shared([TILE, TILE + 1], "float32", { name: "tile" });
      const tid = T.cuda.thread_idx("x");
      const tx = T.let_("tx", T.floormod(tid, TILE));
      const ty = T.let_("ty", T.floordiv(tid, TILE));
      const i0 = T.let_("i0", T.mul(T.cuda.block_idx("x"), TILE));
      const b0 = T.let_("b0", T.mul(T.cuda.block_idx("y"), TILE));
      // Load: row i0 + r of X, column b0 + tx (zero past m).
      for (const j of T.unroll(TILE / ROWS)) {
        const r = T.let_("r", T.add(ty, T.mul(j, ROWS)));
        const i = T.let_("i", T.add(i0, r));
        const b = T.let_("b", T.add(b0, tx));
        T.if_(b.lt(kb), () =>
          T.if_(
            i.lt(m),
            () => tile.set([r, tx], X.get([i, b])),
            () => tile.set([r, tx], T.float32(0)),
          ),
        );
      }
      T.cuda.cta_sync();
      // Store: row b0 + r of Y, column i0 + tx.
      for (const j of T.unroll(TILE / ROWS)) {
        const r = T.let_("r", T.add(ty, T.mul(j, ROWS)));
        const b = T.let_("b", T.add(b0, r));
        const i = T.let_("i", T.add(i0, tx));
        T.if_(b.lt(kb).and(i.lt(mp)), () => Y.set([b, i], tile.get([tx, r])));
      }
    },
  );
}
