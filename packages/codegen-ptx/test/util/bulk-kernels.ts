// Bulk-copy kernels written with the DSL, kept apart from the tests so that the source spans in
// their PTX comments do not move when a test is edited.
import type { PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";

export interface OneTileOptions {
  /** Destination spelling of the load: `.shared::cta` (PTX 8.6) or `.shared::cluster` (8.0). */
  readonly dstSpace?: "shared::cta" | "shared::cluster";
  /** Add `.L2::cache_hint` to both copies, with the policy from a uint64 parameter. */
  readonly cacheHint?: boolean;
  /** Guard the load with `pred = flag != 0` from an int32 parameter. */
  readonly pred?: boolean;
}

/**
 * One 1 KiB float32 tile: thread 0 initialises the mbarrier, announces the bytes and loads the
 * tile global → shared; every thread waits on phase 0; thread 0 stores it back shared → global
 * as four 256-byte rows and waits for the store.
 */
export function oneTile(opts: OneTileOptions = {}): PrimFunc {
  const hint = opts.cacheHint ? ".L2::cache_hint" : "";
  const load =
    T.ptx[
      `cp.async.bulk.${opts.dstSpace ?? "shared::cta"}.global.mbarrier::complete_tx::bytes${hint}`
    ];
  const store = T.ptx[`cp.async.bulk.global.shared::cta.bulk_group${hint}`];
  return T.function(
    "one_tile",
    {
      A: T.Tensor([4, 64], "float32"),
      B: T.Tensor([4, 64], "float32"),
      policy: T.uint64,
      flag: T.int32,
    },
    ({ A, B, policy, flag }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const tile = T.alloc_shared([4, 64], "float32");
      const bar = T.alloc_shared([1], "uint64");
      const extra = {
        ...(opts.cacheHint ? { cache_policy: policy } : {}),
      };
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.init(bar.sub(0), 1);
        T.ptx.fence.mbarrier_init();
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 1024);
        T.cuda.tile.apply(load, tile.rearrange("r c -> (r c)"), A.rearrange("r c -> (r c)"), {
          chunk_bytes: 1024,
          mbar: bar.sub(0),
          ...extra,
          ...(opts.pred ? { pred: flag.ne(0) } : {}),
        });
      });
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      T.if_(tid.eq(0), () => {
        T.cuda.tile.apply(store, B, tile, { chunk_bytes: 256, ...extra });
        T.ptx.cp.async_.bulk.commit_group();
        T.ptx.cp.async_.bulk.wait_group(0);
      });
    },
  );
}

/** Every mbarrier operation on a barrier array indexed at run time: bars[tid % 2]. */
export function mbarrierOps(): PrimFunc {
  return T.function("mbarrier_ops", { A: T.Tensor([32], "float32") }, () => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
    const tid = T.cuda.thread_idx("x");
    const bars = T.alloc_shared([2], "uint64");
    const i = T.let_("i", tid.floormod(2));
    T.if_(tid.lt(2), () => T.ptx.mbarrier.init(bars.sub(i), 16));
    T.ptx.fence.mbarrier_init();
    T.ptx.fence.proxy_async();
    T.cuda.cta_sync();
    T.ptx.mbarrier.arrive(bars.sub(i));
    T.ptx.mbarrier.try_wait(bars.sub(i), 0);
    T.ptx.mbarrier.arrive(bars.sub(1));
    T.ptx.cp.async_.bulk.wait_group_read(0);
  });
}

/** mbarrier.init and arrive alone: no sm_90 feature. */
export function initArrive(): PrimFunc {
  return T.function("init_arrive", { A: T.Tensor([32], "float32") }, () => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
    const tid = T.cuda.thread_idx("x");
    const bar = T.alloc_shared([1], "uint64");
    T.if_(tid.eq(0), () => T.ptx.mbarrier.init(bar.sub(0), 32));
    T.cuda.cta_sync();
    T.ptx.mbarrier.arrive(bar.sub(0));
  });
}

/** A shared → global bulk store alone: its opcode is the first sm_90 instruction. */
export function storeOnly(): PrimFunc {
  return T.function("store_only", { B: T.Tensor([64], "float32") }, ({ B }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
    const tile = T.alloc_shared([64], "float32");
    T.cuda.tile.apply(T.ptx["cp.async.bulk.global.shared::cta.bulk_group"], B, tile, {
      chunk_bytes: 256,
    });
    T.ptx.cp.async_.bulk.commit_group();
    T.ptx.cp.async_.bulk.wait_group(0);
  });
}
