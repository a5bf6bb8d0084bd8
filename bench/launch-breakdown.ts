// Where the time of a synchronous launch goes, on the GPU, in one process: rounds of 1000
// iterations of launch + cuCtxSynchronize of the same CUfunction (launch_inc, 256 threads), the
// kinds alternating round by round (15 rounds each; medians):
//   C loop, cuLaunchKernel      — bench/cuda/launch_loop.c's loop, no JavaScript between calls;
//   C loop, cuLaunchKernelEx    — the same through the entry point tirx-ts uses;
//   JS loop, two koffi calls    — a JavaScript loop calling launch_loop.c's one-launch and
//                                 one-synchronize functions: Node.js + koffi, no tirx-ts;
//   tirx-ts run(a)              — the compiled kernel's synchronous call (cuLaunchKernelEx);
//   tirx-ts, bound launcher + synchronize — CudaKernel.launcher and device.synchronize.
// The differences between rows say what the loop in JavaScript costs and what tirx-ts adds.
// Usage: tsx -C source bench/launch-breakdown.ts [--out results.md]
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import koffi from "koffi";
import { T } from "@tirx-ts/dsl";
import { compileCuda, cuda, cudaAvailable, cudaZeros, median } from "@tirx-ts/runtime-cuda";
import { compile } from "tirx-ts";

const { values } = parseArgs({ options: { out: { type: "string" } } });
const probe = cudaAvailable();
if (!probe.ok) {
  console.log(`launch breakdown skipped: ${probe.reason}`);
  process.exit(0);
}
const here = fileURLToPath(new URL(".", import.meta.url));
const N = 256;
const ROUND = 1000;
const inc = T.function("launch_inc", { A: T.Tensor([N], "float32") }, ({ A }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: N }) });
  const tid = T.cuda.thread_idx("x");
  A.set([tid], A.get([tid]).add(1));
});
const dev = cuda(0);
const run = compile(inc, { target: "cuda" });
const a = cudaZeros([N], "float32", dev);
run(a);
const k = compileCuda(inc, { module: run.module }).kernel(dev);
const bound = k.launcher(run.module.params, {
  ...run.module.launch,
  dynamicSharedBytes: run.module.dynamicSharedBytes,
});
const args = [a];

const so = join(mkdtempSync(join(tmpdir(), "tirx-breakdown-")), "liblaunch_loop.so");
execFileSync(
  "nvcc",
  ["-O2", "-shared", "-Xcompiler", "-fPIC", "-o", so, join(here, "cuda", "launch_loop.c"), "-ldl"],
  { stdio: ["ignore", "pipe", "pipe"] },
);
const lib = koffi.load(so);
const u64 = "uint64_t";
const cLoop = lib.func("tirx_c_launch_loop", "double", [
  u64,
  "uint32_t",
  "uint32_t",
  u64,
  "int",
  "int",
]);
const cLoopEx = lib.func("tirx_c_launch_loop_ex", "double", [
  u64,
  "uint32_t",
  "uint32_t",
  u64,
  "int",
]);
const launchOnce = lib.func("tirx_c_launch_once", "int", [u64, "uint32_t", "uint32_t", u64]);
const syncOnce = lib.func("tirx_c_sync_once", "int", []);
const fn = k.handle;
const ptr = a.ptr;

const nowUs = (): number => performance.now() * 1000;
const timed = (body: () => void): number => {
  const t = nowUs();
  for (let i = 0; i < ROUND; i++) body();
  return (nowUs() - t) / ROUND;
};
const checked = (us: number): number => {
  if (us < 0) throw new Error(`launch_loop.c failed: CUresult ${-us}`);
  return us;
};
const kinds: [string, () => number][] = [
  ["C loop, cuLaunchKernel + cuCtxSynchronize", () => checked(cLoop(fn, 1, N, ptr, ROUND, 1))],
  ["C loop, cuLaunchKernelEx + cuCtxSynchronize", () => checked(cLoopEx(fn, 1, N, ptr, ROUND))],
  [
    "JS loop, koffi calls of C launch_once + sync_once (no tirx-ts)",
    () =>
      timed(() => {
        if (launchOnce(fn, 1, N, ptr) !== 0 || syncOnce() !== 0)
          throw new Error("driver call failed");
      }),
  ],
  ["tirx-ts run(a)", () => timed(() => run(a))],
  [
    "tirx-ts bound launcher + device.synchronize()",
    () =>
      timed(() => {
        bound(args);
        dev.synchronize();
      }),
  ],
];
for (const [, f] of kinds) for (let w = 0; w < 3; w++) f();
const rounds = kinds.map(() => [] as number[]);
for (let r = 0; r < 15; r++) kinds.forEach(([, f], i) => rounds[i]!.push(f()));
const base = median(rounds[0]!);
const lines = [
  `# launch + synchronize, broken down (one process)`,
  "",
  `- date: ${new Date().toISOString()}; GPU: ${dev.name}; Node ${process.version}`,
  `- command: tsx -C source bench/launch-breakdown.ts; 15 alternating rounds of ${ROUND} per row`,
  "",
  "| what | µs per launch + synchronize (median) | / C loop | rounds |",
  "|---|---|---|---|",
  ...kinds.map(([name], i) => {
    const m = median(rounds[i]!);
    return `| ${name} | ${m.toFixed(2)} | ${(m / base).toFixed(3)}× | ${rounds[i]!.map((x) => x.toFixed(2)).join(" ")} |`;
  }),
];
console.log(lines.join("\n"));
if (values.out) writeFileSync(values.out, lines.join("\n") + "\n");
