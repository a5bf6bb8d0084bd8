// Round-trip kernels of T.tile.warp.copy through stmatrix and ldmatrix, shared by the simulator
// test (test/tile-stmatrix.test.ts) and the GPU differential test (test/gpu/tile-stmatrix.test.ts).
import { T, compile, tensor, type DeviceLike, type PrimFunc } from "tirx-ts";

/** The mma.sync operand a round-trip tile is laid out as. */
export type Operand = "A" | "B" | "C";
/** A shared tile's swizzle, or none. */
export type Swz = ReturnType<typeof T.SwizzleLayout> | undefined;

/**
 * global → registers (warp.copy) → shared (warp.copy: stmatrix) → registers (warp.copy:
 * ldmatrix) → global of an r × c float16 tile in `operand` fragments.
 */
export function roundTrip(
  operand: Operand,
  r: number,
  c: number,
  name: string,
  opts: { swizzle?: Swz; arch?: string; dispatch?: string } = {},
): PrimFunc {
  return T.function(
    name,
    { X: T.Tensor([r, c], "float16"), Y: T.Tensor([r, c], "float16") },
    ({ X, Y }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }),
        ...(opts.arch ? { arch: opts.arch } : {}),
      });
      const s = T.alloc_shared([r, c], "float16", opts.swizzle ? { layout: opts.swizzle } : {});
      // A C tile of float16 keeps the accumulator's layout (e.g. after T.tile.cast of float32).
      const cd = operand === "C" ? "float32" : "float16";
      const layout = T.layout.mma_sync_tile_layout(operand, "m16n8k16", cd, r, c);
      const f = T.alloc_local([r, c], "float16", { layout });
      const g = T.alloc_local([r, c], "float16", { layout });
      T.tile.warp.copy(f, X);
      if (opts.dispatch) T.tile.warp.copy(s, f, { dispatch: opts.dispatch });
      else T.tile.warp.copy(s, f);
      T.cuda.cta_sync();
      T.tile.warp.copy(g, s);
      T.tile.warp.copy(Y, g);
    },
  );
}

/** Distinct float16 integers 0 .. r·c - 1 in a scrambled order (exact in float16 below 2048). */
export function distinct(n: number): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => (i * 37) % n);
}

/**
 * Run a round-trip kernel `fn` ([r, c] float16 in, [r, c] out) on `dev` with input `x` and
 * return what came back, for the caller to compare with `x` (every element must return).
 */
export function runRoundTrip(
  fn: PrimFunc,
  r: number,
  c: number,
  x: Float32Array,
  dev: DeviceLike,
): number[] {
  const k = compile(fn, { target: "cuda" });
  const X = tensor(x, { shape: [r, c], dtype: "float16", device: dev });
  const Y = tensor.zeros([r, c], "float16", dev);
  k(X, Y);
  const out = Array.from(Y.toArray() as Float32Array);
  X.dispose();
  Y.dispose();
  return out;
}
