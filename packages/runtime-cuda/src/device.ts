import type { DeviceLike } from "@tirx-ts/core";
import { CU_DEVICE_ATTRIBUTE, driver, type CuHandle } from "./driver.js";

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
  readonly context: CuHandle;
  readonly #dev: number;

  /** @internal use `cuda(ordinal)`. */
  constructor(ordinal: number) {
    const d = driver();
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

  /** The `sm_XY` name of this device's architecture, e.g. "sm_90". */
  get arch(): string {
    return `sm_${this.computeCapability[0]}${this.computeCapability[1]}`;
  }

  /**
   * Make this device's primary context current on the calling thread (cuCtxSetCurrent), unless
   * this package already did so last. Every operation of this package calls it first.
   */
  activate(): void {
    if (current === this) return;
    driver().ctxSetCurrent(this.context);
    current = this;
  }

  /**
   * Wait for all work queued on this device (cuCtxSynchronize). Errors of earlier asynchronous
   * work, such as a kernel's illegal address, surface here.
   * @throws CudaError with the driver's name, e.g. CUDA_ERROR_ILLEGAL_ADDRESS.
   */
  synchronize(context?: string): void {
    this.activate();
    driver().ctxSynchronize(context);
  }

  toString(): string {
    return `cuda:${this.ordinal} (${this.name}, ${this.arch})`;
  }
}

const devices = new Map<number, CudaDevice>();

/**
 * The CUDA device `ordinal` (default 0), memoised: its primary context is retained on first use
 * and made current.
 * @throws CudaUnavailableError when libcuda.so.1 cannot be loaded.
 * @throws CudaError CUDA_ERROR_INVALID_DEVICE for an ordinal the driver does not have,
 *   CUDA_ERROR_NO_DEVICE when there is no GPU.
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
