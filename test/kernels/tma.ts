// TMA kernels shared by the PTX, simulator and GPU tests (test/tma/, test/gpu/tma.test.ts).
import type { PrimFunc, TmaSwizzle } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";

const LOAD_2D = "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes";
const LOAD_3D = "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes";

/**
 * 2-D tiled load: CTA (bx, by) loads the [BR, BC] box at (by·BR, bx·BC) of A [R, C] with one TMA
 * copy (thread 0), every thread waits on the mbarrier, then copies the raw tile, OOB fill and
 * to B [gy·BR, gx·BC] at the same place (B[by·BR + i, bx·BC + j] = tile[i, j]). With a swizzle the
 * tile is allocated with the matching layout (T.swizzle_mode), so its logical reads undo the
 * swizzle TMA wrote: B is the plain box either way.
 */
export function tmaLoad2d(opts: {
  name: string;
  rows: number;
  cols: number;
  box: readonly [number, number];
  dtype?: "float16" | "float32" | "bfloat16" | "uint8";
  swizzle?: TmaSwizzle;
}): PrimFunc {
  const dt = opts.dtype ?? "float16";
  const [br, bc] = opts.box;
  const gx = Math.ceil(opts.cols / bc);
  const gy = Math.ceil(opts.rows / br);
  const swz = opts.swizzle ?? "none";
  return T.function(
    opts.name,
    { A: T.Tensor([opts.rows, opts.cols], dt), B: T.Tensor([gy * br, gx * bc], dt) },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [gx, gy], block: 128 }) });
      const tid = T.cuda.thread_idx("x");
      const bx = T.cuda.block_idx("x");
      const by = T.cuda.block_idx("y");
      const tile = T.alloc_shared([br, bc], dt, {
        name: "tile",
        align: 1024,
        ...(swz === "none" ? {} : { layout: T.swizzle_mode(swz) }),
      });
      const bar = T.alloc_shared([1], "uint64", { name: "bar" });
      const map = T.tensormap_encode_tiled(A, { box: [br, bc], swizzle: swz });
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.init(bar.sub(0), 1);
        T.ptx.fence.mbarrier_init();
      });
      T.cuda.cta_sync();
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), br * bc * bytesOf(dt));
        T.cuda.tile.apply(T.ptx[LOAD_2D], tile, A, {
          tensor_map: map,
          coords: [by.mul(br), bx.mul(bc)],
          mbar: bar.sub(0),
        });
      });
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      for (const k of T.range(Math.ceil((br * bc) / 128))) {
        const e = k.mul(128).add(tid);
        T.if_(e.lt(br * bc), () => {
          const i = e.floordiv(bc);
          const j = e.floormod(bc);
          B.set([by.mul(br).add(i), bx.mul(bc).add(j)], tile.get([i, j]));
        });
      }
    },
  );
}

/** 3-D tiled load of the box [BD, BR, BC] at (z·BD, y·BR, x·BC) of A [D, R, C], as tmaLoad2d. */
export function tmaLoad3d(opts: {
  name: string;
  shape: readonly [number, number, number];
  box: readonly [number, number, number];
}): PrimFunc {
  const [d, r, c] = opts.shape;
  const [bd, br, bc] = opts.box;
  const g = [Math.ceil(c / bc), Math.ceil(r / br), Math.ceil(d / bd)] as const;
  const n = bd * br * bc;
  return T.function(
    opts.name,
    {
      A: T.Tensor([d, r, c], "float32"),
      B: T.Tensor([g[2] * bd, g[1] * br, g[0] * bc], "float32"),
    },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [g[0], g[1], g[2]], block: 128 }) });
      const tid = T.cuda.thread_idx("x");
      const bx = T.cuda.block_idx("x");
      const by = T.cuda.block_idx("y");
      const bz = T.cuda.block_idx("z");
      const tile = T.alloc_shared([bd, br, bc], "float32", { name: "tile", align: 128 });
      const bar = T.alloc_shared([1], "uint64", { name: "bar" });
      const map = T.tensormap_encode_tiled(A, { box: [bd, br, bc] });
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.init(bar.sub(0), 1);
        T.ptx.fence.mbarrier_init();
      });
      T.cuda.cta_sync();
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), n * 4);
        T.cuda.tile.apply(T.ptx[LOAD_3D], tile, A, {
          tensor_map: map,
          coords: [bz.mul(bd), by.mul(br), bx.mul(bc)],
          mbar: bar.sub(0),
        });
      });
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      for (const k of T.range(Math.ceil(n / 128))) {
        const e = k.mul(128).add(tid);
        T.if_(e.lt(n), () => {
          const z = e.floordiv(br * bc);
          const y = e.floordiv(bc).floormod(br);
          const x = e.floormod(bc);
          B.set([bz.mul(bd).add(z), by.mul(br).add(y), bx.mul(bc).add(x)], tile.get([z, y, x]));
        });
      }
    },
  );
}

/**
 * TMA store: each CTA fills a [BR, BC] shared tile with `v(i, j) = (by·BR + i)·1000 + bx·BC + j`
 * (as float32), then thread 0 stores it to B [R, C] at (by·BR, bx·BC) with one tensor store;
 * OOB elements of edge boxes are not written.
 */
export function tmaStore2d(opts: {
  name: string;
  rows: number;
  cols: number;
  box: readonly [number, number];
}): PrimFunc {
  const [br, bc] = opts.box;
  const gx = Math.ceil(opts.cols / bc);
  const gy = Math.ceil(opts.rows / br);
  return T.function(opts.name, { B: T.Tensor([opts.rows, opts.cols], "float32") }, ({ B }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [gx, gy], block: 128 }) });
    const tid = T.cuda.thread_idx("x");
    const bx = T.cuda.block_idx("x");
    const by = T.cuda.block_idx("y");
    const tile = T.alloc_shared([br, bc], "float32", { name: "tile", align: 128 });
    const map = T.tensormap_encode_tiled(B, { box: [br, bc] });
    for (const k of T.range(Math.ceil((br * bc) / 128))) {
      const e = k.mul(128).add(tid);
      T.if_(e.lt(br * bc), () => {
        const i = e.floordiv(bc);
        const j = e.floormod(bc);
        tile.set([i, j], by.mul(br).add(i).mul(1000).add(bx.mul(bc)).add(j).cast("float32"));
      });
    }
    T.ptx.fence.proxy_async();
    T.cuda.cta_sync();
    T.if_(tid.eq(0), () => {
      T.cuda.tile.apply(
        T.ptx["cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"],
        B,
        tile,
        {
          tensor_map: map,
          coords: [by.mul(br), bx.mul(bc)],
        },
      );
      T.ptx.cp.async_.bulk.commit_group();
      T.ptx.cp.async_.bulk.wait_group(0);
    });
  });
}

function bytesOf(dt: string): number {
  return dt === "float32" ? 4 : dt === "uint8" ? 1 : 2;
}

/**
 * 2-CTA cluster multicast: A [32, 64] float16; CTA rank r of each cluster loads rows
 * [16r, 16r + 16) with `.multicast::cluster` and cta_mask 0b11 into rows 16r.. of the tile of
 * both CTAs, completing on each CTA's own mbarrier (same offset), which expects the whole
 * 32 × 64 tile. Each CTA then writes its tile to B[cta·32 + i, j]: both copies equal A. Cluster
 * barriers order the mbarrier inits before any multicast and keep every CTA alive until its
 * peer's copies landed.
 */
export function tmaMulticast(name: string): PrimFunc {
  return T.function(
    name,
    { A: T.Tensor([32, 64], "float16"), B: T.Tensor([64, 64], "float16") },
    ({ A, B }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: [2, 1], block: 128, cluster: [2, 1, 1] }),
      });
      const tid = T.cuda.thread_idx("x");
      const cta = T.cuda.block_idx("x");
      const rank = T.cuda.cluster_ctarank();
      const tile = T.alloc_shared([2, 16, 64], "float16", { name: "tile", align: 1024 });
      const bar = T.alloc_shared([1], "uint64", { name: "bar" });
      const map = T.tensormap_encode_tiled(A, { box: [16, 64] });
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.init(bar.sub(0), 1);
        T.ptx.fence.mbarrier_init();
      });
      T.ptx.barrier.cluster.arrive();
      T.ptx.barrier.cluster.wait();
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 32 * 64 * 2);
        T.cuda.tile.apply(
          T.ptx[
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
          ],
          tile.sub(rank),
          A,
          { tensor_map: map, coords: [rank.mul(16), 0], mbar: bar.sub(0), cta_mask: T.uint16(3) },
        );
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
}
