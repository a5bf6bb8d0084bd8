// All benchmarks in one command: `npm run bench` (or `tsx -C source bench/run.ts [--out-dir DIR]`).
// The simulator, script-build and deep-IR benchmarks run everywhere (the lab's where Debian's
// Chromium is installed); the bulk-copy bandwidth,
// compute, Hopper GEMM, attention, gemm() sweep and module-load benchmarks need an sm_90 GPU
// (and nvcc; the attention and gemm peers python3 with torch and triton) and say so where there
// is none. Each writes its
// table, with date, GPU and command, to DIR/<name>-<date>.md (default DIR: bench/results).
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: { "out-dir": { type: "string" }, gib: { type: "string", default: "1" } },
});
const here = fileURLToPath(new URL(".", import.meta.url));
const outDir = values["out-dir"] ?? join(here, "results");
mkdirSync(outDir, { recursive: true });
const day = new Date().toISOString().slice(0, 10);
const tsx = fileURLToPath(new URL("../node_modules/tsx/dist/cli.mjs", import.meta.url));

function run(name: string, args: string[]): { code: number; out: string } {
  console.log(`\n== ${name}: tsx -C source ${args.join(" ")}`);
  const r = spawnSync(process.execPath, [tsx, "-C", "source", ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  process.stdout.write(r.stdout);
  return { code: r.status ?? 1, out: r.stdout };
}

const sim = run("simulator speed", [join(here, "sim-speed.ts")]);
writeFileSync(
  join(outDir, `sim-speed-${day}.md`),
  [
    "# simulator speed",
    "",
    `- date: ${new Date().toISOString()}`,
    `- machine: ${cpus().length} × ${cpus()[0]?.model ?? "unknown CPU"}, Node ${process.version}`,
    "- command: tsx -C source bench/sim-speed.ts",
    "",
    "```",
    sim.out.trimEnd(),
    "```",
    "",
  ].join("\n"),
);
const bulkOut = join(outDir, `bulk-copy-${day}.md`);
const bulk = run("bulk-copy bandwidth", [
  join(here, "bulk-copy.ts"),
  "--gib",
  values.gib!,
  "--out",
  bulkOut,
]);
const compute = run("compute (vector_add, softmax, reduce_rows, gemm)", [
  join(here, "compute.ts"),
  "--out",
  join(outDir, `compute-${day}.md`),
]);
const hopper = run("Hopper GEMM (TMA, wgmma, warp specialisation) vs hand kernel, cuBLAS, peers", [
  join(here, "hopper.ts"),
  "--out",
  join(outDir, `hopper-${day}.md`),
]);
const attention = run(
  "FlashAttention (forward, backward at hd 128) vs torch SDPA cuDNN/flash and Triton",
  [join(here, "attention.ts"), "--out", join(outDir, `attention-${day}.md`)],
);
const gemmSweep = run("gemm() sweep (bf16, fp8 scaled, bias + GELU) vs torch", [
  join(here, "gemm-sweep.ts"),
  "--out",
  join(outDir, `gemm-sweep-${day}.md`),
]);
const firstLaunch = run("gemm(): a tuned call's first launch in a new process", [
  join(here, "gemm-first-launch.ts"),
  "--out",
  join(outDir, `gemm-first-launch-${day}.md`),
]);
const launch = run("launch overhead and CUDA graphs", [
  join(here, "launch.ts"),
  "--out",
  join(outDir, `launch-${day}.md`),
]);
const breakdown = run("launch + synchronize broken down in one process", [
  join(here, "launch-breakdown.ts"),
  "--out",
  join(outDir, `launch-breakdown-${day}.md`),
]);
const labBench = run("the lab in Chromium: a keystroke, a run of the seed kernel, gemm_hopper", [
  join(here, "lab.ts"),
  "--out",
  join(outDir, `lab-${day}.md`),
]);
/** Run bench/<file>.ts and write its output, with date, machine and command, to <file>-<day>.md. */
function table(title: string, file: string): { code: number } {
  const r = run(title, [join(here, `${file}.ts`)]);
  writeFileSync(
    join(outDir, `${file}-${day}.md`),
    [
      `# ${title}`,
      "",
      `- date: ${new Date().toISOString()}`,
      `- machine: ${cpus().length} × ${cpus()[0]?.model ?? "unknown CPU"}, Node ${process.version}`,
      `- command: tsx -C source bench/${file}.ts`,
      "",
      "```",
      r.out.trimEnd(),
      "```",
      "",
    ].join("\n"),
  );
  return r;
}
const timings = [
  table("script-mode build time", "script-build"),
  table("TX2013 refusal time of deep IR at each front door", "deep-ir"),
  table("module load time, compiled and from the binary cache", "module-load"),
];
process.exitCode =
  sim.code ||
  bulk.code ||
  compute.code ||
  hopper.code ||
  attention.code ||
  gemmSweep.code ||
  firstLaunch.code ||
  launch.code ||
  breakdown.code ||
  labBench.code ||
  timings.some((t) => t.code)
    ? 1
    : 0;
