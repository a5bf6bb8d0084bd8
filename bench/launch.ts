// Launch overhead on the GPU, side by side in one run:
//   queued launch: host time per `launchAsync` (tirx-ts) and per cuLaunchKernel (C, the same PTX
//     entry: bench/cuda/launch_overhead.c, built here with nvcc), launches in batches of 256 with
//     an untimed synchronize between batches;
//   launch + synchronize: one launch and cuCtxSynchronize per iteration, in rounds of 1000; three
//     blocks of 5 tirx-ts rounds interleaved with three runs of the C program (5 rounds each), the
//     median of each side's 15 rounds (target ≤ 1.05× C);
//   the same two in one process: bench/cuda/launch_loop.c, loaded with koffi, launches the
//     CUfunction tirx-ts loaded, in the same context and thread, in rounds alternating with
//     tirx-ts's (15 each, medians), so that host noise between processes drops out;
//   CUDA graph: 100 launches captured once (captureGraph), replayed; time per kernel, from the
//     first replay to the end of the last one.
//   the koffi floor: in the same rounds, a JavaScript loop of koffi calls that each launch once
//     (launch_loop.c's launch_once, and cuLaunchKernelEx called bare), no tirx-ts code;
//   the launch stub (runtime-cuda's launch-shim.ts, C compiled at first use): in the same rounds,
//     queued launches of the bound launcher through the stub (one koffi call of tirx_launch) beside
//     bare koffi cuLaunchKernelEx and C, and launch + synchronize through the stub (one koffi call
//     of tirx_launch_sync) beside the bound launcher's two koffi calls (launch, then
//     device.synchronize) and C.
// The kernel is tiny (256 threads, A[tid] += 1 on float32), so times are launch overheads.
// Targets: launch + synchronize ≤ 1.05× C and queued ≤ 1.05× C (issue 20); graph ≤ 1.5 µs per
// kernel.
// Usage: tsx -C source bench/launch.ts [--iters 20000] [--out results.md]
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { T } from "@tirx-ts/dsl";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import {
  archForDevice,
  captureGraph,
  compileCuda,
  cuda,
  cudaAvailable,
  cudaZeros,
  driver,
  launchShim,
  median,
} from "@tirx-ts/runtime-cuda";
import { compile } from "tirx-ts";
import koffi from "koffi";
import { bareLaunch } from "./bare-launch.js";

const { values } = parseArgs({
  options: { iters: { type: "string", default: "20000" }, out: { type: "string" } },
});
const iters = Number(values.iters);
const here = fileURLToPath(new URL(".", import.meta.url));
const N = 256;

const inc = T.function("launch_inc", { A: T.Tensor([N], "float32") }, ({ A }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: N }) });
  const tid = T.cuda.thread_idx("x");
  A.set([tid], A.get([tid]).add(1));
});

const probe = cudaAvailable();
if (!probe.ok) {
  console.log(`launch benchmark skipped: ${probe.reason}`);
  process.exit(0);
}
const dev = cuda(0);
const arch = archForDevice(dev);
const ptx = compileToPtx(inc, { arch });
const run = compile(inc, { target: "cuda" });
const a = cudaZeros([N], "float32", dev);

const lines: string[] = [];
const say = (s: string): void => {
  console.log(s);
  lines.push(s);
};

// --- C reference ---
type CResult = {
  queued_us: number;
  launch_sync_us: number;
  queued_ex_us: number;
  launch_sync_rounds: number[];
};
let c: CResult | undefined;
let cNote = "";
/** Runs the C program once (its own warm-up, queued rounds and 5 launch + synchronize rounds). */
let runC: (() => CResult) | undefined;
try {
  const dir = mkdtempSync(join(tmpdir(), "tirx-launch-"));
  const exe = join(dir, "launch_overhead");
  execFileSync("nvcc", ["-O2", "-o", exe, join(here, "cuda", "launch_overhead.c"), "-ldl"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const ptxFile = join(dir, "k.ptx");
  writeFileSync(ptxFile, ptx.text);
  runC = () => {
    const r = spawnSync(exe, [ptxFile, ptx.entry, String(N * 4), "1", String(N), String(iters)], {
      encoding: "utf8",
    });
    if (r.status !== 0) throw new Error(r.stderr || `exit ${r.status}`);
    return JSON.parse(r.stdout.trim()) as CResult;
  };
  c = runC();
} catch (e) {
  cNote = `C reference unavailable: ${(e as Error).message.split("\n")[0]}`;
}

// --- tirx-ts ---
const nowUs = (): number => performance.now() * 1000;
/** Launches before any timing, as the C reference does (WARMUP there): 8192, batches of 256. */
function warmUp(launchOne: () => void): void {
  for (let done = 0; done < 8192; done += 256) {
    for (let i = 0; i < 256; i++) launchOne();
    dev.synchronize();
  }
}
/**
 * Host µs per queued call of `launchOne`, after {@link warmUp}: 5 rounds of iters/5 launches in
 * batches of 256 with a synchronize between batches (not timed); each round's per-launch time.
 */
function queuedRounds(launchOne: () => void): number[] {
  warmUp(launchOne);
  const rs: number[] = [];
  for (let round = 0; round < 5; round++) {
    let queued = 0;
    let done = 0;
    const per = Math.ceil(iters / 5);
    while (done < per) {
      const n = Math.min(256, per - done);
      const t0 = nowUs();
      for (let i = 0; i < n; i++) launchOne();
      queued += nowUs() - t0;
      dev.synchronize();
      done += n;
    }
    rs.push(queued / per);
  }
  return rs;
}
const queuedPer = (launchOne: () => void): number => median(queuedRounds(launchOne));
// Queued launches through launchAsync; the median round is reported.
const rounds = queuedRounds(() => run.launchAsync(a));
const queuedUs = median(rounds);

// The two driver entry points behind the bound launch function (CudaKernel.launcher), same
// kernel and buffer: cuLaunchKernel (11 FFI arguments, TIRX_LAUNCH=classic) and cuLaunchKernelEx (4, the default).
const kernelParams = run.module.params;
const boundCfg = { ...run.module.launch, dynamicSharedBytes: run.module.dynamicSharedBytes };
const k0 = compileCuda(inc, { module: run.module }).kernel(dev);
const argsA = [a];
const classicL = k0.launcher(kernelParams, boundCfg, { ex: false });
const exL = k0.launcher(kernelParams, boundCfg, { ex: true, shim: false });
/** The same bound launcher through the launch stub (launch-shim.ts), where it loads. */
const shimL = k0.launcher(kernelParams, boundCfg, { ex: true });
const shim = launchShim(driver().library);
const classicUs = queuedPer(() => classicL(argsA));
const exUs = queuedPer(() => exL(argsA));
// Launch + synchronize: blocks of 5 rounds of SYNC_ROUND synchronous launches (as the C
// program's), interleaved with runs of the C program so that both sides see the same host
// conditions; each side's figure is the median of all its rounds.
const SYNC_ROUND = 1000;
/** µs per call of a launch + synchronize `f`, over SYNC_ROUND calls. */
const syncRoundOf = (f: () => void): number => {
  const t = nowUs();
  for (let i = 0; i < SYNC_ROUND; i++) f();
  return (nowUs() - t) / SYNC_ROUND;
};
const syncRound = (): number => syncRoundOf(() => run(a));
const afterKernel = 'after kernel "launch_inc"';
for (let i = 0; i < 200; i++) run(a);
const tirxSyncRounds: number[] = [];
const cSyncRounds: number[] = [...(c?.launch_sync_rounds ?? [])];
for (let block = 0; block < 3; block++) {
  for (let r = 0; r < 5; r++) tirxSyncRounds.push(syncRound());
  if (runC && block < 2) cSyncRounds.push(...runC().launch_sync_rounds);
}
const syncUs = median(tirxSyncRounds);
const cSyncUs = cSyncRounds.length > 0 ? median(cSyncRounds) : undefined;

// The same comparison inside this process: bench/cuda/launch_loop.c, loaded with koffi, launches
// the CUfunction tirx-ts loaded (cuLaunchKernel, as the C program), in the same context and
// thread; rounds alternate C, tirx-ts, so that both sides see the same moments of the host.
type Loop = (fn: bigint, grid: number, block: number, a: bigint, n: number, sync: number) => number;
type Once = (fn: bigint, grid: number, block: number, a: bigint) => number;
let cLoop: Loop | undefined;
/** One cuLaunchKernel per koffi call (launch_loop.c's tirx_c_launch_once): the koffi floor. */
let cOnce: Once | undefined;
let inProcessNote = "";
try {
  const dir = mkdtempSync(join(tmpdir(), "tirx-launch-loop-"));
  const so = join(dir, "liblaunch_loop.so");
  execFileSync(
    "nvcc",
    [
      "-O2",
      "-shared",
      "-Xcompiler",
      "-fPIC",
      "-o",
      so,
      join(here, "cuda", "launch_loop.c"),
      "-ldl",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const lib = koffi.load(so);
  cLoop = lib.func("tirx_c_launch_loop", "double", [
    "uint64_t",
    "uint32_t",
    "uint32_t",
    "uint64_t",
    "int",
    "int",
  ]) as Loop;
  cOnce = lib.func("tirx_c_launch_once", "int", [
    "uint64_t",
    "uint32_t",
    "uint32_t",
    "uint64_t",
  ]) as Once;
} catch (e) {
  inProcessNote = `in-process C unavailable: ${(e as Error).message.split("\n")[0]}`;
}
const inProc = {
  cSync: [] as number[],
  tSync: [] as number[],
  cQueued: [] as number[],
  tQueued: [] as number[],
  /** A JavaScript loop of koffi calls of tirx_c_launch_once: no tirx-ts code, one FFI call each. */
  onceQueued: [] as number[],
  /** A JavaScript loop of bare koffi calls of cuLaunchKernelEx (config and params built once). */
  exQueued: [] as number[],
  /** The bound launcher through the launch stub: one koffi call (tirx_launch) per launch. */
  shimQueued: [] as number[],
  /** The bound launcher's `sync` through the stub: one koffi call (tirx_launch_sync). */
  shimSync: [] as number[],
  /** The bound launcher's `sync` through koffi: cuLaunchKernelEx, then device.synchronize. */
  koffiSync: [] as number[],
};
// The bare cuLaunchKernelEx call: a CUlaunchConfig (grid 1, block N, default stream, no
// attributes; 56 bytes) and a kernelParams array pointing at a slot that holds a.ptr.
const bareEx = driver().cuLaunchKernelEx;
const bare = bareLaunch(N, a.ptr);
if (cLoop) {
  const loop = cLoop;
  const cRound = (sync: number, n: number): number => {
    const us = loop(k0.handle, 1, N, a.ptr, n, sync);
    if (us < 0) throw new Error(`launch_loop.c failed with CUresult ${-us}`);
    return us;
  };
  cRound(1, 200);
  for (let r = 0; r < 15; r++) {
    inProc.cSync.push(cRound(1, SYNC_ROUND));
    inProc.tSync.push(syncRound());
    if (shim) inProc.shimSync.push(syncRoundOf(() => shimL.sync(argsA, afterKernel)));
    inProc.koffiSync.push(syncRoundOf(() => exL.sync(argsA, afterKernel)));
  }
  // Queued rounds: 16 batches of 256 launches, a synchronize after each batch (not timed), the
  // same on both sides; C and tirx-ts rounds alternate.
  for (let r = 0; r < 15; r++) {
    let cUs = 0;
    for (let b = 0; b < 16; b++) cUs += cRound(0, 256);
    inProc.cQueued.push(cUs / 16);
    let tUs = 0;
    for (let b = 0; b < 16; b++) {
      const t = nowUs();
      for (let i = 0; i < 256; i++) run.launchAsync(a);
      tUs += nowUs() - t;
      dev.synchronize();
    }
    inProc.tQueued.push(tUs / (16 * 256));
    const jsRound = (launchOne: () => void): number => {
      let us = 0;
      for (let b = 0; b < 16; b++) {
        const t = nowUs();
        for (let i = 0; i < 256; i++) launchOne();
        us += nowUs() - t;
        dev.synchronize();
      }
      return us / (16 * 256);
    };
    const once = cOnce!;
    const fnHandle = k0.handle;
    const ptr = a.ptr;
    inProc.onceQueued.push(jsRound(() => void once(fnHandle, 1, N, ptr)));
    if (bareEx) {
      const ex = bareEx;
      inProc.exQueued.push(jsRound(() => void ex(bare.config, fnHandle, bare.params, 0n)));
    }
    if (shim) inProc.shimQueued.push(jsRound(() => shimL(argsA)));
  }
}
const inProcSyncC = inProc.cSync.length > 0 ? median(inProc.cSync) : undefined;
const inProcSyncT = inProc.tSync.length > 0 ? median(inProc.tSync) : undefined;
const inProcQueuedC = inProc.cQueued.length > 0 ? median(inProc.cQueued) : undefined;
const inProcQueuedT = inProc.tQueued.length > 0 ? median(inProc.tQueued) : undefined;
const inProcOnce = inProc.onceQueued.length > 0 ? median(inProc.onceQueued) : undefined;
const inProcBareEx = inProc.exQueued.length > 0 ? median(inProc.exQueued) : undefined;
const medianOr = (xs: readonly number[]): number | undefined =>
  xs.length > 0 ? median(xs) : undefined;
const inProcShimQueued = medianOr(inProc.shimQueued);
const inProcShimSync = medianOr(inProc.shimSync);
const inProcKoffiSync = medianOr(inProc.koffiSync);
let t0: number;

// CUDA graph of 100 launches.
const before = (a.toArray() as Float32Array)[0]!;
const graph = captureGraph(() => {
  for (let i = 0; i < 100; i++) run.launchAsync(a);
}, dev);
for (let i = 0; i < 10; i++) graph.launch();
dev.synchronize();
const replays = 200;
t0 = nowUs();
for (let i = 0; i < replays; i++) graph.launch();
dev.synchronize();
const graphUs = (nowUs() - t0) / (replays * 100);
const after = (a.toArray() as Float32Array)[0]!;
const graphOk = after - before === 100 * (replays + 10) && graph.nodeCount === 100;
graph.dispose();
a.dispose();

const ratio = (x: number, y: number | undefined): string =>
  y === undefined ? "n/a" : `${(x / y).toFixed(2)}×`;
say(`# launch overhead`);
say("");
say(`- date: ${new Date().toISOString()}`);
say(
  `- GPU: ${dev.name} (${arch}); host: ${cpus().length} × ${cpus()[0]?.model ?? "?"}, Node ${process.version}`,
);
say(`- kernel: launch_inc, grid 1, block ${N}, one float32 tensor; ${iters} queued launches`);
say(
  `- command: tsx -C source bench/launch.ts (launchAsync through ${process.env["TIRX_LAUNCH"] === "classic" ? "cuLaunchKernel, TIRX_LAUNCH=classic" : "cuLaunchKernelEx"})`,
);
if (cNote) say(`- ${cNote}`);
if (inProcessNote) say(`- ${inProcessNote}`);
say(
  `- launch stub: ${shim ? shim.path : "not loaded (no C compiler, or TIRX_LAUNCH_SHIM=off; TIRX_DEBUG=1 says why)"}`,
);
say("");
say("| measure | tirx-ts | C (cuLaunchKernel) | tirx-ts / C | target |");
say("|---|---|---|---|---|");
say(
  `| queued launch, µs | ${queuedUs.toFixed(2)} | ${c?.queued_us.toFixed(2) ?? "n/a"} | ${ratio(queuedUs, c?.queued_us)} | ≤ 1.0× and ≤ 3 µs |`,
);
say(
  `| queued, bound launcher via cuLaunchKernel, µs | ${classicUs.toFixed(2)} | ${c?.queued_us.toFixed(2) ?? "n/a"} | ${ratio(classicUs, c?.queued_us)} | |`,
);
say(
  `| queued, bound launcher via cuLaunchKernelEx through koffi, µs (C column: C through cuLaunchKernelEx) | ${exUs.toFixed(2)} | ${c?.queued_ex_us.toFixed(2) ?? "n/a"} | ${ratio(exUs, c?.queued_ex_us)} | |`,
);
say(
  `| launch + synchronize, µs (median of ${tirxSyncRounds.length} and ${cSyncRounds.length} rounds of ${SYNC_ROUND}) | ${syncUs.toFixed(2)} | ${cSyncUs?.toFixed(2) ?? "n/a"} | ${ratio(syncUs, cSyncUs)} | ≤ 1.05× |`,
);
say(
  `| queued launch, same process: C (launch_loop.c via koffi) and tirx-ts rounds alternating, µs (median of 15 rounds each) | ${inProcQueuedT?.toFixed(2) ?? "n/a"} | ${inProcQueuedC?.toFixed(2) ?? "n/a"} | ${inProcQueuedT !== undefined ? ratio(inProcQueuedT, inProcQueuedC) : "n/a"} | ≤ 1.05× |`,
);
say(
  `| queued launch, same process: a JavaScript loop of koffi calls of launch_loop.c's launch_once (no tirx-ts; the koffi floor), µs | ${inProcOnce?.toFixed(2) ?? "n/a"} | ${inProcQueuedC?.toFixed(2) ?? "n/a"} | ${inProcOnce !== undefined ? ratio(inProcOnce, inProcQueuedC) : "n/a"} | |`,
);
say(
  `| queued launch, same process: a JavaScript loop of bare koffi calls of cuLaunchKernelEx (no tirx-ts), µs | ${inProcBareEx?.toFixed(2) ?? "n/a"} | ${inProcQueuedC?.toFixed(2) ?? "n/a"} | ${inProcBareEx !== undefined ? ratio(inProcBareEx, inProcQueuedC) : "n/a"} | |`,
);
say(
  `| launch + synchronize, same process: C (launch_loop.c via koffi) and tirx-ts rounds alternating, µs (median of 15 rounds each) | ${inProcSyncT?.toFixed(2) ?? "n/a"} | ${inProcSyncC?.toFixed(2) ?? "n/a"} | ${inProcSyncT !== undefined ? ratio(inProcSyncT, inProcSyncC) : "n/a"} | ≤ 1.05× |`,
);
const cell = (x: number | undefined): string => x?.toFixed(2) ?? "n/a";
const sameProcess = (x: number | undefined, y: number | undefined): string =>
  x !== undefined ? ratio(x, y) : "n/a";
say(
  `| queued launch, same process: the bound launcher through the launch stub (one koffi call of tirx_launch), µs | ${cell(inProcShimQueued)} | ${cell(inProcQueuedC)} | ${sameProcess(inProcShimQueued, inProcQueuedC)} | ≤ 1.05× |`,
);
say(
  `| launch + synchronize, same process: the bound launcher through the launch stub (one koffi call of tirx_launch_sync), µs | ${cell(inProcShimSync)} | ${cell(inProcSyncC)} | ${sameProcess(inProcShimSync, inProcSyncC)} | ≤ 1.05× |`,
);
say(
  `| launch + synchronize, same process: the bound launcher through koffi (cuLaunchKernelEx, then device.synchronize: two koffi calls), µs | ${cell(inProcKoffiSync)} | ${cell(inProcSyncC)} | ${sameProcess(inProcKoffiSync, inProcSyncC)} | |`,
);
say(`| CUDA graph of 100, µs per kernel | ${graphUs.toFixed(2)} | | | ≤ 1.5 µs |`);
say("");
say(
  `graph replay result check (A[0] grew by 100 per replay, 100 nodes): ${graphOk ? "ok" : "FAILED"}`,
);
say(`queued rounds (µs): ${rounds.map((r) => r.toFixed(2)).join(", ")}`);
say(
  `launch + synchronize rounds, tirx-ts (µs): ${tirxSyncRounds.map((r) => r.toFixed(2)).join(", ")}`,
);
say(`launch + synchronize rounds, C (µs): ${cSyncRounds.map((r) => r.toFixed(2)).join(", ")}`);
say(
  `same process, launch + synchronize rounds, C / tirx-ts (µs): ${inProc.cSync.map((x, i) => `${x.toFixed(2)}/${inProc.tSync[i]!.toFixed(2)}`).join(", ")}`,
);
say(
  `same process, queued rounds, C / tirx-ts (µs): ${inProc.cQueued.map((x, i) => `${x.toFixed(2)}/${inProc.tQueued[i]!.toFixed(2)}`).join(", ")}`,
);
say(
  `same process, queued rounds, koffi launch_once / bare koffi cuLaunchKernelEx (µs): ${inProc.onceQueued.map((x, i) => `${x.toFixed(2)}/${inProc.exQueued[i]?.toFixed(2) ?? "n/a"}`).join(", ")}`,
);
say(
  `same process, queued rounds through the launch stub (µs): ${inProc.shimQueued.map((x) => x.toFixed(2)).join(", ")}`,
);
say(
  `same process, launch + synchronize rounds, launch stub / two koffi calls (µs): ${inProc.koffiSync.map((x, i) => `${inProc.shimSync[i]?.toFixed(2) ?? "n/a"}/${x.toFixed(2)}`).join(", ")}`,
);
if (values.out) writeFileSync(values.out, lines.join("\n") + "\n");
process.exitCode = graphOk ? 0 : 1;
