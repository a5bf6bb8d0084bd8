// The launch path without a GPU: the CUDA binding is pointed (TIRX_LIBCUDA) at
// bench/cuda/stub_libcuda.c, a libcuda stand-in that records the last launch instead of running
// it, and every launch route (tirx-ts launchAsync and its fast path, CudaKernel.launch, bound
// launchers through cuLaunchKernel and cuLaunchKernelEx) must hand the driver the same
// function, grid, block, shared bytes, stream and argument buffer.
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, test } from "vitest";
import { T } from "@tirx-ts/dsl";

const lib = join(mkdtempSync(join(tmpdir(), "tirx-stub-")), "stub_libcuda.so");
const source = fileURLToPath(new URL("../bench/cuda/stub_libcuda.c", import.meta.url));

let rt: typeof import("@tirx-ts/runtime-cuda");
let tirx: typeof import("tirx-ts");
let lastLaunch: () => {
  count: number;
  fn: bigint;
  grid: number[];
  block: number[];
  shared: number;
  stream: bigint;
  arg0: bigint;
  ex: boolean;
};

beforeAll(async () => {
  execFileSync("gcc", ["-O2", "-shared", "-fPIC", "-o", lib, source]);
  process.env["TIRX_LIBCUDA"] = lib;
  process.env["TIRX_CACHE"] = "off";
  rt = await import("@tirx-ts/runtime-cuda");
  tirx = await import("tirx-ts");
  const koffi = createRequire(import.meta.url)("koffi") as typeof import("koffi");
  const read = koffi.load(lib).func("stub_last_launch", "void", ["void *"]);
  lastLaunch = () => {
    const w = new BigUint64Array(12);
    read(w);
    const n = (i: number): number => Number(w[i]);
    return {
      count: n(0),
      fn: w[1]!,
      grid: [n(2), n(3), n(4)],
      block: [n(5), n(6), n(7)],
      shared: n(8),
      stream: w[9]!,
      arg0: w[10]!,
      ex: w[11] === 1n,
    };
  };
}, 60_000);

const inc = T.function("stub_inc", { A: T.Tensor([256], "float32") }, ({ A }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [3, 2], block: [64, 4] }) });
  const t = T.cuda.thread_idx("x").add(T.cuda.thread_idx("y").mul(64));
  A.set([t], A.get([t]).add(1));
});

const byN = T.function("stub_n", { n: T.int32, A: T.Tensor(["n"], "float32") }, ({ n, A }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [T.ceildiv(n, 128)], block: 128 }) });
  const i = T.cuda.block_idx("x").mul(128).add(T.cuda.thread_idx("x"));
  T.if_(i.lt(n), () => A.set([i], T.float32(1)));
});

describe("launch routes reach cuLaunchKernel with the same launch", () => {
  test("tirx-ts launchAsync: first launch, then the fast path", () => {
    const dev = rt.cuda(0);
    const run = tirx.compile(inc, { target: "cuda" });
    const a = rt.cudaZeros([256], "float32", dev);
    const b = rt.cudaZeros([256], "float32", dev);
    const before = lastLaunch().count;
    run.launchAsync(a);
    const first = lastLaunch();
    expect(first).toMatchObject({ grid: [3, 2, 1], block: [64, 4, 1], shared: 0, stream: 0n });
    expect(first.arg0).toBe(a.ptr);
    run.launchAsync(b); // the fast path
    const second = lastLaunch();
    expect(second.count).toBe(before + 2);
    expect(second.arg0).toBe(b.ptr);
    expect({ ...second, count: 0, arg0: 0n }).toEqual({ ...first, count: 0, arg0: 0n });
  });

  test("tirx-ts synchronous run: first launch, then the fast path, on the current stream", () => {
    const dev = rt.cuda(0);
    const run = tirx.compile(inc, { target: "cuda" });
    const a = rt.cudaZeros([256], "float32", dev);
    const b = rt.cudaZeros([256], "float32", dev);
    const before = lastLaunch().count;
    expect(run(a)).toMatchObject({ device: "cuda", reports: [] });
    const first = lastLaunch();
    expect(first.arg0).toBe(a.ptr);
    run(b); // the fast path
    const second = lastLaunch();
    expect(second.count).toBe(before + 2);
    expect(second.arg0).toBe(b.ptr);
    expect({ ...second, count: 0, arg0: 0n }).toEqual({ ...first, count: 0, arg0: 0n });
    const s = new rt.CudaStream(dev);
    s.use(() => run(a));
    expect(lastLaunch().stream).toBe(s.handle);
  });

  test("a launch on a user stream passes its handle (fast path included)", () => {
    const dev = rt.cuda(0);
    const run = tirx.compile(inc, { target: "cuda" });
    const a = rt.cudaZeros([256], "float32", dev);
    const s = new rt.CudaStream(dev);
    run.launchOn(s, a);
    expect(lastLaunch().stream).toBe(s.handle);
    s.use(() => run.launchAsync(a));
    expect(lastLaunch().stream).toBe(s.handle);
    run.launchAsync(a);
    expect(lastLaunch().stream).toBe(0n);
  });

  test("bound launchers through cuLaunchKernel and cuLaunchKernelEx agree, runtime grids too", () => {
    const dev = rt.cuda(0);
    const c = rt.compileCuda(byN, { device: dev });
    const k = c.kernel(dev);
    const launch = { ...c.module.launch, dynamicSharedBytes: 0 };
    const a = rt.cudaZeros([1000], "float32", dev);
    const s = new rt.CudaStream(dev);
    const seen = [false, true].map((ex) => {
      const l = k.launcher(c.module.params, launch, { ex });
      l([1000, a]);
      const one = lastLaunch();
      l([300, a], s);
      const two = lastLaunch();
      l([1000, a], null);
      const three = lastLaunch();
      expect([one.ex, two.ex]).toEqual([ex, ex]);
      return [one, two, three].map((r) => ({ ...r, count: 0, ex: false }));
    });
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[0]!.map((r) => [r.grid[0], r.stream])).toEqual([
      [8, 0n],
      [3, s.handle],
      [8, 0n],
    ]);
    expect(seen[0]![0]!.arg0).toBe(1000n); // n, int32, in the first 8-byte slot
    expect(seen[0]![0]!.fn).toBe(k.handle);
  });

  test("CudaKernel.launch with the arguments of another tensor updates the buffer", () => {
    const dev = rt.cuda(0);
    const c = rt.compileCuda(inc, { device: dev });
    const a = rt.cudaZeros([256], "float32", dev);
    const b = rt.cudaZeros([256], "float32", dev);
    c.launchAsync(a);
    expect(lastLaunch().arg0).toBe(a.ptr);
    c.launchAsync(b);
    expect(lastLaunch().arg0).toBe(b.ptr);
  });
});

describe("after device.reset()", () => {
  test("compiled kernels reload their module (fast path included); a stale CudaKernel says so", () => {
    const dev = rt.cuda(0);
    const run = tirx.compile(inc, { target: "cuda" });
    const c = rt.compileCuda(inc, { device: dev });
    const old = c.kernel(dev);
    const a = rt.cudaZeros([256], "float32", dev);
    run.launchAsync(a);
    run.launchAsync(a); // the fast path is bound now
    const before = lastLaunch();
    dev.reset();
    expect(() => old.launch(c.module.params, [a], { ...c.module.launch })).toThrow(
      /was loaded before cuda:0 was reset/,
    );
    const b = rt.cudaZeros([256], "float32", dev);
    run.launchAsync(b);
    const after = lastLaunch();
    expect(after.count).toBe(before.count + 1);
    expect(after.arg0).toBe(b.ptr);
    expect(after.fn).not.toBe(before.fn); // a new CUfunction from the reloaded module
    run.launchAsync(b);
    expect(lastLaunch().fn).toBe(after.fn);
  });
});
