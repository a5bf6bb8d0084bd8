import {
  TMA_DTYPES,
  TirxError,
  callSite,
  checkTensorMapEncoding,
  invariant,
  dtypeBytes,
  isStaticShape,
  launchGrid,
  tensorMapLaunchDims,
  type DeviceTensor,
  type KernelArg,
  type LaunchConfig,
  type Param,
  type TensorMap,
} from "@tirx-ts/core";
import { ARG_SLOT_BYTES, packArgs } from "./args.js";
import type { CudaDevice } from "./device.js";
import { driver, koffi, libraryPath, type CuHandle } from "./driver.js";
import { CudaUnavailableError } from "./errors.js";
import type { CudaKernel } from "./launch.js";
import type { CudaStream } from "./stream.js";
import { CudaTensor } from "./tensor.js";

/** Bytes of a `CUtensorMap` (cuda.h: `CU_TENSOR_MAP_NUM_QWORDS` 16 × 8), 64-byte aligned on the host. */
export const TENSOR_MAP_BYTES = 128;

const SWIZZLE = { none: 0, "32B": 1, "64B": 2, "128B": 3 } as const;
const L2_PROMOTION = { none: 0, "64B": 1, "128B": 2, "256B": 3 } as const;
const OOB_FILL = { none: 0, nan: 1 } as const;
/** Encodings kept per tensor map of a symbolic tensor (by device pointer and shape). */
const ENCODINGS_KEPT = 8;
/** `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION` (cuda.h). */
const CLUSTER_DIMENSION = 4;

type Fn = (...args: unknown[]) => number;
let fns: { encode: Fn; launchEx: Fn } | undefined;

/** cuTensorMapEncodeTiled and cuLaunchKernelEx, bound on first use (CUDA 12.0+ drivers). */
function bind(): { encode: Fn; launchEx: Fn } {
  if (fns) return fns;
  driver(); // loads the library and runs cuInit
  const library = libraryPath();
  const lib = koffi().load(library);
  try {
    fns = {
      encode: lib.func("cuTensorMapEncodeTiled", "int", [
        "void *",
        "int",
        "uint32_t",
        "uint64_t",
        "void *",
        "void *",
        "void *",
        "void *",
        "int",
        "int",
        "int",
        "int",
      ]) as Fn,
      launchEx: lib.func("cuLaunchKernelEx", "int", ["void *", "void *", "void *", "void *"]) as Fn,
    };
  } catch (e) {
    throw new CudaUnavailableError(
      library,
      `${(e as Error).message} (a CUDA 12 driver is needed for TMA)`,
    );
  }
  return fns;
}

/** The arguments of cuTensorMapEncodeTiled for a map (all but the output and the address). */
export interface TensorMapArgs {
  /** `CUtensorMapDataType`. */
  readonly dataType: number;
  readonly rank: number;
  /** Global dims, innermost first (elements). */
  readonly globalDim: BigUint64Array;
  /** Byte strides of dims 1..rank-1, innermost first (at least one entry). */
  readonly globalStrides: BigUint64Array;
  /** Box and element strides, innermost first. */
  readonly boxDim: Uint32Array;
  readonly elementStrides: Uint32Array;
  /** `CUtensorMapInterleave` (always NONE), `CUtensorMapSwizzle`, `CUtensorMapL2promotion`, `CUtensorMapFloatOOBfill`. */
  readonly interleave: number;
  readonly swizzle: number;
  readonly l2Promotion: number;
  readonly oobFill: number;
}

/**
 * The cuTensorMapEncodeTiled arguments of `map`: the tensor's row-major dims and byte strides
 * and the box, reversed into the driver's innermost-first order, and the enum values of cuda.h.
 * `shape` is the tensor's shape at this launch (default: the static shape; required for a
 * tensor with symbolic dims, whose dims and strides are the launch's). Pure (no driver).
 * @throws TirxError TX4024 (at the launching call) for launch dims the driver would refuse: a
 *   stride that is not a multiple of 16 bytes (tensorMapLaunchDims). Source: CUDA Driver API,
 *   cuTensorMapEncodeTiled.
 */
export function tensorMapArgs(map: TensorMap, shape?: readonly number[]): TensorMapArgs {
  const own = map.buffer.shape;
  const dimsNow = shape ?? (isStaticShape(own) ? own : undefined);
  invariant(
    dimsNow !== undefined,
    () => `tensor map "${map.name}" of a symbolic tensor without its launch shape`,
  );
  const r = tensorMapLaunchDims(map, dimsNow);
  if (typeof r === "string") throw new TirxError("TX4024", r, callSite());
  return {
    dataType: TMA_DTYPES[map.dtype]!,
    rank: dimsNow.length,
    globalDim: BigUint64Array.from(r.dims, (n) => BigInt(n)),
    globalStrides:
      r.strides.length > 0
        ? BigUint64Array.from(r.strides, (n) => BigInt(n))
        : new BigUint64Array(1),
    boxDim: Uint32Array.from([...map.box].reverse()),
    elementStrides: Uint32Array.from([...map.elementStrides].reverse()),
    interleave: 0,
    swizzle: SWIZZLE[map.swizzle],
    l2Promotion: L2_PROMOTION[map.l2Promotion],
    oobFill: OOB_FILL[map.oobFill],
  };
}

/**
 * Encode `map` over the tensor at device address `ptr` into the 128 bytes at host address `out`
 * (64-byte aligned) with cuTensorMapEncodeTiled ({@link tensorMapArgs}),
 * after core's checkTensorMapEncoding (the driver's contract with `ptr`, the check the verifier
 * and the simulator share: TirxError TX4027 for a `ptr` that is not 16-byte aligned, TX4017,
 * TX4024, TX4028, TX4029 for the rest, at the launching call); `shape` is the
 * tensor's shape at this launch (needed for a tensor with symbolic dims).
 * @throws TirxError TX4024 (launch dims the driver refuses); CudaError from the driver
 *   (CUDA_ERROR_INVALID_VALUE for a map it refuses).
 */
export function encodeTensorMap(
  map: TensorMap,
  ptr: bigint,
  out: bigint,
  shape?: readonly number[],
): void {
  const a = tensorMapArgs(map, shape);
  // The driver's contract, address included, as the verifier and the simulator check it.
  checkTensorMapEncoding(map.name, { ...a, globalAddress: ptr }, callSite());
  const code = bind().encode(
    out,
    a.dataType,
    a.rank,
    ptr,
    a.globalDim,
    a.globalStrides,
    a.boxDim,
    a.elementStrides,
    a.interleave,
    a.swizzle,
    a.l2Promotion,
    a.oobFill,
  );
  if (code !== 0)
    driver().check("cuTensorMapEncodeTiled", code, { context: `tensor map "${map.name}"` });
}

/**
 * Launches of a kernel with tensor-map parameters or cluster dims: the argument block holds the
 * declared parameters' 8-byte slots, then one 128-byte (64-aligned) `CUtensorMap` per map, then
 * the `kernelParams` pointer array, then a `CUlaunchConfig` and one `CUlaunchAttribute` (cluster
 * dims). Maps are re-encoded only when their tensor's device address changes, or, for a tensor
 * with symbolic dims, its shape (the launch's dims and strides): repeated launches of the same
 * tensors encode nothing, and a symbolic tensor's last 8 encodings are kept by pointer and shape
 * (launches that alternate between tensors copy the kept 128 bytes). The launch goes
 * through cuLaunchKernelEx (with `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION` for a cluster launch).
 */
export class ExtendedLauncher {
  readonly #params: readonly Param[];
  readonly #maps: readonly TensorMap[];
  readonly #mapArg: readonly number[];
  readonly #block: bigint;
  readonly #values: DataView;
  readonly #mapsAt: bigint;
  readonly #kernelParams: bigint;
  readonly #config: DataView;
  readonly #configAt: bigint;
  readonly #encodedFor: bigint[];
  /** Per map: the shape it was last encoded for (symbolic tensors), else undefined. */
  readonly #encodedShape: (number[] | undefined)[];
  /** Per map: true when its tensor has a symbolic dim (its shape is read at each launch). */
  readonly #symbolic: readonly boolean[];
  /** The maps' 128-byte slots in the argument block, as bytes. */
  readonly #mapBytes: Uint8Array;
  /**
   * Per symbolic map: its last {@link ENCODINGS_KEPT} encodings by pointer and shape, so that
   * launches that alternate between tensors (a kernel called per layer) copy 128 bytes instead
   * of encoding again.
   */
  readonly #encodings: Map<string, Uint8Array>[];

  constructor(params: readonly Param[], maps: readonly TensorMap[]) {
    this.#params = params;
    this.#maps = maps;
    this.#mapArg = maps.map((m) => {
      const i = params.findIndex((p) => p.kind === "buffer" && p.buffer.id === m.buffer.id);
      invariant(i >= 0, () => `tensor map "${m.name}" describes no parameter`);
      return i;
    });
    const n = params.length;
    const valuesBytes = n * ARG_SLOT_BYTES;
    const mapsOff = Math.ceil(valuesBytes / 64) * 64 + 64; // room to align the block itself
    const ptrOff = mapsOff + maps.length * TENSOR_MAP_BYTES;
    const cfgOff = ptrOff + (n + maps.length) * 8;
    const total = cfgOff + 56 + 72 + 64;
    const k = koffi();
    this.#block = k.alloc("uint8_t", total) as bigint;
    const all = k.view(this.#block, total);
    new Uint8Array(all).fill(0);
    this.#values = new DataView(all, 0, Math.max(valuesBytes, 0));
    // Align the maps to 64 bytes (cuTensorMapEncodeTiled requires it).
    const mapsAbs = (this.#block + BigInt(mapsOff)) & ~63n;
    this.#mapsAt = mapsAbs;
    this.#mapBytes = new Uint8Array(
      all,
      Number(mapsAbs - this.#block),
      maps.length * TENSOR_MAP_BYTES,
    );
    const ptrs = new DataView(all, ptrOff, (n + maps.length) * 8);
    for (let i = 0; i < n; i++)
      ptrs.setBigUint64(i * 8, this.#block + BigInt(i * ARG_SLOT_BYTES), true);
    maps.forEach((_, j) =>
      ptrs.setBigUint64((n + j) * 8, mapsAbs + BigInt(j * TENSOR_MAP_BYTES), true),
    );
    this.#kernelParams = this.#block + BigInt(ptrOff);
    const cfgAbs = (this.#block + BigInt(cfgOff) + 7n) & ~7n;
    this.#configAt = cfgAbs;
    this.#config = new DataView(all, Number(cfgAbs - this.#block), 56 + 72);
    this.#encodedFor = maps.map(() => -1n);
    this.#encodedShape = maps.map(() => undefined);
    this.#symbolic = maps.map((m) => !isStaticShape(m.buffer.shape));
    this.#encodings = maps.map(() => new Map());
  }

  /**
   * Pack `args`, encode the tensor maps whose tensors moved, and queue the launch.
   * @throws TirxError TX5004/TX5005 (arguments); CudaError from the driver.
   */
  launch(
    kernel: CudaKernel,
    device: CudaDevice,
    args: readonly KernelArg[],
    launch: LaunchConfig,
    stream: CudaStream | null,
  ): void {
    device.activate();
    const pointerOf = (t: DeviceTensor, i: number): bigint => {
      if (!(t instanceof CudaTensor) || t.device !== device) {
        throw new TirxError(
          "TX5004",
          `argument ${i} lives on ${t.device.name} (${t.device.kind}), but the kernel runs on ${device.name} (cuda:${device.ordinal})`,
          callSite(),
        );
      }
      return t.ptr;
    };
    packArgs(this.#params, args, this.#values, pointerOf);
    this.#maps.forEach((m, j) => {
      const ptr = this.#values.getBigUint64(this.#mapArg[j]! * ARG_SLOT_BYTES, true);
      if (!this.#symbolic[j]) {
        if (this.#encodedFor[j] === ptr) return;
        encodeTensorMap(m, ptr, this.#mapsAt + BigInt(j * TENSOR_MAP_BYTES));
        this.#encodedFor[j] = ptr;
        return;
      }
      // A symbolic tensor: the argument's shape is the launch's dims (checkArgs matched it
      // against the scalar arguments, TX5008); when the pointer or a dim changed, copy a kept
      // encoding of that pointer and shape, or encode.
      const shape = (args[this.#mapArg[j]!] as DeviceTensor).shape;
      const last = this.#encodedShape[j];
      if (
        this.#encodedFor[j] === ptr &&
        last !== undefined &&
        last.length === shape.length &&
        last.every((x, k) => x === shape[k])
      ) {
        return;
      }
      const key = `${ptr}:${shape.join(",")}`;
      const slot = this.#mapBytes.subarray(j * TENSOR_MAP_BYTES, (j + 1) * TENSOR_MAP_BYTES);
      const cache = this.#encodings[j]!;
      const hit = cache.get(key);
      if (hit) slot.set(hit);
      else {
        this.#encodedFor[j] = -1n;
        encodeTensorMap(m, ptr, this.#mapsAt + BigInt(j * TENSOR_MAP_BYTES), shape);
        if (cache.size >= ENCODINGS_KEPT) cache.delete(cache.keys().next().value!);
        cache.set(key, slot.slice());
      }
      this.#encodedFor[j] = ptr;
      this.#encodedShape[j] = [...shape];
    });
    const grid = launchGrid({ name: kernel.name, params: this.#params }, launch, args);
    const c = this.#config;
    [...grid, ...launch.block].forEach((v, i) => c.setUint32(i * 4, v, true));
    c.setUint32(24, launch.dynamicSharedBytes, true);
    c.setBigUint64(32, stream === null ? 0n : stream.handle, true);
    const cl = launch.cluster;
    c.setBigUint64(40, cl ? this.#configAt + 56n : 0n, true);
    c.setUint32(48, cl ? 1 : 0, true);
    if (cl) {
      c.setUint32(56, CLUSTER_DIMENSION, true);
      cl.forEach((v, i) => c.setUint32(64 + i * 4, v, true));
    }
    kernel.prepareExtended(launch);
    const code = bind().launchEx(this.#configAt, kernel.handle, this.#kernelParams, null);
    if (code !== 0) {
      driver().check("cuLaunchKernelEx", code, { context: `kernel "${kernel.name}"` });
    }
  }

  free(): void {
    koffi().free(this.#block);
  }
}
