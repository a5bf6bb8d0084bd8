import {
  TirxError,
  checkTensorSpec,
  MAX_SIM_TENSOR_BYTES,
  MAX_TENSOR_BYTES,
  showValue,
  type DType,
  type DeviceLike,
  type DeviceTensor,
  type HostData,
} from "@tirx-ts/core";
import { cudaEmpty, cudaTensor, cudaZeros, type CudaDevice } from "@tirx-ts/runtime-cuda";
import { simEmpty, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { device as defaultDevice } from "./device.js";

/** Options of `tensor`: shape in elements (row-major), dtype, and device (default: `device()`). */
export interface TensorOptions {
  readonly shape: readonly number[];
  readonly dtype: DType;
  readonly device?: DeviceLike;
}

/**
 * A device tensor holding `data` (one value per element, row-major; float16/bfloat16 are rounded
 * to nearest even). On `opts.device`, or the default device.
 * @throws TirxError TX1003 (dtype), TX5007 (shape, size over 2^48 bytes, or 2^31 − 1 on the simulator, or an element
 *   count that does not match the shape).
 */
export function tensor(data: HostData, opts: TensorOptions): DeviceTensor {
  if (typeof opts !== "object" || opts === null) {
    throw new TirxError(
      "TX5007",
      `tensor(data, { shape, dtype, device? }) needs its options, got ${showValue(opts)}`,
    );
  }
  const dev = opts.device ?? defaultDevice();
  const n = checkTensorSpec(opts.shape, opts.dtype, maxBytes(dev));
  if (
    typeof data !== "object" ||
    data === null ||
    typeof (data as { length?: unknown }).length !== "number"
  ) {
    throw new TirxError(
      "TX5007",
      `tensor data must be a typed array or an array of ${n} numbers, got ${showValue(data)}`,
    );
  }
  // Each runtime checks that the data fits the shape (TX5007).
  return dev.kind === "sim"
    ? simTensor(data, { shape: opts.shape, dtype: opts.dtype })
    : cudaTensor(data, { shape: opts.shape, dtype: opts.dtype, device: dev as CudaDevice });
}

/** A zero-filled device tensor. */
tensor.zeros = (
  shape: readonly number[],
  dtype: DType,
  dev: DeviceLike = defaultDevice(),
): DeviceTensor => {
  checkTensorSpec(shape, dtype, maxBytes(dev));
  return dev.kind === "sim" ? simZeros(shape, dtype) : cudaZeros(shape, dtype, dev as CudaDevice);
};

/** A device tensor with unspecified contents (the simulator poisons them). */
tensor.empty = (
  shape: readonly number[],
  dtype: DType,
  dev: DeviceLike = defaultDevice(),
): DeviceTensor => {
  checkTensorSpec(shape, dtype, maxBytes(dev));
  return dev.kind === "sim" ? simEmpty(shape, dtype) : cudaEmpty(shape, dtype, dev as CudaDevice);
};

/** Largest tensor on `dev`: 2^48 bytes on a GPU, 2^31 − 1 on the simulator. */
function maxBytes(dev: DeviceLike): number {
  return dev.kind === "sim" ? MAX_SIM_TENSOR_BYTES : MAX_TENSOR_BYTES;
}
