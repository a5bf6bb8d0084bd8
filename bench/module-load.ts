// Module load time on the GPU: a PTX module compiled by the driver's linker (and stored in the
// binary cache), against the same module loaded from the cache (its cubin, no JIT); the median
// of --runs loads, each of a distinct module text in a fresh cache directory. The target is at
// most 5 ms from the cache. test/gpu/launch-lifetimes.test.ts checks by moduleLoadStats that
// the second load comes from the cache. Needs a CUDA driver; says so where there is none.
// Run: tsx -C source bench/module-load.ts [--runs 20]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { T } from "@tirx-ts/dsl";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import {
  archForDevice,
  cuda,
  cudaAvailable,
  loadModule,
  median,
  moduleLoadStats,
} from "@tirx-ts/runtime-cuda";

const { values } = parseArgs({ options: { runs: { type: "string", default: "20" } } });
const RUNS = Number(values.runs);

const probe = cudaAvailable();
if (!probe.ok) {
  console.log(`module-load benchmark skipped: ${probe.reason}`);
  process.exit(0);
}
const inc = T.function("bench_inc", { A: T.Tensor([256], "float32") }, ({ A }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 256 }) });
  const tid = T.cuda.thread_idx("x");
  A.set([tid], A.get([tid]).add(1));
});
const dev = cuda(0);
const ptx = compileToPtx(inc, { arch: archForDevice(dev) }).text;
const dir = mkdtempSync(join(tmpdir(), "tirx-bench-bincache-"));
process.env["TIRX_CACHE_DIR"] = dir;
const compiled: number[] = [];
const cached: number[] = [];
try {
  for (let r = 0; r < RUNS; r++) {
    const text = `${ptx}\n// run ${r}\n`;
    const before = { ...moduleLoadStats };
    let t0 = performance.now();
    loadModule(dev, text).unload();
    compiled.push(performance.now() - t0);
    t0 = performance.now();
    loadModule(dev, text).unload();
    cached.push(performance.now() - t0);
    if (
      moduleLoadStats.compiled !== before.compiled + 1 ||
      moduleLoadStats.fromDiskCache !== before.fromDiskCache + 1
    ) {
      console.log("the second load did not come from the binary cache");
      process.exitCode = 1;
    }
  }
} finally {
  delete process.env["TIRX_CACHE_DIR"];
  rmSync(dir, { recursive: true, force: true });
}
console.log(`${dev.toString()}, median of ${RUNS} loads`);
console.log(`| load | median (ms) | min (ms) | max (ms) |`);
console.log(`|---|---|---|---|`);
for (const [name, xs] of [
  ["PTX, compiled and stored", compiled],
  ["from the binary cache", cached],
] as const) {
  console.log(
    `| ${name} | ${median(xs).toFixed(2)} | ${Math.min(...xs).toFixed(2)} | ${Math.max(...xs).toFixed(2)} |`,
  );
}
