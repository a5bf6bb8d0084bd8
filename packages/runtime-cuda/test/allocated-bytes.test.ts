// CudaDevice.allocatedBytes, the device memory this process's tensors hold, without a GPU: the
// binding is pointed (TIRX_LIBCUDA) at bench/cuda/stub_libcuda.c, which records each cuMemAlloc
// and cuMemFree (stub_live_bytes: the driver's side of the ledger) and refuses allocations past
// 4096 live ones with CUDA_ERROR_OUT_OF_MEMORY. The GPU's leak check
// (test/gpu/launch-lifetimes.test.ts) asserts on allocatedBytes, which other processes using the
// GPU do not change.
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, test } from "vitest";

const lib = join(mkdtempSync(join(tmpdir(), "tirx-stub-")), "stub_libcuda.so");
const source = fileURLToPath(new URL("../../../bench/cuda/stub_libcuda.c", import.meta.url));

let rt: typeof import("../src/index.js");
/** Bytes the stub driver holds allocated (cuMemAlloc minus cuMemFree, zeroed by a reset). */
let driverLive: () => number;

beforeAll(async () => {
  execFileSync("gcc", ["-O2", "-shared", "-fPIC", "-o", lib, source]);
  process.env["TIRX_LIBCUDA"] = lib;
  rt = await import("../src/index.js");
  const koffi = createRequire(import.meta.url)("koffi") as typeof import("koffi");
  const live = koffi.load(lib).func("stub_live_bytes", "uint64_t", []) as () => number | bigint;
  driverLive = () => Number(live());
}, 60_000);

/** The device's count and the driver's, relative to `base` (both, taken before). */
const held = (base: { dev: number; drv: number }) => ({
  dev: rt.cuda(0).allocatedBytes - base.dev,
  drv: driverLive() - base.drv,
});
const now = () => ({ dev: rt.cuda(0).allocatedBytes, drv: driverLive() });

describe("CudaDevice.allocatedBytes counts what its tensors allocated and freed", () => {
  test("each tensor adds numel x dtype bytes until dispose(); empty tensors add nothing", () => {
    const dev = rt.cuda(0);
    const base = now();
    const a = rt.cudaZeros([3, 5], "float16", dev); // 30 bytes
    const b = rt.cudaEmpty([7], "float64", dev); // 56 bytes
    const c = rt.cudaTensor([1, 2, 3], { shape: [3], dtype: "int8", device: dev }); // 3 bytes
    const e = rt.cudaEmpty([0, 4], "float32", dev);
    expect(held(base)).toEqual({ dev: 89, drv: 89 });
    b.dispose();
    b.dispose(); // twice is harmless
    expect(held(base)).toEqual({ dev: 33, drv: 33 });
    {
      using d = rt.cudaEmpty([16], "int32", dev);
      expect(d.nbytes).toBe(64);
      expect(held(base)).toEqual({ dev: 97, drv: 97 });
    }
    for (const t of [a, c, e]) t.dispose();
    expect(held(base)).toEqual({ dev: 0, drv: 0 });
  });

  test("10k alloc/free cycles leave it where it was", () => {
    const dev = rt.cuda(0);
    const base = now();
    for (let i = 0; i < 10_000; i++) {
      const t = rt.cudaEmpty([1024], "float32", dev);
      if (i % 1000 === 0) expect(held(base)).toEqual({ dev: 4096, drv: 4096 });
      t[Symbol.dispose]();
    }
    expect(held(base)).toEqual({ dev: 0, drv: 0 });
  });

  test("an allocation the driver refuses is not counted; a shape refused first allocates nothing", () => {
    const dev = rt.cuda(0);
    const base = now();
    const kept: { dispose(): void }[] = [];
    let refused: unknown;
    try {
      // The stub refuses the 4097th live allocation.
      for (let i = 0; i <= 4096; i++) kept.push(rt.cudaEmpty([2], "int32", dev));
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(rt.CudaError);
    expect((refused as InstanceType<typeof rt.CudaError>).code).toBe(2); // CUDA_ERROR_OUT_OF_MEMORY
    const n = kept.length;
    expect(n).toBeGreaterThan(0);
    expect(held(base)).toEqual({ dev: 8 * n, drv: 8 * n });
    for (const t of kept) t.dispose();
    expect(held(base)).toEqual({ dev: 0, drv: 0 });
    expect(() => rt.cudaEmpty([-1], "float32", dev)).toThrow(
      expect.objectContaining({ code: "TX5007" }),
    );
    expect(held(base)).toEqual({ dev: 0, drv: 0 });
  });

  test("reset() frees everything: 0, and a tensor from before it frees nothing twice", () => {
    const dev = rt.cuda(0);
    const old = rt.cudaZeros([100], "float32", dev);
    expect(dev.allocatedBytes).toBeGreaterThanOrEqual(400);
    dev.reset();
    expect([dev.allocatedBytes, driverLive()]).toEqual([0, 0]);
    old.dispose();
    expect([dev.allocatedBytes, driverLive()]).toEqual([0, 0]);
    const fresh = rt.cudaEmpty([10], "float32", dev);
    expect([dev.allocatedBytes, driverLive()]).toEqual([40, 40]);
    fresh.dispose();
    expect([dev.allocatedBytes, driverLive()]).toEqual([0, 0]);
  });
});
