// The D fragment of wgmma m64nNk16 with float32 accumulators (PTX ISA, wgmma "Matrix
// fragments for wgmma .m64nNk16", D): element 4j + i of a thread's accumulators is row
// 16·warp + lane/4 (+8 for i >= 2), column 8j + 2·(lane % 4) + i % 2 of the 64 × N tile.
import { T, type PrimExpr, type TileView } from "@tirx-ts/dsl";

/** Store the 64 × `n` D fragment held in `acc` (n/2 float32 per thread) to `D` [64, n]. */
export function storeAccumulators(D: TileView, acc: TileView, tid: PrimExpr, n: number): void {
  const warp = tid.floordiv(32);
  const lane = tid.mod(32);
  for (let j = 0; j < n / 8; j++) {
    for (let i = 0; i < 4; i++) {
      const r = warp
        .mul(16)
        .add(lane.floordiv(4))
        .add(i >= 2 ? 8 : 0);
      const c = lane
        .mod(4)
        .mul(2)
        .add(8 * j + (i % 2));
      D.set([r, c], acc.get([4 * j + i]));
    }
  }
}

/**
 * Fill `tiles` (each [rows, 64] float16) with ones, 128 threads (`tid` < 128) striding over
 * their elements; the caller publishes them (fence.proxy_async, cta_sync) for wgmma.
 */
export function fillOnes(tid: PrimExpr, ...tiles: TileView[]): void {
  for (const tile of tiles) {
    const count = tile.shape.reduce((a, b) => a * b, 1) / 128;
    for (const i of T.range(count)) {
      const e = tid.add(i.mul(128));
      tile.set([e.floordiv(64), e.mod(64)], T.float16(1));
    }
  }
}
