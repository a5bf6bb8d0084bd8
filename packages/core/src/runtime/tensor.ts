import { TirxError } from "../diagnostics.js";
import { callSite } from "./call-site.js";
import type { DType } from "../dtype.js";
import type { HostArray } from "../host/encode.js";

/** A place kernels run: a CUDA GPU or the simulated device. */
export interface DeviceLike {
  readonly kind: "cuda" | "sim";
  /** Human-readable name, e.g. "NVIDIA H200" or "sim". */
  readonly name: string;
}

/**
 * A tensor living on a device, as every runtime exposes it. Shapes are in elements,
 * row-major, contiguous. `toArray()` copies to the host (float16/bfloat16 widen to Float32Array).
 */
export interface DeviceTensor {
  readonly device: DeviceLike;
  readonly shape: readonly number[];
  readonly dtype: DType;
  /** Size in bytes. */
  readonly nbytes: number;
  /** Copy the contents to the host as one value per element. */
  toArray(): HostArray;
  /** Copy the raw little-endian bytes to the host. */
  toBytes(): Uint8Array;
  /**
   * True once `dispose()` ran (or the memory is otherwise gone); a launch refuses it (TX5011).
   * Absent on tensors of other runtimes: live.
   */
  readonly disposed?: boolean;
  /** Free the device memory now; later use throws TirxError TX5011. */
  dispose(): void;
}

/**
 * TX5011 for a tensor used after `dispose()`, `what` naming it (e.g. `float32[4] CUDA tensor`),
 * at the caller's line, with the fix in a note. The runtimes' tensors throw it.
 */
export function usedAfterDisposeError(what: string): TirxError {
  return new TirxError("TX5011", `${what} used after dispose()`, callSite(), [
    {
      message:
        "dispose() (or the end of its `using` block) frees the tensor; make it again, or dispose it after its last use",
    },
  ]);
}

/**
 * TX5004 for an object that passes for a tensor of `device` ("sim", "CUDA") but is not one: a
 * Proxy of a tensor, or an object whose prototype is a tensor (Object.create(t)), has the
 * tensor's methods but none of its device memory (the runtimes' tensors keep it in private
 * fields, ECMAScript's brand).
 */
export function notATensorError(device: string): TirxError {
  return new TirxError(
    "TX5004",
    `an object that passes for a ${device} tensor is not one (a Proxy of a tensor, or an object whose prototype is a tensor, has none of its memory)`,
    undefined,
    [{ message: "pass the tensor that tensor() returned itself" }],
  );
}
