// A streaming copy through shared memory with Hopper bulk copies: each CTA walks its tiles
// through STAGES shared-memory stages, one mbarrier per stage. Thread 0 keeps STAGES loads in
// flight (global → shared, completing on the stage's mbarrier with expect_tx), stores each tile
// back with a shared → global bulk copy, and reloads a stage once its store has read it
// (cp.async.bulk.wait_group.read). Needs sm_90.
// Run: npx tsx examples/bulk_pipeline.ts     (bench/bulk-copy.ts runs it on >= 1 GiB)
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

/** Shape of a pipeline: tensor size, tile size, stages and CTAs. */
export interface PipelineConfig {
  /** float32 elements of the input and output tensors. */
  readonly elements: number;
  /** Bytes of one tile (one bulk copy); a multiple of 16. */
  readonly tileBytes: number;
  /** Shared-memory stages per CTA (>= 2: a stage is refilled once the next one is in use), one mbarrier each. */
  readonly stages: number;
  /** CTAs; each takes tiles cta, cta + grid, cta + 2·grid, ... */
  readonly grid: number;
}

/**
 * Build the pipelined copy kernel for `cfg`.
 * @throws Error when the tensor does not split into whole tiles per CTA, or stages < 2.
 */
export function makeBulkPipeline(cfg: PipelineConfig): PrimFunc {
  const { elements, tileBytes, stages, grid } = cfg;
  const tileElems = tileBytes / 4;
  const tiles = elements / tileElems;
  const perCta = tiles / grid;
  if (!Number.isInteger(stages) || stages < 2) {
    throw new Error(`bulk_pipeline: needs at least 2 stages, got ${stages}`);
  }
  if (
    !Number.isInteger(tileElems) ||
    !Number.isInteger(tiles) ||
    !Number.isInteger(perCta) ||
    perCta < 1
  ) {
    throw new Error(
      `bulk_pipeline: ${elements} float32 do not split into ${grid} CTAs of whole ${tileBytes}-byte tiles`,
    );
  }
  const load = T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"];
  const store = T.ptx["cp.async.bulk.global.shared::cta.bulk_group"];
  return T.function(
    "bulk_pipeline",
    { A: T.Tensor([tiles, tileElems], "float32"), B: T.Tensor([tiles, tileElems], "float32") },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const cta = T.cuda.block_idx("x");
      const buf = T.alloc_shared([stages, tileElems], "float32", { name: "buf" });
      const bars = T.alloc_shared([stages], "uint64", { name: "bars" });
      // Tile k of this CTA is row cta + k * grid of A and B.
      const loadTile = (k: ReturnType<typeof T.int32>, s: ReturnType<typeof T.int32>) => {
        T.ptx.mbarrier.arrive.expect_tx(bars.sub(s), tileBytes);
        T.cuda.tile.apply(load, buf.sub(s, ":"), A.sub(cta.add(k.mul(grid)), ":"), {
          chunk_bytes: tileBytes,
          mbar: bars.sub(s),
        });
      };
      T.if_(tid.eq(0), () => {
        for (const s of T.range(stages)) T.ptx.mbarrier.init(bars.sub(s), 1);
        T.ptx.fence.mbarrier_init();
        for (const k of T.range(Math.min(stages, perCta))) loadTile(k, k);
        for (const k of T.range(perCta)) {
          const s = T.let_("stage", k.floormod(stages));
          T.ptx.mbarrier.try_wait(bars.sub(s), k.floordiv(stages).floormod(2));
          T.cuda.tile.apply(store, B.sub(cta.add(k.mul(grid)), ":"), buf.sub(s, ":"), {
            chunk_bytes: tileBytes,
          });
          T.ptx.cp.async_.bulk.commit_group();
          // Refill the stage of tile k - 1 once its store has read it (all but the newest group).
          const refill = k.ge(1).and(k.add(stages - 1).lt(perCta));
          T.if_(refill, () => {
            T.ptx.cp.async_.bulk.wait_group_read(1);
            loadTile(k.add(stages - 1), k.add(stages - 1).floormod(stages));
          });
        }
        T.ptx.cp.async_.bulk.wait_group(0);
      });
    },
  );
}

/** The example's size: 4 MiB through 32 CTAs × 3 stages of 8 KiB, small enough for the simulator. */
export const EXAMPLE: PipelineConfig = { elements: 1 << 20, tileBytes: 8192, stages: 3, grid: 32 };
export const bulk_pipeline = makeBulkPipeline(EXAMPLE);

/**
 * Run on `dev` and check B == A.
 * `kernel` (default: this file's) is what runs; examples/script/bulk_pipeline.ts passes its
 * script-mode twin.
 */
export function runExample(
  dev: DeviceLike = device(),
  cfg: PipelineConfig = EXAMPLE,
  kernel?: PrimFunc,
): ExampleResult {
  const fn = kernel ?? (cfg === EXAMPLE ? bulk_pipeline : makeBulkPipeline(cfg));
  const run = compile(fn, { target: "cuda", arch: "sm_90" });
  const [rows, cols] = [cfg.elements / (cfg.tileBytes / 4), cfg.tileBytes / 4];
  const x = Float32Array.from({ length: cfg.elements }, (_, i) => (i % 65521) * 0.25 - 1000);
  const a = tensor(x, { shape: [rows, cols], dtype: "float32", device: dev });
  const b = tensor.zeros([rows, cols], "float32", dev);
  run(a, b);
  return checkOutput(b, x, [a]);
}

if (isMain(import.meta.url)) runAsMain("bulk_pipeline", (dev) => runExample(dev));
