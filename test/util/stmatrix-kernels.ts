// Round-trip kernels of T.tile.warp.copy (mma.sync fragments) and T.tile.wg.copy (wgmma D
// fragments) through stmatrix and ldmatrix, shared by the simulator test
// (test/tile-stmatrix.test.ts) and the GPU differential test (test/gpu/tile-stmatrix.test.ts).
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

/**
 * The wgmma D tiles the stmatrix tests move, [rows, cols, 128B swizzle, transposed view]: 64 × 64
 * is one swizzle row wide (the backward's P and dS), 64 × 128 two, 128 × 64 two 64-row blocks;
 * the transposed view is the hd-256 backward's dK / dV staging (.trans).
 */
export const WG_CASES: readonly [number, number, boolean, boolean][] = [
  [64, 64, false, false],
  [64, 64, true, false],
  [64, 128, false, false],
  [64, 128, true, false],
  [128, 64, true, false],
  [64, 64, true, true],
];

/**
 * global → registers → shared → global of an r × c float16 tile (r a multiple of 64, c of 8) in
 * the wgmma accumulator layout `T.layout.wgmma_tile_layout("D", r, c, "float32")` held as
 * float16, one warpgroup: the store to shared is `T.tile.wg.copy(s, f)` (stmatrix on sm_90, or
 * the path `dispatch` forces). Two outputs read `s` back: Y through a tile of one row per thread
 * (vectorized ld.shared, whatever the dispatch), Z through a second wgmma-D tile (ldmatrix).
 * `swizzle128` allocates `s` with the 128-byte swizzle (`T.swizzle_mode("128B")`); `transposed`
 * allocates it [c, r] and moves through its transposed view (each 8 × 8 matrix's columns
 * contiguous: stmatrix / ldmatrix `.trans`).
 */
export function wgRoundTrip(
  r: number,
  c: number,
  name: string,
  opts: { swizzle128?: boolean; transposed?: boolean; arch?: string; dispatch?: string } = {},
): PrimFunc {
  return T.function(
    name,
    {
      X: T.Tensor([r, c], "float16"),
      Y: T.Tensor([r, c], "float16"),
      Z: T.Tensor([r, c], "float16"),
    },
    ({ X, Y, Z }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }),
        ...(opts.arch ? { arch: opts.arch } : {}),
      });
      const buf = T.alloc_shared(
        opts.transposed ? [c, r] : [r, c],
        "float16",
        opts.swizzle128 ? { layout: T.swizzle_mode("128B"), align: 1024 } : {},
      );
      const s = opts.transposed ? buf.rearrange("a b -> b a") : buf;
      const layout = T.layout.wgmma_tile_layout("D", r, c, "float32");
      const f = T.alloc_local([r, c], "float16", { layout });
      const g = T.alloc_local([r, c], "float16", { layout });
      const rows = T.alloc_local([r, c], "float16", { layout: T.layout.wg_local_layout(c, r) });
      T.tile.wg.copy(f, X);
      if (opts.dispatch) T.tile.wg.copy(s, f, { dispatch: opts.dispatch });
      else T.tile.wg.copy(s, f);
      T.cuda.cta_sync();
      T.tile.wg.copy(rows, s);
      T.tile.wg.copy(Y, rows);
      T.tile.wg.copy(g, s);
      T.tile.wg.copy(Z, g);
    },
  );
}

/**
 * Run a {@link wgRoundTrip} kernel on `dev` with input `x` ([r, c] float16) and return what came
 * back through the row tile (Y) and through ldmatrix (Z), for the caller to compare.
 */
export function runWgRoundTrip(
  fn: PrimFunc,
  r: number,
  c: number,
  x: Float32Array,
  dev: DeviceLike,
): { rows: number[]; ldmatrix: number[] } {
  const k = compile(fn, { target: "cuda" });
  const X = tensor(x, { shape: [r, c], dtype: "float16", device: dev });
  const Y = tensor.zeros([r, c], "float16", dev);
  const Z = tensor.zeros([r, c], "float16", dev);
  k(X, Y, Z);
  const out = {
    rows: Array.from(Y.toArray() as Float32Array),
    ldmatrix: Array.from(Z.toArray() as Float32Array),
  };
  X.dispose();
  Y.dispose();
  Z.dispose();
  return out;
}

/**
 * n distinct float16 values (n ≤ 30720), each exact in float16, in a scrambled order: element i is
 * the positive normal float16 whose bit pattern is 0x0400 + (i · 37) mod n (exponent field
 * 1 + p >> 10, mantissa p & 1023: 2^(e - 15) · (1 + m / 1024), PTX ISA / IEEE 754 binary16), so
 * tiles of more than 2048 elements keep every element distinct (integers do not, past 2048).
 */
export function distinctHalves(n: number): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => {
    const bits = 0x0400 + ((i * 37) % n);
    return 2 ** ((bits >> 10) - 15) * (1 + (bits & 1023) / 1024);
  });
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
