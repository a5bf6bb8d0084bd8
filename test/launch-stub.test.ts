// The launch path without a GPU: the CUDA binding is pointed (TIRX_LIBCUDA) at
// bench/cuda/stub_libcuda.c, a libcuda stand-in that records the last launch instead of running
// it, and every launch route (tirx-ts launchAsync and its fast path, CudaKernel.launch, bound
// launchers through cuLaunchKernel and cuLaunchKernelEx) must hand the driver the same
// function, grid, block, shared bytes, stream and argument buffer. With two stub GPUs
// (STUB_CUDA_DEVICES=2), a launch on several GPUs (compile(fn).launchAll) must load one module
// per GPU, write each its PE state (and barrier_all's counters) under that GPU's context, launch
// each PE under its context with the symmetric tensors' one pointer and each PE's own tensors,
// and refuse what cannot run (TX5015). A synchronous launch's fast path is one call of
// runtime-cuda's launch stub (built in a temporary directory under TIRX_CACHE=off) for the launch
// and its cuCtxSynchronize, with device.synchronize's error when that fails.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, test } from "vitest";
import { T } from "@tirx-ts/dsl";
import { errorOf } from "./util/error-of.js";

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

/** One logged launch: the context current then, the function, the stream, its first parameters. */
interface LoggedLaunch {
  ctx: bigint;
  fn: bigint;
  stream: bigint;
  params: bigint[];
}
/** One logged host-to-device copy: the context current then, where, how many bytes, the first 24. */
interface LoggedCopy {
  ctx: bigint;
  dst: bigint;
  bytes: number;
  words: bigint[];
}
let launchesSince: (start: number) => LoggedLaunch[];
let copiesSince: (start: number) => LoggedCopy[];
let counts: () => { launches: number; copies: number };
let setParamCount: (n: number) => void;
let setSyncResult: (code: number) => void;
let syncCount: () => number;
/** The stub libcuda's counting cuLaunchKernelEx and cuCtxSynchronize, and their calls. */
let countedEntries: () => BigUint64Array;
let countedCalls: () => number[];
let koffi: typeof import("koffi");

beforeAll(async () => {
  execFileSync("gcc", ["-O2", "-shared", "-fPIC", "-o", lib, source]);
  process.env["TIRX_LIBCUDA"] = lib;
  process.env["TIRX_CACHE"] = "off";
  process.env["STUB_CUDA_DEVICES"] = "2";
  rt = await import("@tirx-ts/runtime-cuda");
  tirx = await import("tirx-ts");
  koffi = createRequire(import.meta.url)("koffi") as typeof import("koffi");
  const stub = koffi.load(lib);
  setSyncResult = stub.func("stub_set_sync_result", "void", ["int"]) as (c: number) => void;
  syncCount = stub.func("stub_sync_count", "int", []) as () => number;
  const entries = stub.func("stub_counted_entries", "void", ["void *"]);
  countedEntries = () => {
    const out = new BigUint64Array(2);
    entries(out);
    return out;
  };
  const calls = stub.func("stub_counted_calls", "void", ["void *"]);
  countedCalls = () => {
    const out = new Int32Array(2);
    calls(out);
    return Array.from(out);
  };
  const read = stub.func("stub_last_launch", "void", ["void *"]);
  const launchCount = stub.func("stub_launch_count", "int", []) as () => number;
  const launchAt = stub.func("stub_launch_at", "void", ["int", "void *"]);
  const copyCount = stub.func("stub_htod_count", "int", []) as () => number;
  const copyAt = stub.func("stub_htod_at", "void", ["int", "void *"]);
  setParamCount = stub.func("stub_set_param_count", "void", ["int"]) as (n: number) => void;
  counts = () => ({ launches: launchCount(), copies: copyCount() });
  launchesSince = (start) =>
    Array.from({ length: launchCount() - start }, (_, k) => {
      const w = new BigUint64Array(11);
      launchAt(start + k, w);
      return { ctx: w[0]!, fn: w[1]!, stream: w[2]!, params: Array.from(w.subarray(3)) };
    });
  copiesSince = (start) =>
    Array.from({ length: copyCount() - start }, (_, k) => {
      const w = new BigUint64Array(6);
      copyAt(start + k, w);
      return { ctx: w[0]!, dst: w[1]!, bytes: Number(w[2]!), words: Array.from(w.subarray(3)) };
    });
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

describe("the launch stub", () => {
  test("a synchronous run's fast path is one call of the stub; a failed synchronize is device.synchronize's error", () => {
    const shim = rt.launchShim(rt.driver().library);
    expect(shim).toBeDefined();
    expect(existsSync(shim!.path)).toBe(false); // TIRX_CACHE=off: its directory went once loaded
    const dev = rt.cuda(0);
    const run = tirx.compile(inc, { target: "cuda" });
    const a = rt.cudaZeros([256], "float32", dev);
    run(a);
    run(a); // the fast path is bound now
    const table = new BigUint64Array(koffi.view(shim!.driverTable, 16));
    const saved = table.slice();
    table.set(countedEntries());
    try {
      const [calls, syncs, launches] = [countedCalls(), syncCount(), counts().launches];
      run(a);
      expect(countedCalls()).toEqual([calls[0]! + 1, calls[1]! + 1]);
      expect([syncCount(), counts().launches]).toEqual([syncs + 1, launches + 1]);
      setSyncResult(1);
      const fused = (() => {
        try {
          run(a);
        } catch (e) {
          return e as Error;
        }
      })();
      table.set(saved);
      const apart = (() => {
        try {
          run.launchAsync(a);
          dev.synchronize('after kernel "stub_inc"');
        } catch (e) {
          return e as Error;
        }
      })();
      expect(fused).toBeInstanceOf(rt.CudaError);
      expect(fused).toEqual(apart);
      expect(fused!.message).toMatch(
        /^cuCtxSynchronize failed with .* \(after kernel "stub_inc"\)/,
      );
    } finally {
      setSyncResult(0);
      table.set(saved);
    }
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

describe("launches on several GPUs (two stub GPUs)", () => {
  /** Device d's context in the stub. */
  const ctx = (d: number): bigint => 0xc0n + 0x10n * BigInt(d);
  const G = 2 << 20;
  /** A kernel of `pes` PEs: Sym [P, G/4] float32 symmetric, B [64] float32 per PE, n a scalar. */
  const peKernel = (pes: number, barrier = false, grid = 1) =>
    T.function(
      `pes_${pes}_${barrier}_${grid}`,
      {
        Sym: T.Tensor([pes, G / 4], "float32"),
        B: T.Tensor([64], "float32"),
        Sig: T.Tensor([pes, G / 8], "uint64"),
        n: T.int32,
      },
      ({ Sym, B, Sig, n }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid, block: 64 }) });
        const me = T.nvshmem.my_pe();
        const t = T.cuda.thread_idx("x");
        T.nvshmem.put(Sym, [t], B, [t], 1, T.floormod(me.add(1), pes));
        if (barrier) T.nvshmem.barrier_all();
        else T.nvshmem.signal_op(Sig, [0], 1, "add", T.floormod(me.add(1), pes));
        T.if_(t.lt(n), () => B.set([t], Sym.get([me, t])));
      },
    );

  test("one module per GPU, its PE state written under that GPU's context once, each PE launched there with the one symmetric pointer and its own B", () => {
    const f = tirx.compile(peKernel(2), { target: "cuda" });
    const Sym = rt.SymmetricTensor.allocate([0, 1], [G / 4], "float32");
    const Sig = rt.SymmetricTensor.allocate([0, 1], [G / 8], "uint64");
    const B = [0, 1].map((d) => rt.cudaZeros([64], "float32", rt.cuda(d)));
    setParamCount(4);
    const before = counts();
    expect(f.launchAll([0, 1], Sym, B, Sig, 64)).toMatchObject({ device: "cuda", reports: [] });
    const launches = launchesSince(before.launches);
    expect(launches.map((l) => l.ctx)).toEqual([ctx(0), ctx(1)]);
    expect(launches[0]!.fn).not.toBe(launches[1]!.fn); // a module (and CUfunction) per GPU
    expect(launches.map((l) => l.params.slice(0, 4))).toEqual(
      [0, 1].map((p) => [Sym.ptr, B[p]!.ptr, Sig.ptr, 64n]),
    );
    expect(launches.map((l) => l.stream)).toEqual([0n, 0n]);
    // my_pe and n_pes as two u32 (one little-endian u64 word) under each GPU's context.
    const states = copiesSince(before.copies).filter((c) => c.bytes === 8);
    expect(states.map((c) => [c.ctx, c.words[0]])).toEqual([
      [ctx(0), 0n | (2n << 32n)],
      [ctx(1), 1n | (2n << 32n)],
    ]);
    // Again: the modules keep their state, nothing is written.
    const again = counts();
    f.launchAllAsync([rt.cuda(0), rt.cuda(1)], Sym, B, Sig, [64, 32]);
    expect(copiesSince(again.copies)).toEqual([]);
    expect(launchesSince(again.launches).map((l) => [l.ctx, l.params[3]])).toEqual([
      [ctx(0), 64n],
      [ctx(1), 32n],
    ]);
    // PE order reversed: new symmetric tensors, and each module's state is rewritten.
    const SymR = rt.SymmetricTensor.allocate([1, 0], [G / 4], "float32");
    const SigR = rt.SymmetricTensor.allocate([1, 0], [G / 8], "uint64");
    const swapped = counts();
    f.launchAll([1, 0], SymR, [B[1]!, B[0]!], SigR, 64);
    expect(
      copiesSince(swapped.copies)
        .filter((c) => c.bytes === 8)
        .map((c) => [c.ctx, c.words[0]]),
    ).toEqual([
      [ctx(1), 0n | (2n << 32n)],
      [ctx(0), 1n | (2n << 32n)],
    ]);
    expect(launchesSince(swapped.launches).map((l) => [l.ctx, l.params[0]])).toEqual([
      [ctx(1), SymR.ptr],
      [ctx(0), SymR.ptr],
    ]);
  });

  test("launchAllOn: PE p's launch on streams[p], under its stream's GPU", () => {
    const f = tirx.compile(peKernel(2), { target: "cuda" });
    const Sym = rt.SymmetricTensor.allocate([0, 1], [G / 4], "float32");
    const Sig = rt.SymmetricTensor.allocate([0, 1], [G / 8], "uint64");
    const B = [0, 1].map((d) => rt.cudaZeros([64], "float32", rt.cuda(d)));
    const streams = [0, 1].map((d) => new rt.CudaStream(rt.cuda(d)));
    const before = counts();
    f.launchAllOn(streams, Sym, B, Sig, 64);
    expect(launchesSince(before.launches).map((l) => [l.ctx, l.stream])).toEqual([
      [ctx(0), streams[0]!.handle],
      [ctx(1), streams[1]!.handle],
    ]);
    const same = [streams[0]!, new rt.CudaStream(rt.cuda(0))];
    expect(errorOf(() => f.launchAllOn(same, Sym, B, Sig, 64)).message).toMatch(
      /each PE runs on its own GPU, got cuda:0, cuda:0/,
    );
  });

  test("barrier_all: the counters' address, PE stride and slots written beside the PE state; a grid no GPU holds at once is TX5015", () => {
    const f = tirx.compile(peKernel(2, true, 4), { target: "cuda" });
    const Sym = rt.SymmetricTensor.allocate([0, 1], [G / 4], "float32");
    const Sig = rt.SymmetricTensor.allocate([0, 1], [G / 8], "uint64");
    const B = [0, 1].map((d) => rt.cudaZeros([64], "float32", rt.cuda(d)));
    const before = counts();
    f.launchAll([0, 1], Sym, B, Sig, 64);
    const writes = copiesSince(before.copies);
    const barrier = writes.filter((c) => c.bytes === 24);
    expect(barrier.map((c) => c.ctx)).toEqual([ctx(0), ctx(1)]);
    const [ptr, stride, slots] = barrier[0]!.words;
    expect(barrier[1]!.words).toEqual([ptr, stride, slots]);
    expect([stride, slots]).toEqual([BigInt(G), BigInt(G / 8)]); // 2 MiB of uint64 per PE
    expect(ptr).not.toBe(0n);
    const big = tirx.compile(peKernel(2, true, 200), { target: "cuda" });
    const e = errorOf(() => big.launchAll([0, 1], Sym, B, Sig, 64));
    expect(e.code).toBe("TX5015");
    expect(e.message).toMatch(
      /grid has 200 CTAs and stub GPU \(cuda:0\) holds 132 of them at once/,
    );
  });

  test("what cannot run is TX5015 at the caller's line, naming the argument and the fix", () => {
    const f = tirx.compile(peKernel(2), { target: "cuda" });
    const Sym = rt.SymmetricTensor.allocate([0, 1], [G / 4], "float32");
    const Sig = rt.SymmetricTensor.allocate([0, 1], [G / 8], "uint64");
    const B = [0, 1].map((d) => rt.cudaZeros([64], "float32", rt.cuda(d)));
    const perPe = [0, 1].map((d) => rt.cudaZeros([2, G / 4], "float32", rt.cuda(d)));
    const cases: [() => unknown, RegExp][] = [
      [
        () => f.launchAll([0, 1], perPe, B, Sig, 64),
        /argument 0 \("Sym"\) is a symmetric parameter .*pass a SymmetricTensor over cuda:0, cuda:1/,
      ],
      [
        () =>
          f.launchAll([0, 1], rt.SymmetricTensor.allocate([1, 0], [G / 4], "float32"), B, Sig, 64),
        /is a SymmetricTensor over cuda:1, cuda:0, but the launch's PEs run on cuda:0, cuda:1/,
      ],
      [() => f.launchAll([0, 1], Sym, B[0]!, Sig, 64), /"B"\) is one tensor for 2 PEs/],
      [
        () => f.launchAll([0, 1], Sym, [...B, B[0]!], Sig, 64),
        /is a list of 3: .* one entry per PE \(2\)/,
      ],
      [
        () => f.launchAll([0, 1], Sym, [B[1]!, B[0]!], Sig, 64),
        /for PE 0 lives on cuda:1, but PE 0 runs on cuda:0/,
      ],
      [() => f.launchAll([0, 0], Sym, B, Sig, 64), /each PE runs on its own GPU/],
      [() => f.launchAll([], Sym, B, Sig, 64), /takes the GPU of each PE/],
      [() => f.launchAll([0, 1], Sym, B, 7, 64), /"Sig"\) is a symmetric parameter/],
    ];
    for (const [run, message] of cases) {
      const e = errorOf(run);
      expect(e.code, String(e)).toBe("TX5015");
      expect(e.message).toMatch(message);
      expect(e.span?.file).toBe(fileURLToPath(import.meta.url));
    }
    // A kernel built for 4 PEs launched on 2 GPUs: its [4, ...] tensors are not symmetric here.
    const four = tirx.compile(peKernel(4), { target: "cuda" });
    expect(errorOf(() => four.launchAll([0, 1], Sym, B, Sig, 64)).message).toMatch(
      /argument 0 \("Sym"\) is a SymmetricTensor, but "Sym" is not a symmetric parameter of a launch on 2 PEs/,
    );
    // A launch on one GPU leaves the PE state unset: refused, pointing at launchAll.
    const one = errorOf(() => f(Sym.on(0), B[0]!, Sig.on(0), 64));
    expect([one.code, one.message]).toEqual([
      "TX5015",
      expect.stringMatching(
        /reads T\.nvshmem's PE state .* launch it with launchAll\(pes, \.\.\.args\)/,
      ),
    ]);
    // The shapes of each PE's arguments are checked as for one GPU.
    const short = rt.SymmetricTensor.allocate([0, 1], [G / 2], "float32");
    expect(errorOf(() => f.launchAll([0, 1], short, B, Sig, 64)).code).toBe("TX5003");
    // A disposed symmetric tensor's views are refused.
    short.dispose();
    expect(() => short.on(0).ptr).toThrow(/was disposed/);
  });
});
