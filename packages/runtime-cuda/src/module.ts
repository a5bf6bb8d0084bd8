import { TirxError } from "@tirx-ts/core";
import { createHash } from "node:crypto";
import type { CudaDevice } from "./device.js";
import { driver, type CuHandle } from "./driver.js";
import { CudaKernel, type LoadedModule } from "./launch.js";
import { binaryCacheDir, binaryKey, forgetBinary, readBinary, writeBinary } from "./disk-cache.js";
import { jitTargetOf } from "./arch.js";
import { findPtxas, ptxasCompile, ptxasTag } from "./ptxas.js";

/** Loaded modules per device, keyed by the SHA-256 of their PTX text. */
/**
 * Loaded modules by device and PTX hash, held weakly: a module nobody references (no kernel of
 * it is held either: a kernel keeps its module alive) is unloaded by the collector.
 */
const cache = new WeakMap<CudaDevice, Map<string, WeakRef<CudaModule>>>();

/** Unloads modules that were garbage-collected without `unload()`. */
const registry = new FinalizationRegistry<{
  device: CudaDevice;
  handle: CuHandle;
  generation: number;
}>((m) => {
  loaded--;
  if (m.generation !== m.device.generation || m.device.lost) return;
  try {
    m.device.activate();
    driver().moduleUnload(m.handle);
  } catch {
    // nothing useful can be done with an error here
  }
});

/** SHA-256 (hex) of a PTX text: the module cache key. */
export function ptxHash(ptx: string | Uint8Array): string {
  return createHash("sha256").update(ptx).digest("hex");
}

/** A PTX module JIT-compiled and loaded on one device (a CUmodule). */
export class CudaModule implements LoadedModule {
  readonly device: CudaDevice;
  /** The CUmodule. */
  readonly handle: CuHandle;
  /** SHA-256 of the PTX text. */
  readonly hash: string;
  /** The JIT's informational log (often empty). */
  readonly infoLog: string;
  /** The device's generation when loaded (a module does not survive `device.reset()`). */
  readonly generation: number;
  readonly #kernels = new Map<string, CudaKernel>();
  #unloaded = false;

  /** @internal use `loadModule`. */
  constructor(device: CudaDevice, handle: CuHandle, hash: string, infoLog: string) {
    this.device = device;
    this.handle = handle;
    this.hash = hash;
    this.infoLog = infoLog;
    this.generation = device.generation;
    registry.register(this, { device, handle, generation: this.generation }, this);
    loaded++;
  }

  /** `using m = loadModule(...)`: the same as `unload()`. */
  [Symbol.dispose](): void {
    this.unload();
  }

  /**
   * The `.entry` named `name` (cuModuleGetFunction), memoised. `staticSharedBytes` (the entry's
   * static `.shared` bytes, from the code generator) decides when a launch must opt in to more
   * than 48 KiB of shared memory.
   * @throws CudaError CUDA_ERROR_NOT_FOUND when the module has no such entry.
   */
  getKernel(name: string, opts: { staticSharedBytes?: number } = {}): CudaKernel {
    if (this.#unloaded)
      throw new TirxError(
        "TX5011",
        `CUDA module ${this.hash.slice(0, 12)} used after unload(); load it again`,
      );
    let k = this.#kernels.get(name);
    if (!k) {
      this.device.activate();
      k = new CudaKernel(
        this.device,
        name,
        driver().moduleGetFunction(this.handle, name),
        opts.staticSharedBytes ?? 0,
        this,
      );
      this.#kernels.set(name, k);
    }
    return k;
  }

  /** Unload the module (cuModuleUnload) and drop it from the cache; its kernels become invalid. */
  /** True once `unload()` ran. */
  get unloaded(): boolean {
    return this.#unloaded;
  }

  unload(): void {
    if (this.#unloaded) return;
    this.#unloaded = true;
    registry.unregister(this);
    loaded--;
    if (cache.get(this.device)?.get(this.hash)?.deref() === this)
      cache.get(this.device)!.delete(this.hash);
    if (this.generation !== this.device.generation || this.device.lost) return; // already gone
    this.device.activate();
    driver().moduleUnload(this.handle);
  }
}

/**
 * Load `ptx` on `device` (cuModuleLoadDataEx), memoised by its SHA-256: PTX text is JIT-compiled
 * for the device; bytes are a cubin or fatbin built ahead (e.g. by nvcc -cubin).
 * @throws CudaError (e.g. CUDA_ERROR_INVALID_PTX, CUDA_ERROR_UNSUPPORTED_PTX_VERSION) whose
 *   message and `log` carry the JIT's error log.
 */
export function loadModule(device: CudaDevice, ptx: string | Uint8Array): CudaModule {
  let perDevice = cache.get(device);
  if (!perDevice) {
    perDevice = new Map();
    cache.set(device, perDevice);
  }
  const hash = ptxHash(ptx);
  let mod = perDevice.get(hash)?.deref();
  if (!mod || mod.generation !== device.generation || mod.unloaded) {
    device.activate();
    const { module, infoLog } = loadImage(device, ptx, hash);
    mod = new CudaModule(device, module, hash, infoLog);
    perDevice.set(hash, new WeakRef(mod));
  }
  return mod;
}

let loaded = 0;

/** CUDA modules loaded in this process and not yet unloaded (explicitly or by the collector). */
export function loadedModuleCount(): number {
  return loaded;
}

/** Module loads in this process, by where the image came from (tests and benchmarks read it). */
export const moduleLoadStats = { fromDiskCache: 0, compiled: 0, uncached: 0 };

/**
 * Load PTX through the on-disk binary cache: a cached cubin for (PTX hash, arch and compiler,
 * driver version) loads without JIT; otherwise the toolkit's ptxas (`findPtxas`), or without one
 * the driver's linker, compiles the PTX to a cubin for the module's target (`sm_90a` PTX for
 * sm_90a), which is stored and loaded. Binary images, a disabled cache (`TIRX_CACHE=off`) and PTX the linker
 * refuses go straight to cuModuleLoadDataEx (whose error carries the JIT log).
 */
function loadImage(
  device: CudaDevice,
  ptx: string | Uint8Array,
  hash: string,
): { module: CuHandle; infoLog: string } {
  const d = driver();
  const dir = binaryCacheDir();
  // An architecture-specific module (sm_90a) is compiled for that target explicitly.
  const jit = typeof ptx === "string" ? jitTargetOf(ptx) : undefined;
  if (typeof ptx !== "string" || !dir) {
    moduleLoadStats.uncached++;
    return d.moduleLoadData(ptx, jit?.target);
  }
  const arch = jit?.arch ?? device.arch;
  // The toolkit's ptxas when there is one (see findPtxas), else the driver's linker.
  const ptxas = findPtxas();
  const key = binaryKey(hash, ptxas ? `${arch}-${ptxasTag(ptxas)}` : arch, d.driverVersion());
  const cached = readBinary(key, dir);
  if (cached) {
    try {
      const r = d.moduleLoadData(cached);
      moduleLoadStats.fromDiskCache++;
      return r;
    } catch {
      forgetBinary(key, dir); // stale or damaged: compile again
    }
  }
  let cubin: Uint8Array;
  try {
    cubin =
      (ptxas ? ptxasCompile(ptxas, ptx, arch) : undefined) ??
      d.linkPtxToCubin(ptx, "tirx.ptx", jit?.target);
  } catch {
    moduleLoadStats.uncached++;
    return d.moduleLoadData(ptx, jit?.target);
  }
  const r = d.moduleLoadData(cubin);
  writeBinary(key, cubin, dir);
  moduleLoadStats.compiled++;
  return r;
}
