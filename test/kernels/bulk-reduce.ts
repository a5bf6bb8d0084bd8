// Test kernels of the bulk reduction (PTX ISA, cp.reduce.async.bulk), shared by the simulator
// test and the GPU test.
import { dtypeBytes, type DType, type PrimFunc } from "@tirx-ts/core";
import { T, type TileView } from "@tirx-ts/dsl";

/** The bulk reduction's opcode up to its `.redOp.type`. */
export const RED = "cp.reduce.async.bulk.global.shared::cta.bulk_group";
/** Elements of the reduced buffer (and of each CTA's tile). */
export const N = 64;
/** CTAs of the launch, each reducing its row of `In` into `Out`. */
export const CTAS = 4;

/** What a variant of the kernel changes (each a rule of the bulk reduction). */
export interface BulkReduceOpts {
  /** The `.redOp.type` tail of the opcode. */
  op?: string;
  dtype?: DType;
  /** Elements per CTA's tile (its bytes a multiple of 16 unless testing that). */
  n?: number;
  chunkBytes?: number;
  /** Write the shared tile again right after the issue (before wait_group.read). */
  overwrite?: "before-read" | "after-read";
  /** Read the source tile before the wait (fine). */
  readSource?: boolean;
  /** CTA 1's thread 0 reads Out[0] with no ordering. */
  plainRead?: boolean;
  /** CTA 1's thread 5 atomically adds 1 to Out[0] (an atomic: no race with the reductions). */
  atomicAdd?: boolean;
  /** Leave out the fence.proxy.async between the generic writes and the issue. */
  noFence?: boolean;
}

/**
 * CTAS CTAs of 32 threads: each fills its shared tile with `In[cta, i]`, fences the generic
 * writes for the async proxy, meets, and thread 0 reduces the tile into Out[0 .. n).
 */
export function bulkReduceKernel(o: BulkReduceOpts = {}): PrimFunc {
  const dt = o.dtype ?? "float32";
  const n = o.n ?? N;
  const op = o.op ?? "add.f32";
  return T.function(
    `bulk_reduce_${op.replace(/\./g, "_")}`,
    { In: T.Tensor([CTAS, n], dt), Out: T.Tensor([n], dt), Probe: T.Tensor([CTAS], dt) },
    ({ In, Out, Probe }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: CTAS, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const cta = T.cuda.block_idx("x");
      const tile = T.alloc_shared([n], dt, { name: "tile", align: 16 });
      for (const k of T.serial(Math.ceil(n / 32))) {
        const i = k.mul(32).add(tid);
        T.if_(i.lt(n), () => tile.set([i], In.get([cta, i])));
      }
      if (!o.noFence) T.ptx.fence.proxy_async();
      T.cuda.cta_sync();
      const dst: TileView = Out;
      T.if_(tid.eq(0), () => {
        T.ptx[`${RED}.${op}`]!(dst, tile, { chunk_bytes: o.chunkBytes ?? n * dtypeBytes(dt) });
        T.ptx.cp.async_.bulk.commit_group();
        if (o.readSource) Probe.set([cta], tile.get([1]));
        if (o.overwrite === "before-read") tile.set([0], In.get([cta, 0]));
        T.ptx.cp.async_.bulk.wait_group_read(0);
        if (o.overwrite === "after-read") tile.set([0], In.get([cta, 0]));
        T.ptx.cp.async_.bulk.wait_group(0);
      });
      if (o.atomicAdd) T.if_(cta.eq(1).and(tid.eq(5)), () => T.cuda.atomic_add(Out.ptr([0]), 1));
      if (o.plainRead) T.if_(cta.eq(1).and(tid.eq(0)), () => Probe.set([0], Out.get([0])));
    },
  );
}
