// The launch stub (LAUNCH_SHIM_C in src/launch-shim-source.ts, built by src/launch-shim.ts)
// without a GPU: the binding is pointed (TIRX_LIBCUDA) at bench/cuda/stub_libcuda.c, and the stub
// is built once with the host C compiler into a temporary cache directory (TIRX_CACHE_DIR). Its
// driver table is pointed at the stub libcuda's counting cuLaunchKernelEx and cuCtxSynchronize, so
// that a count says which launches went through it. A launch through it and one through koffi
// must hand the driver the same call and fail with the same CudaError; TIRX_LAUNCH_SHIM=off and a
// missing compiler leave launches on koffi; a second build in the same directory reuses the
// first's file.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { T } from "@tirx-ts/dsl";

const root = mkdtempSync(join(tmpdir(), "tirx-launch-shim-test-"));
const lib = join(root, "stub_libcuda.so");
const cacheDir = join(root, "cache");
const source = fileURLToPath(new URL("../../../bench/cuda/stub_libcuda.c", import.meta.url));
const saved = { ...process.env };

type Koffi = typeof import("koffi");
let k: Koffi;
let rt: typeof import("../src/index.js");
let shimModule: typeof import("../src/launch-shim.js");
let stub: {
  setLaunchResult: (code: number) => void;
  setSyncResult: (code: number) => void;
  syncCount: () => number;
  launchCount: () => number;
  counted: () => [number, number];
  countedEntries: () => [bigint, bigint];
  lastExArgs: () => bigint[];
  lastLaunch: () => bigint[];
};

beforeAll(async () => {
  execFileSync("gcc", ["-O2", "-shared", "-fPIC", "-o", lib, source]);
  process.env["TIRX_LIBCUDA"] = lib;
  process.env["TIRX_CACHE_DIR"] = cacheDir;
  delete process.env["TIRX_CACHE"];
  delete process.env["TIRX_LAUNCH_SHIM"];
  delete process.env["CC"];
  rt = await import("../src/index.js");
  shimModule = await import("../src/launch-shim.js");
  k = createRequire(import.meta.url)("koffi") as Koffi;
  const so = k.load(lib);
  const words = (name: string, n: number, type = "void *") => {
    const f = so.func(name, "void", [type]);
    return () => {
      const out = new BigUint64Array(n);
      f(out);
      return Array.from(out);
    };
  };
  const counted = so.func("stub_counted_calls", "void", ["void *"]);
  stub = {
    setLaunchResult: so.func("stub_set_launch_result", "void", ["int"]) as (c: number) => void,
    setSyncResult: so.func("stub_set_sync_result", "void", ["int"]) as (c: number) => void,
    syncCount: so.func("stub_sync_count", "int", []) as () => number,
    launchCount: so.func("stub_launch_count", "int", []) as () => number,
    counted: () => {
      const out = new Int32Array(2);
      counted(out);
      return [out[0]!, out[1]!];
    },
    countedEntries: () => words("stub_counted_entries", 2)() as [bigint, bigint],
    lastExArgs: words("stub_last_ex_args", 4),
    lastLaunch: words("stub_last_launch", 12),
  };
}, 60_000);

afterAll(() => {
  for (const name of ["TIRX_LIBCUDA", "TIRX_CACHE_DIR", "TIRX_CACHE", "TIRX_LAUNCH_SHIM", "CC"]) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
  // The libraries stay mapped (dlopen) after their files go.
  rmSync(root, { recursive: true, force: true });
});

/**
 * The stub's driver table pointed at the counting entries while `body` runs; `counted()` gives the
 * calls of each since `counting` began.
 */
function counting<R>(body: (counted: () => [number, number]) => R): R {
  const shim = rt.launchShim(rt.driver().library)!;
  const table = new BigUint64Array(k.view(shim.driverTable, 16));
  const before = Array.from(table);
  table.set(stub.countedEntries());
  const [l0, s0] = stub.counted();
  try {
    return body(() => {
      const [l, s] = stub.counted();
      return [l - l0, s - s0];
    });
  } finally {
    table.set(before);
  }
}

const inc = T.function("shim_inc", { A: T.Tensor([256], "float32") }, ({ A }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [3, 2], block: [64, 4] }) });
  const t = T.cuda.thread_idx("x").add(T.cuda.thread_idx("y").mul(64));
  A.set([t], A.get([t]).add(1));
});

const byN = T.function("shim_n", { n: T.int32, A: T.Tensor(["n"], "float32") }, ({ n, A }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [T.ceildiv(n, 128)], block: 128 }) });
  const i = T.cuda.block_idx("x").mul(128).add(T.cuda.thread_idx("x"));
  T.if_(i.lt(n), () => A.set([i], T.float32(1)));
});

/** A kernel of `fn` on cuda(0), with a bound launcher through the stub and one through koffi. */
function launchers(fn: typeof inc | typeof byN) {
  const dev = rt.cuda(0);
  const c = rt.compileCuda(fn, { device: dev });
  const kernel = c.kernel(dev);
  const launch = { ...c.module.launch, dynamicSharedBytes: c.module.dynamicSharedBytes };
  return {
    dev,
    c,
    kernel,
    viaShim: kernel.launcher(c.module.params, launch),
    viaKoffi: kernel.launcher(c.module.params, launch, { shim: false }),
  };
}

/** What a thrown CudaError says (its class, call, code, name and message). */
function errorOf(f: () => void): Record<string, unknown> {
  try {
    f();
  } catch (e) {
    const err = e as InstanceType<typeof rt.CudaError>;
    expect(err).toBeInstanceOf(rt.CudaError);
    return { call: err.call, code: err.code, errorName: err.errorName, message: err.message };
  }
  throw new Error("expected a CudaError");
}

describe("the launch stub", () => {
  test("is built with the host compiler into the cache directory, and launches go through it", () => {
    const shim = rt.launchShim(rt.driver().library);
    expect(shim).toBeDefined();
    expect(dirname(shim!.path)).toBe(cacheDir);
    expect(readdirSync(cacheDir).filter((f) => f.endsWith(".so"))).toEqual([
      shim!.path.slice(cacheDir.length + 1),
    ]);
    const { viaShim, viaKoffi, c } = launchers(inc);
    const a = rt.cudaZeros([256], "float32");
    counting((counted) => {
      const launches = stub.launchCount();
      viaShim([a]);
      expect(counted()).toEqual([1, 0]);
      viaShim.sync([a], 'after kernel "shim_inc"');
      expect(counted()).toEqual([2, 1]);
      // koffi's calls reach the same driver, not through the stub's table.
      viaKoffi([a]);
      viaKoffi.sync([a]);
      expect(counted()).toEqual([2, 1]);
      // compileCuda's launcher (tirx-ts compile's fast path) and its synchronous variant.
      const l = c.launcher(rt.cuda(0));
      l([a]);
      l.sync([a], 'after kernel "shim_inc"');
      expect(counted()).toEqual([4, 2]);
      expect(stub.launchCount()).toBe(launches + 6);
    });
  });

  test("hands the driver the same call as koffi: config, function, kernelParams, no extra", () => {
    const { viaShim, viaKoffi, kernel } = launchers(byN);
    const a = rt.cudaZeros([1000], "float32");
    const s = new rt.CudaStream(rt.cuda(0));
    const config = (p: bigint) => Array.from(new Uint32Array(k.view(p, 56)));
    const seen = [viaShim, viaKoffi].map((l) => {
      const calls = [];
      for (const [args, stream] of [
        [[1000, a], undefined],
        [[300, a], s],
        [[1000, a], null],
      ] as const) {
        const syncs = stub.syncCount();
        l(args, stream);
        const ex = stub.lastExArgs();
        calls.push({ last: stub.lastLaunch().slice(1), ex: ex.slice(1), config: config(ex[0]!) });
        l.sync(args, "after", stream);
        expect(stub.syncCount()).toBe(syncs + 1);
        expect(stub.lastLaunch().slice(1)).toEqual(calls.at(-1)!.last);
      }
      return calls;
    });
    expect(seen[0]).toEqual(seen[1]);
    const [first, second] = seen[0]!;
    expect(first!.ex[0]).toBe(kernel.handle);
    expect(first!.ex[1]).not.toBe(0n); // kernelParams
    expect(first!.ex[2]).toBe(0n); // extra
    expect(first!.last.slice(1, 4)).toEqual([8n, 1n, 1n]); // the runtime grid
    expect(second!.last.slice(1, 4)).toEqual([3n, 1n, 1n]);
    expect(second!.last[8]).toBe(s.handle);
  });

  test("a failed launch and a failed synchronize are the koffi path's CudaError", () => {
    const { dev, viaShim, viaKoffi } = launchers(inc);
    const a = rt.cudaZeros([256], "float32");
    const after = 'after kernel "shim_inc"';
    try {
      stub.setLaunchResult(999);
      const syncs = stub.syncCount();
      const launchErr = errorOf(() => viaKoffi([a]));
      expect(launchErr).toMatchObject({ call: "cuLaunchKernelEx", code: 999 });
      expect(launchErr["message"]).toContain('(kernel "shim_inc")');
      expect(errorOf(() => viaShim([a]))).toEqual(launchErr);
      expect(errorOf(() => viaShim.sync([a], after))).toEqual(launchErr);
      expect(errorOf(() => viaKoffi.sync([a], after))).toEqual(launchErr);
      expect(stub.syncCount()).toBe(syncs); // no synchronize after a failed launch
      stub.setLaunchResult(0);
      stub.setSyncResult(1);
      const syncErr = errorOf(() => {
        viaKoffi([a]);
        dev.synchronize(after);
      });
      expect(syncErr).toMatchObject({ call: "cuCtxSynchronize", code: 1 });
      expect(syncErr["message"]).toContain(`(${after})`);
      expect(errorOf(() => viaShim.sync([a], after))).toEqual(syncErr);
      expect(errorOf(() => viaKoffi.sync([a], after))).toEqual(syncErr);
      expect(dev.lost).toBeUndefined();
    } finally {
      stub.setLaunchResult(0);
      stub.setSyncResult(0);
    }
  });

  test("a synchronize that loses the context marks the device lost, as device.synchronize does", () => {
    const lost = (useShim: boolean) => {
      const { dev, viaShim, viaKoffi } = launchers(inc);
      const a = rt.cudaZeros([256], "float32");
      stub.setSyncResult(700); // CUDA_ERROR_ILLEGAL_ADDRESS, sticky
      try {
        const err = errorOf(() => (useShim ? viaShim : viaKoffi).sync([a], "after"));
        const state = dev.lost;
        const next = errorOf(() => viaShim([a]));
        return { err, state, next };
      } finally {
        stub.setSyncResult(0);
        dev.reset();
      }
    };
    const viaShim = lost(true);
    expect(viaShim.err).toMatchObject({ call: "cuCtxSynchronize", code: 700 });
    expect(viaShim.err["message"]).toContain("is lost");
    expect(viaShim.state).toEqual({ code: 700, name: "CUDA_ERROR_STUB", kernel: "shim_inc" });
    expect(viaShim.next).toMatchObject({ call: "(context lost)", code: 700 });
    expect(lost(false)).toEqual(viaShim);
  });

  test("TIRX_LAUNCH_SHIM=off: no stub, launches through koffi", () => {
    const { c } = launchers(inc);
    const a = rt.cudaZeros([256], "float32");
    counting((counted) => {
      process.env["TIRX_LAUNCH_SHIM"] = "off";
      try {
        expect(rt.launchShim(rt.driver().library)).toBeUndefined();
        const l = c.kernel(rt.cuda(0)).launcher(c.module.params, c.module.launch);
        const launches = stub.launchCount();
        l([a]);
        l.sync([a]);
        expect(counted()).toEqual([0, 0]);
        expect(stub.launchCount()).toBe(launches + 2);
      } finally {
        delete process.env["TIRX_LAUNCH_SHIM"];
      }
    });
    expect(rt.launchShim(rt.driver().library)).toBeDefined();
  });

  test("a CC that names no compiler, or one that fails, builds nothing and leaves nothing", () => {
    const { buildLaunchShim, findCCompiler } = shimModule;
    const env = { ...process.env };
    expect(findCCompiler({ ...env, CC: "/nonexistent/cc" })).toBeUndefined();
    expect(findCCompiler({ PATH: "" })).toBeUndefined();
    const gcc = findCCompiler({ ...env, CC: " gcc  -m64 " });
    expect(gcc?.args).toEqual(["-m64"]);
    expect(gcc?.command).toMatch(/\/gcc$/);
    const dir = mkdtempSync(join(root, "no-cc-"));
    expect(buildLaunchShim({ dir, env: { ...env, CC: "/nonexistent/cc" } })).toBeUndefined();
    expect(buildLaunchShim({ dir, env: { ...env, CC: "false" } })).toBeUndefined();
    expect(readdirSync(dir)).toEqual([]);
  });

  test("a second build in the same cache directory reuses the first's library", () => {
    const shim = rt.launchShim(rt.driver().library)!;
    const before = statSync(shim.path);
    const again = shimModule.buildLaunchShim({ dir: cacheDir });
    expect(again).toEqual({ path: shim.path, built: false, temporary: false });
    const after = statSync(shim.path);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    expect(existsSync(shim.path)).toBe(true);
  });
});
