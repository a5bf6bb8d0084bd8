// The tirx-ts side of bench/compute.ts: where each benchmark finds its tirx-ts kernel, and the
// interface an example implements to be benchmarked. Each entry imports its example only when
// the file exists, so the benchmark runs (hand-written kernels, cudaMemcpy, peers) before the
// examples are written, and picks them up as soon as they are.
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { DType, PrimFunc } from "@tirx-ts/core";

/** Sizes of `vector_add`: `n` float32 elements per array. */
export interface VectorAddSizes {
  readonly n: number;
}

/** Sizes of the row-wise benchmarks (`softmax`, `reduce_rows`): a rows × cols matrix. */
export interface RowSizes {
  readonly rows: number;
  readonly cols: number;
}

/** Sizes of `gemm_simt`: C (m × n) = A (m × k) · B (k × n). */
export interface GemmSizes {
  readonly m: number;
  readonly n: number;
  readonly k: number;
}

/**
 * What an example's `makeBenchKernel(sizes)` returns: one kernel for one size, ready to launch.
 *
 * - `fn`'s tensor parameters come first, in the order, dtypes and shapes its benchmark's
 *   `tensors` lists (e.g. vector_add: A, B, C, each float32 [n]); bench/compute.ts allocates
 *   exactly those, fills the inputs with seeded random values and checks the outputs against a
 *   float64 CPU reference.
 * - Scalar parameters, if any, follow the tensors; their values are `scalars`, in order (for a
 *   kernel whose length is a runtime scalar, e.g. `[n]`).
 * - The block and shared memory are the ones `fn`'s `T.device_entry` declares; the grid too,
 *   unless `grid` is given (for a kernel whose grid depends on a runtime scalar).
 *
 * The benchmark compiles `fn` for sm_90 with our code generator and launches the PTX through
 * @tirx-ts/runtime-cuda, like the hand-written CUDA C++ kernel of the same design in bench/cuda/.
 */
export interface BenchKernel {
  readonly fn: PrimFunc;
  /** CTAs of the launch, x/y/z; default: the grid `fn` declares. */
  readonly grid?: readonly [number, number, number];
  /** Values of the scalar parameters that follow the tensors, in parameter order. */
  readonly scalars?: readonly number[];
}

/** The function an example exports as `makeBenchKernel` for a benchmark whose sizes are `S`. */
export type MakeBenchKernel<S> = (sizes: S) => BenchKernel;

/** One tensor parameter of a benchmarked kernel; `shape` is in terms of the benchmark's sizes. */
export interface TensorSpec<S> {
  readonly name: string;
  readonly dtype: DType;
  readonly shape: (sizes: S) => readonly number[];
  readonly role: "input" | "output";
}

/** One benchmark's tirx-ts hook. */
export interface ComputeKernelEntry<S> {
  /** Benchmark name, as printed. */
  readonly name: string;
  /** The example file, relative to the repository root. */
  readonly example: string;
  /** The hand-written kernel of the same design, relative to the repository root. */
  readonly hand: string;
  /** The kernel's tensor parameters, in order. */
  readonly tensors: readonly TensorSpec<S>[];
  /**
   * Import the example and call its `makeBenchKernel(sizes)`, then check the result against
   * `tensors`.
   * @returns undefined when the example file does not exist yet.
   * @throws Error when the file exists but fails to import, has no `makeBenchKernel`, or builds a
   *   kernel whose tensor parameters differ from `tensors`; TirxError from the example itself.
   */
  build(sizes: S): Promise<BenchKernel | undefined>;
}

const root = new URL("../", import.meta.url);

/** Absolute path of `rel` (relative to the repository root). */
export function repoPath(rel: string): string {
  return fileURLToPath(new URL(rel, root));
}

/**
 * The kernel's tensor parameters must be `tensors` (count, order, dtype; shape where the
 * parameter's shape is static), and each scalar parameter needs a value.
 * @throws Error naming the example and the first mismatch.
 */
export function checkBenchKernel<S>(entry: ComputeKernelEntry<S>, k: BenchKernel, sizes: S): void {
  const where = `${entry.example}: makeBenchKernel`;
  if (typeof k !== "object" || k === null || typeof k.fn !== "object" || k.fn === null) {
    throw new Error(`${where} must return { fn: PrimFunc, grid?, scalars? }`);
  }
  const buffers = k.fn.params.filter((p) => p.kind === "buffer");
  const scalars = k.fn.params.filter((p) => p.kind === "scalar");
  if (k.fn.params.slice(0, buffers.length).some((p) => p.kind !== "buffer")) {
    throw new Error(`${where}: tensor parameters must come before scalar parameters`);
  }
  if (buffers.length !== entry.tensors.length) {
    throw new Error(
      `${where}: kernel "${k.fn.name}" has ${buffers.length} tensor parameters, expected ${entry.tensors.length} (${entry.tensors.map((t) => t.name).join(", ")})`,
    );
  }
  entry.tensors.forEach((t, i) => {
    const p = buffers[i]!;
    if (p.kind !== "buffer") return;
    const want = t.shape(sizes);
    if (p.buffer.dtype !== t.dtype) {
      throw new Error(
        `${where}: tensor parameter ${i} ("${p.name}") is ${p.buffer.dtype}, expected ${t.dtype} (${t.name})`,
      );
    }
    // A symbolic dim names a scalar parameter: its value in `scalars` must be the size.
    const dimValue = (n: (typeof p.buffer.shape)[number]): number | undefined =>
      typeof n === "number"
        ? n
        : k.scalars?.[scalars.findIndex((q) => q.kind === "scalar" && q.var.id === n.id)];
    if (
      p.buffer.shape.length !== want.length ||
      p.buffer.shape.some((n, d) => dimValue(n) !== want[d])
    ) {
      throw new Error(
        `${where}: tensor parameter ${i} ("${p.name}") has shape [${p.buffer.shape.map((n) => (typeof n === "number" ? n : n.name)).join(", ")}], expected [${want.join(", ")}] (${t.name})`,
      );
    }
  });
  if ((k.scalars?.length ?? 0) !== scalars.length) {
    throw new Error(
      `${where}: kernel "${k.fn.name}" has ${scalars.length} scalar parameters but scalars gives ${k.scalars?.length ?? 0} values`,
    );
  }
  if (k.grid !== undefined && (k.grid.length !== 3 || k.grid.some((g) => !(g >= 1)))) {
    throw new Error(`${where}: grid must be three positive CTA counts, got [${k.grid.join(", ")}]`);
  }
}

/**
 * A benchmark's hook: `build(sizes)` imports `example` (relative to the repository root) if it
 * exists and checks what its `makeBenchKernel(sizes)` returns against `tensors`.
 */
export function benchKernelEntry<S>(
  name: string,
  example: string,
  hand: string,
  tensors: readonly TensorSpec<S>[],
): ComputeKernelEntry<S> {
  const self: ComputeKernelEntry<S> = {
    name,
    example,
    hand,
    tensors,
    async build(sizes: S): Promise<BenchKernel | undefined> {
      const file = repoPath(example);
      let mod: { makeBenchKernel?: unknown };
      try {
        // A computed specifier: the example may not exist when this file is type-checked.
        mod = (await import(pathToFileURL(file).href)) as { makeBenchKernel?: unknown };
      } catch (e) {
        if (!existsSync(file)) return undefined;
        throw new Error(`${example} exists but failed to import: ${(e as Error).message}`, {
          cause: e,
        });
      }
      if (typeof mod.makeBenchKernel !== "function") {
        throw new Error(`${example} must export makeBenchKernel(sizes) => { fn, grid?, scalars? }`);
      }
      const k = (mod.makeBenchKernel as MakeBenchKernel<S>)(sizes);
      checkBenchKernel(self, k, sizes);
      return k;
    },
  };
  return self;
}

/** vector_add: C = A + B; A, B, C float32 [n]. Hand-written: bench/cuda/vector_add.cu. */
export const vectorAdd = benchKernelEntry<VectorAddSizes>(
  "vector_add",
  "examples/vector_add.ts",
  "bench/cuda/vector_add.cu",
  [
    { name: "A", dtype: "float32", shape: (s) => [s.n], role: "input" },
    { name: "B", dtype: "float32", shape: (s) => [s.n], role: "input" },
    { name: "C", dtype: "float32", shape: (s) => [s.n], role: "output" },
  ],
);

/**
 * softmax: Y = softmax(X) along each row, float32 math; X, Y float16 [rows, cols].
 * Hand-written: bench/cuda/softmax_rows.cu (one CTA per row, two warp-shuffle reductions).
 */
export const softmax = benchKernelEntry<RowSizes>(
  "softmax",
  "examples/softmax.ts",
  "bench/cuda/softmax_rows.cu",
  [
    { name: "X", dtype: "float16", shape: (s) => [s.rows, s.cols], role: "input" },
    { name: "Y", dtype: "float16", shape: (s) => [s.rows, s.cols], role: "output" },
  ],
);

/**
 * softmax_tile: the softmax above written with the tile layer (examples/tile/softmax.ts), timed
 * beside the instruction-level kernel (issue 22: ≥ 0.98× examples/softmax.ts).
 */
export const softmaxTile = benchKernelEntry<RowSizes>(
  "softmax_tile",
  "examples/tile/softmax.ts",
  "bench/cuda/softmax_rows.cu",
  softmax.tensors,
);

/**
 * reduce_rows: Y[r] = sum of X[r, :]; X float32 [rows, cols], Y float32 [rows].
 * Hand-written: bench/cuda/reduce_rows.cu (one warp per row, shuffle reduction).
 */
export const reduceRows = benchKernelEntry<RowSizes>(
  "reduce_rows",
  "examples/reduce_rows.ts",
  "bench/cuda/reduce_rows.cu",
  [
    { name: "X", dtype: "float32", shape: (s) => [s.rows, s.cols], role: "input" },
    { name: "Y", dtype: "float32", shape: (s) => [s.rows], role: "output" },
  ],
);

/**
 * gemm_simt: C = A · B; A float16 [m, k], B float16 [k, n], C float32 [m, n], all row-major.
 * Hand-written: bench/cuda/gemm_cp_async.cu (64×64 CTA tile, K-tile 32, 256 threads, 4×4 per
 * thread, two cp.async stages, FFMA).
 */
export const gemmSimt = benchKernelEntry<GemmSizes>(
  "gemm_simt",
  "examples/gemm_simt.ts",
  "bench/cuda/gemm_cp_async.cu",
  [
    { name: "A", dtype: "float16", shape: (s) => [s.m, s.k], role: "input" },
    { name: "B", dtype: "float16", shape: (s) => [s.k, s.n], role: "input" },
    { name: "C", dtype: "float32", shape: (s) => [s.m, s.n], role: "output" },
  ],
);

/**
 * gemm_mma: C = A · B on tensor cores; A float16 [m, k], B float16 [k, n], C float32 [m, n].
 * Hand-written: bench/cuda/gemm_mma.cu (128×128 CTA tile, K-tile 32, 256 threads, warp tile
 * 64×32, ldmatrix + mma.sync.m16n8k16, three cp.async stages, XOR-swizzled shared tiles).
 */
export const gemmMma = benchKernelEntry<GemmSizes>(
  "gemm_mma",
  "examples/gemm_mma.ts",
  "bench/cuda/gemm_mma.cu",
  [
    { name: "A", dtype: "float16", shape: (s) => [s.m, s.k], role: "input" },
    { name: "B", dtype: "float16", shape: (s) => [s.k, s.n], role: "input" },
    { name: "C", dtype: "float32", shape: (s) => [s.m, s.n], role: "output" },
  ],
);

/**
 * gemm_mma_tile: the gemm_mma above written with the tile layer (examples/tile/gemm_mma.ts:
 * T.tile.cta.copy_async, T.tile.warp.copy by ldmatrix, T.tile.warp.gemm), timed beside the
 * instruction-level kernel at the same sizes (issue 22: ≥ 0.98× examples/gemm_mma.ts).
 */
export const gemmMmaTile = benchKernelEntry<GemmSizes>(
  "gemm_mma_tile",
  "examples/tile/gemm_mma.ts",
  "bench/cuda/gemm_mma.cu",
  gemmMma.tensors,
);

/** The sizes bench/compute.ts runs at. */
export const benchSizes = {
  vector_add: { n: 1 << 26 } as VectorAddSizes,
  softmax: { rows: 8192, cols: 8192 } as RowSizes,
  softmax_tile: { rows: 8192, cols: 8192 } as RowSizes,
  reduce_rows: { rows: 8192, cols: 8192 } as RowSizes,
  gemm_simt: { m: 2048, n: 2048, k: 2048 } as GemmSizes,
  gemm_mma: { m: 4096, n: 4096, k: 4096 } as GemmSizes,
  gemm_mma_tile: { m: 4096, n: 4096, k: 4096 } as GemmSizes,
} as const;

/** gemm_mma also runs at these sizes (the 4096³ and 8192³). */
export const gemmMmaSizes: readonly GemmSizes[] = [
  { m: 4096, n: 4096, k: 4096 },
  { m: 8192, n: 8192, k: 8192 },
];

/** Every benchmark's tirx-ts hook, in the order bench/compute.ts runs them. */
export const computeKernels = [
  vectorAdd,
  softmax,
  softmaxTile,
  reduceRows,
  gemmSimt,
  gemmMma,
  gemmMmaTile,
] as const;
