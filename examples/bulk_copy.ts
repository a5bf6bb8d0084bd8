// Hopper bulk copies, one tile: thread 0 moves a 16 KiB float32 tile global → shared with one
// cp.async.bulk that completes on an mbarrier (transaction bytes), every thread waits on the
// barrier's phase, then thread 0 writes the tile back out with a shared → global bulk copy.
// Needs sm_90. Run: npx tsx examples/bulk_copy.ts
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

const ROWS = 64;
const COLS = 64;
const TILE_BYTES = ROWS * COLS * 4;

export const bulk_copy = T.function(
  "bulk_copy",
  { A: T.Tensor([ROWS, COLS], "float32"), B: T.Tensor([ROWS, COLS], "float32") },
  ({ A, B }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
    const tid = T.cuda.thread_idx("x");
    const tile = T.alloc_shared([ROWS, COLS], "float32", { name: "tile" });
    const bar = T.alloc_shared([1], "uint64", { name: "bar" });
    const leader = tid.eq(0);
    T.if_(leader, () => {
      T.ptx.mbarrier.init(bar.sub(0), 1);
      T.ptx.fence.mbarrier_init();
    });
    T.cuda.cta_sync();
    const load = T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"];
    T.if_(leader, () => {
      T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), TILE_BYTES);
      T.cuda.tile.apply(load, tile.rearrange("r c -> (r c)"), A.rearrange("r c -> (r c)"), {
        chunk_bytes: TILE_BYTES,
        mbar: bar.sub(0),
      });
    });
    T.ptx.mbarrier.try_wait(bar.sub(0), 0);
    const store = T.ptx["cp.async.bulk.global.shared::cta.bulk_group"];
    T.if_(leader, () => {
      // One bulk store per row: 64 repeats of 256 bytes.
      T.cuda.tile.apply(store, B, tile, { chunk_bytes: COLS * 4 });
      T.ptx.cp.async_.bulk.commit_group();
      T.ptx.cp.async_.bulk.wait_group(0);
    });
  },
);

/**
 * Run on `dev` and check B == A for A = (i * 7) % 1000 - 500 as float32.
 * `kernel` (default: this file's) is what runs; examples/script/bulk_copy.ts passes its
 * script-mode twin.
 */
export function runExample(
  dev: DeviceLike = device(),
  kernel: PrimFunc = bulk_copy,
): ExampleResult {
  const run = compile(kernel, { target: "cuda", arch: "sm_90" });
  const x = Float32Array.from({ length: ROWS * COLS }, (_, i) => ((i * 7) % 1000) - 500);
  const a = tensor(x, { shape: [ROWS, COLS], dtype: "float32", device: dev });
  const b = tensor.zeros([ROWS, COLS], "float32", dev);
  run(a, b);
  return checkOutput(b, x, [a]);
}

if (isMain(import.meta.url)) runAsMain("bulk_copy", runExample);
