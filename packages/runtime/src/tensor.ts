import {
  TirxError,
  callSite,
  checkTensorSpec,
  MAX_SIM_TENSOR_BYTES,
  MAX_TENSOR_BYTES,
  showValue,
  type DType,
  type DeviceLike,
  type DeviceTensor,
  type HostData,
} from "@tirx-ts/core";
import { CudaDevice, cudaEmpty, cudaTensor, cudaZeros } from "@tirx-ts/runtime-cuda";
import { sim, simEmpty, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { device as defaultDevice } from "./device.js";
import { atCaller } from "./at-caller.js";

/** Options of `tensor`: shape in elements (row-major), dtype, and device (default: `device()`). */
export interface TensorOptions {
  /** The tensor's shape; default `[data.length]` (one dimension). */
  readonly shape?: readonly number[];
  readonly dtype: DType;
  readonly device?: DeviceLike;
}

/**
 * `dev` when it is a device: the one `sim()` returns or a `CudaDevice` from `cuda(n)`; the
 * default device for undefined.
 * @throws TirxError TX5012 (runtime/device) for anything else (a plain object would reach the
 *   runtimes as a device they cannot use).
 */
function deviceOf(dev: unknown): DeviceLike {
  if (dev === undefined) return defaultDevice();
  if (dev === sim() || dev instanceof CudaDevice) return dev as DeviceLike;
  throw new TirxError(
    "TX5012",
    `a tensor's device must be sim() or cuda(n) (or left out for the default device), got ${showValue(dev)}`,
  );
}

/** Option names of `tensor`. */
const TENSOR_OPTIONS = ["shape", "dtype", "device"];

/**
 * A device tensor holding `data` (one value per element, row-major; float16/bfloat16 are rounded
 * to nearest even), of `opts.shape` (default `[data.length]`). On `opts.device`, or the default
 * device. `using t = tensor(...)` disposes it
 * at the end of the block, on either device.
 * @throws TirxError TX1003 (dtype), TX5007 (options not an object or with an unknown key, shape,
 *   size over 2^48 bytes, or 2^31 − 1 on the simulator, data that is not array-like, an element
 *   count that does not match the shape, an element that is no value of the dtype), TX5012 (a
 *   device that is not one).
 */
export function tensor(data: HostData, opts: TensorOptions): DeviceTensor & Disposable {
  return atCaller(callSite, () => makeTensor(data, opts));
}

/** {@link tensor} without the caller's span. */
function makeTensor(data: HostData, opts: TensorOptions): DeviceTensor & Disposable {
  if (typeof opts !== "object" || opts === null || Array.isArray(opts)) {
    throw new TirxError(
      "TX5007",
      `tensor(data, { shape?, dtype, device? }) needs its options, got ${showValue(opts)}`,
    );
  }
  const unknown = Object.keys(opts).find((k) => !TENSOR_OPTIONS.includes(k));
  if (unknown !== undefined) {
    throw new TirxError(
      "TX5007",
      `tensor has no option "${unknown}" (options: ${TENSOR_OPTIONS.join(", ")})`,
    );
  }
  const dev = deviceOf(opts.device);
  const arrayLike =
    typeof data === "object" &&
    data !== null &&
    typeof (data as { length?: unknown }).length === "number";
  // Without a shape, the data's own length: one dimension.
  const shape = opts.shape ?? (arrayLike ? [data.length] : undefined);
  const n = shape === undefined ? undefined : checkTensorSpec(shape, opts.dtype, maxBytes(dev));
  if (!arrayLike || shape === undefined) {
    throw new TirxError(
      "TX5007",
      `tensor data must be a typed array or an array of ${n === undefined ? "" : `${n} `}numbers, got ${showValue(data)}`,
    );
  }
  // Each runtime checks that the data fits the shape (TX5007).
  return dev.kind === "sim"
    ? simTensor(data, { shape, dtype: opts.dtype })
    : cudaTensor(data, { shape, dtype: opts.dtype, device: dev as CudaDevice });
}

/**
 * A zero-filled device tensor.
 * @throws TirxError TX1003 (dtype), TX5007 (shape or size), TX5012 (a device that is not one).
 */
tensor.zeros = (
  shape: readonly number[],
  dtype: DType,
  device?: DeviceLike,
): DeviceTensor & Disposable =>
  atCaller(callSite, () => {
    const dev = deviceOf(device);
    checkTensorSpec(shape, dtype, maxBytes(dev));
    return dev.kind === "sim" ? simZeros(shape, dtype) : cudaZeros(shape, dtype, dev as CudaDevice);
  });

/**
 * A device tensor with unspecified contents (the simulator poisons them).
 * @throws TirxError TX1003 (dtype), TX5007 (shape or size), TX5012 (a device that is not one).
 */
tensor.empty = (
  shape: readonly number[],
  dtype: DType,
  device?: DeviceLike,
): DeviceTensor & Disposable =>
  atCaller(callSite, () => {
    const dev = deviceOf(device);
    checkTensorSpec(shape, dtype, maxBytes(dev));
    return dev.kind === "sim" ? simEmpty(shape, dtype) : cudaEmpty(shape, dtype, dev as CudaDevice);
  });

/** Largest tensor on `dev`: 2^48 bytes on a GPU, 2^31 − 1 on the simulator. */
function maxBytes(dev: DeviceLike): number {
  return dev.kind === "sim" ? MAX_SIM_TENSOR_BYTES : MAX_TENSOR_BYTES;
}
