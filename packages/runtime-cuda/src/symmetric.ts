import { TirxError, dtypeBytes, numel, showValue, type DType } from "@tirx-ts/core";
import { cuda, CudaDevice } from "./device.js";
import { driver, koffi, libraryPath, type CuHandle } from "./driver.js";
import { CudaTensor } from "./tensor.js";

/**
 * Symmetric tensors for T.nvshmem's direct (intra-node) path, through the CUDA virtual memory
 * API (CUDA Driver API, "Virtual Memory Management": cuMemCreate, cuMemAddressReserve, cuMemMap,
 * cuMemSetAccess): a symmetric tensor [P, ...shard] is one virtual address range of P slices,
 * slice q backed by physical memory on PE q's GPU, mapped once in this process and readable and
 * writable from every PE's GPU (peer access over NVLink). The same device pointer is every PE's
 * kernel argument: `Sym[q, i]` is an ordinary global address of PE q's memory, so the kernel's PTX
 * is plain ld/st/atom/red with `.sys` scope where it orders (no peer-pointer table, no device
 * library). Each slice must be a multiple of the allocation granularity (cuMemGetAllocationGranularity,
 * 2 MiB on H100/H200): a kernel declares its shards padded to it. One process drives every GPU;
 * nothing here creates a multicast object (cuMulticastCreate is never called; see MULTI_GPU_ENV).
 * The module state `tirx_nvshmem_state` (my_pe, n_pes) is written per PE's module with
 * {@link writePeState}.
 */

type Fn = (...args: unknown[]) => number;

/** CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_ACCESS_FLAGS_PROT_READWRITE. */
const PINNED = 1;
const LOCATION_DEVICE = 1;
const PROT_READWRITE = 3;
/** CU_MEM_ALLOC_GRANULARITY_MINIMUM. */
const GRANULARITY_MINIMUM = 0;

interface Vmm {
  readonly cuMemGetAllocationGranularity: Fn;
  readonly cuMemCreate: Fn;
  readonly cuMemAddressReserve: Fn;
  readonly cuMemMap: Fn;
  readonly cuMemSetAccess: Fn;
  readonly cuMemUnmap: Fn;
  readonly cuMemRelease: Fn;
  readonly cuMemAddressFree: Fn;
  /** CUmemAllocationProp for device `id`, as koffi passes it. */
  prop(id: number): unknown;
  /** CUmemAccessDesc[] granting read-write to each device of `ids`. */
  access(ids: readonly number[]): unknown;
}

let vmm: Vmm | undefined;

/** The VMM entry points of libcuda. @throws TirxError TX5014 when they cannot be bound. */
function vmmApi(): Vmm {
  if (vmm) return vmm;
  const k = koffi();
  let lib: ReturnType<ReturnType<typeof koffi>["load"]>;
  try {
    lib = k.load(libraryPath());
  } catch (e) {
    throw new TirxError(
      "TX5014",
      `symmetric tensors need the CUDA driver's virtual memory API: ${(e as { message?: string }).message ?? String(e)}`,
    );
  }
  const location = k.struct("tirx_CUmemLocation", { type: "int", id: "int" });
  const flags = k.struct("tirx_CUmemAllocFlags", {
    compressionType: "uint8_t",
    gpuDirectRDMACapable: "uint8_t",
    usage: "uint16_t",
    reserved: k.array("uint8_t", 4),
  });
  const prop = k.struct("tirx_CUmemAllocationProp", {
    type: "int",
    requestedHandleTypes: "int",
    location,
    win32HandleMetaData: "void *",
    allocFlags: flags,
  });
  const desc = k.struct("tirx_CUmemAccessDesc", { location, flags: "int" });
  const f = (name: string, args: unknown[]): Fn => lib.func(name, "int", args as string[]) as Fn;
  vmm = {
    cuMemGetAllocationGranularity: f("cuMemGetAllocationGranularity", [
      "void *",
      k.pointer(prop),
      "int",
    ]),
    cuMemCreate: f("cuMemCreate", ["void *", "size_t", k.pointer(prop), "uint64_t"]),
    cuMemAddressReserve: f("cuMemAddressReserve", [
      "void *",
      "size_t",
      "size_t",
      "uint64_t",
      "uint64_t",
    ]),
    cuMemMap: f("cuMemMap", ["uint64_t", "size_t", "size_t", "uint64_t", "uint64_t"]),
    cuMemSetAccess: f("cuMemSetAccess", ["uint64_t", "size_t", k.pointer(desc), "size_t"]),
    cuMemUnmap: f("cuMemUnmap", ["uint64_t", "size_t"]),
    cuMemRelease: f("cuMemRelease", ["uint64_t"]),
    cuMemAddressFree: f("cuMemAddressFree", ["uint64_t", "size_t"]),
    prop: (id) => ({
      type: PINNED,
      requestedHandleTypes: 0,
      location: { type: LOCATION_DEVICE, id },
      win32HandleMetaData: null,
      allocFlags: { compressionType: 0, gpuDirectRDMACapable: 0, usage: 0, reserved: [0, 0, 0, 0] },
    }),
    access: (ids) =>
      ids.map((id) => ({ location: { type: LOCATION_DEVICE, id }, flags: PROT_READWRITE })),
  };
  return vmm;
}

/** driver().check for a VMM call. */
function check(call: string, code: number): void {
  driver().check(call, code);
}

/** The allocation granularity of device ordinal `dev` in bytes (cuMemGetAllocationGranularity). */
export function symmetricGranularity(dev: number): number {
  const v = vmmApi();
  const out = new BigUint64Array(1);
  check(
    "cuMemGetAllocationGranularity",
    v.cuMemGetAllocationGranularity(out, v.prop(dev), GRANULARITY_MINIMUM),
  );
  return Number(out[0]!);
}

/** A device ordinal of `d` (a CudaDevice or an ordinal). */
function ordinalOf(d: CudaDevice | number): number {
  return d instanceof CudaDevice ? d.ordinal : d;
}

/**
 * A symmetric tensor over the GPUs `devices` (PE p on devices[p]): shape [P, ...shard], one
 * device pointer valid on every PE (slice q physically on devices[q]). Not zeroed. A kernel takes
 * it for a parameter `T.Tensor([P, ...shard])` in a launch on those GPUs (`compile(fn).launchAll`):
 * each PE's launch gets `on(p)`, the whole range seen from its GPU.
 */
export class SymmetricTensor {
  readonly shape: readonly number[];
  readonly dtype: DType;
  /** The device ordinal of each PE. */
  readonly devices: readonly number[];
  /** Bytes of one PE's slice. */
  readonly sliceBytes: number;
  /** Bytes of the whole range (P slices). */
  readonly nbytes: number;
  /** Names it in errors (e.g. a view used after dispose()). */
  readonly what: string;
  #ptr: CuHandle;
  readonly #handles: bigint[];
  readonly #views = new Map<number, CudaTensor>();

  private constructor(
    shape: readonly number[],
    dtype: DType,
    devices: readonly number[],
    ptr: CuHandle,
    handles: bigint[],
    sliceBytes: number,
  ) {
    this.shape = Object.freeze([...shape]);
    this.dtype = dtype;
    this.devices = Object.freeze([...devices]);
    this.sliceBytes = sliceBytes;
    this.nbytes = sliceBytes * devices.length;
    this.what = `the symmetric ${dtype}[${shape.join(", ")}] over cuda:${devices.join(", cuda:")}`;
    this.#ptr = ptr;
    this.#handles = handles;
  }

  /**
   * Allocate [devices.length, ...shard] of `dtype`: one physical slice per device, mapped
   * contiguously, access granted to every device (devices[0]'s context is made current first).
   * `symmetricShard` gives a shard whose bytes fit the granularity.
   * @param devices the GPU of each PE, as CudaDevices or ordinals, each once.
   * @throws TirxError TX5014 when a slice (shard bytes) is not a multiple of the granularity of
   *   each device (pad the shard) or the VMM API is missing; TX5015 for an empty or repeated
   *   device list; CudaError from the driver.
   */
  static allocate(
    devices: readonly (CudaDevice | number)[],
    shard: readonly number[],
    dtype: DType,
  ): SymmetricTensor {
    const ids = devices.map(ordinalOf);
    if (ids.length === 0 || new Set(ids).size !== ids.length) {
      throw new TirxError(
        "TX5015",
        `a symmetric tensor spans one or more distinct GPUs (one per PE), got cuda:${ids.join(", cuda:")}`,
      );
    }
    cuda(ids[0]!).activate();
    const slice = numel(shard) * dtypeBytes(dtype);
    for (const d of ids) {
      const g = symmetricGranularity(d);
      if (slice % g !== 0) {
        throw new TirxError(
          "TX5014",
          `a symmetric tensor's shard is ${slice} bytes, not a multiple of device ${d}'s allocation granularity ${g}: pad the shard to ${Math.ceil(slice / g) * g} bytes (symmetricShard)`,
        );
      }
    }
    const v = vmmApi();
    const total = slice * ids.length;
    const va = new BigUint64Array(1);
    check("cuMemAddressReserve", v.cuMemAddressReserve(va, total, 0, 0n, 0n));
    const handles: bigint[] = [];
    ids.forEach((d, q) => {
      const h = new BigUint64Array(1);
      check("cuMemCreate", v.cuMemCreate(h, slice, v.prop(d), 0n));
      handles.push(h[0]!);
      check("cuMemMap", v.cuMemMap(va[0]! + BigInt(q * slice), slice, 0, h[0]!, 0n));
    });
    const access = v.access(ids);
    check("cuMemSetAccess", v.cuMemSetAccess(va[0]!, total, access, ids.length));
    return new SymmetricTensor([ids.length, ...shard], dtype, ids, va[0]!, handles, slice);
  }

  /** The device pointer every PE's kernel takes. @throws TirxError TX5011 after dispose(). */
  get ptr(): CuHandle {
    if (this.#ptr === 0n) throw new TirxError("TX5011", `${this.what} was disposed`);
    return this.#ptr;
  }

  /** True once `dispose()` ran. */
  get disposed(): boolean {
    return this.#ptr === 0n;
  }

  /** The PE count (the leading dim). */
  get pes(): number {
    return this.devices.length;
  }

  /** PE q's slice (for host copies and NCCL on one PE's data). */
  slicePtr(q: number): CuHandle {
    return this.ptr + BigInt(q * this.sliceBytes);
  }

  /**
   * PE `pe`'s kernel argument: the whole [P, ...shard] range as a CudaTensor on that PE's GPU
   * (borrowed: it frees nothing; unusable after this tensor's dispose()). The same object on
   * every call.
   * @throws TirxError TX5015 for a PE outside [0, P); TX5011 after dispose().
   */
  on(pe: number): CudaTensor {
    this.#pe(pe);
    let t = this.#views.get(pe);
    if (!t) {
      t = CudaTensor.borrow(cuda(this.devices[pe]!), this.shape, this.dtype, this.ptr, this);
      this.#views.set(pe, t);
    }
    return t;
  }

  /**
   * A window on PE q's slice, as a CudaTensor on q's GPU (borrowed): `shape` (default the shard)
   * starting `offset` elements into the slice. For host copies (`copyFrom`, `toArray`), NCCL on
   * one PE's data, and library calls on part of it (a GEMM on a block of rows).
   * @example sym.slice(1).copyFrom(x) // PE 1's shard from the host
   * @throws TirxError TX5015 for a PE outside [0, P); TX5007 when the window leaves the slice.
   */
  slice(q: number, offset = 0, shape: readonly number[] = this.shape.slice(1)): CudaTensor {
    this.#pe(q);
    const shardElems = this.sliceBytes / dtypeBytes(this.dtype);
    if (
      !Number.isSafeInteger(offset) ||
      offset < 0 ||
      !Array.isArray(shape) ||
      shape.some((d) => !Number.isSafeInteger(d) || d < 0) ||
      offset + numel(shape) > shardElems
    ) {
      throw new TirxError(
        "TX5007",
        `a window of shape ${showValue(shape)} at element ${showValue(offset)} does not fit a PE's slice of ${shardElems} elements of ${this.what}`,
      );
    }
    return CudaTensor.borrow(
      cuda(this.devices[q]!),
      shape,
      this.dtype,
      this.slicePtr(q) + BigInt(offset * dtypeBytes(this.dtype)),
      this,
    );
  }

  /**
   * Set every byte of every slice to zero (cuMemsetD8 on each slice's own GPU), waiting for each
   * GPU's default stream: a peer's kernel queued next may write the slice before an unfinished
   * memset would land.
   */
  zero(): this {
    this.devices.forEach((d, q) => {
      cuda(d).activate();
      driver().memsetD8(this.slicePtr(q), 0, this.sliceBytes);
      driver().settleDefaultStream();
    });
    return this;
  }

  /** Unmap, release the physical slices and free the range (once). */
  dispose(): void {
    if (this.#ptr === 0n) return;
    const v = vmmApi();
    const p = this.#ptr;
    this.#ptr = 0n;
    check("cuMemUnmap", v.cuMemUnmap(p, this.nbytes));
    for (const h of this.#handles) check("cuMemRelease", v.cuMemRelease(h));
    check("cuMemAddressFree", v.cuMemAddressFree(p, this.nbytes));
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  toString(): string {
    return `SymmetricTensor(${this.dtype}[${this.shape.join(", ")}] over cuda:${this.devices.join(", cuda:")})`;
  }

  #pe(pe: number): void {
    if (!Number.isInteger(pe) || pe < 0 || pe >= this.devices.length) {
      throw new TirxError(
        "TX5015",
        `${this.what} has PEs 0..${this.devices.length - 1}, got ${showValue(pe)}`,
      );
    }
  }
}

/**
 * Write `tirx_nvshmem_state` (my_pe, n_pes as two u32; core NVSHMEM_STATE) of a module loaded on
 * PE `pe`'s device, whose context is current: `global` is its address from cuModuleGetGlobal.
 */
export function writePeState(global: CuHandle, pe: number, pes: number): void {
  const words = Uint32Array.from([pe, pes]);
  driver().memcpyHtoD(global, new Uint8Array(words.buffer));
  driver().settleDefaultStream();
}
