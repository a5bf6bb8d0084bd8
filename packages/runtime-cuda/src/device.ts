import type { DeviceLike } from "@tirx-ts/core";
import {
  CU_DEVICE_ATTRIBUTE,
  driver,
  onContextLost,
  type CudaDriver,
  type CuHandle,
} from "./driver.js";
import { CudaError } from "./errors.js";

/** The device whose primary context is current on this thread, as far as this package set it. */
let current: CudaDevice | undefined;

/**
 * One CUDA GPU with its retained primary context. Obtain it with `cuda(ordinal)`; the same
 * object is returned for the same ordinal, and it stays valid for the life of the process.
 */
export class CudaDevice implements DeviceLike {
  readonly kind = "cuda" as const;
  /** The driver's device name, e.g. "NVIDIA H200". */
  readonly name: string;
  readonly ordinal: number;
  /** [major, minor], e.g. [9, 0]. */
  readonly computeCapability: readonly [number, number];
  /** Largest shared memory one CTA may opt in to, in bytes (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN). */
  readonly maxSharedOptin: number;
  /** Shared memory per CTA without opting in, in bytes (48 KiB on every current GPU). */
  readonly maxSharedDefault: number;
  /** The retained primary context (CUcontext). */
  /** The retained primary context (a new handle after `reset()`). */
  context: CuHandle;
  /** Incremented by `reset()`: tensors, modules and kernels of an older generation are gone. */
  generation = 0;
  /** The name of the kernel queued last (what a fault most likely came from). */
  lastKernel: string | undefined;
  #lost: { code: number; name: string; kernel: string | undefined } | undefined;
  readonly #dev: number;
  #allocated = 0;
  /**
   * The driver binding this device's context was made through (its handles belong to that
   * library). Held here so that a launch, a synchronize or a stream call does not look the
   * binding up again: `driver()` reads `TIRX_LIBCUDA` from the environment, about 0.15 µs a read.
   */
  readonly #driver: CudaDriver;

  /** @internal use `cuda(ordinal)`. */
  constructor(ordinal: number) {
    const d = (this.#driver = driver());
    this.ordinal = ordinal;
    this.#dev = d.deviceGet(ordinal);
    this.name = d.deviceName(this.#dev);
    this.computeCapability = [
      d.deviceAttribute(CU_DEVICE_ATTRIBUTE.COMPUTE_CAPABILITY_MAJOR, this.#dev),
      d.deviceAttribute(CU_DEVICE_ATTRIBUTE.COMPUTE_CAPABILITY_MINOR, this.#dev),
    ];
    this.maxSharedOptin = d.deviceAttribute(
      CU_DEVICE_ATTRIBUTE.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
      this.#dev,
    );
    this.maxSharedDefault = d.deviceAttribute(
      CU_DEVICE_ATTRIBUTE.MAX_SHARED_MEMORY_PER_BLOCK,
      this.#dev,
    );
    this.context = d.primaryCtxRetain(this.#dev);
    current = undefined;
    this.activate();
  }

  /**
   * Bytes of device memory this process allocated through this device object (cuMemAlloc of its
   * tensors) and has not freed (cuMemFree by `dispose()`, or by the finalizer of a tensor
   * collected without it): bytes allocated minus bytes freed, counted as the driver calls
   * succeed. Unlike cuMemGetInfo's free memory, which every process and context on the GPU
   * changes, it counts only this device object's own allocations, so a leak check can assert on
   * it while other work uses the GPU. The bytes asked for (the driver rounds an allocation up to
   * its page size). `reset()` sets it to 0: the reset frees every allocation of the context.
   */
  get allocatedBytes(): number {
    return this.#allocated;
  }

  /** @internal A cuMemAlloc of `bytes` through this device succeeded (CudaTensor). */
  noteAlloc(bytes: number): void {
    this.#allocated += bytes;
  }

  /** @internal A cuMemFree of an allocation of `bytes` made through this device succeeded. */
  noteFree(bytes: number): void {
    this.#allocated -= bytes;
  }

  /** The `sm_XY` name of this device's architecture, e.g. "sm_90". */
  get arch(): string {
    return `sm_${this.computeCapability[0]}${this.computeCapability[1]}`;
  }

  /**
   * Make this device's primary context current on the calling thread (cuCtxSetCurrent), unless
   * this package already did so last. Every operation of this package calls it first.
   */
  /** Why the context is lost (a kernel faulted), or undefined while it is usable. */
  get lost():
    { readonly code: number; readonly name: string; readonly kernel?: string } | undefined {
    return this.#lost;
  }

  /** @internal The driver binding of this device's context (see the field). */
  get driver(): CudaDriver {
    return this.#driver;
  }

  /**
   * Make this device's context current. @throws CudaError when the context was lost to a fault,
   * without calling the driver: say which kernel and how to recover.
   */
  activate(): void {
    if (this.#lost) throw this.#lostError();
    if (current === this) return;
    this.#driver.ctxSetCurrent(this.context);
    current = this;
  }

  /**
   * Wait for all work queued on this device (cuCtxSynchronize). Errors of earlier asynchronous
   * work, such as a kernel's illegal address, surface here.
   * @throws CudaError with the driver's name, e.g. CUDA_ERROR_ILLEGAL_ADDRESS.
   */
  synchronize(context?: string): void {
    this.activate();
    this.#driver.ctxSynchronize(context);
  }

  /** @internal Mark the context lost (a call returned a sticky error); the text for the error. */
  markLost(code: number): string {
    this.#lost ??= { code, name: this.#driver.errorName(code), kernel: this.lastKernel };
    return this.#lostText();
  }

  #lostText(): string {
    const l = this.#lost!;
    const kernel = l.kernel ? `; the last kernel queued on it was "${l.kernel}"` : "";
    return `The CUDA context of cuda:${this.ordinal} (${this.name}) is lost (${l.name})${kernel}. Every later launch, copy and allocation on this device fails. Call device.reset() to reset it (its tensors, modules, streams and graphs are gone), then allocate again; the driver keeps some faults (an illegal address, seen on an H200 with driver 580) for the life of the process, and then reset() says so and only a new process can use the GPU (CUDA documents CUDA_ERROR_ILLEGAL_ADDRESS as needing a restart). To find an out-of-range access without a fault, compile the kernel with { checkBounds: true }, or run it on the simulator`;
  }

  #lostError(): CudaError {
    const l = this.#lost!;
    return new CudaError("(context lost)", l.code, l.name, this.#lostText());
  }

  /**
   * Reset the device's primary context (cuDevicePrimaryCtxReset) after a fault, so that it can
   * be used again in this process. Every tensor, module, stream, event and graph made before is
   * gone: using a tensor from before throws an error that says so.
   * @throws CudaError from the driver.
   */
  reset(): void {
    const d = this.#driver;
    // Drop this process's retain first, so that the reset destroys the faulted context, then
    // retain the fresh one.
    d.primaryCtxRelease(this.#dev);
    d.primaryCtxReset(this.#dev);
    try {
      this.context = d.primaryCtxRetain(this.#dev);
    } catch (e) {
      if (!(e instanceof CudaError)) throw e;
      throw new CudaError(
        "cuDevicePrimaryCtxRetain",
        e.code,
        e.errorName,
        `cuda:${this.ordinal} cannot be reset in this process: the driver keeps ${e.errorName} after cuDevicePrimaryCtxReset (a sticky fault); restart the process to use the GPU again`,
      );
    }
    this.generation++;
    this.#allocated = 0;
    this.#lost = undefined;
    this.lastKernel = undefined;
    current = undefined;
    this.activate();
  }

  toString(): string {
    return `cuda:${this.ordinal} (${this.name}, ${this.arch})`;
  }
}

const devices = new Map<number, CudaDevice>();

// A sticky error marks the device that was current when it happened.
onContextLost((code) => current?.markLost(code));

/**
 * The CUDA device `ordinal` (default 0), memoised: its primary context is retained on first use
 * and made current.
 * @throws CudaUnavailableError (TirxError TX5010, at the caller's line) when libcuda.so.1 cannot
 *   be loaded or the driver finds no GPU (CUDA_ERROR_NO_DEVICE).
 * @throws CudaError CUDA_ERROR_INVALID_DEVICE for an ordinal the driver does not have.
 */
export function cuda(ordinal = 0): CudaDevice {
  if (!Number.isInteger(ordinal) || ordinal < 0)
    throw new RangeError(`CUDA device ordinal must be a non-negative integer, got ${ordinal}`);
  let dev = devices.get(ordinal);
  if (!dev) {
    dev = new CudaDevice(ordinal);
    devices.set(ordinal, dev);
  }
  dev.activate();
  return dev;
}
