// TMA tensor copies: a tiled transpose B = Aᵀ of a 96 × 200 float32 matrix. Each CTA loads one
// 32 × 32 box of A with cp.async.bulk.tensor into a 128B-swizzled shared tile (so the column
// reads below hit 32 different banks), transposes it into a second tile, and stores that with a
// tensor store. Edge boxes reach past the matrix: the load fills zeros there and the store
// writes only the elements inside B. Needs sm_90. Run: npx tsx examples/tma_transpose.ts
import {
  T,
  checkOutput,
  compile,
  device,
  isMain,
  runAsMain,
  tensor,
  type DeviceLike,
  type ExampleResult,
  type PrimFunc,
} from "tirx-ts";

const ROWS = 96;
const COLS = 200;
const TILE = 32;

export const tma_transpose = T.function(
  "tma_transpose",
  { A: T.Tensor([ROWS, COLS], "float32"), B: T.Tensor([COLS, ROWS], "float32") },
  ({ A, B }) => {
    T.device_entry({
      launch: T.cuda.LaunchConfig({
        grid: [Math.ceil(COLS / TILE), Math.ceil(ROWS / TILE)],
        block: 256,
      }),
    });
    const tid = T.cuda.thread_idx("x");
    const bx = T.cuda.block_idx("x");
    const by = T.cuda.block_idx("y");
    const mapA = T.tensormap_encode_tiled(A, { box: [TILE, TILE], swizzle: "128B" });
    const mapB = T.tensormap_encode_tiled(B, { box: [TILE, TILE] });
    const tileA = T.alloc_shared([TILE, TILE], "float32", {
      name: "tileA",
      layout: T.swizzle_mode("128B"),
    });
    const tileB = T.alloc_shared([TILE, TILE], "float32", { name: "tileB", align: 128 });
    const bar = T.alloc_shared([1], "uint64", { name: "bar" });
    const leader = tid.eq(0);
    T.if_(leader, () => {
      T.ptx.mbarrier.init(bar.sub(0), 1);
      T.ptx.fence.mbarrier_init();
    });
    T.cuda.cta_sync();
    T.if_(leader, () => {
      T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), TILE * TILE * 4);
      T.cuda.tile.apply(
        T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"],
        tileA,
        A,
        { tensor_map: mapA, coords: [by.mul(TILE), bx.mul(TILE)], mbar: bar.sub(0) },
      );
    });
    T.ptx.mbarrier.try_wait(bar.sub(0), 0);
    // 256 threads, 4 elements each: tileB[i][j] = tileA[j][i].
    for (const k of T.range((TILE * TILE) / 256)) {
      const e = k.mul(256).add(tid);
      const i = e.floordiv(TILE);
      const j = e.floormod(TILE);
      tileB.set([i, j], tileA.get([j, i]));
    }
    // The tensor store reads tileB through the async proxy.
    T.ptx.fence.proxy_async();
    T.cuda.cta_sync();
    T.if_(leader, () => {
      T.cuda.tile.apply(
        T.ptx["cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"],
        B,
        tileB,
        { tensor_map: mapB, coords: [bx.mul(TILE), by.mul(TILE)] },
      );
      T.ptx.cp.async_.bulk.commit_group();
      T.ptx.cp.async_.bulk.wait_group(0);
    });
  },
);

/**
 * Run on `dev` and check B = Aᵀ for A[r][c] = r * 1000 + c.
 * `kernel` (default: this file's) is what runs; examples/script/tma_transpose.ts passes its
 * script-mode twin.
 */
export function runExample(
  dev: DeviceLike = device(),
  kernel: PrimFunc = tma_transpose,
): ExampleResult {
  const run = compile(kernel, { target: "cuda", arch: "sm_90" });
  const x = Float32Array.from(
    { length: ROWS * COLS },
    (_, e) => Math.floor(e / COLS) * 1000 + (e % COLS),
  );
  const want = Float32Array.from(
    { length: COLS * ROWS },
    (_, e) => (e % ROWS) * 1000 + Math.floor(e / ROWS),
  );
  const a = tensor(x, { shape: [ROWS, COLS], dtype: "float32", device: dev });
  const b = tensor.zeros([COLS, ROWS], "float32", dev);
  run(a, b);
  return checkOutput(b, want, [a]);
}

if (isMain(import.meta.url)) runAsMain("tma_transpose", runExample);
