// The JavaScript side of a launch, measured without a GPU: the binding is pointed (TIRX_LIBCUDA)
// at bench/cuda/stub_libcuda.c, a libcuda stand-in whose entry points return at once, so every
// nanosecond measured here is tirx-ts + koffi, not the driver. Layers, from the bottom:
//   ffi: the koffi call of cuLaunchKernel alone (CudaDriver.launchKernel);
//   kernel: CudaKernel.launch (activate, argument packing, stream lookup, the call);
//   bound / bound_ex: CudaKernel.launcher's function through cuLaunchKernel / cuLaunchKernelEx,
//     both called through koffi (the launch stub off: `{ shim: false }`);
//   shim_queued: the same bound function through the launch stub (launch-shim.ts: one koffi call
//     of its tirx_launch, one argument, which calls cuLaunchKernelEx);
//   launchAsync: tirx-ts's compiled kernel (argument check, device dispatch, all of the above);
//   bare_koffi_ex: a koffi call of cuLaunchKernelEx with a config built once (no tirx-ts code);
//   bare_shim: a koffi call of the stub's tirx_launch with a record built once (no tirx-ts code).
// Launch + synchronize (cuCtxSynchronize after each launch):
//   sync_koffi: the bound function's `sync` through koffi, two FFI calls (launch, synchronize);
//   sync_shim: the same through the stub's tirx_launch_sync, one FFI call;
//   run / run_koffi: tirx-ts's synchronous call `run(a)` (fast path), with the stub and without
//     (TIRX_LAUNCH_SHIM=off when its fast path was bound).
// Usage: tsx -C source bench/launch-cpu.ts [--iters 200000]
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { iters: { type: "string", default: "200000" } } });
const iters = Number(values.iters);
if (!process.env["TIRX_LIBCUDA"]) {
  const here = fileURLToPath(new URL(".", import.meta.url));
  const lib = join(mkdtempSync(join(tmpdir(), "tirx-stub-")), "stub_libcuda.so");
  execFileSync("gcc", ["-O2", "-shared", "-fPIC", "-o", lib, join(here, "cuda", "stub_libcuda.c")]);
  process.env["TIRX_LIBCUDA"] = lib;
}
process.env["TIRX_CACHE"] = "off";

const { T } = await import("@tirx-ts/dsl");
const { cuda, cudaZeros, driver, launchShim, median } = await import("@tirx-ts/runtime-cuda");
const { default: koffi } = await import("koffi");
const { compile } = await import("tirx-ts");

const N = 256;
const inc = T.function("launch_inc", { A: T.Tensor([N], "float32") }, ({ A }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: N }) });
  const tid = T.cuda.thread_idx("x");
  A.set([tid], A.get([tid]).add(1));
});
const dev = cuda(0);
const run = compile(inc, { target: "cuda" });
const a = cudaZeros([N], "float32", dev);
run.launchAsync(a);
const { compileCuda } = await import("@tirx-ts/runtime-cuda");
const cc = compileCuda(inc, { module: run.module });
const k = cc.kernel(dev);
const launchCfg = { ...run.module.launch, dynamicSharedBytes: run.module.dynamicSharedBytes };
const d = driver();

/**
 * Nanoseconds per call of `f`: the fastest of 20 rounds of `iters / 20` calls (the minimum, as
 * other processes on a shared machine only ever add time), and the median.
 */
function nsPer(f: () => void): { min: number; median: number } {
  for (let i = 0; i < 20000; i++) f();
  const per = Math.ceil(iters / 20);
  const rounds: number[] = [];
  for (let r = 0; r < 20; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < per; i++) f();
    rounds.push(Number(process.hrtime.bigint() - t0) / per);
  }
  return { min: Math.round(Math.min(...rounds)), median: Math.round(median(rounds)) };
}

const grid = [1, 1, 1] as const;
const block = [N, 1, 1] as const;
const ffi = nsPer(() => d.launchKernel(k.handle, grid, block, 0, 0n, 0n));
const kern = nsPer(() => k.launch(run.module.params, [a], launchCfg));
const classic = k.launcher(run.module.params, launchCfg, { ex: false });
const ex = k.launcher(run.module.params, launchCfg, { ex: true, shim: false });
const viaShim = k.launcher(run.module.params, launchCfg, { ex: true });
const shim = launchShim(d.library);
const bound = nsPer(() => classic([a]));
const boundEx = nsPer(() => ex([a]));
const shimQueued = nsPer(() => viaShim([a]));
const args = [a];
const top = nsPer(() => run.launchAsync(...args));
const after = 'after kernel "launch_inc"';
const syncKoffi = nsPer(() => ex.sync(args, after));
const syncShim = nsPer(() => viaShim.sync(args, after));
const runSync = nsPer(() => run(a));
// The same synchronous call with its fast path bound while TIRX_LAUNCH_SHIM=off (TIRX_CACHE=off:
// compile() builds a second Compiled, whose launcher is bound on its second call).
process.env["TIRX_LAUNCH_SHIM"] = "off";
const runOff = compile(inc, { target: "cuda" });
runOff(a);
runOff(a);
delete process.env["TIRX_LAUNCH_SHIM"];
const runSyncKoffi = nsPer(() => runOff(a));
// The bare koffi call of cuLaunchKernelEx: a CUlaunchConfig (grid 1, block N) and kernelParams
// built once, no tirx-ts code (bench/launch.ts's koffi floor row).
const { bareLaunch } = await import("./bare-launch.js");
const { config: bareConfig, params: bareParams } = bareLaunch(N, a.ptr);
const launchEx = d.cuLaunchKernelEx!;
const bareEx = nsPer(() => launchEx(bareConfig, k.handle, bareParams, 0n));
// The stub's record for the same call: driver table, config, CUfunction, kernelParams, and the
// int32 tirx_launch_sync writes (40 bytes: launch-shim.ts's LAUNCH_RECORD_BYTES).
let bareShim: { min: number; median: number } | undefined;
if (shim) {
  const record = koffi.alloc("uint8_t", 40) as bigint;
  new BigUint64Array(koffi.view(record, 40)).set([
    shim.driverTable,
    bareConfig,
    k.handle,
    bareParams,
  ]);
  bareShim = nsPer(() => shim.launch(record));
}
console.log(
  JSON.stringify({
    host: `${cpus().length} × ${cpus()[0]?.model ?? "?"}`,
    node: process.version,
    iters,
    ffi_ns: ffi,
    kernel_launch_ns: kern,
    bound_ns: bound,
    bound_ex_ns: boundEx,
    shim_queued_ns: shimQueued,
    launchAsync_ns: top,
    bare_koffi_ex_ns: bareEx,
    bare_shim_ns: bareShim ?? "stub not loaded",
    sync_koffi_ns: syncKoffi,
    sync_shim_ns: syncShim,
    run_ns: runSync,
    run_koffi_ns: runSyncKoffi,
    shim: shim?.path ?? "not loaded (TIRX_DEBUG=1 says why)",
  }),
);
