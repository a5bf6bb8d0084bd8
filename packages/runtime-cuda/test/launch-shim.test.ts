// The launch stub (LAUNCH_SHIM_C in src/launch-shim-source.ts, built by src/launch-shim.ts)
// without a GPU: the binding is pointed (TIRX_LIBCUDA) at bench/cuda/stub_libcuda.c, and the stub
// is built once with the host C compiler into a temporary cache directory (TIRX_CACHE_DIR). Its
// driver table is pointed at the stub libcuda's counting cuLaunchKernelEx and cuCtxSynchronize, so
// that a count says which launches went through it. A launch through it and one through koffi
// must hand the driver the same call and fail with the same CudaError, whatever the CUresult
// (negative, or above 1 << 20); TIRX_LAUNCH_SHIM=off and a missing compiler leave launches on
// koffi; a second build in the same directory reuses the first's file, also named by a relative
// directory; a damaged copy of it is built again, never loaded. A bound launcher's CUlaunchConfig
// block is freed once the launcher is collected, and CudaKernel.launch binds each of a few
// alternating launch configurations once. (More of the cache's rules: launch-shim-cache.test.ts.)
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { runInNewContext } from "node:vm";
import { setFlagsFromString } from "node:v8";
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
let launchModule: typeof import("../src/launch.js");
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
  launchModule = await import("../src/launch.js");
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

  test("any CUresult of a failed launch or synchronize is the koffi path's CudaError, exactly", () => {
    // tirx_launch_sync returns which call failed and writes its CUresult (any int32) into the
    // record: no code is mistaken for another, or for the other call's (700: context lost).
    const codes = [1 << 20, (1 << 20) + 700, -1, -700, 2147483647, -2147483648, 700];
    const outcome = (code: number, failing: "launch" | "sync", useShim: boolean) => {
      const { dev, viaShim, viaKoffi } = launchers(inc);
      const a = rt.cudaZeros([256], "float32");
      (failing === "launch" ? stub.setLaunchResult : stub.setSyncResult)(code);
      try {
        const err = errorOf(() => (useShim ? viaShim : viaKoffi).sync([a], "after X"));
        return { err, lost: dev.lost };
      } finally {
        stub.setLaunchResult(0);
        stub.setSyncResult(0);
        if (dev.lost) dev.reset();
      }
    };
    for (const code of codes) {
      for (const failing of ["launch", "sync"] as const) {
        const viaShim = outcome(code, failing, true);
        expect(viaShim.err).toMatchObject({
          call: failing === "launch" ? "cuLaunchKernelEx" : "cuCtxSynchronize",
          code,
        });
        expect(viaShim.lost).toEqual(
          code === 700 ? { code, name: "CUDA_ERROR_STUB", kernel: "shim_inc" } : undefined,
        );
        expect(outcome(code, failing, false)).toEqual(viaShim);
      }
    }
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

  test("a second build in the same cache directory reuses the first's library, checked by its SHA-256", () => {
    const shim = rt.launchShim(rt.driver().library)!;
    const before = statSync(shim.path);
    expect(before.mode & 0o777).toBe(0o755);
    expect(statSync(`${shim.path}.sha256`).mode & 0o777).toBe(0o644);
    const digest = createHash("sha256").update(readFileSync(shim.path)).digest("hex");
    expect(readFileSync(`${shim.path}.sha256`, "utf8")).toBe(`${digest}\n`);
    const again = shimModule.buildLaunchShim({ dir: cacheDir });
    expect(again).toMatchObject({ path: shim.path, built: false, temporary: false });
    // A relative directory (TIRX_CACHE_DIR=.) names the same file by its absolute path: dlopen
    // looks a bare name up on the library path, not in the working directory.
    const rel = relative(process.cwd(), cacheDir);
    expect(shimModule.buildLaunchShim({ dir: rel })).toMatchObject({
      path: shim.path,
      built: false,
    });
    const env = { ...process.env, TIRX_CACHE_DIR: rel };
    expect(shimModule.buildLaunchShim({ env })).toMatchObject({ path: shim.path, built: false });
    const after = statSync(shim.path);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    expect(existsSync(shim.path)).toBe(true);
  });

  test("a damaged cached library is never loaded: it is deleted and built again", () => {
    // Copies (the loaded library must not change under its mapping): truncated, zero-tailed, or
    // without its checksum file, as a crash or a partial copy leaves it. dlopen faults on such a
    // file (SIGBUS, SIGSEGV), so it must be rejected before.
    const shim = rt.launchShim(rt.driver().library)!;
    const copy = (name: string): string => {
      const dir = join(root, name);
      mkdirSync(dir);
      const path = join(dir, basename(shim.path));
      copyFileSync(shim.path, path);
      copyFileSync(`${shim.path}.sha256`, `${path}.sha256`);
      return path;
    };
    const size = statSync(shim.path).size;
    const zeroed = copy("zero-tailed");
    writeFileSync(
      zeroed,
      Buffer.concat([readFileSync(zeroed).subarray(0, 4096), Buffer.alloc(size - 4096)]),
    );
    expect(shimModule.openCached(zeroed)).toBe("its bytes do not match its checksum");
    const unsummed = copy("no-checksum");
    rmSync(`${unsummed}.sha256`);
    expect(shimModule.openCached(unsummed)).toBe("no checksum file");
    expect(shimModule.openCached(join(root, "none.so"))).toBe("missing");
    const truncated = copy("truncated");
    truncateSync(truncated, 4096);
    const rebuilt = shimModule.buildLaunchShim({ dir: dirname(truncated) });
    expect(rebuilt).toMatchObject({ path: truncated, built: true, temporary: false });
    expect(statSync(truncated).size).toBe(size);
    expect(typeof shimModule.openCached(truncated)).toBe("number"); // a descriptor, left open
  });
});

describe("bound launchers", () => {
  /** Collect garbage and let FinalizationRegistry callbacks run until `done` (at most `rounds`). */
  async function collectUntil(done: () => boolean, rounds = 50): Promise<void> {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    for (let i = 0; i < rounds && !done(); i++) {
      gc();
      await new Promise((r) => setImmediate(r));
    }
  }

  test("a launcher's CUlaunchConfig block is freed once the launcher is collected", async () => {
    const { c, kernel } = launchers(inc);
    const counts = launchModule.launchCounts;
    await collectUntil(() => false, 5); // earlier tests' launchers
    const base = counts.configBlocks;
    const a = rt.cudaZeros([256], "float32");
    for (let i = 0; i < 50; i++) kernel.launcher(c.module.params, c.module.launch)([a]);
    expect(counts.configBlocks).toBe(base + 50);
    const kept = kernel.launcher(c.module.params, c.module.launch).sync;
    await collectUntil(() => counts.configBlocks <= base + 1);
    expect(counts.configBlocks).toBe(base + 1); // the one whose sync is still held
    kept([a]);
  });

  test("CudaKernel.launch binds each of alternating launch configurations once", () => {
    const { c, kernel } = launchers(inc);
    const a = rt.cudaZeros([256], "float32");
    const counts = launchModule.launchCounts;
    const one = { ...c.module.launch, dynamicSharedBytes: 0 };
    const other = { ...one, block: [128, 2, 1] as const };
    const made = counts.launchers;
    const launches = stub.launchCount();
    for (let i = 0; i < 100; i++) {
      kernel.launch(c.module.params, [a], one);
      kernel.launch(c.module.params, [a], other);
      kernel.launch(c.module.params, [a], { ...other }); // equal: the same launcher
    }
    expect(counts.launchers).toBe(made + 2);
    expect(stub.launchCount()).toBe(launches + 300);
    expect(stub.lastLaunch().slice(5, 8)).toEqual([128n, 2n, 1n]);
    // Five configurations: the oldest is bound again when it comes back.
    const more = [1, 2, 4, 8, 16].map((n) => ({ ...one, block: [n, 1, 1] as const }));
    for (const l of more) kernel.launch(c.module.params, [a], l);
    kernel.launch(c.module.params, [a], more[4]!);
    expect(counts.launchers).toBe(made + 7);
    kernel.launch(c.module.params, [a], more[0]!);
    expect(counts.launchers).toBe(made + 8);
  });
});
