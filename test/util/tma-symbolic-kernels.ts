// Kernels over tensors of symbolic shape moved by TMA, for test/tma-symbolic.test.ts (the
// simulator) and test/gpu/tma-symbolic.test.ts (a GPU), with the host results they must give.
import { T, type PrimFunc } from "tirx-ts";

/** The 2-D TMA load opcode (global → shared, completing on an mbarrier). */
export const LOAD2D =
  "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes";

/** Distinct values (exact in float16 and float32): element i of a tensor. */
export const ramp = (n: number): number[] => Array.from({ length: n }, (_, i) => (i % 2039) - 1000);

/**
 * One CTA loads the 16 × 32 float32 box at (r0, c0) of A [m, n] through an explicit tensor map
 * and writes it to B [16, 32] (elements past A's end read as TMA's zero fill).
 */
export const rawLoad: PrimFunc = T.function(
  "tma_symbolic_raw",
  {
    m: T.int32,
    n: T.int32,
    r0: T.int32,
    c0: T.int32,
    A: T.Tensor(["m", "n"], "float32"),
    B: T.Tensor([16, 32], "float32"),
  },
  ({ r0, c0, A, B }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
    const tid = T.cuda.thread_idx("x");
    const bar = T.alloc_shared([1], "uint64", { name: "bar" });
    const s = T.alloc_shared([16, 32], "float32", { name: "s", align: 128 });
    const map = T.tensormap_encode_tiled(A, { box: [16, 32] });
    T.if_(tid.eq(0), () => {
      T.ptx.mbarrier.init(bar.sub(0), 1);
      T.ptx.fence.mbarrier_init();
    });
    T.cuda.cta_sync();
    T.if_(tid.eq(0), () => {
      T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 16 * 32 * 4);
      T.cuda.tile.apply(T.ptx[LOAD2D], s, A, {
        tensor_map: map,
        coords: [r0, c0],
        mbar: bar.sub(0),
      });
    });
    T.ptx.mbarrier.try_wait(bar.sub(0), 0);
    for (const i of T.range(16)) B.set([i, tid], s.get([i, tid]));
  },
);

/**
 * A [b, s, 64] float16 → O (the same shape) and P [b, sp, 64] (sp = ⌈s / 32⌉ · 32): CTA (t, z)
 * loads rows 32t … 32t + 31 of batch z by T.tile.copy_async (TMA: coordinates (z, 32t, 0) off
 * the view's offset z · (s · 64) + 32t · 64) and stores them to O (rows past s not written)
 * and to P (the zero fill of rows past s shows).
 */
export const tileCopy: PrimFunc = T.function(
  "tma_symbolic_tile",
  {
    b: T.int32,
    s: T.int32,
    sp: T.int32,
    A: T.Tensor(["b", "s", 64], "float16"),
    O: T.Tensor(["b", "s", 64], "float16"),
    P: T.Tensor(["b", "sp", 64], "float16"),
  },
  ({ b, s, sp, A, O, P }) => {
    T.device_entry({
      launch: T.cuda.LaunchConfig({ grid: [T.ceildiv(s, 32), b], block: 32 }),
    });
    const tid = T.cuda.thread_idx("x");
    const t = T.cuda.block_idx("x");
    const z = T.cuda.block_idx("y");
    const bar = T.alloc_shared([1], "uint64", { name: "bar" });
    const sA = T.alloc_shared([32, 64], "float16", { name: "sA", align: 128 });
    const rowsOf = (x: typeof A, n: typeof s) =>
      x.as_strided({
        offset: T.add(T.mul(z, T.mul(n, 64)), T.mul(t, 32 * 64)),
        shape: [32, 64],
        strides: [64, 1],
      });
    T.if_(tid.eq(0), () => {
      T.ptx.mbarrier.init(bar.sub(0), 1);
      T.ptx.fence.mbarrier_init();
    });
    T.cuda.cta_sync();
    T.if_(tid.eq(0), () => {
      T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 32 * 64 * 2);
      T.tile.copy_async(sA, rowsOf(A, s), { mbar: bar.sub(0), dispatch: "tma" });
    });
    T.ptx.mbarrier.try_wait(bar.sub(0), 0);
    T.if_(tid.eq(0), () => {
      T.tile.copy_async(rowsOf(O, s), sA, { dispatch: "tma" });
      T.tile.copy_async(rowsOf(P, sp), sA, { dispatch: "tma" });
      T.ptx.cp.async_.bulk.commit_group();
      T.ptx.cp.async_.bulk.wait_group(0);
    });
  },
);

/** What rawLoad's B holds for A = ramp(m · n) and the box at (r0, c0): zeros past A's end. */
export function rawLoadExpected(m: number, n: number, r0: number, c0: number): number[] {
  const a = ramp(m * n);
  return Array.from({ length: 16 * 32 }, (_, e) => {
    const i = r0 + Math.floor(e / 32);
    const j = c0 + (e % 32);
    return i < m && j < n ? a[i * n + j]! : 0;
  });
}

/** What tileCopy's P [b, sp, 64] holds for A = ramp(b · s · 64): rows past s are zeros. */
export function tileCopyPaddedExpected(b: number, s: number, sp: number): number[] {
  const a = ramp(b * s * 64);
  return Array.from({ length: b * sp * 64 }, (_, e) => {
    const z = Math.floor(e / (sp * 64));
    const row = Math.floor(e / 64) % sp;
    return row < s ? a[(z * s + row) * 64 + (e % 64)]! : 0;
  });
}
