// Real-GPU tests of streams, events, CUDA graphs, the device-default arch, and lifetimes (leaks);
// skipped (with the reason printed) where there is no driver.
import { describe, expect, it } from "vitest";
import { T } from "@tirx-ts/dsl";
import {
  CudaEvent,
  CudaStream,
  archForDevice,
  captureGraph,
  cuda,
  cudaAvailable,
  cudaEmpty,
  cudaZeros,
  loadModule,
  loadedModuleCount,
  moduleLoadStats,
} from "@tirx-ts/runtime-cuda";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { compile } from "tirx-ts";

const available = cudaAvailable();
if (!available.ok) console.log(`test/gpu/launch-lifetimes: skipped, ${available.reason}`);

const N = 256;
const inc = T.function("gpu_inc", { A: T.Tensor([N], "float32") }, ({ A }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: N }) });
  const tid = T.cuda.thread_idx("x");
  A.set([tid], A.get([tid]).add(1));
});
const first = (t: { toArray(): unknown }): number => (t.toArray() as Float32Array)[0]!;

describe.skipIf(!available.ok)("launch path, streams, graphs and lifetimes on the GPU", () => {
  it("defaults the arch to the GPU's compute capability", () => {
    const dev = cuda(0);
    const [major, minor] = dev.computeCapability;
    if (major * 10 + minor <= 90) expect(archForDevice(dev)).toBe(`sm_${major}${minor}`);
  });

  it("launches on a user stream; done() resolves after the work; events time it", async () => {
    const run = compile(inc, { target: "cuda" });
    const a = cudaZeros([N], "float32", cuda(0));
    const s = new CudaStream(cuda(0));
    const start = new CudaEvent().record(s);
    for (let i = 0; i < 50; i++) run.launchOn(s, a);
    const end = new CudaEvent().record(s);
    await s.done();
    expect(s.query()).toBe(true);
    await end.done();
    expect(end.elapsedMsSince(start)).toBeGreaterThanOrEqual(0);
    expect(first(a)).toBe(50);
    s.use(() => run.launchAsync(a));
    s.synchronize();
    expect(first(a)).toBe(51);
    for (const x of [start, end, s, a]) x[Symbol.dispose]();
  });

  it("captures 100 launches into a graph and replays them", () => {
    const run = compile(inc, { target: "cuda" });
    const a = cudaZeros([N], "float32", cuda(0));
    const g = captureGraph(() => {
      for (let i = 0; i < 100; i++) run.launchAsync(a);
    });
    expect(g.nodeCount).toBe(100);
    expect(first(a)).toBe(0); // captured, not run
    g.launch();
    g.launch();
    cuda(0).synchronize();
    expect(first(a)).toBe(200);
    g.dispose();
    a.dispose();
  });

  it("a module in the disk cache loads its cubin, without JIT", () => {
    // (Load times, compiled and from the cache, are measured by bench/module-load.ts.)
    const dev = cuda(0);
    const dir = mkdtempSync(join(tmpdir(), "tirx-bincache-"));
    process.env["TIRX_CACHE_DIR"] = dir;
    try {
      const text = `${compileToPtx(inc, { arch: archForDevice(dev) }).text}\n// ${dir}\n`;
      const before = { ...moduleLoadStats };
      loadModule(dev, text).unload(); // compiled and stored
      expect(moduleLoadStats.compiled).toBe(before.compiled + 1);
      expect(readdirSync(dir).filter((f) => f.endsWith(".cubin")).length).toBe(1);
      const again = loadModule(dev, text); // a process that starts later does the same
      expect(moduleLoadStats).toEqual({
        fromDiskCache: before.fromDiskCache + 1,
        compiled: before.compiled + 1, // the first load only
        uncached: before.uncached,
      });
      again.unload();
    } finally {
      delete process.env["TIRX_CACHE_DIR"];
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("10k alloc/free and 1k module load/dispose cycles leave this process's device memory and module count flat", () => {
    // Device memory as this process's tensors hold it (allocatedBytes), not cuMemGetInfo's free
    // memory, which other processes using the GPU change while this runs.
    const dev = cuda(0);
    const bytesBefore = dev.allocatedBytes;
    for (let i = 0; i < 10_000; i++) {
      const t = cudaEmpty([1024], "float32", dev);
      if (i === 0) expect(dev.allocatedBytes).toBe(bytesBefore + 4096);
      t[Symbol.dispose]();
    }
    expect(dev.allocatedBytes).toBe(bytesBefore);
    const ptx = compileToPtx(inc, { arch: archForDevice(dev) });
    const modulesBefore = loadedModuleCount();
    process.env["TIRX_CACHE"] = "off"; // 1000 distinct modules: keep them out of the disk cache
    for (let i = 0; i < 1000; i++) {
      // A distinct module text each time, so that every cycle loads and unloads a module.
      const mod = loadModule(dev, `${ptx.text}\n// cycle ${i}\n`);
      mod.getKernel(ptx.entry);
      mod.unload();
    }
    delete process.env["TIRX_CACHE"];
    expect(loadedModuleCount()).toBe(modulesBefore);
    expect(dev.allocatedBytes).toBe(bytesBefore);
  });

  // Last: it loses and resets the context.
  it("a faulting kernel names itself and says the context is lost; reset() of a sticky fault says to restart", () => {
    const dev = cuda(0);
    const old = cudaZeros([N], "float32", dev);
    // Stores to address 0: CUDA_ERROR_ILLEGAL_ADDRESS at the next synchronization.
    const FAULT = `.version 7.0
.target sm_80
.address_size 64
.visible .entry null_store()
{
  .reg .u64 %rd<2>;
  .reg .u32 %r<2>;
  mov.u64 %rd1, 0;
  mov.u32 %r1, 1;
  st.global.u32 [%rd1], %r1;
  ret;
}
`;
    const k = loadModule(dev, FAULT).getKernel("null_store");
    k.launch([], [], { grid: [1, 1, 1], block: [1, 1, 1], dynamicSharedBytes: 0 });
    let err: unknown;
    try {
      dev.synchronize();
    } catch (e) {
      err = e;
    }
    expect(String(err)).toMatch(/CUDA_ERROR_ILLEGAL_ADDRESS|CUDA_ERROR_LAUNCH_FAILED/);
    expect(String(err)).toContain('the last kernel queued on it was "null_store"');
    expect(String(err)).toContain("is lost");
    expect(String(err)).toContain("device.reset()");
    expect(dev.lost?.kernel).toBe("null_store");
    // Later calls fail at once with the same explanation.
    expect(() => cudaZeros([N], "float32", dev)).toThrow(/is lost.*device\.reset\(\)/s);
    // An illegal address is sticky on this driver (580 on an H200): the reset cannot bring the
    // context back in this process, and says so.
    expect(() => dev.reset()).toThrow(/cannot be reset in this process.*restart the process/s);
    old.dispose(); // harmless
  });
});
