import {
  decodeHost,
  dtypeBytes,
  encodeHost,
  MAX_SIM_TENSOR_BYTES,
  notATensorError,
  usedAfterDisposeError,
  numel,
  TirxError,
  type DeviceTensor,
  type DType,
  type HostArray,
  type HostData,
} from "@tirx-ts/core";
import { sim, type SimDevice } from "./device.js";

/** The byte a `simEmpty` tensor and a CTA's shared memory start as (0xff: NaN in every float). */
export const POISON_BYTE = 0xff;

/**
 * A tensor in the simulated device's global memory: row-major, contiguous, little-endian bytes
 * with each dtype's exact bits (float16 and bfloat16 as their 16-bit patterns).
 */
export class SimTensor implements DeviceTensor {
  readonly device: SimDevice = sim();
  readonly shape: readonly number[];
  readonly dtype: DType;
  /** Size in bytes. */
  readonly nbytes: number;
  #storage: Uint8Array | undefined;

  /** Wrap `storage` (taken, not copied) as a tensor of `shape` and `dtype`. */
  constructor(storage: Uint8Array, shape: readonly number[], dtype: DType) {
    this.shape = Object.freeze([...shape]);
    this.dtype = dtype;
    this.nbytes = numel(shape) * dtypeBytes(dtype);
    if (storage.length !== this.nbytes) {
      throw new TirxError(
        "TX5007",
        `${storage.length} bytes for a [${shape.join(", ")}] ${dtype} tensor of ${this.nbytes} bytes`,
      );
    }
    this.#storage = storage;
  }

  /**
   * Whether `x` is a SimTensor itself (its private storage is the brand: a Proxy of one, or an
   * object whose prototype is one, is not).
   */
  static is(x: unknown): x is SimTensor {
    return typeof x === "object" && x !== null && #storage in x;
  }

  /**
   * The device memory itself (a live view: kernels see writes to it, and it sees theirs).
   * @throws TirxError TX5011 after `dispose()` (at the caller's line); TX5004 on a Proxy of a
   * tensor or an object whose prototype is one.
   */
  get storage(): Uint8Array {
    if (!SimTensor.is(this)) throw notATensorError("sim");
    if (!this.#storage) {
      throw usedAfterDisposeError(`sim tensor [${this.shape.join(", ")}] ${this.dtype}`);
    }
    return this.#storage;
  }

  /** True once `dispose()` ran. @throws TirxError TX5004 as {@link SimTensor.storage}. */
  get disposed(): boolean {
    if (!SimTensor.is(this)) throw notATensorError("sim");
    return this.#storage === undefined;
  }

  /** One value per element; float16/bfloat16 widen exactly to Float32Array, 64-bit ints to BigInt64Array/BigUint64Array. */
  toArray(): HostArray {
    return decodeHost(this.storage, this.dtype);
  }

  /** A copy of the raw little-endian bytes. */
  toBytes(): Uint8Array {
    return new Uint8Array(this.storage);
  }

  /** Release the memory; later use throws TirxError TX5011. Idempotent. @throws TirxError TX5004 as {@link SimTensor.storage}. */
  dispose(): void {
    if (!SimTensor.is(this)) throw notATensorError("sim");
    this.#storage = undefined;
  }

  /** `using t = tensor(...)`: the same as `dispose()`, as for CUDA tensors. */
  [Symbol.dispose](): void {
    this.dispose();
  }
}

function checkShape(shape: readonly number[], dtype: DType): void {
  if (!Array.isArray(shape) || shape.some((n) => !Number.isInteger(n) || n < 0)) {
    throw new TirxError(
      "TX5007",
      `tensor shape must be a list of non-negative integers, got [${String(shape)}]`,
    );
  }
  // One ArrayBuffer per tensor, and the interpreter's offsets are 32-bit: refuse, never wrap.
  const bytes = numel(shape) * dtypeBytes(dtype);
  if (bytes > MAX_SIM_TENSOR_BYTES) {
    throw new TirxError(
      "TX5007",
      `a simulated tensor of shape [${shape.join(", ")}] ${dtype} has ${bytes} bytes; the simulator holds at most ${MAX_SIM_TENSOR_BYTES} bytes per tensor (run it on a GPU)`,
    );
  }
}

/**
 * A sim tensor holding `data` (one value per element, row-major; or raw bytes when `data` is a
 * Uint8Array of exactly shape × element bytes and the dtype is wider than one byte). Values are
 * encoded with core's `encodeHost` (float16/bfloat16 round to nearest even, integers wrap).
 * @example simTensor(new Float32Array(4096).map((_, i) => i % 97), { shape: [128, 32], dtype: "float16" })
 * @throws TirxError TX5007 when the element count does not match the shape, or the tensor has
 *   more than MAX_SIM_TENSOR_BYTES (2^31 − 1) bytes.
 */
export function simTensor(
  data: HostData,
  opts: { shape: readonly number[]; dtype: DType },
): SimTensor {
  checkShape(opts.shape, opts.dtype);
  return new SimTensor(encodeHost(data, opts.dtype, numel(opts.shape)), opts.shape, opts.dtype);
}

/** A sim tensor of zeros (all bytes 0). */
export function simZeros(shape: readonly number[], dtype: DType): SimTensor {
  checkShape(shape, dtype);
  return new SimTensor(new Uint8Array(numel(shape) * dtypeBytes(dtype)), shape, dtype);
}

/**
 * A sim tensor with unspecified contents: every byte is `POISON_BYTE` (0xff, NaN in float
 * dtypes, -1 in signed integers), so results that depend on it stand out.
 */
export function simEmpty(shape: readonly number[], dtype: DType): SimTensor {
  checkShape(shape, dtype);
  return new SimTensor(
    new Uint8Array(numel(shape) * dtypeBytes(dtype)).fill(POISON_BYTE),
    shape,
    dtype,
  );
}
