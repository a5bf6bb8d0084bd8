// Kernels of T.tile.copy_async's TMA and bulk paths (test/tile-copy-async-tma.test.ts on the
// simulator, test/gpu/tile-copy-async-tma.test.ts on the GPU): each with its inputs and the
// output the host computes (every element distinct, so a misplaced element shows).
import { T } from "tirx-ts";
import { fp8Value } from "@tirx-ts/core";
import type { TmaCase } from "../tma/cases.js";

/** 0, 1, 2, ... (distinct and exact in float16 below 2048). */
const ramp = (n: number): number[] => Array.from({ length: n }, (_, i) => i % 2048);

/** The mbarrier of one load: init by thread 0, then a CTA barrier. */
function initBar(tid: ReturnType<typeof T.cuda.thread_idx>, cluster = false) {
  const bar = T.alloc_shared([1], "uint64", { name: "bar" });
  T.if_(tid.eq(0), () => {
    T.ptx.mbarrier.init(bar.sub(0), 1);
    T.ptx.fence.mbarrier_init();
  });
  if (cluster) {
    T.ptx.barrier.cluster.arrive();
    T.ptx.barrier.cluster.wait();
  } else T.cuda.cta_sync();
  return bar;
}

/**
 * A [64, 128] float16; CTA b loads the 64 × 64 tile at column 64·b (a runtime coordinate) by one
 * TMA box into a 128B-swizzled shared tile and reads it back through the tile into B[b].
 */
export function swz128Load(): TmaCase {
  const fn = T.function(
    "tile_tma_swz128",
    { A: T.Tensor([64, 128], "float16"), B: T.Tensor([2, 64, 64], "float16") },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [2, 1], block: 64 }) });
      const tid = T.cuda.thread_idx("x");
      const bx = T.cuda.block_idx("x");
      const sA = T.alloc_shared([64, 64], "float16", {
        name: "sA",
        layout: T.swizzle_mode("128B"),
        align: 1024,
      });
      const bar = initBar(tid);
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 64 * 64 * 2);
        T.tile.copy_async(sA, A.rearrange("r (t c) -> t r c", { c: 64 }).sub(bx), {
          mbar: bar.sub(0),
        });
      });
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      for (const k of T.range(64)) B.set([bx, k, tid], sA.get([k, tid]));
    },
  );
  const a = ramp(64 * 128);
  return {
    name: "swz128 load",
    fn,
    inputs: [{ data: a, shape: [64, 128], dtype: "float16" }],
    out: { shape: [2, 64, 64], dtype: "float16" },
    expected: () =>
      Array.from({ length: 2 * 64 * 64 }, (_, e) => {
        const b = Math.floor(e / 4096);
        const r = Math.floor(e / 64) % 64;
        return a[r * 128 + b * 64 + (e % 64)]!;
      }),
  };
}

/**
 * A [64, 256] float8_e4m3 (a UINT8 tensor map); CTA b loads the 64 × 128 tile at column 128·b by
 * one TMA box into a 128B-swizzled shared tile (128 one-byte elements are one swizzle span) and
 * reads it back into B[b]. Elements cycle through the 254 finite e4m3 codes, shifted by 3 every
 * 254 elements, so a misplaced element shows.
 */
export function fp8Swz128Load(): TmaCase {
  const fn = T.function(
    "tile_tma_fp8_swz128",
    { A: T.Tensor([64, 256], "float8_e4m3"), B: T.Tensor([2, 64, 128], "float8_e4m3") },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [2, 1], block: 128 }) });
      const tid = T.cuda.thread_idx("x");
      const bx = T.cuda.block_idx("x");
      const sA = T.alloc_shared([64, 128], "float8_e4m3", {
        name: "sA",
        layout: T.swizzle_mode("128B"),
        align: 1024,
      });
      const bar = initBar(tid);
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 64 * 128);
        T.tile.copy_async(sA, A.rearrange("r (t c) -> t r c", { c: 128 }).sub(bx), {
          mbar: bar.sub(0),
        });
      });
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      for (const k of T.range(64)) B.set([bx, k, tid], sA.get([k, tid]));
    },
  );
  const finite = Array.from({ length: 256 }, (_, c) => fp8Value(c, "e4m3")).filter((v) => v === v);
  const a = Array.from(
    { length: 64 * 256 },
    (_, i) => finite[(i + 3 * Math.floor(i / finite.length)) % finite.length]!,
  );
  return {
    name: "float8_e4m3 swz128 load",
    fn,
    inputs: [{ data: a, shape: [64, 256], dtype: "float8_e4m3" }],
    out: { shape: [2, 64, 128], dtype: "float8_e4m3" },
    expected: () =>
      Array.from({ length: 2 * 64 * 128 }, (_, e) => {
        const b = Math.floor(e / 8192);
        const r = Math.floor(e / 128) % 64;
        return a[r * 256 + b * 128 + (e % 128)]!;
      }),
  };
}

/**
 * A [64, 256] float16; CTA b loads the 64 × 128 tile at column 128·b under a 128B swizzle: the
 * inner 128 elements are wider than the 64-element swizzle span, so the dst is a column-block
 * view (buffer [2, 64, 64], view "b r c -> r b c") and the copy is two 64 × 64 boxes, block 1 at
 * shared offset 64·64. Read back through the blocks into B[b].
 */
export function colBlocksLoad(): TmaCase {
  const fn = T.function(
    "tile_tma_colblocks",
    { A: T.Tensor([64, 256], "float16"), B: T.Tensor([2, 64, 128], "float16") },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [2, 1], block: 64 }) });
      const tid = T.cuda.thread_idx("x");
      const bx = T.cuda.block_idx("x");
      const sA = T.alloc_shared([2, 64, 64], "float16", {
        name: "sA",
        layout: T.swizzle_mode("128B"),
        align: 1024,
      });
      const bar = initBar(tid);
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 64 * 128 * 2);
        T.tile.copy_async(
          sA.rearrange("b r c -> r b c"),
          A.rearrange("r (t b c) -> t r b c", { b: 2, c: 64 }).sub(bx),
          { mbar: bar.sub(0) },
        );
      });
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      for (const k of T.range(128)) {
        const e = k.mul(64).add(tid);
        const r = e.floordiv(128);
        const c = e.floormod(128);
        B.set([bx, r, c], sA.get([c.floordiv(64), r, c.floormod(64)]));
      }
    },
  );
  const a = ramp(64 * 256).map((x, i) => (x + Math.floor(i / 2048)) % 2048);
  return {
    name: "column blocks",
    fn,
    inputs: [{ data: a, shape: [64, 256], dtype: "float16" }],
    out: { shape: [2, 64, 128], dtype: "float16" },
    expected: () =>
      Array.from({ length: 2 * 64 * 128 }, (_, e) => {
        const b = Math.floor(e / 8192);
        const r = Math.floor(e / 128) % 64;
        return a[r * 256 + b * 128 + (e % 128)]!;
      }),
  };
}

/**
 * A [512, 16] float32; one CTA loads the 512 × 8 column block at column 8 (unswizzled): 512 rows
 * are over the 256-row box limit, so two 256 × 8 boxes, the second at shared offset 256·8; then a
 * TMA store writes the tile to B.
 */
export function rowSplitLoadStore(): TmaCase {
  const fn = T.function(
    "tile_tma_rows",
    { A: T.Tensor([512, 16], "float32"), B: T.Tensor([512, 8], "float32") },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const sA = T.alloc_shared([512, 8], "float32", { name: "sA", align: 128 });
      const bar = initBar(tid);
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 512 * 8 * 4);
        T.tile.copy_async(sA, A.rearrange("r (t c) -> t r c", { c: 8 }).sub(1), {
          mbar: bar.sub(0),
        });
      });
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      T.if_(tid.eq(0), () => {
        T.tile.copy_async(B, sA, { dispatch: "tma" });
        T.ptx.cp.async_.bulk.commit_group();
        T.ptx.cp.async_.bulk.wait_group(0);
      });
    },
  );
  const a = ramp(512 * 16).map((x, i) => x + 4096 * Math.floor(i / 2048));
  return {
    name: "row split + store",
    fn,
    inputs: [{ data: a, shape: [512, 16], dtype: "float32" }],
    out: { shape: [512, 8], dtype: "float32" },
    expected: () =>
      Array.from({ length: 512 * 8 }, (_, e) => a[Math.floor(e / 8) * 16 + 8 + (e % 8)]!),
  };
}

/**
 * A [2, 1024] float32 → B: CTA b moves row b by one cp.async.bulk load (both sides one 4 KiB
 * run, unswizzled: the bulk path) and one bulk store.
 */
export function bulkLoadStore(): TmaCase {
  const fn = T.function(
    "tile_bulk",
    { A: T.Tensor([2, 1024], "float32"), B: T.Tensor([2, 1024], "float32") },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [2, 1], block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const bx = T.cuda.block_idx("x");
      const s = T.alloc_shared([1024], "float32", { name: "s" });
      const bar = initBar(tid);
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 4096);
        T.tile.copy_async(s, A.sub(bx), { mbar: bar.sub(0) });
      });
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      T.if_(tid.eq(0), () => {
        T.tile.copy_async(B.sub(bx), s);
        T.ptx.cp.async_.bulk.commit_group();
        T.ptx.cp.async_.bulk.wait_group(0);
      });
    },
  );
  const a = ramp(2048).map((x, i) => x * 3 + (i >> 11));
  return {
    name: "bulk load + store",
    fn,
    inputs: [{ data: a, shape: [2, 1024], dtype: "float32" }],
    out: { shape: [2, 1024], dtype: "float32" },
    expected: () => a,
  };
}

/**
 * A cluster of 2 CTAs: rank r loads rows 16·r … of A [32, 64] float16 and multicasts them
 * (`cta_mask` 0b11) into both CTAs' tile [2, 16, 64]; each CTA waits for both halves (one
 * expect_tx of the whole tile) and writes its tile to B[32·cta …].
 */
export function multicastLoad(): TmaCase {
  const fn = T.function(
    "tile_tma_multicast",
    { A: T.Tensor([32, 64], "float16"), B: T.Tensor([64, 64], "float16") },
    ({ A, B }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: [2, 1], block: 128, cluster: [2, 1, 1] }),
      });
      const tid = T.cuda.thread_idx("x");
      const cta = T.cuda.block_idx("x");
      const rank = T.cuda.cluster_ctarank();
      const tile = T.alloc_shared([2, 16, 64], "float16", { name: "tile", align: 1024 });
      const bar = initBar(tid, true);
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 32 * 64 * 2);
        T.tile.copy_async(tile.sub(rank), A.rearrange("(h r) c -> h r c", { r: 16 }).sub(rank), {
          mbar: bar.sub(0),
          cta_mask: T.uint16(3),
        });
      });
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      for (const k of T.range(16)) {
        const e = k.mul(128).add(tid);
        const i = e.floordiv(64);
        const j = e.floormod(64);
        B.set([cta.mul(32).add(i), j], tile.get([i.floordiv(16), i.floormod(16), j]));
      }
      T.ptx.barrier.cluster.arrive();
      T.ptx.barrier.cluster.wait();
    },
  );
  const a = ramp(32 * 64);
  return {
    name: "multicast",
    fn,
    inputs: [{ data: a, shape: [32, 64], dtype: "float16" }],
    out: { shape: [64, 64], dtype: "float16" },
    expected: () => [...a, ...a],
  };
}

/**
 * A [16, 64] float32; one CTA loads columns 32 … 63 under a 64B swizzle (a span of 16 float32):
 * two 16 × 16 column blocks (buffer [2, 16, 16], block 1 at shared offset 256) read back through
 * the blocks into B.
 */
export function swz64Blocks(): TmaCase {
  const fn = T.function(
    "tile_tma_swz64",
    { A: T.Tensor([16, 64], "float32"), B: T.Tensor([16, 32], "float32") },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([2, 16, 16], "float32", {
        name: "s",
        layout: T.swizzle_mode("64B"),
      });
      const bar = initBar(tid);
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 16 * 32 * 4);
        T.tile.copy_async(
          s.rearrange("b r c -> r b c"),
          A.sub(":", "32:64").rearrange("r (b c) -> r b c", { c: 16 }),
          { mbar: bar.sub(0) },
        );
      });
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      for (const r of T.range(16)) B.set([r, tid], s.get([tid.floordiv(16), r, tid.floormod(16)]));
    },
  );
  const a = ramp(16 * 64).map((x) => x * 5 + 1);
  return {
    name: "64B column blocks",
    fn,
    inputs: [{ data: a, shape: [16, 64], dtype: "float32" }],
    out: { shape: [16, 32], dtype: "float32" },
    expected: () =>
      Array.from({ length: 16 * 32 }, (_, e) => a[Math.floor(e / 32) * 64 + 32 + (e % 32)]!),
  };
}

/** Every case, for the simulator and GPU tests. */
export const TILE_TMA_CASES: readonly (() => TmaCase)[] = [
  swz128Load,
  fp8Swz128Load,
  colBlocksLoad,
  swz64Blocks,
  rowSplitLoadStore,
  bulkLoadStore,
  multicastLoad,
];
