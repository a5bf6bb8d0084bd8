// Launch the instruction-level gemm_mma (examples/gemm_mma.ts) and its tile-layer twin
// (examples/tile/gemm_mma.ts) under distinct entry names, a few times each, for a profiler:
//   ncu -k regex:gemm_mma_ --set full tsx -C source bench/profile-gemm-mma.ts [--size 4096]
// Times nothing itself: bench/compute.ts --only gemm_mma gives the medians.
import { parseArgs } from "node:util";
import { compile, device, tensor } from "tirx-ts";
import { makeGemm } from "../examples/gemm_mma.js";
import { makeTileGemm } from "../examples/tile/gemm_mma.js";

const { values } = parseArgs({
  options: { size: { type: "string", default: "4096" }, iters: { type: "string", default: "3" } },
});
const N = Number(values.size);
const iters = Number(values.iters);
process.env["TIRX_DEVICE"] = "cuda"; // never 4096³ on the simulator
const dev = device();
const rnd = (n: number) => Float32Array.from({ length: n }, (_, i) => ((i * 7919) % 97) / 97 - 0.5);
const A = tensor(rnd(N * N), { shape: [N, N], dtype: "float16", device: dev });
const B = tensor(rnd(N * N), { shape: [N, N], dtype: "float16", device: dev });
const C = tensor.zeros([N, N], "float32", dev);
for (const [label, fn] of [
  ["instruction level", makeGemm(N, N, N, 3, "gemm_mma_inst")],
  ["tile layer", makeTileGemm(N, N, N, 3, "gemm_mma_tile")],
] as const) {
  const run = compile(fn, { target: "cuda", arch: "sm_90a" });
  for (let i = 0; i < iters; i++) run(A, B, C);
  console.log(`${label}: ${iters} launches of ${fn.name} at ${N}³`);
}
