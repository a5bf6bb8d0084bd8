import {
  notATensorError,
  usedAfterDisposeError,
  TirxError,
  callSite,
  decodeHost,
  dtypeBytes,
  encodeHost,
  isDType,
  numel,
  type DType,
  type DeviceTensor,
  type HostArray,
  type HostData,
} from "@tirx-ts/core";
import { cuda, type CudaDevice } from "./device.js";
import { driver, type CuHandle } from "./driver.js";

interface Allocation {
  readonly device: CudaDevice;
  readonly ptr: CuHandle;
  readonly bytes: number;
  readonly generation: number;
}

/** Frees device memory of tensors that were garbage-collected without `dispose()`. */
const registry = new FinalizationRegistry<Allocation>((a) => {
  // After device.reset() the memory is already gone; the device may also be lost.
  if (a.generation !== a.device.generation || a.device.lost) return;
  try {
    a.device.activate();
    driver().memFree(a.ptr);
    a.device.noteFree(a.bytes);
  } catch {
    // nothing useful can be done with an error here
  }
});

/**
 * What a borrowed tensor's memory belongs to (a SymmetricTensor): the tensor is unusable once
 * the owner is disposed. `what` names the owner in the error.
 */
export interface TensorOwner {
  readonly disposed: boolean;
  readonly what: string;
}

/**
 * A contiguous, row-major tensor in CUDA device memory (cuMemAlloc). Owns its memory: free it
 * with `dispose()`; a FinalizationRegistry frees it as a safety net when the tensor is collected.
 * Any use after `dispose()` throws. A borrowed tensor (`CudaTensor.borrow`: a PE's view of a
 * SymmetricTensor) is a window on memory another object owns: it allocates and frees nothing.
 */
export class CudaTensor implements DeviceTensor {
  readonly device: CudaDevice;
  readonly shape: readonly number[];
  readonly dtype: DType;
  /** Size in bytes. */
  readonly nbytes: number;
  #ptr: CuHandle;
  #disposed = false;
  readonly #generation: number;
  readonly #owner: TensorOwner | undefined;

  private constructor(
    device: CudaDevice,
    shape: readonly number[],
    dtype: DType,
    borrowed?: { readonly ptr: CuHandle; readonly owner: TensorOwner },
  ) {
    checkShape(shape, dtype);
    this.device = device;
    this.shape = Object.freeze([...shape]);
    this.dtype = dtype;
    this.nbytes = numel(shape) * dtypeBytes(dtype);
    this.#generation = device.generation;
    this.#owner = borrowed?.owner;
    if (borrowed) {
      this.#ptr = borrowed.ptr;
      return;
    }
    device.activate();
    // cuMemAlloc refuses 0 bytes: an empty tensor has no allocation (pointer 0).
    this.#ptr = this.nbytes > 0 ? driver().memAlloc(this.nbytes) : 0n;
    if (this.#ptr !== 0n) {
      device.noteAlloc(this.nbytes);
      registry.register(
        this,
        { device, ptr: this.#ptr, bytes: this.nbytes, generation: this.#generation },
        this,
      );
    }
  }

  /** @internal Uninitialised tensor; use `cudaEmpty`. */
  static allocate(shape: readonly number[], dtype: DType, device: CudaDevice): CudaTensor {
    return new CudaTensor(device, shape, dtype);
  }

  /**
   * @internal A tensor of `shape` and `dtype` at device address `ptr`, used from `device`, over
   * memory `owner` holds (a SymmetricTensor's range: SymmetricTensor.on / slice). It allocates
   * nothing and `dispose()` frees nothing; once the owner is disposed, its use throws TX5011.
   */
  static borrow(
    device: CudaDevice,
    shape: readonly number[],
    dtype: DType,
    ptr: CuHandle,
    owner: TensorOwner,
  ): CudaTensor {
    return new CudaTensor(device, shape, dtype, { ptr, owner });
  }

  /**
   * Whether `x` is a CudaTensor itself (its private pointer is the brand: a Proxy of one, or an
   * object whose prototype is one, is not).
   */
  static is(x: unknown): x is CudaTensor {
    return typeof x === "object" && x !== null && #ptr in x;
  }

  /**
   * The CUdeviceptr of the first element (0n for an empty tensor).
   * @throws TirxError TX5011 after dispose(); TX5004 on a Proxy of a tensor or an object whose
   * prototype is one.
   */
  get ptr(): CuHandle {
    CudaTensor.#live(this);
    return this.#ptr;
  }

  /** True once `dispose()` ran (for a borrowed tensor: or its owner was disposed). */
  get disposed(): boolean {
    if (!CudaTensor.is(this)) throw notATensorError("CUDA");
    return this.#disposed || this.#owner?.disposed === true;
  }

  /** Copy the raw little-endian bytes to the host (cuMemcpyDtoH, synchronous). */
  toBytes(): Uint8Array {
    CudaTensor.#live(this);
    const out = new Uint8Array(this.nbytes);
    if (this.nbytes > 0) {
      this.device.activate();
      driver().memcpyDtoH(out, this.#ptr);
    }
    return out;
  }

  /** Copy to the host as one value per element (float16/bfloat16 widen to Float32Array, bool → Uint8Array 0/1). */
  toArray(): HostArray {
    return decodeHost(this.toBytes(), this.dtype);
  }

  /**
   * Overwrite the contents from the host: one value per element, or raw bytes (a Uint8Array of
   * exactly `nbytes` for dtypes wider than one byte). Synchronous (cuMemcpyHtoD, then a wait
   * for the default stream: the bytes are in device memory when this returns).
   * @throws TirxError TX5007 when the data does not fit the shape and dtype.
   */
  copyFrom(data: HostData): this {
    CudaTensor.#live(this);
    const bytes = encodeFor(data, this.shape, this.dtype);
    if (bytes.length > 0) {
      this.device.activate();
      driver().memcpyHtoD(this.#ptr, bytes);
      driver().settleDefaultStream();
    }
    return this;
  }

  /**
   * Set every byte to zero (cuMemsetD8), done when this returns: work queued next on any stream
   * sees the zeros.
   */
  zero(): this {
    CudaTensor.#live(this);
    if (this.nbytes > 0) {
      this.device.activate();
      driver().memsetD8(this.#ptr, 0, this.nbytes);
      driver().settleDefaultStream();
    }
    return this;
  }

  /** `using t = cudaZeros(...)`: the same as `dispose()`. */
  [Symbol.dispose](): void {
    this.dispose();
  }

  /** Free the device memory now (cuMemFree); later use throws. Calling it twice is harmless. */
  dispose(): void {
    if (!CudaTensor.is(this)) throw notATensorError("CUDA");
    if (this.#disposed) return;
    this.#disposed = true;
    if (this.#owner) return; // borrowed: the owner frees the memory
    registry.unregister(this);
    if (this.#ptr !== 0n) {
      const ptr = this.#ptr;
      this.#ptr = 0n;
      // Memory from before device.reset() is already freed; a lost context frees it on reset.
      if (this.#generation !== this.device.generation || this.device.lost) return;
      this.device.activate();
      driver().memFree(ptr);
      this.device.noteFree(this.nbytes);
    }
  }

  toString(): string {
    return `CudaTensor(${this.dtype}[${this.shape.join(", ")}] on ${this.device.name})`;
  }

  static #live(t: CudaTensor): void {
    // A Proxy of a tensor (or an object whose prototype is one) would fail at the first private
    // field read with a raw TypeError.
    if (!CudaTensor.is(t)) throw notATensorError("CUDA");
    if (t.#owner?.disposed === true) {
      throw new TirxError(
        "TX5011",
        `${t.dtype}[${t.shape.join(", ")}] CUDA tensor is a view of ${t.#owner.what}, which was disposed`,
        callSite(),
      );
    }
    if (t.#disposed) {
      throw usedAfterDisposeError(`${t.dtype}[${t.shape.join(", ")}] CUDA tensor`);
    }
    if (t.#generation !== t.device.generation) {
      throw new TirxError(
        "TX5011",
        `${t.dtype}[${t.shape.join(", ")}] CUDA tensor was allocated before cuda:${t.device.ordinal} was reset (device.reset()); its memory is gone: allocate it again`,
        callSite(),
      );
    }
  }
}

function checkShape(shape: readonly number[], dtype: DType): void {
  if (!isDType(dtype)) throw new TirxError("TX5007", `unknown dtype ${String(dtype)}`);
  if (!Array.isArray(shape) || shape.some((n) => !Number.isSafeInteger(n) || n < 0)) {
    throw new TirxError(
      "TX5007",
      `tensor shape must be non-negative integers, got [${String(shape)}]`,
    );
  }
}

function encodeFor(data: HostData, shape: readonly number[], dtype: DType): Uint8Array {
  try {
    return encodeHost(data, dtype, numel(shape));
  } catch (e) {
    if (e instanceof TirxError) throw e;
    throw new TirxError(
      "TX5007",
      `host data does not fit ${dtype}[${shape.join(", ")}]: ${(e as Error).message}`,
    );
  }
}

/** Options of the tensor constructors; `device` defaults to `cuda(0)`. */
export interface CudaTensorOptions {
  readonly shape: readonly number[];
  readonly dtype: DType;
  readonly device?: CudaDevice;
}

/**
 * A new device tensor holding `data` (one value per element, row-major, or raw bytes).
 * @example cudaTensor([1, 2, 3, 4], { shape: [2, 2], dtype: "float16" })
 * @throws TirxError TX5007 when the data does not fit; CudaError when allocation fails.
 */
export function cudaTensor(data: HostData, opts: CudaTensorOptions): CudaTensor {
  checkShape(opts.shape, opts.dtype);
  const bytes = encodeFor(data, opts.shape, opts.dtype);
  const t = CudaTensor.allocate(opts.shape, opts.dtype, opts.device ?? cuda(0));
  if (bytes.length > 0) {
    try {
      driver().memcpyHtoD(t.ptr, bytes);
      driver().settleDefaultStream();
    } catch (e) {
      t.dispose();
      throw e;
    }
  }
  return t;
}

/** A new device tensor with uninitialised contents. */
export function cudaEmpty(
  shape: readonly number[],
  dtype: DType,
  device: CudaDevice = cuda(0),
): CudaTensor {
  return CudaTensor.allocate(shape, dtype, device);
}

/** A new device tensor with every byte zero (all elements 0 / false / +0.0). */
export function cudaZeros(
  shape: readonly number[],
  dtype: DType,
  device: CudaDevice = cuda(0),
): CudaTensor {
  return CudaTensor.allocate(shape, dtype, device).zero();
}
