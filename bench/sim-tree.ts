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
