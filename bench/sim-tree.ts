// One simulator tree (packages, benchmark kernels, examples) loaded from a folder, for the
// benchmarks that compare two trees: bench/sim-speed.ts and bench/sim-ab.ts.
import { join } from "node:path";

/** The parts of one simulator tree that bench/sim-speed.ts and bench/sim-ab.ts use (typed loosely:
 * two copies of the packages are compared). */
export interface SimTree {
  verify(fn: unknown): unknown;
  runSim(vf: unknown, args: unknown[], opts?: { hazards?: string }): unknown;
  simTensor(data: Float32Array, o: { shape: number[]; dtype: string }): unknown;
  simZeros(shape: number[], dtype: string): unknown;
  seedKernel: unknown;
  rowCopyKernel(n: number): unknown;
  makeBulkPipeline(cfg: object): unknown;
  makeGemm(m: number, n: number, k: number): unknown;
}

/**
 * Import the simulator, the verifier and the benchmark kernels of the tree at `root`.
 * @throws Error naming `label` when the tree lacks an export (an older revision).
 */
export async function loadSimTree(root: string, label: string): Promise<SimTree> {
  /** The exports of module `p` of the tree at `root`, each looked up by `get`. */
  const imp = async (p: string) => {
    const mod = (await import(join(root, p))) as Record<string, unknown>;
    return (name: string): never => {
      // A tree without the export (an older revision) cannot be measured against this one.
      if (mod[name] === undefined) throw new Error(`${label}: ${p} exports no ${name}`);
      return mod[name] as never;
    };
  };
  const core = await imp("packages/core/src/index.ts");
  const sim = await imp("packages/runtime-sim/src/index.ts");
  const kernels = await imp("packages/runtime-sim/test/kernels.ts");
  const pipe = await imp("examples/bulk_pipeline.ts");
  const gemm = await imp("examples/gemm_simt.ts");
  return {
    verify: core("verify"),
    runSim: sim("runSim"),
    simTensor: sim("simTensor"),
    simZeros: sim("simZeros"),
    seedKernel: kernels("seedKernel"),
    rowCopyKernel: kernels("rowCopyKernel"),
    makeBulkPipeline: pipe("makeBulkPipeline"),
    makeGemm: gemm("makeGemm"),
  };
}

/** A tensor argument of a case: its values (encoded to `dtype`) or, without `data`, zeros. */
export interface SimArg {
  readonly shape: number[];
  readonly dtype: string;
  readonly data?: Float32Array;
}

/** One benchmark kernel with its arguments: `key` names it on the command line (--only). */
export interface SimCase {
  readonly key: "seed" | "rowcopy" | "bulk" | "gemm";
  /** What it is, for the tables. */
  readonly name: string;
  readonly fn: (tree: SimTree) => unknown;
  readonly args: readonly SimArg[];
}

/** gemm_simt's size in the cases. */
export const GEMM_DIMS = { m: 128, n: 128, k: 64 } as const;
/** float16-exact inputs for gemm_simt (small integers over 8). */
export const GEMM_A = Float32Array.from(
  { length: GEMM_DIMS.m * GEMM_DIMS.k },
  (_, i) => ((i * 7) % 13) / 8 - 0.75,
);
export const GEMM_B = Float32Array.from(
  { length: GEMM_DIMS.k * GEMM_DIMS.n },
  (_, i) => ((i * 5) % 11) / 8 - 0.625,
);

const ROWS = 1024;
const PIPE = { elements: 1 << 20, tileBytes: 8192, stages: 3, grid: 32 };

/** The kernels bench/sim-speed.ts and bench/sim-ab.ts time, with their inputs. */
export const SIM_CASES: readonly SimCase[] = [
  {
    key: "seed",
    name: "seed copy_async (128x32 f16, 1 CTA x 128 threads)",
    fn: (l) => l.seedKernel,
    args: [
      {
        shape: [128, 32],
        dtype: "float16",
        data: Float32Array.from({ length: 4096 }, (_, i) => i % 97),
      },
      { shape: [128, 32], dtype: "float16" },
    ],
  },
  {
    key: "rowcopy",
    name: "row copy (1024x1024 f32, 1024 CTAs x 256 threads)",
    fn: (l) => l.rowCopyKernel(ROWS),
    args: [
      {
        shape: [ROWS, ROWS],
        dtype: "float32",
        data: Float32Array.from({ length: ROWS * ROWS }, (_, i) => (i % 4099) * 0.5),
      },
      { shape: [ROWS, ROWS], dtype: "float32" },
    ],
  },
  {
    key: "bulk",
    name: "bulk_pipeline (4 MiB f32, 32 CTAs x 32 threads, 8 KiB tiles x 3 stages)",
    fn: (l) => l.makeBulkPipeline(PIPE),
    args: [
      {
        shape: [PIPE.elements / 2048, 2048],
        dtype: "float32",
        data: Float32Array.from({ length: PIPE.elements }, (_, i) => (i % 65521) * 0.25 - 1000),
      },
      { shape: [PIPE.elements / 2048, 2048], dtype: "float32" },
    ],
  },
  {
    key: "gemm",
    name: "gemm_simt (128x128x64 f16 -> f32, 4 CTAs x 256 threads, fma.rn.f32)",
    fn: (l) => l.makeGemm(GEMM_DIMS.m, GEMM_DIMS.n, GEMM_DIMS.k),
    args: [
      { shape: [GEMM_DIMS.m, GEMM_DIMS.k], dtype: "float16", data: GEMM_A },
      { shape: [GEMM_DIMS.k, GEMM_DIMS.n], dtype: "float16", data: GEMM_B },
      { shape: [GEMM_DIMS.m, GEMM_DIMS.n], dtype: "float32" },
    ],
  },
];

/** Fresh tensors of `tree` for the arguments of `c`. */
export function simArgs(tree: SimTree, c: SimCase): unknown[] {
  return c.args.map((x) =>
    x.data
      ? tree.simTensor(x.data, { shape: x.shape, dtype: x.dtype })
      : tree.simZeros(x.shape, x.dtype),
  );
}
