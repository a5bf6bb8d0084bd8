// Kernels of the split copies (test/tma-split.test.ts and test/cp-async-chunks.test.ts on the
// simulator, test/gpu/copy-async-split.test.ts on the GPU): a TMA load cut into boxes of two
// tensor maps, and cp.async tiles at offsets that allow only narrower .ca chunks, each with the
// host's expected output.
import { T, type PrimFunc } from "tirx-ts";

export type DT = "float16" | "float32" | "int8";
export type Sw = "none" | "32B" | "64B" | "128B";
export const BYTES: Record<DT, number> = { float16: 2, float32: 4, int8: 1 };

/** A copy of G[r0 .. r0 + R, c0 .. c0 + C] into the first C columns of a shared [R, P]. */
export interface Case {
  readonly R: number;
  readonly C: number;
  readonly P: number;
  readonly gR: number;
  readonly gC: number;
  readonly r0: number;
  readonly c0: number;
  readonly dt: DT;
  readonly sw: Sw;
}

/**
 * Thread 0 loads the tile by T.tile.copy_async (TMA, completing on an mbarrier); every thread
 * then copies the shared tile to O [R, C] through the tile's view.
 */
export function kernel(c: Case): PrimFunc {
  const eb = BYTES[c.dt];
  return T.function(
    "tma_split",
    { G: T.Tensor([c.gR, c.gC], c.dt), O: T.Tensor([c.R, c.C], c.dt) },
    ({ G, O }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({
          grid: 1,
          block: 128,
          dynamic_shared_bytes: c.R * c.P * eb + 1024,
        }),
      });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared(
        [c.R, c.P],
        c.dt,
        c.sw === "none"
          ? { align: 128, dynamic: true }
          : { layout: T.swizzle_mode(c.sw), align: 1024, dynamic: true },
      );
      const v = c.P > c.C ? s.sub(":", `0:${c.C}`) : s;
      const bar = T.alloc_shared([1], "uint64");
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.init(bar.sub(0), 1);
        T.ptx.fence.mbarrier_init();
      });
      T.cuda.cta_sync();
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), c.R * c.C * eb);
        T.tile.copy_async(v, G.sub(`${c.r0}:${c.r0 + c.R}`, `${c.c0}:${c.c0 + c.C}`), {
          mbar: bar.sub(0),
          dispatch: "tma",
        });
      });
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      const n = c.R * c.C;
      for (const i of T.range(tid, n, 128))
        T.if_(i.lt(n), () =>
          O.set(
            [T.floordiv(i, c.C), T.floormod(i, c.C)],
            v.get([T.floordiv(i, c.C), T.floormod(i, c.C)]),
          ),
        );
    },
  );
}

/** G's elements: distinct where the dtype allows. */
export const gOf = (c: Case): number[] =>
  Array.from({ length: c.gR * c.gC }, (_, i) => (c.dt === "int8" ? (i % 255) - 127 : i % 2039));

/** G's shape in the cp.async kernels. */
export const GR = 16;
export const GC = 40;

/**
 * 128 threads copy the R × C tile of G [16, 40] at (r0 + ro, c0) into shared by cp.async (ro a
 * runtime row when `runtime`), then write it to O [R, C].
 */
export function cpKernel(
  R: number,
  C: number,
  r0: number,
  c0: number,
  dt: "float16" | "float32",
  runtime = false,
): PrimFunc {
  return T.function(
    "cp_chunks",
    { ro: T.int32, G: T.Tensor([GR, GC], dt), O: T.Tensor([R, C], dt) },
    ({ ro, G, O }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([R, C], dt);
      const src = runtime
        ? G.rearrange("(i r) c -> i r c", { r: R })
            .sub(ro)
            .sub(":", `${c0}:${c0 + C}`)
        : G.sub(`${r0}:${r0 + R}`, `${c0}:${c0 + C}`);
      T.tile.cta.copy_async(s, src);
      T.ptx.cp.async_.commit_group();
      T.ptx.cp.async_.wait_group(0);
      T.cuda.cta_sync();
      for (const i of T.range(tid, R * C, 128))
        T.if_(i.lt(R * C), () =>
          O.set([T.floordiv(i, C), T.floormod(i, C)], s.get([T.floordiv(i, C), T.floormod(i, C)])),
        );
    },
  );
}
